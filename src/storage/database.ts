import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type Migration, type MigrationProvider } from 'kysely';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

export interface Storage {
  db: Kysely<Database>;
  /** Applies pending migrations; returns every applied migration name, oldest first. */
  migrate(): Promise<string[]>;
  /** A consistent copy of the live database at `file`, taken online with SQLite's backup API. */
  backupTo(file: string): Promise<void>;
  close(): Promise<void>;
}

/** The database's file name under DATA_DIR. */
export const DATABASE_FILE = 'hub.sqlite';

/** Kysely's migration table, where the applied migrations are named. */
const MIGRATION_TABLE = 'kysely_migration';

/** The migrations this version of the hub knows. */
export const knownMigrations = () => Object.keys(migrations);

/** Opens a database file read-only: the migrations applied to it, and SQLite's integrity check ("ok" when sound). */
export async function inspectDatabase(file: string): Promise<{ migrations: string[]; integrity: string }> {
  const sqlite = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const integrity = (sqlite.pragma('integrity_check', { simple: true }) as string) ?? 'unknown';
    const hasTable = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(MIGRATION_TABLE) !== undefined;
    const names = hasTable ? (sqlite.prepare(`SELECT name FROM ${MIGRATION_TABLE} ORDER BY name`).all() as Array<{ name: string }>).map((r) => r.name) : [];
    return { migrations: names, integrity };
  } finally {
    sqlite.close();
  }
}

/**
 * better-sqlite3 behind Kysely, with prepared statements kept by SQL text: Kysely prepares every
 * query anew, which costs more than running it for the small queries a hub makes.
 */
function withStatementCache(sqlite: SQLite.Database, limit = 256) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = sqlite.prepare(sql);
        if (cache.size >= limit) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

class StaticMigrations implements MigrationProvider {
  constructor(private readonly all: Record<string, Migration>) {}
  async getMigrations() {
    return this.all;
  }
}

/**
 * Opens (creating when needed) the SQLite database under dataDir. WAL with synchronous=FULL:
 * a commit that returned is on disk, so an acknowledged write survives a kill -9 and a power
 * cut alike. Migrations run in `migrate()`, forward only.
 */
export function openStorage(dataDir: string): Storage {
  fs.mkdirSync(dataDir, { recursive: true });
  const sqlite = new SQLite(path.join(dataDir, DATABASE_FILE));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');

  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  let closed = false;
  return {
    db,
    async migrate() {
      const migrator = new Migrator({ db, provider: new StaticMigrations(migrations) });
      const { error } = await migrator.migrateToLatest();
      if (error) throw new Error(`database migration failed: ${error instanceof Error ? error.message : String(error)}`);
      return (await migrator.getMigrations()).filter((m) => m.executedAt).map((m) => m.name);
    },
    async backupTo(file: string) {
      await sqlite.backup(file);
      // One self-contained file: the copy leaves WAL mode (the live database's), so no -wal or -shm goes with it.
      const copy = new SQLite(file);
      try {
        copy.pragma('journal_mode = DELETE');
      } finally {
        copy.close();
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
