import fs from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LogicalDevice } from '../src/domain/devices/model.js';
import type { ProgramRun } from '../src/domain/programs/model.js';
import { knownMigrations, type Storage } from '../src/storage/database.js';
import { openStorage } from '../src/storage/factory.js';
import { KyselyAlertRepository } from '../src/storage/repositories/alerts.js';
import { KyselyAuditRepository } from '../src/storage/repositories/audit.js';
import { KyselyInviteRepository, KyselyTokenRepository, KyselyUserRepository } from '../src/storage/repositories/auth.js';
import { KyselyDeviceRepository, KyselyStateRepository } from '../src/storage/repositories/devices.js';
import { KyselyDocumentRepository } from '../src/storage/repositories/documents.js';
import { KyselyDriverSettingsRepository } from '../src/storage/repositories/driver-settings.js';
import { KyselyFireStore, KyselyProgramRunRepository } from '../src/storage/repositories/programs.js';
import { buildService, spawnServer, type ChildServer } from './support/child.js';
import { ENGINES, engineEnv, type Engine } from './support/postgres.js';
import { ADMIN, startServer, tempDataDir } from './support/server.js';

const opened: Storage[] = [];
const dirs: string[] = [];
const children: ChildServer[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const c of children.splice(0)) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function open(engine: Engine, env?: Record<string, string>) {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const url = (env ?? (await engineEnv(engine))).DATABASE_URL;
  const storage = openStorage({ dataDir, databaseUrl: url });
  opened.push(storage);
  return { storage, dataDir, url };
}

const device = (id: string, at: number, extra: Partial<LogicalDevice> = {}): LogicalDevice => ({
  id,
  name: `Device ${id}`,
  driverKey: 'test-driver',
  driverDeviceId: `drv-${id}`,
  category: 'light',
  room: null,
  tags: [],
  capabilities: ['switch'],
  properties: {},
  commands: [],
  remoteSources: [],
  removed: false,
  createdAt: at,
  updatedAt: at,
  ...extra,
});

beforeAll(() => buildService(), 180_000);

