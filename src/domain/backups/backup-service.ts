import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Clock, Timers } from '../../platform/clock.js';
import type { FileStore } from '../../platform/files.js';
import { OneAtATime } from '../../platform/one-at-a-time.js';
import { ProgramScheduler, type FireStore } from '../programs/scheduler.js';
import type { ArchiveReader } from '../drivers/local/packages.js';
import { backupErrors } from './errors.js';

/** The database's side of a backup (the storage layer implements it). */
export interface DatabaseSnapshots {
  /** The copy's file name in an archive, which tells the engine (`database.sqlite`, `database.jsonl`). */
  readonly fileName: string;
  /** The copies a restore takes (another engine's is imported row by row). */
  readonly readableFiles: readonly string[];
  /** A consistent copy of the live database, taken online (writes go on meanwhile). */
  backupTo(file: string): Promise<void>;
  /** Reads a copy: its applied migrations and "ok" when sound, else the first problem found. */
  inspect(file: string): Promise<{ migrations: string[]; integrity: string }>;
  /** The migrations this version of the hub knows. */
  knownMigrations(): string[];
}

export interface ArchiveWriter {
  /** Packs a folder's contents into a .tar.gz file. */
  writeTarGz(dir: string, file: string): Promise<void>;
}

export interface BackupLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface BackupServiceDeps {
  dataDir: string;
  driversDir: string;
  /** Folders of DATA_DIR the backup carries as they are (storage's STATE_FOLDERS: the Matter bridge's). */
  stateFolders?: readonly string[];
  /** The backups folder, the drivers folder it copies, and the staged restore. */
  files: FileStore;
  version: string;
  database: DatabaseSnapshots;
  archives: ArchiveReader & ArchiveWriter;
  clock: Clock;
  timers: Timers;
  log: BackupLogger;
  maxBytes: number;
  /** Restarts the service in its process; absent, a restore takes effect at the next start. */
  restart?: (reason: string) => void;
  /** Scheduled backups: when (a cron pattern), and how many and how old scheduled backups are kept. */
  schedule?: BackupSchedule;
  /**
   * Where the schedule's fires are recorded (the programs' timer store): a slot is claimed there,
   * so instances sharing a database take each scheduled backup once.
   */
  fires: FireStore;
}

export interface BackupSchedule {
  cron: string;
  /** Scheduled backups kept, newest first; older ones are deleted after each scheduled backup. */
  keep: number;
  /** Scheduled backups older than this are deleted too. */
  keepDays: number;
  timezone?: string;
}

export interface BackupInfo {
  name: string;
  bytes: number;
  createdAt: number;
  sha256: string;
  /** Where the archive is on the hub. */
  file: string;
  /** Taken by the schedule (and deleted by its retention), rather than on request. */
  scheduled: boolean;
}

export interface BackupManifest {
  format: 1;
  createdAt: number;
  hubVersion: string;
  migrations: string[];
}

const FORMAT = 1;
const NAME = /^hcs-backup-[0-9]{8}-[0-9]{6}(-[0-9]+)?(-scheduled)?$/;
const SCHEDULED = '-scheduled';
/** The schedule's id in the fire store, beside the programs' (which are UUIDs). */
const SCHEDULE_ID = '@scheduled-backup';
const MANIFEST = 'backup.json';
/** Where a validated restore waits for the restart that applies it (storage's applyPendingRestore). */
export const PENDING_RESTORE_DIR = 'restore-pending';

const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);

/**
 * Backups of the hub: the database (copied online, consistent at one instant) and the drivers
 * folder in one .tar.gz under `DATA_DIR/backups/`; and restores, validated in full (archive
 * paths, the manifest, SQLite's integrity check, a schema this version knows) before anything
 * is touched, then applied by restarting the service into them. A bad archive changes nothing.
 */
export class BackupService {
  /** Checksums by file, with the size and time they were taken at: a listing reads an archive once, not at every look. */
  private readonly checksums = new Map<string, { bytes: number; mtimeMs: number; sha256: string }>();
  /** One at a time: two of them must not interleave their renames. */
  private readonly exclusive = new OneAtATime(() => backupErrors.BACKUP_BUSY());
  private readonly dir: string;
  private scheduler: ProgramScheduler | undefined;

  constructor(private readonly deps: BackupServiceDeps) {
    this.dir = path.join(deps.dataDir, 'backups');
  }

  private get databaseFile() {
    return this.deps.database.fileName;
  }

