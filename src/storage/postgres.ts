import fs from 'node:fs';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { engineStorage, type Storage } from './database.js';
import { exportSnapshot } from './logical-dump.js';
import { pgDriver } from './pg-driver.js';
import type { Database } from './schema.js';

const INT8 = 20;

/**
 * Portable bigints: times and counts are `bigint` columns, which `pg` returns as strings (they may
 * exceed 2^53); the hub's never do (milliseconds since 1970, row counts), so they come back as
 * numbers, as SQLite returns them.
 */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 && format !== 'binary' ? (value: string) => Number(value) : pgDriver().types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** The URL with its password masked, for logs and status pages. */
export function maskedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/** A pool of connections to the database at `url`, bigints as numbers. */
export function createPool(url: string, max = 10): pg.Pool {
  const pool = new (pgDriver().Pool)({ connectionString: url, max, types, connectionTimeoutMillis: 10_000 });
  // A connection the server drops (a restart, a failover, an administrator) must not take the
  // process with it: idle ones are reported by the pool, checked-out ones by themselves, and pg
  // throws an 'error' nobody listens to. The query that used it fails; the next one reconnects.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * PostgreSQL behind Kysely's Postgres dialect, with the same repositories and migrations as
 * SQLite. Commits are durable by PostgreSQL's own defaults (synchronous_commit on, fsync).
 * Backups are logical exports in one repeatable-read transaction.
 */
export function openPostgresStorage(url: string, dataDir: string, poolSize = 10): Storage {
  fs.mkdirSync(dataDir, { recursive: true });
  const pool = createPool(url, poolSize);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return engineStorage({
    engine: 'postgres',
    db,
    pool,
    location: maskedUrl(url),
    dataDir,
    copy: { fileName: 'database.jsonl', backupTo: (file) => exportSnapshot(db, 'postgres', file) },
  });
}
