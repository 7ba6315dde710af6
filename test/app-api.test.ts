/**
 * The legacy App API (`/app`, `/api`) over the real server: every prefix answering in the
 * `{status, message, data}` envelope with a session cookie or a bearer token, and per-user
 * visibility: a user without the admin role sees only the spaces and devices granted to them,
 * and anything else answers as if it did not exist. A real WebSocket driver carries the commands.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_API_BASES } from '../src/surfaces/http/app-api/index.js';
import { startServer, type TestServer } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  body: Json;
}

/** How an App API client presents itself: the session cookie the login set (with its CSRF token), or its token as a bearer. */
interface Session {
  token: string;
  cookie: string;
  csrfToken?: string;
}

const PASSWORD = 'user-password-1';
const DEVICES = [
  { id: 'lamp', name: 'Reading Lamp', category: 'light', commands: ['turn_on', 'turn_off'], state: { on: false } },
  { id: 'tv', name: 'Lounge TV', category: 'tv', commands: ['power_on', 'power_off', 'select_input'], state: { power: 'off' } },
  { id: 'fan', name: 'Ceiling Fan', category: 'switch', commands: ['turn_on', 'turn_off'], state: { on: false } },
  { id: 'heater', name: 'Bedroom Heater', category: 'switch', commands: ['turn_on', 'turn_off'], state: { on: false } },
] as const;
type DeviceKey = (typeof DEVICES)[number]['id'];

let server: TestServer;
let driver: TestDriver;
/** Every ACTION the driver received, with the driver's own device id. */
const actions: Message[] = [];
let adminToken: string;
let admin: Session;
/** Granted the living room and the fan (which is in the bedroom). */
let alice: Session;
/** Granted nothing. */
let bob: Session;
// Account ids, filled in as the accounts are created.
const users = { alice: '', bob: '', carol: '' };
const ids = {} as Record<DeviceKey, string>;
const spaces = { living: '', bedroom: '' };
let programId: string;
let sequenceId: string;

/** A non-admin account, made the way an admin makes one; its id replaces the placeholder in `users`. */
async function createUser(username: keyof typeof users): Promise<void> {
  const res = await server.request('POST', '/admin/users', { token: adminToken, body: { username, password: PASSWORD, role: 'user' } });
  expect(res.status).toBe(201);
  users[username] = ((await res.json()) as Json).id as string;
}