  /** A requested backup is refused (BACKUP_BUSY) while another runs; a scheduled one waits for it. */
  create(options: { scheduled?: boolean } = {}): Promise<BackupInfo> {
    return this.exclusive[options.scheduled ? 'runWhenFree' : 'run'](async () => {
      const files = this.deps.files;
      await files.makeFolder(this.dir);
      const now = this.deps.clock.now();
      const suffix = options.scheduled ? SCHEDULED : '';
      let name = `hcs-backup-${stamp(now)}${suffix}`;
      for (let n = 2; await files.exists(path.join(this.dir, `${name}.tar.gz`)); n++) name = `hcs-backup-${stamp(now)}-${n}${suffix}`;
      const work = await files.makeTempFolder(this.dir, '.tmp-');
      try {
        await this.deps.database.backupTo(path.join(work, this.databaseFile));
        const inspected = await this.deps.database.inspect(path.join(work, this.databaseFile));
        // The running drivers' folders; staging and kept versions (dot-folders) are not part of the hub's state.
        await files
          .copyTree(this.deps.driversDir, path.join(work, 'drivers'), {
            filter: (source) => !path.relative(this.deps.driversDir, source).split(path.sep)[0]?.startsWith('.'),
            skipSymbolicLinks: true,
          })
          .catch((err: NodeJS.ErrnoException) => {
            if (err.code !== 'ENOENT') throw err;
          });
        for (const name of this.deps.stateFolders ?? []) {
          await files.copyTree(path.join(this.deps.dataDir, name), path.join(work, name), { skipSymbolicLinks: true }).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== 'ENOENT') throw err;
          });
        }
        const manifest: BackupManifest = { format: FORMAT, createdAt: now, hubVersion: this.deps.version, migrations: inspected.migrations };
        await files.writeAtomic(path.join(work, MANIFEST), JSON.stringify(manifest, null, 2));
        const file = path.join(this.dir, `${name}.tar.gz`);
        // Written beside it under a temp name of its own, flushed, then renamed into place: never listed half written.
        await files.writeAtomicWith(file, (temp) => this.deps.archives.writeTarGz(work, temp));
        const info = await this.describe(name);
        this.deps.log.info({ backup: name, bytes: info.bytes }, 'backup created');
        return info;
      } finally {
        await files.remove(work);
      }
    });
  }

  /** Arms the schedule, if one is set, on the same scheduler as program timers. */
  async startSchedule(): Promise<void> {
    const schedule = this.deps.schedule;
    if (!schedule) return;
    const { clock, timers, fires, log } = this.deps;
    this.scheduler = new ProgramScheduler({ clock, timers, store: fires, fire: () => void this.runScheduled(), log: { error: (obj, msg) => log.warn(obj as object, msg) } });
    await this.scheduler.start([{ id: SCHEDULE_ID, timer: { kind: 'cron', expression: schedule.cron, enabled: true, ...(schedule.timezone ? { timezone: schedule.timezone } : {}) } }]);
  }

  stopSchedule(): void {
    this.scheduler?.stop();
    this.scheduler = undefined;
  }

  /** The schedule with its retention and next slot, or null when none is set. */
  scheduleInfo(): { cron: string; keep: number; keepDays: number; nextAt: number | null } | null {
    const s = this.deps.schedule;
    if (!s) return null;
    return { cron: s.cron, keep: s.keep, keepDays: s.keepDays, nextAt: this.scheduler?.nextFire(SCHEDULE_ID) ?? null };
  }

  /** A slot of the schedule (claimed by the scheduler): the backup, then the retention. */
  private async runScheduled(): Promise<void> {
    try {
      const info = await this.create({ scheduled: true });
      const removed = await this.applyRetention();
      this.deps.log.info({ backup: info.name, removed }, 'scheduled backup taken');
    } catch (err) {
      this.deps.log.warn({ err }, 'scheduled backup failed');
    }
  }

  /** Deletes scheduled backups beyond the newest `keep` or older than `keepDays`; returns their names. */
  async applyRetention(): Promise<string[]> {
    const schedule = this.deps.schedule;
    if (!schedule) return [];
    const oldest = this.deps.clock.now() - schedule.keepDays * 86_400_000;
    const scheduled = (await this.list()).filter((b) => b.scheduled);
    const removed: string[] = [];
    for (const [i, backup] of scheduled.entries()) {
      if (i < schedule.keep && backup.createdAt >= oldest) continue;
      await this.remove(backup.name);
      removed.push(backup.name);
    }
    return removed;
  }

  async list(): Promise<BackupInfo[]> {
    const names = (await this.deps.files.list(this.dir).catch(() => [] as string[])).filter((f) => f.endsWith('.tar.gz')).map((f) => f.slice(0, -'.tar.gz'.length)).filter((n) => NAME.test(n));
    const out: BackupInfo[] = [];
    for (const name of names.sort().reverse()) out.push(await this.describe(name));
    return out;
  }

  async get(name: string): Promise<BackupInfo> {
    if (!NAME.test(name) || !(await this.deps.files.exists(this.fileOf(name)))) throw backupErrors.BACKUP_NOT_FOUND({ name });
    return this.describe(name);
  }

  async remove(name: string): Promise<BackupInfo> {
    const info = await this.get(name);
    await this.deps.files.remove(info.file);
    this.checksums.delete(info.file);
    return info;
  }

  /**
   * Validates an uploaded backup and stages it; the service then restarts into it. Throws,
   * having changed nothing, when anything about it is wrong.
   */
  restore(data: Buffer): Promise<{ restoring: true; restartScheduled: boolean; backup: BackupManifest }> {
    return this.exclusive.run(async () => {
      if (data.length > this.deps.maxBytes) throw backupErrors.BACKUP_TOO_LARGE({ maxBytes: this.deps.maxBytes });
      let files;
      try {
        files = await this.deps.archives.read(data, this.deps.maxBytes);
      } catch (err) {
        const problem = (err as Error).message;
        if (/more than \d+ bytes/.test(problem)) throw backupErrors.BACKUP_TOO_LARGE({ maxBytes: this.deps.maxBytes });
        throw backupErrors.BACKUP_INVALID({ problem });
      }
      const manifestFile = files.find((f) => f.path === MANIFEST);
      const readable = this.deps.database.readableFiles;
      const copies = files.filter((f) => readable.includes(f.path));
      if (copies.length > 1) throw backupErrors.BACKUP_INVALID({ problem: `it holds ${copies.map((c) => c.path).join(' and ')}; a backup holds one database copy` });
      const database = copies[0];
      const DATABASE = database?.path ?? this.databaseFile;
      if (!manifestFile) throw backupErrors.BACKUP_INVALID({ problem: `it has no ${MANIFEST}; it is not a backup of this hub` });
      let manifest: BackupManifest;
      try {
        manifest = JSON.parse(manifestFile.data.toString('utf8')) as BackupManifest;
      } catch (err) {
        throw backupErrors.BACKUP_INVALID({ problem: `${MANIFEST} is not valid JSON: ${(err as Error).message}` });
      }
      if (manifest?.format !== FORMAT) throw backupErrors.BACKUP_INVALID({ problem: `${MANIFEST} has format ${String(manifest?.format)}; this hub reads format ${FORMAT}` });
      if (!database) throw backupErrors.BACKUP_INVALID({ problem: `it holds no database copy (${readable.join(' or ')})` });
      const folders = ['drivers', ...(this.deps.stateFolders ?? [])];
      const stray = files.find((f) => f.path !== MANIFEST && f.path !== DATABASE && !folders.some((name) => f.path.startsWith(`${name}/`)));
      if (stray) throw backupErrors.BACKUP_INVALID({ problem: `"${stray.path}" does not belong in a backup` });

      const store = this.deps.files;
      const staging = await store.makeTempFolder(this.deps.dataDir, `${PENDING_RESTORE_DIR}.tmp-`);
      try {
        for (const f of files) {
          if (f.path === MANIFEST) continue;
          const target = path.join(staging, ...f.path.split('/'));
          await store.makeFolder(path.dirname(target));
          await store.write(target, f.data, { exclusive: true });
        }
        await store.writeAtomic(path.join(staging, MANIFEST), JSON.stringify(manifest));
        let inspected;
        try {
          inspected = await this.deps.database.inspect(path.join(staging, DATABASE));
        } catch (err) {
          throw backupErrors.BACKUP_INVALID({ problem: `${DATABASE} cannot be opened: ${(err as Error).message}` });
        }
        if (inspected.integrity !== 'ok') throw backupErrors.BACKUP_INVALID({ problem: `${DATABASE} fails its integrity check: ${inspected.integrity}` });
        const known = new Set(this.deps.database.knownMigrations());
        const unknown = inspected.migrations.filter((m) => !known.has(m));
        if (unknown.length > 0) throw backupErrors.BACKUP_SCHEMA_NEWER({ unknown: unknown.join(', ') }, { details: { unknown } });
        const pending = path.join(this.deps.dataDir, PENDING_RESTORE_DIR);
        await store.remove(pending);
        await store.rename(staging, pending);
      } finally {
        await store.remove(staging);
      }
      this.deps.log.warn({ createdAt: manifest.createdAt, hubVersion: manifest.hubVersion }, 'backup validated and staged; the service restarts into it');
      const restart = this.deps.restart;
      // After the answer is on its way: the restart closes every connection, this one included.
      if (restart) this.deps.timers.setTimeout(() => restart('restore'), 200);
      return { restoring: true as const, restartScheduled: restart !== undefined, backup: manifest };
    });
  }

  private fileOf(name: string) {
    return path.join(this.dir, `${name}.tar.gz`);
  }

  private async describe(name: string): Promise<BackupInfo> {
    const file = this.fileOf(name);
    const stat = await this.deps.files.stat(file);
    let known = this.checksums.get(file);
    if (!known || known.bytes !== stat.size || known.mtimeMs !== stat.mtimeMs) {
      const hash = createHash('sha256');
      for await (const chunk of this.deps.files.readChunks(file)) hash.update(chunk);
      known = { bytes: stat.size, mtimeMs: stat.mtimeMs, sha256: hash.digest('hex') };
      this.checksums.set(file, known);
    }
    return { name, bytes: stat.size, createdAt: Math.round(stat.mtimeMs), sha256: known.sha256, file, scheduled: name.endsWith(SCHEDULED) };
  }
}

