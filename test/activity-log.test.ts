import { io as connect } from 'socket.io-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ActivityLog, ACTIVITY_FLUSH_MS, type NewActivityEntry } from '../src/domain/activity/activity-log.js';
import { ManualClock } from '../src/platform/clock.js';
import type { CallRecord } from '../src/platform/operations.js';
import { openStorage } from '../src/storage/factory.js';
import { KyselyActivityRepository } from '../src/storage/repositories/activity.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { TestDriver, eventually } from './support/ws-driver.js';

type Json = Record<string, unknown>;
type Entry = { operation: string; actor: string | null; subject?: string; subjectName?: string; ok: boolean; code?: string; input?: Json };

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('activity log, through the running hub', () => {
  it("records every account's device commands from REST, the App API and the hub protocol, failures too, and keeps them out of the audit trail", async () => {
    server = await startServer();
    const admin = await server.login();
    const driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.activity');
    driver.serveActions((action) => {
      if (action.command === 'turn_off') throw new Error('relay stuck');
      return { done: action.command };
    });
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Living room lamp', category: 'light', commands: ['turn_on', 'turn_off'], state: { on: false } } });
    const lampId = await eventually(async () => {
      const list = (await (await server!.request('GET', '/app/os/devices', { token: admin })).json()) as { devices: Array<{ id: string; driverDeviceId: string }> };
      return list.devices.find((d) => d.driverDeviceId === 'lamp')?.id;
    });

    // A household member, granted the lamp.
    const created = await server.request('POST', '/admin/users', { token: admin, body: { username: 'anna', password: 'anna-password-1', role: 'user' } });
    expect(created.status).toBe(201);
    const annaId = ((await created.json()) as Json).id as string;
    expect((await server.request('POST', `/admin/users/${annaId}/access`, { token: admin, body: { spaceIds: [], deviceIds: [lampId] } })).status).toBe(200);
    const login = (await (await server.request('POST', '/app/auth/login', { body: { username: 'anna', password: 'anna-password-1' } })).json()) as { data: { token: string } };
    const anna = login.data.token;

    // anna from the App API, the admin from the OS API (one of them fails at the driver), and the admin over the hub protocol.
    expect((await server.request('POST', `/app/devices/${lampId}/command`, { token: anna, body: { command: 'turn_on' } })).status).toBe(200);
    expect((await server.request('POST', `/app/os/devices/${lampId}/command`, { token: admin, body: { command: 'turn_off' } })).status).toBeGreaterThanOrEqual(400);
    const socket = connect(`${server.url}/socket/hub-protocol`, { transports: ['websocket'], auth: { token: admin }, reconnection: false, forceNew: true });
    try {
      const answer = (await socket.emitWithAck('hub:command', { command: 'EXECUTE_DEVICE_COMMAND', payload: { id: lampId, command: 'turn_on', params: { transition: 2 } }, requestId: 'r1' })) as { ok: boolean };
      expect(answer.ok).toBe(true);
    } finally {
      socket.disconnect();
    }

    // Read at once: a read writes what waits first.
    const activity = (await (await server.request('GET', `/app/os/activity?subject=${lampId}`, { token: admin })).json()) as { entries: Entry[]; hasMore: boolean };
    expect(activity.hasMore).toBe(false);
    expect(activity.entries.map((e) => [e.actor, e.operation, e.subject, e.subjectName, e.ok, e.code ?? null, e.input])).toEqual([
      ['admin', 'devices.command', lampId, 'Living room lamp', true, null, { command: 'turn_on', params: { transition: 2 } }],
      ['admin', 'devices.command', lampId, 'Living room lamp', false, 'DRIVER_ERROR', { command: 'turn_off' }],
      ['anna', 'devices.command', lampId, 'Living room lamp', true, null, { command: 'turn_on' }],
    ]);
    // Filters: by account and by operation prefix; and the admin panel's copy.
    const annas = (await (await server.request('GET', '/app/os/activity?actor=anna', { token: admin })).json()) as { entries: Entry[] };
    expect(annas.entries.map((e) => e.operation)).toEqual(['devices.command']);
    const none = (await (await server.request('GET', '/app/os/activity?operation=scenes.', { token: admin })).json()) as { entries: Entry[] };
    expect(none.entries).toEqual([]);
    expect((await server.request('GET', '/admin/activity?limit=1', { token: admin })).status).toBe(200);
    // A household account may not read the whole household's log.
    expect((await server.request('GET', '/app/os/activity', { token: anna })).status).toBe(403);

    // The audit trail keeps the admin's configuration changes, not the commands.
    const audit = (await (await server.request('GET', '/admin/audit?limit=100', { token: admin })).json()) as { entries: Array<{ action: string }> };
    const actions = audit.entries.map((e) => e.action);
    expect(actions).toContain('users.create');
    expect(actions).toContain('access.set');
    expect(actions).not.toContain('devices.command');

    // Concurrent writers: 40 different commands and 30 identical ones at once, from both accounts.
    const distinct = Array.from({ length: 40 }, (_, i) =>
      server!.request('POST', `/app/os/devices/${lampId}/command`, { token: admin, body: { command: 'turn_on', params: { transition: 100 + i } } }),
    );
    const same = Array.from({ length: 30 }, () => server!.request('POST', `/app/devices/${lampId}/command`, { token: anna, body: { command: 'turn_on' } }));
    expect((await Promise.all([...distinct, ...same])).map((r) => r.status)).toEqual(Array(70).fill(200));
    const after = (await (await server.request('GET', `/app/os/activity?subject=${lampId}&limit=500`, { token: admin })).json()) as { entries: Array<Entry & { count?: number }> };
    const burst = after.entries.slice(0, after.entries.length - 3);
    // Every call is there once: each distinct one as an entry, the identical ones counted (in one entry, or a few if a write fell between them).
    const transitions = burst.filter((e) => e.actor === 'admin').map((e) => (e.input as { params: { transition: number } }).params.transition);
    expect(transitions.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => 100 + i));
    expect(burst.filter((e) => e.actor === 'anna').reduce((sum, e) => sum + (e.count ?? 1), 0)).toBe(30);
    driver.close();
  });
});