describe.each(ENGINES)('storage on %s', (engine) => {
  it('applies every migration once, in order, and a second opening applies none', async () => {
    const { storage, dataDir, url } = await open(engine);
    expect(await storage.migrate()).toEqual(knownMigrations());
    await storage.close();
    const again = openStorage({ dataDir, databaseUrl: url });
    opened.push(again);
    expect(await again.migrate()).toEqual(knownMigrations());
    expect(again.engine).toBe(engine);
  });

  it('keeps accounts, tokens and invites, with bigints as numbers and names matched without case', async () => {
    const { storage } = await open(engine);
    await storage.migrate();
    const users = new KyselyUserRepository(storage.db);
    const tokens = new KyselyTokenRepository(storage.db);
    const invites = new KyselyInviteRepository(storage.db);
    const big = 1_900_000_000_000;
    await users.insert({ id: 'u1', username: 'Alice', passwordHash: 'h', role: 'admin', disabled: false, mustChangePassword: true, createdAt: big, updatedAt: big });
    await users.insert({ id: 'u2', username: 'bob', passwordHash: 'h', role: 'user', disabled: true, mustChangePassword: false, createdAt: big, updatedAt: big });
    expect((await users.findByUsername('alice'))?.id).toBe('u1');
    expect((await users.findById('u1'))?.createdAt).toBe(big);
    expect((await users.findById('u1'))?.mustChangePassword).toBe(true);
    expect(await users.countEnabledAdmins()).toBe(1);
    expect((await users.list()).map((u) => u.username)).toEqual(['Alice', 'bob']);
    await users.update({ id: 'u2', username: 'bob', passwordHash: 'h2', role: 'admin', disabled: false, mustChangePassword: true, createdAt: big, updatedAt: big + 1 });
    expect((await users.findById('u2'))?.mustChangePassword).toBe(true);
    expect(await users.countEnabledAdmins()).toBe(2);

    await tokens.insert({ tokenHash: 't1', userId: 'u1', kind: 'access', scope: 'admin', createdAt: big, expiresAt: big + 1000 });
    await tokens.insert({ tokenHash: 't2', userId: 'u2', kind: 'access', scope: 'admin', createdAt: big, expiresAt: big + 10 });
    expect((await tokens.listActive(big + 500)).map((t) => t.tokenHash)).toEqual(['t1']);
    expect(await tokens.deleteExpired(big + 500)).toBe(1);
    await users.remove('u1');
    expect(await tokens.listActive(big)).toEqual([]);

    await invites.insert({ id: 'i1', codeHash: 'c1', role: 'user', note: null, createdBy: 'u2', createdAt: big, expiresAt: big + 100, usedAt: null, usedBy: null, revokedAt: null });
    expect((await invites.findByCodeHash('c1'))?.expiresAt).toBe(big + 100);
    await invites.update({ ...(await invites.findById('i1'))!, usedAt: big + 5, usedBy: 'u2' });
    expect((await invites.list())[0]?.usedAt).toBe(big + 5);
    expect(await invites.deleteSettledBefore(big + 50)).toBe(1);
  });

  it('numbers audit entries, pages and prunes them', async () => {
    const { storage } = await open(engine);
    await storage.migrate();
    const audit = new KyselyAuditRepository(storage.db);
    // Two batches (one transaction each), numbered in order.
    await audit.insert([0, 1].map((i) => ({ at: 1000 + i, actor: i % 2 ? 'alice' : null, action: 'users.create', ok: true })));
    await audit.insert([2, 3, 4].map((i) => ({ at: 1000 + i, actor: i % 2 ? 'alice' : null, action: i < 3 ? `users.create` : 'auth.login_failed', ok: true })));
    const { entries, hasMore } = await audit.query({ limit: 3 });
    expect(entries.map((e) => e.id)).toEqual([5, 4, 3]);
    expect(hasMore).toBe(true);
    expect((await audit.query({ limit: 10, action: 'users.' })).entries).toHaveLength(3);
    expect((await audit.query({ limit: 10, actor: 'alice', before: 4 })).entries.map((e) => e.id)).toEqual([2]);
    expect(await audit.prune(2)).toBe(3);
    await audit.insert([{ at: 2000, actor: null, action: 'x', ok: false }]);
    expect((await audit.query({ limit: 10 })).entries.map((e) => e.id)).toEqual([6, 5, 4]);
  });

  it('keeps devices, their state (upserted in batches), driver settings and documents', async () => {
    const { storage } = await open(engine);
    await storage.migrate();
    const devices = new KyselyDeviceRepository(storage.db);
    const state = new KyselyStateRepository(storage.db);
    await devices.save(device('d1', 1));
    await devices.save(device('d1', 1, { name: 'Renamed', updatedAt: 2 }));
    await devices.save(device('d2', 3, { removed: true }));
    expect((await devices.loadAll()).map((d) => [d.id, d.name, d.removed]).sort()).toEqual([['d1', 'Renamed', false], ['d2', 'Device d2', true]]);
    const many = Array.from({ length: 1200 }, (_, i) => ({ deviceId: i % 2 ? 'd1' : 'd2', state: { level: i }, updatedAt: 10_000_000_000_000 + i }));
    await state.saveMany(many);
    await state.saveMany([{ deviceId: 'd1', state: { on: true }, updatedAt: 5 }]);
    const loaded = new Map((await state.loadAll()).map((s) => [s.deviceId, s]));
    expect(loaded.get('d1')).toEqual({ deviceId: 'd1', state: { on: true }, updatedAt: 5 });
    expect(loaded.get('d2')).toEqual({ deviceId: 'd2', state: { level: 1198 }, updatedAt: 10_000_000_000_000 + 1198 });

    const settings = new KyselyDriverSettingsRepository(storage.db);
    await settings.save('drv', { host: 'a' }, 1);
    await settings.save('drv', { host: 'b' }, 2);
    expect(await settings.get('drv')).toEqual({ host: 'b' });
    expect(await settings.get('none')).toBeUndefined();

    const spaces = new KyselyDocumentRepository<{ id: string; name: string }>(storage.db, 'space');
    const zones = new KyselyDocumentRepository<{ id: string; name: string }>(storage.db, 'zone');
    await spaces.save({ id: 'b', name: 'B' }, 1);
    await spaces.save({ id: 'a', name: 'A' }, 1);
    await spaces.save({ id: 'a', name: 'A2' }, 2);
    await zones.save({ id: 'a', name: 'zone' }, 1);
    expect(await spaces.list()).toEqual([{ id: 'a', name: 'A2' }, { id: 'b', name: 'B' }]);
    expect(await spaces.remove('a')).toBe(true);
    expect(await spaces.remove('a')).toBe(false);
    expect(await zones.get('a')).toEqual({ id: 'a', name: 'zone' });
  });

  it('keeps program runs (newest first, pruned), timer fires and alerts (cursor pages, pruned)', async () => {
    const { storage } = await open(engine);
    await storage.migrate();
    const runs = new KyselyProgramRunRepository(storage.db);
    for (let i = 0; i < 4; i++) await runs.save({ id: `r${i}`, programId: 'p', startedAt: 100 + i, status: 'succeeded' } as unknown as ProgramRun);
    expect((await runs.list('p', 2)).map((r) => r.id)).toEqual(['r3', 'r2']);
    await runs.save({ id: 'f1', programId: 'p', startedAt: 50, status: 'failed' } as unknown as ProgramRun);
    await runs.prune('p', 1, 1);
    // The newest run, and apart from it the newest notable one (a failure older than the rest).
    expect((await runs.list('p', 10)).map((r) => r.id)).toEqual(['r3', 'f1']);
    expect((await runs.list('p', 10, { notable: true })).map((r) => r.id)).toEqual(['f1']);
    expect(await runs.get('r3')).toMatchObject({ id: 'r3' });

    const fires = new KyselyFireStore(storage.db);
    expect(await fires.lastFire('p')).toBeUndefined();
    await fires.recordFire('p', 1_800_000_000_000);
    expect(await fires.lastFire('p')).toBe(1_800_000_000_000);

    const alerts = new KyselyAlertRepository(storage.db);
    for (let i = 0; i < 5; i++) await alerts.insert({ id: `a${i}`, at: 1000 + (i >> 1), type: i % 2 ? 'door' : 'smoke', severity: 'warning', message: 'm', deviceId: 'd1' });
    const first = await alerts.query({ limit: 2 });
    expect(first.alerts.map((a) => a.id)).toEqual(['a4', 'a3']);
    const next = await alerts.query({ limit: 2, before: 'a3' });
    expect(next.alerts.map((a) => a.id)).toEqual(['a2', 'a1']);
    expect((await alerts.query({ limit: 10, type: 'door', since: 1001 })).alerts.map((a) => a.id)).toEqual(['a3']);
    expect(await alerts.prune(1001, 2)).toBe(3);
  });

  it('serves what it stored after a restart of the service', async () => {
    const env = await engineEnv(engine);
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const first = await startServer({ env, dataDir });
    const token = await first.login();
    const space = await first.request('POST', '/v1/os/spaces/save', { token, body: { name: 'Kitchen' } });
    expect(space.status).toBeLessThan(300);
    const spaceId = ((await space.json()) as { id: string }).id;
    const user = await first.request('POST', '/admin/users', { token, body: { username: 'carol', password: 'carol-pass-1', role: 'user' } });
    expect(user.status).toBe(201);
    await first.close();

    const second = await startServer({ env, dataDir });
    try {
      expect(second.app.hub.storage.engine).toBe(engine);
      const again = await second.request('GET', `/v1/os/spaces/${spaceId}`, { token });
      expect(again.status).toBe(200);
      expect(((await again.json()) as { name: string }).name).toBe('Kitchen');
      const carol = await second.request('POST', '/app/os/auth/login', { body: { username: 'carol', password: 'carol-pass-1' } });
      expect(carol.status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('keeps an acknowledged write across kill -9 of the service process', async () => {
    const env = { ...(await engineEnv(engine)), DATA_DIR: tempDataDir(), ADMIN_PASSWORD: ADMIN.password };
    dirs.push(env.DATA_DIR);
    const first = await spawnServer(env);
    children.push(first);
    const login = await fetch(`${first.url}/app/os/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const { accessToken } = (await login.json()) as { accessToken: string };
    const created = await fetch(`${first.url}/v1/os/spaces/save`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` }, body: JSON.stringify({ name: 'Hall' }) });
    expect(created.status).toBeLessThan(300);
    const { id } = (await created.json()) as { id: string };
    first.proc.kill('SIGKILL');
    await first.exited;

    const second = await spawnServer(env);
    children.push(second);
    const read = await fetch(`${second.url}/v1/os/spaces/${id}`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(read.status).toBe(200);
    second.proc.kill('SIGTERM');
    await second.exited;
  });
});

describe('storage configuration', () => {
  it('refuses a DATABASE_URL that is not PostgreSQL, naming the variable', async () => {
    const { loadConfig, ConfigError } = await import('../src/config.js');
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x@y/z' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL: 'not a url' })).toThrow(/DATABASE_URL/);
    expect(loadConfig({ DATABASE_URL: '' }).databaseUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: 'postgresql://u:p@127.0.0.1:5432/hcs' }).databaseUrl).toBe('postgresql://u:p@127.0.0.1:5432/hcs');
  });
});
