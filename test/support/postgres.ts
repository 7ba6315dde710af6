import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** The engines the storage tests run on: SQLite (no URL) and PostgreSQL (a fresh database). */
export const ENGINES = ['sqlite', 'postgres'] as const;
export type Engine = (typeof ENGINES)[number];

const made: string[] = [];

/** A new, empty database on the run's embedded PostgreSQL server; its URL. */
export async function createTestDatabase(): Promise<string> {
  const admin = inject('postgresAdminUrl');
  const name = `hcs_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: `${admin}/postgres` });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  made.push(name);
  return `${admin}/${name}`;
}

/** The environment that selects the engine: DATABASE_URL for PostgreSQL, nothing for SQLite. */
export async function engineEnv(engine: Engine): Promise<Record<string, string>> {
  return engine === 'postgres' ? { DATABASE_URL: await createTestDatabase() } : {};
}
