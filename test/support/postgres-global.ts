import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from './embedded-postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The embedded PostgreSQL server of this test run (superuser URL without a database). */
    postgresAdminUrl: string;
  }
}

/** One PostgreSQL server for the whole test run; each test makes its own database on it (support/postgres.ts). */
export default async function setup(project: TestProject) {
  const server = await startEmbeddedPostgres();
  project.provide('postgresAdminUrl', server.adminUrl);
  return () => server.stop();
}
