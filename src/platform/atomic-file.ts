import { randomBytes } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

export interface AtomicWriteOptions {
  /** The file's permission bits; unset, an existing file keeps its own, and a new one gets the default (0o666 less the umask). */
  mode?: number;
}

/**
 * Whole-file writes that a reader (or a crash) never sees half done: the data goes to a temp file
 * of its own in the same folder (`.<name>.<pid>.<random>.tmp`), is flushed to disk, and replaces
 * the file in one rename; the folder is flushed after (best effort). A write that fails removes
 * its temp file and leaves the file as it was. Writes to one path run one at a time within the
 * process, and `updateFileAtomic` runs a read-modify-write in that same queue, so two changes made
 * at once both land. Another process writing the same file never tears it either (each write is a
 * rename), but its read-modify-writes are not queued with this process's.
 */
export function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  return queued(file, () => replace(file, (temp, mode) => fs.writeFile(temp, data, { flag: 'wx', mode: mode ?? 0o666 }), options));
}

/**
 * The same replacement for a file something else writes by path (an archive streamed by a
 * library): `produce` writes the temp path it is given, then it is flushed and renamed over `file`.
 */
export function writeFileAtomicWith(file: string, produce: (temp: string) => Promise<void>, options: AtomicWriteOptions = {}): Promise<void> {
  return queued(file, () => replace(file, produce, options));
}

/**
 * Reads the file (undefined when it does not exist), lets `change` make the new text from it and
 * writes that atomically, queued behind every other write of the same path in this process: two
 * edits at once both land, the second on what the first wrote. When `change` throws, or returns the
 * text unchanged, nothing is written. `change` must not itself write the same path: that write
 * would wait behind the change that waits for it.
 */
export function updateFileAtomic(file: string, change: (current: string | undefined) => string | Promise<string>, options: AtomicWriteOptions = {}): Promise<void> {
  return queued(file, async () => {
    const current = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    const next = await change(current);
    if (next === current) return;
    await replace(file, (temp, mode) => fs.writeFile(temp, next, { flag: 'wx', mode: mode ?? 0o666 }), options);
  });
}

/**
 * The same replacement, synchronously, for code that runs before anything else does (a restore
 * applied at start-up). It is not queued with the asynchronous writes.
 */
export function writeFileAtomicSync(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const target = realTargetSync(file);
  const mode = options.mode ?? existingModeSync(target);
  const temp = tempNameFor(target);
  let fd: number | undefined;
  try {
    fd = fsSync.openSync(temp, 'wx', mode ?? 0o666);
    fsSync.writeFileSync(fd, data);
    if (mode !== undefined) fsSync.fchmodSync(fd, mode);
    fsSync.fsyncSync(fd);
    fsSync.closeSync(fd);
    fd = undefined;
    fsSync.renameSync(temp, target);
  } catch (err) {
    if (fd !== undefined) fsSync.closeSync(fd);
    fsSync.rmSync(temp, { force: true });
    throw err;
  }
  try {
    const dir = fsSync.openSync(path.dirname(target), 'r');
    try {
      fsSync.fsyncSync(dir);
    } finally {
      fsSync.closeSync(dir);
    }
  } catch (err) {
    if (!ignorableDirSyncError(err)) throw err;
  }
}

/** How many paths have writes queued or running (for the tests: the queue forgets a path once it is idle). */
export function queuedAtomicWrites(): number {
  return queues.size;
}

/** The tail of each path's queue, by resolved path; a path is dropped when its last write settles. */
const queues = new Map<string, Promise<void>>();

function queued<T>(file: string, task: () => Promise<T>): Promise<T> {
  const key = path.resolve(file);
  const result = (queues.get(key) ?? Promise.resolve()).then(task);
  // The next write waits for this one to settle, whether it failed or not.
  const tail = result.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return result;
}

/** Has `produce` write a temp file of its own beside the target, flushes it and renames it over the target. */
async function replace(file: string, produce: (temp: string, mode: number | undefined) => Promise<void>, options: AtomicWriteOptions): Promise<void> {
  const target = await realTarget(file);
  const mode = options.mode ?? (await existingMode(target));
  const temp = tempNameFor(target);
  let handle: fs.FileHandle | undefined;
  try {
    // The data writers create it with wx: a temp file of its own, never through something already there.
    await produce(temp, mode);
    handle = await fs.open(temp, 'r+');
    // The umask narrowed the mode given at creation.
    if (mode !== undefined) await handle.chmod(mode);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await fs.rename(temp, target);
  } catch (err) {
    await handle?.close().catch(() => undefined);
    await fs.rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
  await syncFolder(path.dirname(target));
}

/** The rename is on disk once the folder is: flushed where the platform lets a folder be flushed. */
async function syncFolder(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch (err) {
    if (!ignorableDirSyncError(err)) throw err;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Platforms (Windows, some network file systems) that refuse to open or flush a folder. */
function ignorableDirSyncError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EINVAL' || code === 'EISDIR' || code === 'EPERM' || code === 'ENOTSUP' || code === 'EBADF';
}

/** A temp file name of its own beside `target` (same folder, so a rename into place stays on one file system). */
export function tempNameFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

/** A write through a symbolic link replaces the file it points to (as writeFile would), not the link. */
async function realTarget(file: string): Promise<string> {
  return fs.realpath(file).catch(() => path.resolve(file));
}

function realTargetSync(file: string): string {
  try {
    return fsSync.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

async function existingMode(file: string): Promise<number | undefined> {
  return fs.stat(file).then(
    (s) => s.mode & 0o7777,
    () => undefined,
  );
}

function existingModeSync(file: string): number | undefined {
  try {
    return fsSync.statSync(file).mode & 0o7777;
  } catch {
    return undefined;
  }
}
