import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createDatabaseAt } from './embedded-postgres.js';

/** The engines the storage tests run on: SQLite (no URL) and PostgreSQL (a fresh database). */
export const ENGINES = ['sqlite', 'postgres'] as const;
export type Engine = (typeof ENGINES)[number];

/** A new, empty database on the run's embedded PostgreSQL server; its URL. */
export function createTestDatabase(): Promise<string> {
  return createDatabaseAt(inject('postgresAdminUrl'), `hcs_${randomBytes(6).toString('hex')}`);
}

/** The environment that selects the engine: DATABASE_URL for PostgreSQL, nothing for SQLite. */
export async function engineEnv(engine: Engine): Promise<Record<string, string>> {
  return engine === 'postgres' ? { DATABASE_URL: await createTestDatabase() } : {};
}
