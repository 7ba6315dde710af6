import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** statfs(2) magic numbers of file systems that live in memory: a database there never waits for a disk. */
const MEMORY_FILE_SYSTEMS = new Map<number, string>([
  [0x01021994, 'tmpfs'],
  [0x858458f6, 'ramfs'],
]);
/** ... and of the usual disk file systems, to name them in the report. */
const DISK_FILE_SYSTEMS = new Map<number, string>([
  [0xef53, 'ext4'],
  [0x58465342, 'xfs'],
  [0x9123683e, 'btrfs'],
  [0x794c7630, 'overlayfs'],
  [0x2fc12fc1, 'zfs'],
  [0xf15f, 'ecryptfs'],
  [0x65735546, 'fuse'],
]);

/**
 * Where the services a benchmark starts keep their DATA_DIR: `BENCH_DATA_DIR`, or
 * `<checkout>/.bench-data`, i.e. the disk the hub is installed on, as on a household's box. The
 * OS temp dir is not used: it is tmpfs on many machines, where an fsync costs nothing and the
 * figures would flatter the service (issue 26).
 */
export function benchDataRoot(): string {
  const root = process.env.BENCH_DATA_DIR ?? path.join(fileURLToPath(new URL('../../', import.meta.url)), '.bench-data');
  fs.mkdirSync(root, { recursive: true });
  return root;
}

export interface DiskFigures {
  dir: string;
  /** The file system's kind as statfs tells it: `tmpfs`, or its magic number in hex. */
  fileSystem: string;
  inMemory: boolean;
  /** A 4 KiB write and fdatasync, 200 times: what one durable commit costs at least on this disk. */
  fsyncMs: { p50: number; p99: number; max: number };
}

/** Measures the disk under `dir` (see DiskFigures). */
export function measureDisk(dir = benchDataRoot()): DiskFigures {
  const magic = Number(fs.statfsSync(dir).type);
  const fileSystem = MEMORY_FILE_SYSTEMS.get(magic) ?? DISK_FILE_SYSTEMS.get(magic) ?? `0x${magic.toString(16)}`;
  const probe = fs.mkdtempSync(path.join(dir, 'fsync-probe-'));
  const file = path.join(probe, 'probe');
  const fd = fs.openSync(file, 'w');
  const page = Buffer.alloc(4096, 7);
  const times: number[] = [];
  try {
    for (let i = 0; i < 200; i++) {
      const t0 = process.hrtime.bigint();
      fs.writeSync(fd, page, 0, page.length, (i % 16) * page.length);
      fs.fdatasyncSync(fd);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(probe, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  return { dir, fileSystem, inMemory: MEMORY_FILE_SYSTEMS.has(magic), fsyncMs: { p50: times[100]!, p99: times[197]!, max: times[199]! } };
}

export function diskLine(d: DiskFigures): string {
  const warning = d.inMemory ? ' — WARNING: in memory, not a disk; set BENCH_DATA_DIR to a directory on disk' : '';
  return `# DATA_DIR under ${d.dir} (${d.fileSystem}): 4 KiB write + fdatasync p50 ${d.fsyncMs.p50.toFixed(3)} ms, p99 ${d.fsyncMs.p99.toFixed(3)} ms, max ${d.fsyncMs.max.toFixed(3)} ms${warning}`;
}
