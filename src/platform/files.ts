/**
 * The port through which the domain touches files (driver packages, backups, releases, the
 * accessory hub's Homebridge folder): it says which file and what to do with it; the adapter
 * (`src/adapters/files/`) does it on the disk. Whole files that something else reads while they
 * change (config.json, package.json, an archive offered for download) are written atomically,
 * through `src/platform/atomic-file.ts`, the one definition of an atomic write: a unique temp file
 * beside the target, flushed and renamed over it, one write or read-modify-write at a time per path.
 */
import type { AtomicWriteOptions } from './atomic-file.js';

export interface FileInfo {
  /** Bytes. */
  size: number;
  /** When it last changed (ms since the epoch). */
  mtimeMs: number;
}

export interface WriteOptions {
  /** Fail (EEXIST) rather than write through something already at the path, a symbolic link included. */
  exclusive?: boolean;
  /** The permission bits of a file it creates (less the umask); default 0o666. */
  mode?: number;
}

export interface CopyOptions {
  /** Leaves out what it answers false for (given the source path; a folder left out is left out whole). */
  filter?: (source: string) => boolean;
  /** Leaves out symbolic links (neither followed nor copied), checked after `filter`. */
  skipSymbolicLinks?: boolean;
}

export interface FileStore {
  /** A file's text (UTF-8); rejects (ENOENT…) when it cannot be read. */
  readText(file: string): Promise<string>;
  readBytes(file: string): Promise<Buffer>;
  /** A file's bytes in chunks, for one too large to hold at once (a backup archive to checksum). */
  readChunks(file: string): AsyncIterable<Buffer>;
  /** The names in a folder (not paths; unsorted); rejects when it is missing. */
  list(dir: string): Promise<string[]>;
  /** Size and modification time, following a symbolic link; rejects when it is missing. */
  stat(file: string): Promise<FileInfo>;
  /** Whether anything (file, folder, link to something) is at the path. */
  exists(file: string): Promise<boolean>;
  /** Makes a folder and any missing parents; one already there is fine. */
  makeFolder(dir: string): Promise<void>;
  /** Makes `parent` if needed, then a new folder of its own in it, `<prefix><random>`, and answers its path. */
  makeTempFolder(parent: string, prefix: string): Promise<string>;
  /**
   * A plain write, not atomic: for files in a folder of the caller's own that nothing reads until
   * it is complete (staging). A file read while it changes goes through `writeAtomic`.
   */
  write(file: string, data: string | Uint8Array, options?: WriteOptions): Promise<void>;
  /** Replaces a whole file atomically (atomic-file.ts `writeFileAtomic`). */
  writeAtomic(file: string, data: string | Uint8Array, options?: AtomicWriteOptions): Promise<void>;
  /**
   * An atomic read-modify-write (atomic-file.ts `updateFileAtomic`): `change` gets the text
   * (undefined when there is no file) and answers the new one; the same text writes nothing.
   */
  updateAtomic(file: string, change: (current: string | undefined) => string | Promise<string>, options?: AtomicWriteOptions): Promise<void>;
  /** Replaces a whole file atomically with what `produce` writes at the temp path it is given (an archive a library writes by path). */
  writeAtomicWith(file: string, produce: (temp: string) => Promise<void>, options?: AtomicWriteOptions): Promise<void>;
  /** Moves a file or folder in one rename (same disk); a folder replaces only an empty one. */
  rename(from: string, to: string): Promise<void>;
  /** Removes a file, or a folder with everything in it; nothing there is fine. */
  remove(target: string): Promise<void>;
  /** Copies a folder with everything in it (or a file), merging into what `to` holds. */
  copyTree(from: string, to: string, options?: CopyOptions): Promise<void>;
}
