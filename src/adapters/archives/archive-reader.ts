import { readdir } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { create, Parser, type ReadEntry } from 'tar';
import yauzl from 'yauzl';
import type { ArchiveWriter } from '../../domain/backups/backup-service.js';
import type { ArchiveReader, PackageFile } from '../../domain/drivers/local/packages.js';

export class ArchiveProblem extends Error {}

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const GZIP_MAGIC = [0x1f, 0x8b];
const MAX_ENTRIES = 5000;

const startsWith = (data: Buffer, magic: number[]) => magic.every((b, i) => data[i] === b);

/**
 * Unpacks an uploaded `.zip` or `.tar.gz` (told apart by their first bytes, not their names) into
 * memory, refusing what a driver package never needs and an attacker would use: links, devices,
 * absolute paths, `..` segments, and more bytes or entries than allowed (a zip bomb stops at the limit).
 */
export const archives: ArchiveReader & ArchiveWriter = {
  writeTarGz,
  async read(data: Buffer, maxBytes: number): Promise<PackageFile[]> {
    if (startsWith(data, ZIP_MAGIC)) return readZip(data, maxBytes);
    if (startsWith(data, GZIP_MAGIC)) return readTarGz(data, maxBytes);
    throw new ArchiveProblem('the package is neither a .zip nor a .tar.gz archive');
  },
};

function checkedPath(name: string): string {
  if (name.includes('\0')) throw new ArchiveProblem(`entry "${name}" has a NUL in its name`);
  const normalized = name.replace(/\\/g, '/');
  if (normalized.startsWith('/') || /^[A-Za-z]:/.test(normalized)) throw new ArchiveProblem(`entry "${name}" has an absolute path`);
  const segments = normalized.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new ArchiveProblem(`entry "${name}" escapes the package folder (..)`);
  return segments.join('/');
}

function readZip(data: Buffer, maxBytes: number): Promise<PackageFile[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(data, { lazyEntries: true, validateEntrySizes: true, decodeStrings: false }, (err, zip) => {
      if (err || !zip) return reject(new ArchiveProblem(`the .zip archive cannot be read: ${err?.message ?? 'unknown error'}`));
      const files: PackageFile[] = [];
      let total = 0;
      let entries = 0;
      const fail = (problem: Error) => {
        zip.close();
        reject(problem instanceof ArchiveProblem ? problem : new ArchiveProblem(`the .zip archive cannot be read: ${problem.message}`));
      };
      zip.on('error', fail);
      zip.on('end', () => resolve(files));
      zip.on('entry', (entry: yauzl.Entry) => {
        try {
          // Names are decoded here (not by yauzl, whose own check would refuse a `..` name in vaguer words).
          const fileName = (entry.fileName as unknown as Buffer).toString('utf8');
          if (++entries > MAX_ENTRIES) throw new ArchiveProblem(`the archive has more than ${MAX_ENTRIES} entries`);
          const mode = (entry.externalFileAttributes >>> 16) & 0o170000;
          if (mode === 0o120000) throw new ArchiveProblem(`entry "${fileName}" is a symbolic link; links are not allowed`);
          if (fileName.endsWith('/')) {
            checkedPath(fileName);
            zip.readEntry();
            return;
          }
          if (mode !== 0 && mode !== 0o100000) throw new ArchiveProblem(`entry "${fileName}" is not a regular file`);
          const path = checkedPath(fileName);
          total += entry.uncompressedSize;
          if (total > maxBytes) throw new ArchiveProblem(`the archive unpacks to more than ${maxBytes} bytes`);
          zip.openReadStream(entry, (streamErr, stream) => {
            if (streamErr || !stream) return fail(streamErr ?? new Error('no stream'));
            const chunks: Buffer[] = [];
            stream.on('data', (c: Buffer) => chunks.push(c));
            stream.on('error', fail);
            stream.on('end', () => {
              files.push({ path, data: Buffer.concat(chunks) });
              zip.readEntry();
            });
          });
        } catch (problem) {
          fail(problem as Error);
        }
      });
      zip.readEntry();
    });
  });
}

async function readTarGz(data: Buffer, maxBytes: number): Promise<PackageFile[]> {
  let tarBytes: Buffer;
  try {
    // Bounded: gunzip stops once the output passes the limit (plus a tar header's worth).
    tarBytes = gunzipSync(data, { maxOutputLength: maxBytes + 64 * 1024 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || /larger than|maxOutputLength/i.test((err as Error).message)) throw new ArchiveProblem(`the archive unpacks to more than ${maxBytes} bytes`);
    throw new ArchiveProblem(`the .tar.gz archive cannot be read: ${(err as Error).message}`);
  }
  return new Promise((resolve, reject) => {
    const files: PackageFile[] = [];
    let total = 0;
    let entries = 0;
    let problem: Error | undefined;
    const parser = new Parser({ strict: true });
    parser.on('entry', (entry: ReadEntry) => {
      try {
        if (problem) throw problem;
        if (++entries > MAX_ENTRIES) throw new ArchiveProblem(`the archive has more than ${MAX_ENTRIES} entries`);
        if (entry.type === 'SymbolicLink' || entry.type === 'Link') throw new ArchiveProblem(`entry "${entry.path}" is a ${entry.type === 'Link' ? 'hard' : 'symbolic'} link; links are not allowed`);
        if (entry.type === 'Directory') {
          checkedPath(entry.path);
          entry.resume();
          return;
        }
        if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'ContiguousFile') throw new ArchiveProblem(`entry "${entry.path}" is not a regular file (${entry.type})`);
        const path = checkedPath(entry.path);
        total += entry.size;
        if (total > maxBytes) throw new ArchiveProblem(`the archive unpacks to more than ${maxBytes} bytes`);
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => files.push({ path, data: Buffer.concat(chunks) }));
      } catch (err) {
        problem ??= err as Error;
        entry.resume();
      }
    });
    parser.on('error', (err: Error) => (problem ??= new ArchiveProblem(`the .tar.gz archive cannot be read: ${err.message}`)));
    parser.on('warn', (_code: string, message: string) => (problem ??= new ArchiveProblem(`the .tar.gz archive cannot be read: ${message}`)));
    parser.on('end', () => (problem ? reject(problem) : resolve(files)));
    parser.end(tarBytes);
  });
}

/** Packs a folder's contents (not the folder itself) into a .tar.gz, portable (no owners, no host names). */
export async function writeTarGz(dir: string, file: string): Promise<void> {
  const entries = await readdir(dir);
  await create({ gzip: true, cwd: dir, file, portable: true, follow: false }, entries);
}
