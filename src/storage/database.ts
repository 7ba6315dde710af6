import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type pg from 'pg';
import type { DatabaseSnapshots } from '../domain/backups/backup-service.js';
import { migrations } from './migrations/index.js';
import { inspectDump } from './logical-dump.js';
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

/** The SQLite database's file name under DATA_DIR. */
export const DATABASE_FILE = 'hub.sqlite';

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

/** The copy names backups hold: an SQLite file, or a logical export. */
export const COPY_FILES = ['database.sqlite', 'database.jsonl'] as const;

/** Reads a copy of either engine by its name: its migrations, and "ok" or the first problem. */
export function inspectCopy(file: string): Promise<{ migrations: string[]; integrity: string }> {
  return file.endsWith('.sqlite') ? inspectSqliteFile(file) : inspectDump(file);
}