/** A CallRecord as the registry hands it to observers. */
const call = (i: number, extra: Partial<CallRecord> = {}): CallRecord => ({
  operation: 'devices.command',
  journal: 'activity',
  principal: { userId: 'u1', username: 'anna', role: 'user', scope: 'app', tokenHash: 'h' },
  caller: { clientAddress: '127.0.0.1', requestId: `r${i}` },
  target: { id: `d${i % 3}` },
  input: { id: `d${i % 3}`, command: 'set_brightness', params: { brightness: i, password: 'secret' } },
  ok: true,
  ...extra,
});

describe('activity log batches', () => {
  it('writes at most once a second on the injected clock, at once when a batch is full, and everything on settle', async () => {
    const storage = openStorage({ dataDir: tempDataDir() });
    await storage.migrate();
    const inner = new KyselyActivityRepository(storage.db);
    const batches: number[] = [];
    const repository = {
      insert: async (entries: ReadonlyArray<NewActivityEntry>) => {
        batches.push(entries.length);
        await inner.insert(entries);
      },
      prune: (keep: number) => inner.prune(keep),
      query: inner.query.bind(inner),
    };
    const clock = new ManualClock();
    const log = new ActivityLog(repository, clock, clock, { warn: () => undefined }, (id) => (id === 'd1' ? 'Hall lamp' : undefined));

    for (let i = 0; i < 10; i++) log.onCall(call(i));
    // Calls that are not uses of the home are not this log's.
    log.onCall(call(99, { journal: 'audit', operation: 'users.create' }));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([]);
    expect(log.waiting).toBe(10);
    clock.advance(ACTIVITY_FLUSH_MS - 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([]);
    clock.advance(1);
    await eventually(() => batches.length === 1);
    expect(batches).toEqual([10]);

    // 500 waiting go at once, without the interval.
    for (let i = 0; i < 500; i++) log.onCall(call(i));
    await eventually(() => batches.length === 2);
    expect(batches).toEqual([10, 500]);

    // A read writes what waits first; secrets are masked, the subject named.
    log.onCall(call(1, { ok: false, code: 'DEVICE_OFFLINE' }));
    const { entries } = await log.query({ limit: 2 });
    expect(entries[0]).toMatchObject({ actor: 'anna', operation: 'devices.command', subject: 'd1', subjectName: 'Hall lamp', ok: false, code: 'DEVICE_OFFLINE', input: { command: 'set_brightness', params: { brightness: 1, password: '********' } } });
    expect(batches).toEqual([10, 500, 1]);

    // The same call repeated while its entry waits is one entry with a count; another outcome is another entry.
    for (let i = 0; i < 300; i++) {
      clock.advance(1);
      log.onCall(call(7));
    }
    log.onCall(call(7, { ok: false, code: 'DEVICE_OFFLINE' }));
    const repeated = await log.query({ limit: 3 });
    expect(batches).toEqual([10, 500, 1, 2]);
    const [failed, ok] = repeated.entries;
    expect(failed).toMatchObject({ ok: false, code: 'DEVICE_OFFLINE', subject: 'd1' });
    expect(failed!.count).toBeUndefined();
    expect(ok).toMatchObject({ ok: true, subject: 'd1', count: 300, input: { params: { brightness: 7 } } });
    expect(ok!.lastAt! - ok!.at).toBe(299);
    await storage.close();
  });

  it('keeps the newest entries when pruned', async () => {
    const storage = openStorage({ dataDir: tempDataDir() });
    await storage.migrate();
    const repository = new KyselyActivityRepository(storage.db);
    const entries = Array.from({ length: 30 }, (_, i): NewActivityEntry => ({ at: i, actor: 'anna', operation: 'devices.command', subject: `d${i}`, ok: true }));
    await repository.insert(entries);
    expect(await repository.prune(10)).toBe(20);
    expect(await repository.prune(10)).toBe(0);
    const kept = await repository.query({ limit: 100 });
    expect(kept.entries.map((e) => e.subject)).toEqual(Array.from({ length: 10 }, (_, i) => `d${29 - i}`));
    await storage.close();
  });
});
