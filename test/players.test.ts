/**
 * The player roster over real HTTP: admin-managed player records, per-user assignments, the App
 * API roster (`POST /integration/player/device/added-devices`) and its status authority, with a
 * real WebSocket driver reporting the linked logical devices. Time moves with the injected clock.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { TestDriver, eventually } from './support/ws-driver.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROSTER = '/integration/player/device/added-devices';
const PASSWORD = 'user-password-1';

interface Answer {
  status: number;
  body: Json;
}

/** A non-admin account, made the way an admin makes one. */
async function createUser(server: TestServer, username: string): Promise<string> {
  const res = await server.request('POST', '/admin/users', { token: await server.login(), body: { username, password: PASSWORD, role: 'user' } });
  expect(res.status).toBe(201);
  return ((await res.json()) as Json).id as string;
}

async function appLogin(server: TestServer, username: string): Promise<string> {
  const res = await server.request('POST', '/app/auth/login', { body: { username, password: PASSWORD } });
  expect(res.status).toBe(200);
  return ((await res.json()) as Json).data.token as string;
}

async function call(server: TestServer, method: string, path: string, token?: string, body?: unknown): Promise<Answer> {
  const res = await server.request(method, path, { ...(token ? { token } : {}), ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: (await res.json()) as Json };
}

async function rosterOf(server: TestServer, token: string, base = '/app'): Promise<Json[]> {
  const { status, body } = await call(server, 'POST', `${base}${ROSTER}`, token);
  expect(status).toBe(200);
  expect(body).toMatchObject({ status: true, message: expect.any(String) });
  return body.data as Json[];
}

const connection = { ip: '192.168.1.40', port: 8443, secure: true, timeoutMs: 3000 };
const iso = (ms: number) => new Date(ms).toISOString();

async function discover(server: TestServer, driverKey: string, devices: Array<{ id: string; name: string }>): Promise<{ driver: TestDriver; ids: Record<string, string> }> {
  const driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, driverKey);
  for (const device of devices) driver.send({ type: 'DEVICE_DISCOVERED', device: { ...device, category: 'media_player', commands: ['play', 'pause'] } });
  const ids = await eventually(() => {
    const found = server.app.hub.devices.registry.list().filter((d) => d.driverKey === driverKey);
    if (found.length !== devices.length || !found.every((d) => server.app.hub.state.peek(d.id)?.online)) return undefined;
    return Object.fromEntries(found.map((d) => [d.driverDeviceId!, d.id]));
  }, 3000, 'devices discovered');
  return { driver, ids };
}

