import { startEmbeddedPostgres } from '../../test/support/embedded-postgres.js';
import { track, untrack, type Resource } from './cleanup.js';

export interface PostgresHandle extends Resource {
  /** A new empty database on the server; its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * PostgreSQL from the `embedded-postgres` package on loopback (the tests' starter): the database
 * the PostgreSQL benchmark runs the service on, on this same machine. Registered for cleanup.
 */
export async function startPostgres(): Promise<PostgresHandle> {
  const server = await startEmbeddedPostgres('hcs-bench-pg');
  const handle: PostgresHandle = {
    label: `postgres at ${server.adminUrl.replace(/:[^:@/]*@/, ':***@')}`,
    createDatabase: (name) => server.createDatabase(name),
    async stop() {
      untrack(handle);
      await server.stop();
    },
    dispose: () => handle.stop(),
    disposeSync() {
      // Nothing synchronous stops PostgreSQL; its temp dir is removed by stop().
    },
  };
  track(handle);
  return handle;
}
