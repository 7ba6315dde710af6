import fs from 'node:fs/promises';
import path from 'node:path';
import { updateFileAtomic, writeFileAtomic, writeFileAtomicWith, type AtomicWriteOptions } from '../../platform/atomic-file.js';
import type { CopyOptions, FileInfo, FileStore, WriteOptions } from '../../platform/files.js';

/** The `FileStore` on the local disk (node:fs/promises); whole-file replacements go through atomic-file.ts. */
export class NodeFileStore implements FileStore {
  readText(file: string): Promise<string> {
    return fs.readFile(file, 'utf8');
  }

  readBytes(file: string): Promise<Buffer> {
    return fs.readFile(file);
  }

  async *readChunks(file: string): AsyncIterable<Buffer> {
    const handle = await fs.open(file);
    try {
      for await (const chunk of handle.createReadStream()) yield chunk as Buffer;
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  list(dir: string): Promise<string[]> {
    return fs.readdir(dir);
  }

  async stat(file: string): Promise<FileInfo> {
    const stat = await fs.stat(file);
    return { size: stat.size, mtimeMs: stat.mtimeMs };
  }

  exists(file: string): Promise<boolean> {
    return fs.access(file).then(
      () => true,
      () => false,
    );
  }

  async makeFolder(dir: string): Promise<void> {
    await fs.mkdir(dir, { recursive: true });
  }

  async makeTempFolder(parent: string, prefix: string): Promise<string> {
    await fs.mkdir(parent, { recursive: true });
    // Without a prefix the random part still goes inside `parent`, not beside it.
    return fs.mkdtemp(prefix ? path.join(parent, prefix) : `${path.resolve(parent)}${path.sep}`);
  }

  write(file: string, data: string | Uint8Array, options: WriteOptions = {}): Promise<void> {
    return fs.writeFile(file, data, { flag: options.exclusive ? 'wx' : 'w', ...(options.mode !== undefined ? { mode: options.mode } : {}) });
  }

  writeAtomic(file: string, data: string | Uint8Array, options?: AtomicWriteOptions): Promise<void> {
    return writeFileAtomic(file, data, options);
  }

  updateAtomic(file: string, change: (current: string | undefined) => string | Promise<string>, options?: AtomicWriteOptions): Promise<void> {
    return updateFileAtomic(file, change, options);
  }

  writeAtomicWith(file: string, produce: (temp: string) => Promise<void>, options?: AtomicWriteOptions): Promise<void> {
    return writeFileAtomicWith(file, produce, options);
  }

  rename(from: string, to: string): Promise<void> {
    return fs.rename(from, to);
  }

  remove(target: string): Promise<void> {
    return fs.rm(target, { recursive: true, force: true });
  }

  copyTree(from: string, to: string, options: CopyOptions = {}): Promise<void> {
    const { filter, skipSymbolicLinks } = options;
    if (!filter && !skipSymbolicLinks) return fs.cp(from, to, { recursive: true });
    return fs.cp(from, to, {
      recursive: true,
      filter: async (source) => {
        if (filter && !filter(source)) return false;
        return !skipSymbolicLinks || !(await fs.lstat(source)).isSymbolicLink();
      },
    });
  }
}
