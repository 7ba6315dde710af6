import fs from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock.js';
import { makeTarGz } from './support/archives.js';
import { buildService, spawnServer, type ChildServer } from './support/child.js';
import { ENGINES, engineEnv } from './support/postgres.js';
import { ADMIN, startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';

type Json = Record<string, unknown>;
const children: ChildServer[] = [];
const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

beforeAll(() => buildService(), 180_000);

const client = (base: () => string) => {
  let token = '';
  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${base()}${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return res;
  };
  const login = async () => {
    const res = await fetch(`${base()}/app/os/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = ((await res.json()) as { accessToken: string }).accessToken;
  };
  return { call, login };
};

describe.each(ENGINES)('backups on %s', (engine) => {
  it('restores, from a backup taken under write load, every write acknowledged before the backup started', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const server = await spawnServer({ ...(await engineEnv(engine)), DATA_DIR: dataDir, ADMIN_PASSWORD: ADMIN.password });
    children.push(server);
    const { call, login } = client(() => server.url);
    await login();

    // Four writers, each creating spaces one after another, each acknowledged write recorded.
    const acked: string[] = [];
    let writing = true;
    let n = 0;
    const writer = async () => {
      for (let i = 0; writing && i < 5000; i++) {
        const res = await call('POST', '/v1/os/spaces/save', { name: `w-${n++}` });
        if (res.status === 200) acked.push(((await res.json()) as { id: string }).id);
      }
    };
    const writers = Array.from({ length: 4 }, () => writer());
    await eventually(() => acked.length >= 40, 10_000, 'writes under way');
    const before = [...acked];
    const backup = await call('POST', '/admin/backups', {});
    const info = (await backup.json()) as { name: string };
    expect(backup.status, JSON.stringify(info)).toBe(201);
    const during = acked.length - before.length;
    writing = false;
    await Promise.all(writers);
    expect(during).toBeGreaterThan(0);
    const archive = Buffer.from(await (await call('GET', `/admin/backups/${info.name}/download`)).arrayBuffer());
    const later = (await (await call('POST', '/v1/os/spaces/save', { name: 'after the backup' })).json()) as { id: string };

    const restore = await call('POST', '/admin/backups/restore', { archive: archive.toString('base64') });
    expect(restore.status, await restore.clone().text()).toBe(202);
    await eventually(async () => server.lines.some((l) => l.includes('a backup was restored')) && (await fetch(`${server.url}/readyz`)).status === 200, 20_000, 'back after the restore');
    await login();
    const { spaces } = (await (await call('GET', '/v1/os/spaces')).json()) as { spaces: Array<{ id: string }> };
    const restored = new Set(spaces.map((s) => s.id));
    expect(before.filter((id) => !restored.has(id))).toEqual([]);
    expect(restored.has(later.id)).toBe(false);
  }, 60_000);
});

describe('restores on PostgreSQL', () => {
  it('refuses a dump of a newer schema (409), a damaged copy and two copies (400), changing nothing', async () => {
    const env = await engineEnv('postgres');
    const server = await startServer({ env });
    servers.push(server);
    const { call, login } = client(() => server.url);
    await login();
    const manifest = JSON.stringify({ format: 1, createdAt: Date.now(), hubVersion: '9.9.9', migrations: [] });
    const newer = makeTarGz([
      { name: 'backup.json', data: manifest },
      { name: 'database.jsonl', data: `${JSON.stringify({ format: 'hcs-logical-dump', version: 1, engine: 'postgres', migrations: ['0001-initial', '9999-future'] })}\n` },
    ]);
    const refused = await call('POST', '/admin/backups/restore', { archive: newer.toString('base64') });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: Json }).error.code).toBe('BACKUP_SCHEMA_NEWER');

    const sqlite = makeTarGz([{ name: 'backup.json', data: manifest }, { name: 'database.sqlite', data: Buffer.from('SQLite format 3\0') }]);
    const truncated = await call('POST', '/admin/backups/restore', { archive: sqlite.toString('base64') });
    expect(truncated.status).toBe(400);
    const both = makeTarGz([
      { name: 'backup.json', data: manifest },
      { name: 'database.sqlite', data: Buffer.from('SQLite format 3\0') },
      { name: 'database.jsonl', data: '{}\n' },
    ]);
    const two = await call('POST', '/admin/backups/restore', { archive: both.toString('base64') });
    expect(two.status).toBe(400);
    expect(JSON.stringify(await two.json())).toContain('one database copy');

    const damaged = makeTarGz([{ name: 'backup.json', data: manifest }, { name: 'database.jsonl', data: `${JSON.stringify({ format: 'hcs-logical-dump', version: 1, engine: 'postgres', migrations: [] })}\n["users", "not a row"]\n` }]);
    const bad = await call('POST', '/admin/backups/restore', { archive: damaged.toString('base64') });
    expect(bad.status).toBe(400);
    expect(fs.existsSync(`${server.dataDir}/restore-pending`)).toBe(false);
  });
});

describe('moving a home between engines', () => {
  it('restores a SQLite backup onto PostgreSQL, and a PostgreSQL backup onto SQLite', async () => {
    const start = async (env: Record<string, string>) => {
      const dataDir = tempDataDir();
      dirs.push(dataDir);
      const server = await spawnServer({ ...env, DATA_DIR: dataDir, ADMIN_PASSWORD: ADMIN.password });
      children.push(server);
      const c = client(() => server.url);
      await c.login();
      return { server, ...c };
    };
    const backupOf = async (side: Awaited<ReturnType<typeof start>>) => {
      const { name } = (await (await side.call('POST', '/admin/backups', {})).json()) as { name: string };
      return Buffer.from(await (await side.call('GET', `/admin/backups/${name}/download`)).arrayBuffer());
    };
    const restoreInto = async (side: Awaited<ReturnType<typeof start>>, archive: Buffer) => {
      const res = await side.call('POST', '/admin/backups/restore', { archive: archive.toString('base64') });
      expect(res.status, await res.clone().text()).toBe(202);
      await eventually(async () => side.server.lines.some((l) => l.includes('a backup was restored')) && (await fetch(`${side.server.url}/readyz`)).status === 200, 20_000, 'back after the restore');
      await side.login();
    };
    const spaceNames = async (side: Awaited<ReturnType<typeof start>>) => ((await (await side.call('GET', '/v1/os/spaces')).json()) as { spaces: Array<{ name: string }> }).spaces.map((s) => s.name).sort();

    const box = await start({});
    for (const name of ['Kitchen', 'Hall']) expect((await box.call('POST', '/v1/os/spaces/save', { name })).status).toBe(200);
    expect((await box.call('POST', '/admin/users', { username: 'dora', password: 'dora-password', role: 'user' })).status).toBe(201);
    const fromBox = await backupOf(box);

    const cluster = await start(await engineEnv('postgres'));
    await restoreInto(cluster, fromBox);
    expect(await spaceNames(cluster)).toEqual(['Hall', 'Kitchen']);
    const dora = await fetch(`${cluster.server.url}/app/os/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'dora', password: 'dora-password' }) });
    expect(dora.status).toBe(200);
    // The audit trail's numbers carry on after the restored ones.
    expect((await cluster.call('POST', '/v1/os/spaces/save', { name: 'Lobby' })).status).toBe(200);
    const fromCluster = await backupOf(cluster);

    const back = await start({});
    await restoreInto(back, fromCluster);
    expect(await spaceNames(back)).toEqual(['Hall', 'Kitchen', 'Lobby']);
  }, 60_000);
});

