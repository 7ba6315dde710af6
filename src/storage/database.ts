import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type pg from 'pg';
import type { DatabaseSnapshots } from '../domain/backups/backup-service.js';
import { migrations } from './migrations/index.js';
import { COPY_FILES } from './files.js';
import { importPendingRestore, inspectDump } from './logical-dump.js';
import { inspectSqliteFile } from './sqlite-inspect.js';
import type { Database } from './schema.js';

/** The database engines the hub runs on. */
export type StorageEngine = 'sqlite' | 'postgres';

/** The database's side of backups, the port the backups module declares. */
export type { DatabaseSnapshots };

export interface Storage {
  readonly engine: StorageEngine;
  readonly db: Kysely<Database>;
  /** PostgreSQL's connection pool (the cluster's LISTEN/NOTIFY and the Socket.IO adapter use it); absent on SQLite. */
  readonly pool?: pg.Pool;
  /** Where the database is, for logs (a file, or a URL without its password). */
  readonly location: string;
  /** Applies pending migrations (then a staged restore, where one waits); returns every applied migration name, oldest first. */
  migrate(): Promise<string[]>;
  /** Whether `migrate` imported a restored backup into the database (the other instances of a cluster must reload). */
  readonly restoredAtStart: boolean;
  readonly snapshots: DatabaseSnapshots;
  close(): Promise<void>;
}

export { COPY_FILES, DATABASE_FILE } from './files.js';

/** The migrations this version of the hub knows. */
export const knownMigrations = () => Object.keys(migrations);

class StaticMigrations implements MigrationProvider {
  constructor(private readonly all: Record<string, Migration>) {}
  async getMigrations() {
    return this.all;
  }
}

/** Runs the one set of migrations on either engine; returns every applied name, oldest first. */
export async function runMigrations(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new StaticMigrations(migrations) });
  const { error } = await migrator.migrateToLatest();
  if (error) throw new Error(`database migration failed: ${error instanceof Error ? error.message : String(error)}`);
  return (await migrator.getMigrations()).filter((m) => m.executedAt).map((m) => m.name);
}

/** Reads a copy of either engine by its name: its migrations, and "ok" or the first problem. */
export function inspectCopy(file: string): Promise<{ migrations: string[]; integrity: string }> {
  return file.endsWith('.sqlite') ? inspectSqliteFile(file) : inspectDump(file);
}

/**
 * What both engines' storages share around their own connection and copy: migrations (then a
 * staged restore, imported row by row), the checks of a copy, and an idempotent close.
 */
export function engineStorage(parts: {
  engine: StorageEngine;
  db: Kysely<Database>;
  pool?: pg.Pool;
  location: string;
  dataDir: string;
  /** The copy's name in a backup, and how it is taken. */
  copy: { fileName: (typeof COPY_FILES)[number]; backupTo(file: string): Promise<void> };
}): Storage {
  const { engine, db, dataDir } = parts;
  let closed = false;
  let restored = false;
  return {
    engine,
    db,
    ...(parts.pool ? { pool: parts.pool } : {}),
    location: parts.location,
    get restoredAtStart() {
      return restored;
    },
    async migrate() {
      const applied = await runMigrations(db);
      restored = await importPendingRestore(db, engine, dataDir);
      // Applied again after an import: the restored rows may come from a hub that had applied fewer.
      return restored ? runMigrations(db) : applied;
    },
    snapshots: { fileName: parts.copy.fileName, readableFiles: COPY_FILES, backupTo: parts.copy.backupTo, inspect: inspectCopy, knownMigrations },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