describe('player roster', () => {
  let server: TestServer;
  let clock: ManualClock;
  let admin: string;
  let alice: { id: string; token: string };
  let bob: { id: string; token: string };
  let carol: { id: string; token: string };
  const drivers: TestDriver[] = [];
  const admin$ = (method: string, path: string, body?: unknown) => call(server, method, path, admin, body);

  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
    server = await startServer({ clock });
    admin = await server.login();
    const ids = [await createUser(server, 'alice'), await createUser(server, 'bob'), await createUser(server, 'carol')];
    alice = { id: ids[0]!, token: await appLogin(server, 'alice') };
    bob = { id: ids[1]!, token: await appLogin(server, 'bob') };
    carol = { id: ids[2]!, token: await appLogin(server, 'carol') };
  });
  afterAll(async () => {
    for (const driver of drivers) driver.close();
    await server?.close();
  });

  it('answers 401 in the envelope without a credential', async () => {
    for (const base of ['/app', '/api']) {
      const { status, body } = await call(server, 'POST', `${base}${ROSTER}`);
      expect(status).toBe(401);
      expect(body).toMatchObject({ status: false, data: null, code: 'AUTH_REQUIRED', message: expect.any(String) });
    }
  });

  it('answers an empty array to a user without players, whatever empty body the client sends', async () => {
    const bodies: Array<{ label: string; body?: string; type?: string }> = [
      { label: 'no body, no content type' },
      { label: 'empty JSON body', body: '', type: 'application/json' },
      { label: '{}', body: '{}', type: 'application/json' },
      { label: '{} with charset', body: '{}', type: 'application/json; charset=utf-8' },
    ];
    for (const base of ['/app', '/api']) {
      for (const { label, body, type } of bodies) {
        const res = await server.request('POST', `${base}${ROSTER}`, { token: carol.token, ...(body === undefined ? {} : { body }), headers: type ? { 'content-type': type } : {} });
        expect(res.status, label).toBe(200);
        expect(await res.json(), label).toEqual({ status: true, message: expect.any(String), data: [] });
      }
    }
    const malformed = await server.request('POST', `/app${ROSTER}`, { token: carol.token, body: '{"a":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ status: false, code: 'MALFORMED_JSON', data: null });
  });

  it('refuses the admin routes to a non-admin (403) and to no one (401)', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/admin/players'],
      ['POST', '/admin/players', { name: 'x', connection }],
      ['GET', '/admin/players/some-player'],
      ['DELETE', '/admin/players/some-player'],
      ['POST', '/admin/players/some-player/status', { status: 'online' }],
      ['GET', `/admin/users/${alice.id}/players`],
      ['POST', `/admin/users/${alice.id}/players`, { playerIds: [] }],
    ];
    for (const [method, path, body] of routes) {
      const asUser = await call(server, method, path, alice.token, body);
      expect(asUser.status, `${method} ${path}`).toBe(403);
      expect(asUser.body.error.code).toMatch(/^(INSUFFICIENT_SCOPE|ROLE_REQUIRED)$/);
      expect((await call(server, method, path, undefined, body)).status, `${method} ${path}`).toBe(401);
    }
  });

  it('answers runtime, persisted and unknown status, and a disconnecting driver moves runtime to persisted', async () => {
    const { driver, ids } = await discover(server, 'acme.players.status', [{ id: 'den', name: 'Den Player' }]);
    drivers.push(driver);
    const space = await call(server, 'POST', '/v1/os/spaces/save', admin, { name: 'Den' });
    await call(server, 'POST', `/v1/os/spaces/${space.body.id}/devices/assign`, admin, { deviceIds: [ids.den] });

    const linked = await admin$('POST', '/admin/players', { name: 'Den Player', brand: 'Acme', logicalDeviceId: ids.den, connection, accessDetails: {} });
    expect(linked.status).toBe(200);
    expect(linked.body.created).toBe(true);
    const reported = await admin$('POST', '/admin/players', { name: 'Patio Player', roomId: space.body.id, connection: { ip: 'patio.local', port: 80 } });
    const silent = await admin$('POST', '/admin/players', { name: 'Attic Player', category: 'speaker', connection: { ip: '10.0.0.9', port: 1 } });
    const seenAt = iso(clock.now() - 3_600_000);
    const report = await admin$('POST', `/admin/players/${reported.body.record.id}/status`, { status: 'online', lastSeenAt: seenAt });
    expect(report.status).toBe(200);
    expect(report.body.record.persistedStatus).toEqual({ status: 'online', lastSeenAt: seenAt, origin: 'report' });
    const playerIds = [linked.body.record.id, reported.body.record.id, silent.body.record.id];
    expect((await admin$('POST', `/admin/users/${bob.id}/players`, { playerIds })).body).toEqual({ userId: bob.id, playerIds });

    // By name: Attic, Den, Patio.
    const roster = await rosterOf(server, bob.token);
    expect(roster.map((p) => p.id)).toEqual([playerIds[2], playerIds[0], playerIds[1]]);
    expect(roster[1]).toEqual({
      id: linked.body.record.id,
      logicalDeviceId: ids.den,
      name: 'Den Player',
      brand: 'Acme',
      category: 'media_player',
      room: 'Den',
      roomId: space.body.id,
      accessDetails: [],
      connection,
      online: true,
      status: 'online',
      statusSource: 'runtime',
      lastSeenAt: iso(clock.now()),
    });
    expect(roster[2]).toEqual({
      id: reported.body.record.id,
      name: 'Patio Player',
      category: 'media_player',
      room: 'Den',
      roomId: space.body.id,
      accessDetails: [],
      connection: { ip: 'patio.local', port: 80 },
      online: true,
      status: 'online',
      statusSource: 'persisted',
      lastSeenAt: seenAt,
    });
    expect(roster[0]).toMatchObject({ category: 'speaker', room: '', roomId: null, online: false, status: 'offline', statusSource: 'unknown', lastSeenAt: null });

    clock.advance(90_000);
    const disconnectedAt = clock.now();
    driver.close();
    const after = await eventually(async () => {
      const den = (await rosterOf(server, bob.token, '/api')).find((p) => p.id === linked.body.record.id);
      return den?.statusSource === 'persisted' ? den : undefined;
    }, 3000, 'the player falls back to its persisted status');
    expect(after).toMatchObject({ online: false, status: 'offline', statusSource: 'persisted', lastSeenAt: iso(disconnectedAt) });
    clock.advance(60_000);
    expect((await rosterOf(server, bob.token))[1]).toMatchObject({ id: linked.body.record.id, status: 'offline', statusSource: 'persisted', lastSeenAt: iso(disconnectedAt) });
  });

  it('records a device the driver removes as offline, seen until its removal', async () => {
    const { driver, ids } = await discover(server, 'acme.players.removal', [{ id: 'hall', name: 'Hall Player' }]);
    drivers.push(driver);
    const player = await admin$('POST', '/admin/players', { id: 'hall-player', name: 'Hall Player', logicalDeviceId: ids.hall, connection });
    expect(player.body.record.id).toBe('hall-player');
    expect(player.body.roster).toMatchObject({ statusSource: 'runtime', status: 'online' });
    clock.advance(5_000);
    const removedAt = clock.now();
    driver.send({ type: 'DEVICE_REMOVED', deviceId: 'hall' });
    const entry = await eventually(async () => {
      const { body } = await admin$('GET', '/admin/players/hall-player');
      return body.roster.statusSource === 'persisted' ? body : undefined;
    }, 3000, 'the removed device is no longer live');
    expect(entry.roster).toMatchObject({ online: false, status: 'offline', lastSeenAt: iso(removedAt) });
    expect(entry.record.persistedStatus).toEqual({ status: 'offline', lastSeenAt: iso(removedAt), origin: 'runtime' });
  });

  it('normalizes access details given as an object or as a list, and keeps them as given', async () => {
    const fromObject = { username: 'player', pin: 1234, tls: true };
    const fromList = [
      { key: 'token', value: 'abc' },
      { key: 'zone', value: 5 },
    ];
    const a = await admin$('POST', '/admin/players', { name: 'Object Player', connection, accessDetails: fromObject });
    const b = await admin$('POST', '/admin/players', { name: 'List Player', connection, accessDetails: fromList });
    expect(a.body.record.accessDetails).toEqual(fromObject);
    expect(b.body.record.accessDetails).toEqual(fromList);
    expect((await admin$('POST', `/admin/users/${carol.id}/players`, { playerIds: [a.body.record.id, b.body.record.id] })).status).toBe(200);
    const roster = await rosterOf(server, carol.token);
    expect(roster.map((p) => [p.name, p.accessDetails])).toEqual([
      [
        'List Player',
        [
          { key: 'token', value: 'abc' },
          { key: 'zone', value: '5' },
        ],
      ],
      [
        'Object Player',
        [
          { key: 'username', value: 'player' },
          { key: 'pin', value: '1234' },
          { key: 'tls', value: 'true' },
        ],
      ],
    ]);
    await admin$('POST', `/admin/users/${carol.id}/players`, { playerIds: [] });
    expect(await rosterOf(server, carol.token)).toEqual([]);
  });

  it('gives each user only their own players, and lets go of removed players and users', async () => {
    const mine = await admin$('POST', '/admin/players', { name: 'Alice Player', connection });
    const theirs = await admin$('POST', '/admin/players', { name: 'Shared Player', connection });
    await admin$('POST', `/admin/users/${alice.id}/players`, { playerIds: [theirs.body.record.id, mine.body.record.id, mine.body.record.id] });
    expect((await admin$('GET', `/admin/users/${alice.id}/players`)).body).toEqual({ userId: alice.id, playerIds: [theirs.body.record.id, mine.body.record.id] });
    const bobsBefore = (await rosterOf(server, bob.token)).map((p) => p.id);
    await admin$('POST', `/admin/users/${bob.id}/players`, { playerIds: [...bobsBefore, theirs.body.record.id] });

    // The roster is in name order, not the order the players were assigned in.
    expect((await rosterOf(server, alice.token)).map((p) => p.name)).toEqual(['Alice Player', 'Shared Player']);
    expect((await rosterOf(server, bob.token)).map((p) => p.name)).not.toContain('Alice Player');
    expect((await admin$('GET', `/admin/players/${theirs.body.record.id}`)).body.assignedUserIds.sort()).toEqual([alice.id, bob.id].sort());

    expect((await admin$('DELETE', `/admin/players/${theirs.body.record.id}`)).body).toEqual({ removed: true, id: theirs.body.record.id });
    expect((await rosterOf(server, alice.token)).map((p) => p.name)).toEqual(['Alice Player']);
    expect((await rosterOf(server, bob.token)).map((p) => p.id)).toEqual(bobsBefore);
    expect((await admin$('GET', `/admin/players/${theirs.body.record.id}`)).status).toBe(404);

    // Accounts announce a removal on the event bus; the assignment goes with the account.
    server.app.hub.events.emit('user.removed', { userId: alice.id, username: 'alice', at: clock.now() });
    expect((await admin$('GET', `/admin/users/${alice.id}/players`)).body.playerIds).toEqual([]);
    await admin$('POST', `/admin/users/${alice.id}/players`, { playerIds: [mine.body.record.id] });
  });

  it('refuses unknown users, players, devices and rooms (404) and bad connections (400)', async () => {
    const unknownUser = await admin$('POST', '/admin/users/nobody/players', { playerIds: [] });
    expect(unknownUser.status).toBe(404);
    expect(unknownUser.body.error.code).toBe('USER_NOT_FOUND');
    const unknownPlayer = await admin$('POST', `/admin/users/${bob.id}/players`, { playerIds: ['ghost-1', 'ghost-2'] });
    expect(unknownPlayer.status).toBe(404);
    expect(unknownPlayer.body.error).toMatchObject({ code: 'PLAYER_NOT_FOUND', details: { playerIds: ['ghost-1', 'ghost-2'] } });
    expect((await admin$('GET', '/admin/players/ghost-1')).body.error.code).toBe('PLAYER_NOT_FOUND');
    expect((await admin$('POST', '/admin/players/ghost-1/status', { status: 'offline' })).status).toBe(404);

    const cases: Array<[unknown, number, string]> = [
      [{ name: 'p', logicalDeviceId: 'no-such-device', connection }, 404, 'DEVICE_NOT_FOUND'],
      [{ name: 'p', roomId: 'no-such-space', connection }, 404, 'SPACE_NOT_FOUND'],
      [{ name: 'p', connection: { ip: '192.168.1.300', port: 80 } }, 400, 'PLAYER_ADDRESS_INVALID'],
      [{ name: 'p', connection: { ip: 'bad host', port: 80 } }, 400, 'PLAYER_ADDRESS_INVALID'],
      [{ name: 'p', connection: { ip: '10.0.0.1', port: 0 } }, 400, 'VALIDATION_FAILED'],
      [{ name: 'p', connection: { ip: '10.0.0.1', port: 65536 } }, 400, 'VALIDATION_FAILED'],
      [{ name: 'p', connection, accessDetails: 'user=admin' }, 400, 'VALIDATION_FAILED'],
      [{ name: 'p', connection, accessDetails: [{ key: 'k' }] }, 400, 'VALIDATION_FAILED'],
      [{ id: 'has spaces', name: 'p', connection }, 400, 'VALIDATION_FAILED'],
    ];
    for (const [body, status, code] of cases) {
      const res = await admin$('POST', '/admin/players', body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error.code, JSON.stringify(body)).toBe(code);
    }
    const ipv6 = await admin$('POST', '/admin/players', { name: 'v6', connection: { ip: 'fe80::1', port: 443 } });
    expect(ipv6.status).toBe(200);
    await admin$('DELETE', `/admin/players/${ipv6.body.record.id}`);
  });

  it('keeps the status and createdAt when an admin edits a player, and lists every player with its roster view', async () => {
    const created = await admin$('POST', '/admin/players', { name: 'Edit Me', connection });
    const id = created.body.record.id as string;
    await admin$('POST', `/admin/players/${id}/status`, { status: 'online' });
    clock.advance(1_000);
    const edited = await admin$('POST', '/admin/players', { id, name: 'Edited', brand: 'Zeta', connection: { ip: '10.0.0.2', port: 80 } });
    expect(edited.body.created).toBe(false);
    expect(edited.body.record).toMatchObject({ id, name: 'Edited', brand: 'Zeta', createdAt: created.body.record.createdAt, persistedStatus: { status: 'online', origin: 'report' } });
    // An offline report without a time keeps when the player was last seen.
    const seen = edited.body.record.persistedStatus.lastSeenAt;
    const offline = await admin$('POST', `/admin/players/${id}/status`, { status: 'offline' });
    expect(offline.body.roster).toMatchObject({ status: 'offline', statusSource: 'persisted', lastSeenAt: seen });
    const list = await admin$('GET', '/admin/players');
    const listed = (list.body.players as Json[]).find((p) => p.record.id === id);
    expect(listed).toMatchObject({ record: { name: 'Edited' }, roster: { name: 'Edited', statusSource: 'persisted' }, assignedUserIds: [] });
  });
});

