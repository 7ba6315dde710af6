import { crc32, deflateRawSync, gzipSync } from 'node:zlib';
import { Header } from 'tar';

export interface ArchiveEntry {
  name: string;
  data?: string | Buffer;
  /** `file` (default), `dir`, `symlink` (data is the target) or `hardlink` (tar only). */
  type?: 'file' | 'dir' | 'symlink' | 'hardlink';
}

const bytes = (d: string | Buffer | undefined) => (d === undefined ? Buffer.alloc(0) : Buffer.isBuffer(d) ? d : Buffer.from(d));

/**
 * A .zip written byte by byte (deflated entries, Unix modes in the external attributes), so tests
 * can also make the archives an attacker would: `../` names, absolute paths, symbolic links.
 */
export function makeZip(entries: ArchiveEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.type === 'dir' && !entry.name.endsWith('/') ? `${entry.name}/` : entry.name);
    const raw = bytes(entry.data);
    const data = deflateRawSync(raw);
    const crc = crc32(raw) >>> 0;
    const mode = entry.type === 'symlink' ? 0o120777 : entry.type === 'dir' ? 0o40755 : 0o100644;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(raw.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x031e, 4); // made by Unix, so the external attributes carry a mode
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(raw.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE((mode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** A .tar.gz written header by header, links and traversals included when a test asks for them. */
export function makeTarGz(entries: ArchiveEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const type = entry.type ?? 'file';
    const data = type === 'file' ? bytes(entry.data) : Buffer.alloc(0);
    const header = new Header({
      path: entry.name,
      mode: type === 'dir' ? 0o755 : 0o644,
      size: data.length,
      mtime: new Date(0),
      type: type === 'dir' ? 'Directory' : type === 'symlink' ? 'SymbolicLink' : type === 'hardlink' ? 'Link' : 'File',
      ...(type === 'symlink' || type === 'hardlink' ? { linkpath: String(entry.data) } : {}),
    });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    blocks.push(block, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}
