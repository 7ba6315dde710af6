import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from './embedded-postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The embedded PostgreSQL server of this test run (superuser URL without a database). */
    postgresAdminUrl: string;
  }
}

/**
 * embedded-postgres registers async-exit-hook, which calls `process.exit(0)` on `beforeExit`: in
 * Vitest's main process that replaced the failing exit code Vitest sets when a test fails, so a
 * red run exited 0 (CI read it as green). An exit without a code of its own keeps the one set.
 */
function keepFailingExitCode(): void {
  const exit = process.exit.bind(process);
  process.exit = ((code?: number | string | null) => exit(code === undefined || code === null || code === 0 ? (process.exitCode ?? code) : code)) as typeof process.exit;
}

/** One PostgreSQL server for the whole test run; each test makes its own database on it (support/postgres.ts). */
export default async function setup(project: TestProject) {
  keepFailingExitCode();
  const server = await startEmbeddedPostgres();
  project.provide('postgresAdminUrl', server.adminUrl);
  return () => server.stop();
}