describe('player roster across a restart', () => {
  const dataDir = tempDataDir();
  const clock = new ManualClock(Date.UTC(2026, 3, 1, 8));
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const s of servers.splice(0).reverse()) await s.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the fleet id, the assignment and a real lastSeenAt for a player seen before the hub stopped', async () => {
    const first = await startServer({ clock, dataDir });
    servers.push(first);
    const userId = await createUser(first, 'dave');
    const admin = await first.login();
    const { driver, ids } = await discover(first, 'acme.players.restart', [{ id: 'loft', name: 'Loft Player' }]);
    const created = await call(first, 'POST', '/admin/players', admin, { name: 'Loft Player', logicalDeviceId: ids.loft, connection });
    const id = created.body.record.id as string;
    await call(first, 'POST', `/admin/users/${userId}/players`, admin, { playerIds: [id] });
    expect((await rosterOf(first, await appLogin(first, 'dave')))[0]).toMatchObject({ id, statusSource: 'runtime' });

    clock.advance(30_000);
    const stoppedAt = clock.now();
    await servers.pop()!.close();
    driver.close();
    clock.advance(600_000);

    const second = await startServer({ clock, dataDir });
    servers.push(second);
    const [player] = await rosterOf(second, await appLogin(second, 'dave'));
    expect(player).toMatchObject({ id, logicalDeviceId: ids.loft, online: false, status: 'offline', statusSource: 'persisted', lastSeenAt: iso(stoppedAt) });

    // The driver comes back: the same record, live again.
    const again = await discover(second, 'acme.players.restart', [{ id: 'loft', name: 'Loft Player' }]);
    expect(again.ids.loft).toBe(ids.loft);
    const [live] = await rosterOf(second, await appLogin(second, 'dave'));
    expect(live).toMatchObject({ id, status: 'online', statusSource: 'runtime', lastSeenAt: iso(clock.now()) });
    again.driver.close();
  });
});
