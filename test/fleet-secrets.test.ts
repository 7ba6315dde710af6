/**
 * The bridge link's token at rest: sealed with the hub's secret key (DATA_DIR/secret.key), so
 * neither the database nor a backup holds it in clear, and the key never travels in a backup. A
 * backup restored on another box (another key) leaves the link needing its token again, with the
 * hub otherwise working; saving the link again fixes it. A token stored in clear by an older hub
 * is used and sealed at the next start. Real servers: A issues the token, B links to it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import SQLite from '../src/storage/sqlite-binding.js';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET_KEY_FILE } from '../src/platform/secret-box.js';
import { KyselyDocumentRepository } from '../src/storage/repositories/documents.js';
import { applyPendingRestore } from '../src/storage/restore.js';
import { openSqliteStorage } from '../src/storage/sqlite.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';

const FAST = { BRIDGE_POLL_INTERVAL_MS: '150', BRIDGE_MAX_BACKOFF_MS: '300', BRIDGE_REQUEST_TIMEOUT_MS: '1500', ACTION_TIMEOUT_MS: '1500' };
const TOKEN_UNREADABLE = /the link's token was sealed with another hub's key: save the link again/;
const dataB = tempDataDir();
const dataC = tempDataDir();
let a: TestServer;
let b: TestServer;
let c: TestServer | undefined;
let tokenA: string;
let tokenB: string;
let bridgeToken: string;
let hubA: string;

type Json = Record<string, unknown>;
const json = async (res: Response) => (await res.json()) as Json;
const linkOf = async (server: TestServer, token: string) => {
  const res = await server.request('GET', '/v1/os/bridge/link', { token });
  expect(res.status).toBe(200);
  return json(res);
};

/** Every file under a folder, by path relative to it. */
function filesUnder(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const rel of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const full = path.join(dir, rel);
    if (fs.statSync(full).isFile()) out.set(rel.split(path.sep).join('/'), fs.readFileSync(full));
  }
  return out;
}