async function appLogin(username: string, password: string): Promise<Session> {
  const res = await server.request('POST', '/app/auth/login', { body: { username, password } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Json;
  return { token: body.data.token, cookie: res.headers.get('set-cookie')!.split(';')[0]!, csrfToken: body.data.csrfToken };
}

/** An App API call; with a session, by bearer token unless `viaCookie` (then with the CSRF token, as a client of the cookie sends it). */
async function app(method: string, path: string, session?: Session, body?: unknown, viaCookie = false): Promise<Answer> {
  const auth = session ? (viaCookie ? { headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken ?? '' } } : { token: session.token }) : {};
  const res = await server.request(method, path, { ...auth, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: (await res.json()) as Json };
}

async function os(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await server.request(method, `/v1/os${path}`, { token: adminToken, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: (await res.json()) as Json };
}

async function ok(answer: Promise<Answer>): Promise<Json> {
  const { status, body } = await answer;
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

function expectFailure(answer: Answer, status: number, code: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body).toMatchObject({ status: false, data: null, code });
  expect(typeof answer.body.message).toBe('string');
}

const idsOf = (list: Json[], field = 'id') => list.map((item) => item[field] as string).sort();

beforeAll(async () => {
  server = await startServer();
  adminToken = await server.login();
  for (const name of Object.keys(users) as Array<keyof typeof users>) await createUser(name);

  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.appapi');
  driver.serveActions((action) => {
    actions.push(action);
    return { done: action.command };
  });
  for (const device of DEVICES) driver.send({ type: 'DEVICE_DISCOVERED', device });
  const listed = await eventually(
    async () => {
      const devices = (await os('GET', '/devices')).body.devices as Json[];
      return devices.length === DEVICES.length && devices.every((d) => d.online) ? devices : undefined;
    },
    3000,
    'devices discovered',
  );
  for (const device of listed) ids[device.driverDeviceId as DeviceKey] = device.id;

  spaces.living = (await ok(os('POST', '/spaces/save', { name: 'Living room' }))).id;
  spaces.bedroom = (await ok(os('POST', '/spaces/save', { name: 'Bedroom' }))).id;
  await ok(os('POST', `/spaces/${spaces.living}/devices/assign`, { deviceIds: [ids.lamp, ids.tv] }));
  await ok(os('POST', `/spaces/${spaces.bedroom}/devices/assign`, { deviceIds: [ids.fan, ids.heater] }));
  await ok(os('POST', `/devices/${ids.tv}/metadata`, { remoteSources: [{ id: 'console', label: 'Game console', input: 'hdmi2' }] }));
  await ok(os('POST', '/zones/save', { name: 'Everywhere', deviceIds: [ids.lamp, ids.heater] }));
  await ok(os('POST', '/zones/save', { name: 'Bedroom only', deviceIds: [ids.heater] }));
  await ok(os('POST', '/action-maps/save', { name: 'Lamp', controlKey: 'red', deviceId: ids.lamp, command: 'turn_on' }));
  await ok(os('POST', '/action-maps/save', { name: 'Heat', controlKey: 'blue', deviceId: ids.heater, command: 'turn_on' }));
  programId = (await ok(os('POST', '/programs/save', { name: 'Evening', steps: [{ type: 'command', deviceId: ids.lamp, command: 'turn_on' }] }))).id;
  sequenceId = (await ok(os('POST', '/macros/save', { name: 'Heat up', steps: [{ deviceId: ids.heater, command: 'turn_on' }] }))).id;

  await ok(app('POST', `/admin/users/${users.alice}/access`, { token: adminToken, cookie: '' }, { spaceIds: [spaces.living], deviceIds: [ids.fan] }));
  admin = await appLogin('admin', 'test-password-1');
  alice = await appLogin('alice', PASSWORD);
  bob = await appLogin('bob', PASSWORD);
});

afterAll(async () => {
  driver?.close();
  await server?.close();
});

describe('App API prefixes', () => {
  const reads = () => [
    { path: '/devices', list: true },
    { path: `/devices/${ids.lamp}` },
    { path: '/entity', list: true },
    { path: '/room', list: true },
    { path: `/room/${spaces.living}` },
    { path: `/room/${spaces.living}/devices`, list: true },
    { path: `/room/${spaces.living}/sources`, list: true },
    { path: '/integration', list: true },
    { path: '/integration/drivers' },
    { path: '/programs', list: true },
    { path: `/programs/${programId}` },
    { path: '/sequences', list: true },
    { path: `/sequences/${sequenceId}` },
    { path: '/zones', list: true },
    { path: '/action-maps', list: true },
  ];

  it('answers every prefix in the envelope under /app and /api, with the session cookie and with a bearer token', async () => {
    for (const base of APP_API_BASES) {
      for (const { path, list } of reads()) {
        for (const viaCookie of [false, true]) {
          const label = `${base}${path} (${viaCookie ? 'cookie' : 'bearer'})`;
          const { status, body } = await app('GET', `${base}${path}`, admin, undefined, viaCookie);
          expect(status, label).toBe(200);
          expect(body.status, label).toBe(true);
          expect(typeof body.message, label).toBe('string');
          if (list) expect(Array.isArray(body.data), `${label} answers an array`).toBe(true);
          else expect(body.data, label).toEqual(expect.any(Object));
        }
      }
    }
    const entity = (await ok(app('GET', '/api/entity', admin))).data[0] as Json;
    expect((await ok(app('GET', `/api/entity/${entity.entityId}`, admin))).data).toMatchObject({ entityId: entity.entityId });
  });

  it('answers 401 in the envelope without a credential, and a malformed body 400 VALIDATION_FAILED', async () => {
    for (const { path } of reads()) expectFailure(await app('GET', `/app${path}`), 401, 'AUTH_REQUIRED');
    expectFailure(await app('POST', `/app/devices/${ids.lamp}/command`, alice, { command: 5 }), 400, 'VALIDATION_FAILED');
    expectFailure(await app('POST', '/api/sequences', admin, { name: 'No steps', steps: 'none' }), 400, 'VALIDATION_FAILED');
    const unknownField = await app('POST', `/app/room/${spaces.living}/activate`, alice, {});
    expectFailure(unknownField, 400, 'VALIDATION_FAILED');
    expect(JSON.stringify(unknownField.body.details)).toContain('sourceId');
  });

  it('keeps the OS API to admins: an app token is refused there even for operations it may run here', async () => {
    const res = await server.request('GET', '/v1/os/devices', { token: alice.token });
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).error.code).toBe('INSUFFICIENT_SCOPE');
  });
});

describe('what a user without the admin role sees', () => {
  it('lists only the granted spaces and the devices in them or granted one by one', async () => {
    expect(idsOf((await ok(app('GET', '/app/devices', alice))).data)).toEqual([ids.lamp, ids.tv, ids.fan].sort());
    expect(idsOf((await ok(app('GET', '/api/room', alice))).data)).toEqual([spaces.living]);
    expect(idsOf((await ok(app('GET', `/app/room/${spaces.living}/devices`, alice))).data)).toEqual([ids.lamp, ids.tv].sort());
    expect((await ok(app('GET', `/app/room/${spaces.living}/sources`, alice))).data).toMatchObject([{ id: `${ids.tv}:console`, active: false }]);
    expect(new Set(((await ok(app('GET', '/app/entity', alice))).data as Json[]).map((e) => e.deviceId))).toEqual(new Set([ids.lamp, ids.tv, ids.fan]));
    // The admin sees the whole home through the same routes.
    expect((await ok(app('GET', '/app/devices', admin))).data).toHaveLength(DEVICES.length);
    expect((await ok(app('GET', '/app/room', admin))).data).toHaveLength(2);
  });

  it('lists the zones with a device of theirs, showing only their devices, and the action maps of their devices', async () => {
    const zones = (await ok(app('GET', '/app/zones', alice))).data as Json[];
    expect(zones.map((z) => z.name)).toEqual(['Everywhere']);
    expect(zones[0]).toMatchObject({ deviceIds: [ids.lamp], devices: [{ id: ids.lamp }] });
    expect(((await ok(app('GET', '/app/action-maps', alice))).data as Json[]).map((m) => m.controlKey)).toEqual(['red']);
    expect((await ok(app('GET', '/app/zones', admin))).data).toHaveLength(2);
    expect((await ok(app('GET', '/app/action-maps', admin))).data).toHaveLength(2);
  });

  it('hides an action map bound to the remote source of a device outside the grant', async () => {
    await ok(os('POST', `/devices/${ids.heater}/metadata`, { remoteSources: [{ id: 'panel', label: 'Heater panel' }] }));
    const map = await ok(os('POST', '/action-maps/save', { name: 'Warm up', controlKey: 'green', macroId: sequenceId, sourceId: `${ids.heater}:panel` }));
    try {
      const seen = (await ok(app('GET', '/app/action-maps', alice))).data as Json[];
      expect(seen.map((m) => m.controlKey)).toEqual(['red']);
      expect(JSON.stringify(seen)).not.toContain(ids.heater);
      expect(((await ok(app('GET', '/app/action-maps', admin))).data as Json[]).map((m) => m.id)).toContain(map.id);
    } finally {
      await ok(os('POST', `/action-maps/${map.id}/remove`));
      await ok(os('POST', `/devices/${ids.heater}/metadata`, { remoteSources: [] }));
    }
  });

  it('answers a device, space or entity outside the grant exactly as one that does not exist', async () => {
    const missingDevice = await app('GET', '/app/devices/no-such-device', alice);
    const hiddenDevice = await app('GET', `/app/devices/${ids.heater}`, alice);
    expectFailure(hiddenDevice, 404, 'DEVICE_NOT_FOUND');
    expect(hiddenDevice.body.message).toBe(missingDevice.body.message.replace('no-such-device', ids.heater));
    expect(hiddenDevice.body.details).toEqual({ deviceId: ids.heater });

    expectFailure(await app('POST', `/app/devices/${ids.heater}/command`, alice, { command: 'turn_on' }), 404, 'DEVICE_NOT_FOUND');
    expect(actions.filter((a) => a.deviceId === 'heater')).toEqual([]);

    for (const path of [`/room/${spaces.bedroom}`, `/room/${spaces.bedroom}/devices`, `/room/${spaces.bedroom}/sources`]) {
      expectFailure(await app('GET', `/app${path}`, alice), 404, 'SPACE_NOT_FOUND');
    }
    expectFailure(await app('POST', `/app/room/${spaces.bedroom}/activate`, alice, { sourceId: 'x' }), 404, 'SPACE_NOT_FOUND');

    const heaterEntity = ((await ok(app('GET', '/app/entity', admin))).data as Json[]).find((e) => e.deviceId === ids.heater)!;
    expectFailure(await app('GET', `/app/entity/${heaterEntity.entityId}`, alice), 404, 'ENTITY_NOT_FOUND');
    expectFailure(await app('POST', `/app/entity/${heaterEntity.entityId}/action`, alice, { service: 'turn_on' }), 404, 'ENTITY_NOT_FOUND');
  });

  it('answers empty arrays to a user granted nothing', async () => {
    for (const path of ['/devices', '/room', '/entity', '/zones', '/action-maps']) {
      const body = await ok(app('GET', `/api${path}`, bob, undefined, true));
      expect(body, path).toMatchObject({ status: true, data: [] });
    }
    expectFailure(await app('GET', `/api/devices/${ids.lamp}`, bob), 404, 'DEVICE_NOT_FOUND');
  });

  it('lets a user list, read and run the programs and sequences within their grants, and only admins change them', async () => {
    // bob is granted nothing: no routine is within his reach.
    expect((await ok(app('GET', '/app/programs', bob))).data).toEqual([]);
    expect((await ok(app('GET', '/app/sequences', bob))).data).toEqual([]);
    expectFailure(await app('GET', `/app/programs/${programId}`, bob), 404, 'PROGRAM_NOT_FOUND');
    // alice sees the living room: "Evening" (its lamp) is hers, "Heat up" (the bedroom heater) is not.
    expect(idsOf((await ok(app('GET', '/app/programs', alice))).data)).toEqual([programId]);
    expect((await ok(app('POST', `/app/programs/${programId}/run?wait=true`, alice))).data).toMatchObject({ programId, status: 'succeeded' });
    expect((await ok(app('GET', '/app/sequences', alice))).data).toEqual([]);
    expectFailure(await app('GET', `/app/sequences/${sequenceId}`, alice), 404, 'MACRO_NOT_FOUND');
    expectFailure(await app('POST', `/app/sequences/${sequenceId}/run`, alice), 404, 'MACRO_NOT_FOUND');
    expect(actions.some((a) => a.deviceId === 'heater')).toBe(false);
    const lampOn = (await ok(app('POST', '/app/sequences', admin, { name: 'Lamp on', steps: [{ deviceId: ids.lamp, command: 'turn_on' }] }))).data as Json;
    expect(idsOf((await ok(app('GET', '/app/sequences', alice))).data)).toEqual([lampOn.id]);
    expect((await ok(app('POST', `/app/sequences/${lampOn.id}/run`, alice))).data).toMatchObject({ ok: true });
    // A program that runs a sequence out of her reach is out of her reach too.
    const viaMacro = (await ok(app('POST', '/app/programs', admin, { name: 'Warm evening', steps: [{ type: 'command', deviceId: ids.lamp, command: 'turn_on' }, { type: 'run_macro', macroId: sequenceId }] }))).data as Json;
    expect(idsOf((await ok(app('GET', '/app/programs', alice))).data)).toEqual([programId]);
    expectFailure(await app('POST', `/app/programs/${viaMacro.id}/run`, alice), 404, 'PROGRAM_NOT_FOUND');
    expect((await ok(app('GET', `/app/programs/${viaMacro.id}`, admin))).data).toMatchObject({ name: 'Warm evening' });
    // Action maps that run routines follow the routines' reach.
    const inReach = (await ok(os('POST', '/action-maps/save', { name: 'Evening key', controlKey: 'green', programId }))).id as string;
    const outOfReach = (await ok(os('POST', '/action-maps/save', { name: 'Warm key', controlKey: 'yellow', programId: viaMacro.id }))).id as string;
    const heatKey = (await ok(os('POST', '/action-maps/save', { name: 'Heat key', controlKey: 'white', macroId: sequenceId }))).id as string;
    const maps = idsOf((await ok(app('GET', '/app/action-maps', alice))).data);
    expect(maps).toContain(inReach);
    expect(maps).not.toContain(outOfReach);
    expect(maps).not.toContain(heatKey);
    for (const id of [inReach, outOfReach, heatKey]) await ok(os('POST', `/action-maps/${id}/remove`));
    await ok(app('DELETE', `/app/programs/${viaMacro.id}`, admin));
    await ok(app('DELETE', `/app/sequences/${lampOn.id}`, admin));

    const program = { name: 'Mine', steps: [{ type: 'command', deviceId: ids.lamp, command: 'turn_off' }] };
    expectFailure(await app('POST', '/app/programs', alice, program), 403, 'ROLE_REQUIRED');
    expectFailure(await app('DELETE', `/app/programs/${programId}`, alice), 403, 'ROLE_REQUIRED');
    expectFailure(await app('POST', '/app/sequences', alice, { name: 'Mine', steps: [{ deviceId: ids.lamp, command: 'turn_on' }] }), 403, 'ROLE_REQUIRED');
    expectFailure(await app('DELETE', `/app/sequences/${sequenceId}`, bob), 403, 'ROLE_REQUIRED');
    expectFailure(await app('GET', '/app/integration', alice), 403, 'ROLE_REQUIRED');

    const created = (await ok(app('POST', '/app/programs', admin, program))).data as Json;
    expect((await ok(app('GET', `/api/programs/${created.id}`, alice))).data).toMatchObject({ id: created.id, name: 'Mine' });
    expect((await ok(app('DELETE', `/app/programs/${created.id}`, admin, undefined, true))).data).toEqual({ removed: true, id: created.id });
    expectFailure(await app('GET', `/app/programs/${created.id}`, alice), 404, 'PROGRAM_NOT_FOUND');
  });
});

describe('commands through the App API', () => {
  it('sends a device command to the WebSocket driver as ACTION and answers its result in the envelope', async () => {
    const answer = await ok(app('POST', `/app/devices/${ids.fan}/command`, alice, { command: 'turn_on', params: { speed: 2 } }, true));
    expect(answer).toMatchObject({ status: true, data: { ok: true, result: { done: 'turn_on' } } });
    expect(actions.at(-1)).toMatchObject({ type: 'ACTION', deviceId: 'fan', command: 'turn_on', params: { speed: 2 } });
  });

  it('activates a remote source of a granted room, with sourceId in the body', async () => {
    const answer = await ok(app('POST', `/api/room/${spaces.living}/activate`, alice, { sourceId: `${ids.tv}:console` }));
    expect(answer.data.source).toMatchObject({ id: `${ids.tv}:console`, active: true });
    expect(actions.slice(-2).map((a) => [a.deviceId, a.command])).toEqual([
      ['tv', 'power_on'],
      ['tv', 'select_input'],
    ]);
  });

  it('calls an entity service on a granted device', async () => {
    const lamp = ((await ok(app('GET', '/app/entity', alice))).data as Json[]).find((e) => e.deviceId === ids.lamp)!;
    expect((await ok(app('POST', `/app/entity/${lamp.entityId}/action`, alice, { service: 'turn_on' }))).data).toMatchObject({ ok: true, entityId: lamp.entityId });
    expect(actions.at(-1)).toMatchObject({ deviceId: 'lamp', command: 'turn_on' });
  });
});

describe('managing grants', () => {
  const adminCall = (method: string, path: string, body?: unknown) => app(method, path, { token: adminToken, cookie: '' }, body);

  it('reads and replaces a user\'s grants, and the user sees the change at once', async () => {
    expect((await adminCall('GET', `/admin/users/${users.bob}/access`)).body).toEqual({ userId: users.bob, spaceIds: [], deviceIds: [], updatedAt: null });
    const granted = await adminCall('POST', `/admin/users/${users.bob}/access`, { spaceIds: [spaces.bedroom], deviceIds: [ids.lamp, ids.lamp] });
    expect(granted.status).toBe(200);
    expect(granted.body).toEqual({ userId: users.bob, spaceIds: [spaces.bedroom], deviceIds: [ids.lamp], updatedAt: server.clock.now() });
    expect(idsOf((await ok(app('GET', '/app/devices', bob))).data)).toEqual([ids.lamp, ids.fan, ids.heater].sort());
    expect(idsOf((await ok(app('GET', '/app/room', bob))).data)).toEqual([spaces.bedroom]);

    await ok(adminCall('POST', `/admin/users/${users.bob}/access`, { spaceIds: [], deviceIds: [] }));
    expect((await ok(app('GET', '/app/devices', bob))).data).toEqual([]);
  });

  it('refuses unknown users, spaces and devices with 404 naming them, and changes nothing', async () => {
    const unknownUser = await adminCall('POST', '/admin/users/u-nobody/access', { spaceIds: [], deviceIds: [] });
    expect(unknownUser.status).toBe(404);
    expect(unknownUser.body.error).toMatchObject({ code: 'USER_NOT_FOUND', details: { userId: 'u-nobody' } });
    expect((await adminCall('GET', '/admin/users/u-nobody/access')).status).toBe(404);

    const unknownSpaces = await adminCall('POST', `/admin/users/${users.alice}/access`, { spaceIds: [spaces.bedroom, 'attic', 'cellar'], deviceIds: [] });
    expect(unknownSpaces.status).toBe(404);
    expect(unknownSpaces.body.error).toMatchObject({ code: 'SPACE_NOT_FOUND', details: { spaceIds: ['attic', 'cellar'] } });
    const unknownDevices = await adminCall('POST', `/admin/users/${users.alice}/access`, { spaceIds: [], deviceIds: [ids.lamp, 'ghost'] });
    expect(unknownDevices.status).toBe(404);
    expect(unknownDevices.body.error).toMatchObject({ code: 'DEVICE_NOT_FOUND', details: { deviceIds: ['ghost'] } });
    expect((await adminCall('GET', `/admin/users/${users.alice}/access`)).body).toMatchObject({ spaceIds: [spaces.living], deviceIds: [ids.fan] });

    const malformed = await adminCall('POST', `/admin/users/${users.alice}/access`, { spaceIds: 'all' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('is for admins only', async () => {
    const res = await server.request('GET', `/admin/users/${users.alice}/access`, { token: alice.token });
    expect(res.status).toBe(403);
    expect((await server.request('GET', `/admin/users/${users.alice}/access`)).status).toBe(401);
  });

  it('drops a removed user\'s grants and a removed space from every grant', async () => {
    await ok(adminCall('POST', `/admin/users/${users.carol}/access`, { spaceIds: [spaces.living], deviceIds: [ids.fan] }));
    // The event alone, as DELETE /admin/users/:id announces it: carol stays usable for the rest of the test.
    server.app.hub.events.emit('user.removed', { userId: users.carol, username: 'carol', at: server.clock.now() });
    await eventually(async () => (await adminCall('GET', `/admin/users/${users.carol}/access`)).body.updatedAt === null, 2000, 'grants dropped');

    const attic = (await ok(os('POST', '/spaces/save', { name: 'Attic' }))).id as string;
    await ok(adminCall('POST', `/admin/users/${users.carol}/access`, { spaceIds: [attic, spaces.living], deviceIds: [] }));
    await ok(os('POST', `/spaces/${attic}/remove`));
    await eventually(async () => {
      const { body } = await adminCall('GET', `/admin/users/${users.carol}/access`);
      return body.spaceIds.length === 1 && body.spaceIds[0] === spaces.living;
    }, 2000, 'removed space left the grant');
  });

  it('keeps grants across a restart', async () => {
    const again = await startServer({ dataDir: server.dataDir });
    try {
      const session = await (async () => {
        const res = await again.request('POST', '/api/auth/login', { body: { username: 'alice', password: PASSWORD } });
        return ((await res.json()) as Json).data.token as string;
      })();
      const res = await again.request('GET', '/api/room', { token: session });
      expect(((await res.json()) as Json).data.map((s: Json) => s.id)).toEqual([spaces.living]);
    } finally {
      await again.app.stop();
    }
  });
});

describe('the admin fast path', () => {
  it('answers admins the one frozen device list every admin call shares', async () => {
    const call = () => server.app.hub.operations.invoke('devices.list', { json: undefined, jsonLabel: 'querystring', text: {} }, { credential: { token: adminToken }, clientAddress: '127.0.0.1', requestId: 't' });
    const first = await call();
    expect(Object.isFrozen(first)).toBe(true);
    expect(await call()).toBe(first);
  });
});
