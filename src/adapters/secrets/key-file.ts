import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { tempNameFor } from '../../platform/atomic-file.js';
import type { Timers } from '../../platform/clock.js';

/** A secret key is this many random bytes (AES-256). */
export const SECRET_KEY_BYTES = 32;

/** The key file cannot be used: the hub refuses to start, with this message. */
export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

export interface KeyFileLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Where `fs.link` cannot make a hard link (some network and FAT file systems): the key is then created in place with O_EXCL. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK']);
/** A key file shorter than a key may be one another start is still writing (only where hard links are missing): read again before refusing. */
const SHORT_KEY_RETRIES = 10;
const SHORT_KEY_WAIT_MS = 100;

/**
 * The hub's secret key: read from `file`, or made at the first start (32 random bytes, mode 0600).
 * It is made without ever exposing a partial file or replacing one: the bytes go to a temp file of
 * its own (created 0600), flushed, then hard-linked to `file`, which fails when the file exists, so
 * two hubs starting at once on one folder both end up with the key whichever made it first.
 * A file of the wrong size is refused (SecretKeyError); one others may read is narrowed to 0600,
 * with a warning. A file shorter than a key is read again after a wait on `timers`.
 */
export async function loadOrCreateSecretKey(file: string, log: KeyFileLog, timers: Timers): Promise<Buffer> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const key = await readKey(file, log, timers);
    if (key) return key;
    await createKey(file, log);
  }
  // Made three times and gone each time: something removes it as soon as it is there.
  throw new SecretKeyError(`The secret key ${file} disappears as soon as it is made; the hub cannot keep a key there.`);
}

async function readKey(file: string, log: KeyFileLog, timers: Timers, retries = SHORT_KEY_RETRIES): Promise<Buffer | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SecretKeyError(`The secret key ${file} cannot be read: ${(err as Error).message}`);
  }
  let key: Buffer | undefined;
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new SecretKeyError(`The secret key ${file} is not a file; move it away to have a key made at the next start.`);
    if (stat.size < SECRET_KEY_BYTES && retries > 0) {
      // Short: perhaps written in place by another start on a file system without hard links; read again below.
    } else {
      if (stat.size !== SECRET_KEY_BYTES) throw new SecretKeyError(wrongSize(file, stat.size));
      if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) await narrow(handle, file, stat.mode, log);
      key = Buffer.alloc(SECRET_KEY_BYTES);
      const { bytesRead } = await handle.read(key, 0, SECRET_KEY_BYTES, 0);
      if (bytesRead !== SECRET_KEY_BYTES) throw new SecretKeyError(wrongSize(file, bytesRead));
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
  if (key) return key;
  await new Promise<void>((resolve) => timers.setTimeout(resolve, SHORT_KEY_WAIT_MS));
  return readKey(file, log, timers, retries - 1);
}

/** A key file others may read: made 0600, with a warning (or a warning that it cannot be). */
async function narrow(handle: fs.FileHandle, file: string, fullMode: number, log: KeyFileLog): Promise<void> {
  const mode = (fullMode & 0o777).toString(8).padStart(4, '0');
  try {
    await handle.chmod(0o600);
    log.warn({ file, mode }, `the secret key file could be read by other users (mode ${mode}); its mode is now 0600`);
  } catch (err) {
    log.warn({ file, mode, err }, `the secret key file can be read by other users (mode ${mode}) and its mode cannot be changed; make it 0600`);
  }
}

function wrongSize(file: string, size: number): string {
  return (
    `The secret key ${file} holds ${size} bytes; a key is exactly ${SECRET_KEY_BYTES}. The hub does not start with it: ` +
    'put back the secret.key this hub made (what it sealed cannot be read without it), or move the file away to have a new key made at the next start ' +
    '(the fleet link must then be saved again with its token).'
  );
}

async function createKey(file: string, log: KeyFileLog): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true });
  const temp = tempNameFor(file);
  const key = randomBytes(SECRET_KEY_BYTES);
  try {
    try {
      await writeNew(temp, key);
    } catch (err) {
      throw new SecretKeyError(`The secret key ${file} cannot be created: ${(err as Error).message}`);
    }
    try {
      await fs.link(temp, file);
      log.info({ file }, 'secret key created');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      // Another start made it first: its key is the one (read next).
      if (code === 'EEXIST') return;
      if (!NO_HARD_LINKS.has(code)) throw new SecretKeyError(`The secret key ${file} cannot be created: ${(err as Error).message}`);
      try {
        await writeNew(file, key);
        log.info({ file }, 'secret key created');
      } catch (inPlace) {
        if ((inPlace as NodeJS.ErrnoException).code !== 'EEXIST') throw new SecretKeyError(`The secret key ${file} cannot be created: ${(inPlace as Error).message}`);
      }
    }
  } finally {
    key.fill(0);
    await fs.rm(temp, { force: true }).catch(() => undefined);
  }
  await syncFolder(dir);
}

/** A new file (never through one already there), 0600 whatever the umask, flushed. */
async function writeNew(file: string, data: Buffer): Promise<void> {
  const handle = await fs.open(file, 'wx', 0o600);
  try {
    if (process.platform !== 'win32') await handle.chmod(0o600);
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncFolder(dir: string): Promise<void> {
  try {
    const handle = await fs.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Platforms that cannot flush a folder: the key is still written; only its name may be lost to a power cut.
  }
}