/** The stored link record, read from the SQLite file beside the running hub. */
function storedLink(dataDir: string): Json | undefined {
  const db = new SQLite(path.join(dataDir, 'hub.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare("SELECT body FROM documents WHERE kind = 'fleet_link' AND id = 'link'").get() as { body: string } | undefined;
    return row ? (JSON.parse(row.body) as Json) : undefined;
  } finally {
    db.close();
  }
}

function writeStoredLink(dataDir: string, body: Json): void {
  const db = new SQLite(path.join(dataDir, 'hub.sqlite'), { fileMustExist: true });
  try {
    db.prepare("INSERT INTO documents (kind, id, body, updated_at) VALUES ('fleet_link', 'link', ?, ?) ON CONFLICT (kind, id) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at").run(
      JSON.stringify(body),
      Date.now(),
    );
  } finally {
    db.close();
  }
}

/** A backup taken and downloaded through the backups API. */
async function backupOf(server: TestServer, token: string): Promise<Buffer> {
  const created = await server.request('POST', '/admin/backups', { token, body: {} });
  expect(created.status).toBe(201);
  const { name } = (await created.json()) as { name: string };
  const download = await server.request('GET', `/admin/backups/${name}/download`, { token });
  expect(download.status).toBe(200);
  return Buffer.from(await download.arrayBuffer());
}

/** An archive's entries: path and content. */
function entriesOf(archive: Buffer): Map<string, Buffer> {
  const dir = fs.mkdtempSync(path.join(dataB, '..', 'hcs-fleet-secrets-'));
  try {
    fs.writeFileSync(path.join(dir, 'in.tar.gz'), archive);
    fs.mkdirSync(path.join(dir, 'x'));
    tar.x({ file: path.join(dir, 'in.tar.gz'), cwd: path.join(dir, 'x'), sync: true });
    return filesUnder(path.join(dir, 'x'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  a = await startServer({ env: FAST });
  b = await startServer({ dataDir: dataB, env: FAST });
  tokenA = await a.login();
  tokenB = await b.login();
  const issued = (await json(await a.request('POST', '/v1/os/bridge/token', { token: tokenA, body: {} }))) as { token: string; hubId: string };
  bridgeToken = issued.token;
  hubA = issued.hubId;
}, 60_000);
afterAll(async () => {
  await c?.close();
  await b?.close();
  await a?.close();
  for (const dir of [dataB, dataC]) fs.rmSync(dir, { recursive: true, force: true });
});

describe("the bridge link's token at rest", () => {
  it('stores the token sealed: no file under DATA_DIR holds it in clear, and the key is 0600', async () => {
    const saved = await b.request('POST', '/v1/os/bridge/link/save', { token: tokenB, body: { peerUrl: a.url, token: bridgeToken } });
    expect(saved.status).toBe(200);
    expect(await saved.json()).toMatchObject({ state: 'linked', peerUrl: a.url, peerHubId: hubA });

    const stored = storedLink(dataB)!;
    expect(stored).toMatchObject({ peerUrl: a.url, peerHubId: hubA, token: expect.stringMatching(/^v1:/) });
    expect(stored.token).not.toContain(bridgeToken);
    // The database file and its WAL (where the newest pages are), and everything else in the folder.
    const files = filesUnder(dataB);
    expect([...files.keys()]).toEqual(expect.arrayContaining(['hub.sqlite', SECRET_KEY_FILE]));
    for (const [name, bytes] of files) expect(bytes.includes(bridgeToken), `${name} holds the token in clear`).toBe(false);
    const key = files.get(SECRET_KEY_FILE)!;
    expect(key).toHaveLength(32);
    if (process.platform !== 'win32') expect(fs.statSync(path.join(dataB, SECRET_KEY_FILE)).mode & 0o777).toBe(0o600);
  });

  it('keeps the link across a restart with the same key', async () => {
    await b.close();
    b = await startServer({ dataDir: dataB, env: FAST });
    tokenB = await b.login();
    await eventually(async () => (await linkOf(b, tokenB)).state === 'linked', 10_000, 'linked again after the restart');
  });

  it('puts neither the token in clear nor the secret key in a backup', async () => {
    const archive = await backupOf(b, tokenB);
    const key = fs.readFileSync(path.join(dataB, SECRET_KEY_FILE));
    const raw = gunzipSync(archive);
    expect(raw.includes(bridgeToken), 'the tar holds the token in clear').toBe(false);
    expect(raw.includes(key), 'the tar holds the key bytes').toBe(false);
    expect(raw.includes(SECRET_KEY_FILE), 'the tar names secret.key').toBe(false);
    const entries = entriesOf(archive);
    expect([...entries.keys()]).toContain('database.sqlite');
    expect([...entries.keys()].filter((name) => path.posix.basename(name) === SECRET_KEY_FILE)).toEqual([]);
    for (const [name, bytes] of entries) {
      expect(bytes.includes(bridgeToken), `${name} holds the token in clear`).toBe(false);
      expect(bytes.includes(key), `${name} holds the key`).toBe(false);
    }
    // The copy does hold the link, sealed.
    const copy = new SQLite(entries.get('database.sqlite')!);
    try {
      const body = JSON.parse((copy.prepare("SELECT body FROM documents WHERE kind = 'fleet_link'").get() as { body: string }).body) as Json;
      expect(body.token).toMatch(/^v1:/);
    } finally {
      copy.close();
    }
  });

  it('restored on another box (another key), the link needs its token again, the hub answers normally, and saving the link again fixes it', async () => {
    const archive = await backupOf(b, tokenB);
    c = await startServer({ dataDir: dataC, env: FAST });
    let tokenC = await c.login();
    const restore = await c.request('POST', '/admin/backups/restore', { token: tokenC, body: { archive: archive.toString('base64') } });
    expect(restore.status, await restore.clone().text()).toBe(202);
    // What the in-process restart does (main.ts): stop, apply the staged restore, start again.
    await c.close();
    expect(applyPendingRestore(dataC, c.config.driversDir, 'sqlite')).toBeTruthy();
    c = await startServer({ dataDir: dataC, env: FAST });
    tokenC = await c.login();
    expect(fs.readFileSync(path.join(dataC, SECRET_KEY_FILE)).equals(fs.readFileSync(path.join(dataB, SECRET_KEY_FILE)))).toBe(false);
    expect((await fetch(`${c.url}/readyz`)).status).toBe(200);

    const link = await linkOf(c, tokenC);
    expect(link).toMatchObject({ state: 'needs_token', peerUrl: a.url, peerHubId: hubA, lastError: expect.stringMatching(TOKEN_UNREADABLE), nextAttemptAt: null });
    // It does not keep trying with a token it cannot read.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await linkOf(c, tokenC)).toMatchObject({ state: 'needs_token', failures: 0 });

    const fleet = await c.request('GET', '/v1/os/home-fleet-devices', { token: tokenC });
    expect(fleet.status).toBe(200);
    expect(((await fleet.json()) as { devices: Json[] }).devices.filter((d) => d.origin === 'peer')).toEqual([]);
    const command = await c.request('POST', '/v1/os/integration/home/device/command', { token: tokenC, body: { fleetDeviceId: `${hubA}:lamp`, command: 'turn_on' } });
    expect(command.status).toBe(503);
    expect(((await command.json()) as { error: Json }).error).toMatchObject({ code: 'BRIDGE_TOKEN_UNREADABLE', message: expect.stringMatching(/sealed with another hub's key: save the link again/) });
    // The rest of the restored home is there.
    expect((await c.request('GET', '/v1/os/devices', { token: tokenC })).status).toBe(200);

    const saved = await c.request('POST', '/v1/os/bridge/link/save', { token: tokenC, body: { peerUrl: a.url, token: bridgeToken } });
    expect(saved.status).toBe(200);
    expect(await saved.json()).toMatchObject({ state: 'linked', peerHubId: hubA, lastError: null });
    expect(storedLink(dataC)!.token).toMatch(/^v1:/);
    await c.close();
    c = await startServer({ dataDir: dataC, env: FAST });
    tokenC = await c.login();
    await eventually(async () => (await linkOf(c!, tokenC)).state === 'linked', 10_000, 'linked after a restart with its own key');
  });

  it('does not present a sealed token to a peer URL changed in the database behind its back', async () => {
    await b.close();
    const stored = storedLink(dataB)!;
    writeStoredLink(dataB, { ...stored, peerUrl: 'http://127.0.0.1:9' });
    b = await startServer({ dataDir: dataB, env: FAST });
    tokenB = await b.login();
    expect(await linkOf(b, tokenB)).toMatchObject({ state: 'needs_token', peerUrl: 'http://127.0.0.1:9', lastError: expect.stringMatching(TOKEN_UNREADABLE) });
  });

  it('reads a token stored in clear by an older hub, and seals it at the next start', async () => {
    await b.close();
    const now = Date.now();
    writeStoredLink(dataB, { id: 'link', peerUrl: a.url, token: bridgeToken, peerHubId: null, createdAt: now, updatedAt: now });
    expect(storedLink(dataB)!.token).toBe(bridgeToken);
    b = await startServer({ dataDir: dataB, env: FAST });
    tokenB = await b.login();
    await eventually(async () => (await linkOf(b, tokenB)).state === 'linked', 10_000, 'linked with the token stored in clear');
    const stored = storedLink(dataB)!;
    expect(stored).toMatchObject({ peerUrl: a.url, token: expect.stringMatching(/^v1:/) });
    expect(stored.token).not.toContain(bridgeToken);
    // A backup taken now holds no trace of the clear value (the copy keeps no freed space).
    const raw = gunzipSync(await backupOf(b, tokenB));
    expect(raw.includes(bridgeToken), 'the backup still holds the old clear token').toBe(false);
    // Sealed with this hub's key: read again at the next start.
    await b.close();
    b = await startServer({ dataDir: dataB, env: FAST });
    tokenB = await b.login();
    await eventually(async () => (await linkOf(b, tokenB)).state === 'linked', 10_000, 'linked with the sealed token');
    expect(storedLink(dataB)!.token).toBe(stored.token);
  });
});

describe('an SQLite backup copy', () => {
  it('keeps nothing the database freed: a value replaced in place (a token once kept in clear) is not in the copy', async () => {
    const dir = tempDataDir();
    const storage = openSqliteStorage(dir);
    try {
      await storage.migrate();
      const docs = new KyselyDocumentRepository<{ id: string; token: string; note: string }>(storage.db, 'fleet_link');
      const filler = new KyselyDocumentRepository<{ id: string; text: string }>(storage.db, 'filler');
      for (let i = 0; i < 10; i++) await filler.save({ id: `f${i}`, text: 'x'.repeat(150) }, 1);
      const clear = `CLEARTOKEN${'q'.repeat(33)}`;
      await docs.save({ id: 'link', token: clear, note: 'old' }, 1);
      for (let i = 10; i < 12; i++) await filler.save({ id: `f${i}`, text: 'x'.repeat(150) }, 1);
      await docs.save({ id: 'link', token: `v1:${'z'.repeat(100)}`, note: 'sealed' }, 2);
      const copy = path.join(dir, 'copy.sqlite');
      await storage.snapshots.backupTo(copy);
      expect(fs.readFileSync(copy).includes(clear), 'the copy holds the replaced value').toBe(false);
      expect(await storage.snapshots.inspect(copy)).toMatchObject({ integrity: 'ok' });
    } finally {
      await storage.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