describe('scheduled backups', () => {
  it('take a backup at every slot of BACKUP_SCHEDULE and keep the newest BACKUP_KEEP of them, leaving requested ones alone', async () => {
    const clock = new ManualClock(Date.parse('2026-11-25T10:00:30Z'));
    const server = await startServer({ clock, timers: clock, env: { BACKUP_SCHEDULE: '* * * * *', BACKUP_KEEP: '2', BACKUP_KEEP_DAYS: '30' } });
    servers.push(server);
    const { call, login } = client(() => server.url);
    await login();
    const requested = (await (await call('POST', '/admin/backups', {})).json()) as { name: string; scheduled: boolean };
    expect(requested.scheduled).toBe(false);
    const list = async () => (await (await call('GET', '/admin/backups')).json()) as { backups: Array<{ name: string; scheduled: boolean }>; schedule: Json };
    expect((await list()).schedule).toEqual({ cron: '* * * * *', keep: 2, keepDays: 30, nextAt: Date.parse('2026-11-25T10:01:00Z') });
    const seen = new Set<string>();
    for (let minute = 1; minute <= 4; minute++) {
      // A backup asked for while the slot falls: one of the two waits for the other (the asked-for
      // one may be refused as busy, the scheduled one never is: it runs once the other is done).
      const asked = minute === 1 ? call('POST', '/admin/backups', {}) : undefined;
      clock.advance(60_000);
      if (asked) expect([201, 409]).toContain((await asked).status);
      await eventually(async () => {
        const scheduled = (await list()).backups.filter((b) => b.scheduled);
        for (const b of scheduled) seen.add(b.name);
        return seen.size === minute && scheduled.length === Math.min(minute, 2);
      }, 10_000, `the scheduled backup of minute ${minute}`);
    }
    const { backups } = await list();
    expect(backups.filter((b) => b.scheduled)).toHaveLength(2);
    expect(backups.map((b) => b.name)).toContain(requested.name);
    expect([...seen].every((name) => name.endsWith('-scheduled'))).toBe(true);
  });

  it('refuses a BACKUP_SCHEDULE that is not a cron pattern, naming it', async () => {
    const { loadConfig } = await import('../src/config.js');
    expect(() => loadConfig({ BACKUP_SCHEDULE: 'every night' })).toThrow(/BACKUP_SCHEDULE/);
  });
});
