/**
 * REST tests of the home model: spaces, remote sources, zones, zone groups, macros, action maps,
 * activity presets, integrity rules, alerts, preferences, favorites, design profiles, bootstrap and
 * the domain events behind them. Real server, real WebSocket driver, no mocks.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { DomainEvents } from '../src/domain/events.js';
import type { ManualClock } from '../src/platform/clock.js';
import { startServer, type TestServer } from './support/server.js';
import { TestDriver, eventually, type Message } from './support/ws-driver.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  body: Json;
}

interface Running {
  server: TestServer;
  token: string;
}

interface Home extends Running {
  driver: TestDriver;
  /** Unique per home: the driver key's suffix, for names that must not clash between tests. */
  tag: string;
  /** Hub device ids by the driver's own device id. */
  ids: { tv: string; receiver: string; lamp: string; speaker: string; sensor: string };
  /** Every ACTION the driver received, in order, with the driver's own device id. */
  actions: Array<{ device: string; command: string; params: Record<string, unknown> }>;
  api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer>;
}

// Building the HTTP surface takes about a second, so the tests share one server and each sets up
// its own home on it (its own driver, hence its own devices) and looks only at what it created.
// Preferences and design are one per hub: they get a fresh server of their own.
const servers: TestServer[] = [];
const drivers: TestDriver[] = [];
let shared: Promise<Running> | undefined;
let homes = 0;

async function boot(options: Parameters<typeof startServer>[0] = {}): Promise<Running> {
  const server = await startServer(options);
  servers.push(server);
  return { server, token: await server.login() };
}
const sharedServer = () => (shared ??= boot());

afterEach(() => {
  for (const d of drivers.splice(0)) d.close();
});
afterAll(async () => {
  // Newest first: a restarted server shares its data directory with the first one, which removes it.
  for (const s of servers.splice(0).reverse()) await s.close();
});

function client(server: TestServer, token: string): Home['api'] {
  return async (method, path, body) => {
    const res = await server.request(method, `/v1/os${path}`, { token, ...(body === undefined ? {} : { body }) });
    return { status: res.status, body: (await res.json()) as Json };
  };
}

const DEVICES = [
  {
    id: 'tv',
    name: 'Living Room TV',
    category: 'tv',
    commands: ['power_on', 'power_off', 'select_input', 'volume_set', 'volume_up', 'volume_down'],
    state: { power: 'off', volume: 20 },
  },
  {
    id: 'receiver',
    name: 'AV Receiver',
    category: 'receiver',
    commands: ['power_on', 'power_off', 'select_input', 'volume_set', 'volume_up', 'volume_down', 'reboot'],
    state: { power: 'off', volume: 30 },
  },
  { id: 'lamp', name: 'Floor Lamp', category: 'light', commands: ['turn_on', 'turn_off'], state: { on: false } },
  { id: 'speaker', name: 'Kitchen Speaker', category: 'speaker', commands: ['volume_up', 'volume_down'], state: { volume: 10 } },
  { id: 'sensor', name: 'Hall Sensor', category: 'sensor', commands: ['refresh'], state: { temperature: 21 } },
] as const;

/**
 * A home: one WebSocket driver with a TV, a receiver, a lamp, a speaker that only steps its volume
 * and a sensor without volume. The driver answers every ACTION; volume commands report the new
 * volume as state (before the result), `reboot` fails.
 */
async function setupHome(running: Promise<Running> = sharedServer()): Promise<Home> {
  const { server, token } = await running;
  const tag = `h${++homes}`;
  const driverKey = `acme.av.${tag}`;
  const driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, driverKey);
  drivers.push(driver);
  const actions: Home['actions'] = [];
  const volumes: Record<string, number> = { tv: 20, receiver: 30, speaker: 10 };
  driver.serveActions((action: Message) => {
    const device = String(action.deviceId);
    const command = String(action.command);
    const params = (action.params ?? {}) as Record<string, unknown>;
    actions.push({ device, command, params });
    if (command === 'reboot') throw new Error('receiver busy');
    let volume: number | undefined;
    if (command === 'volume_set') volume = Number(params.volume);
    if (command === 'volume_up') volume = (volumes[device] ?? 0) + 1;
    if (command === 'volume_down') volume = (volumes[device] ?? 0) - 1;
    if (volume !== undefined) {
      volumes[device] = volume;
      driver.send({ type: 'STATE_UPDATE', deviceId: device, state: { volume } });
    }
    if (command === 'power_on') driver.send({ type: 'STATE_UPDATE', deviceId: device, state: { power: 'on' } });
    return undefined;
  });
  for (const device of DEVICES) driver.send({ type: 'DEVICE_DISCOVERED', device });

  const api = client(server, token);
  const listed = await eventually(
    async () => {
      const { body } = await api('GET', '/devices');
      const devices = (body.devices as Json[]).filter((d) => d.driverKey === driverKey);
      return devices.length === DEVICES.length && devices.every((d) => d.online) ? devices : undefined;
    },
    3000,
    'devices discovered',
  );
  const idOf = (driverDeviceId: string) => listed.find((d) => d.driverDeviceId === driverDeviceId)!.id as string;
  const ids = { tv: idOf('tv'), receiver: idOf('receiver'), lamp: idOf('lamp'), speaker: idOf('speaker'), sensor: idOf('sensor') };
  return { server, token, driver, tag, ids, actions, api };
}

/** The items of `list` whose id is one of `ids`, in list order. */
function only(list: Json[], ids: string[]): Json[] {
  return list.filter((item) => ids.includes(item.id));
}

function advance(home: Home, ms: number): void {
  (home.server.clock as ManualClock).advance(ms);
}

async function saveProgram(home: Home, body: Json): Promise<Json> {
  const res = await home.api('POST', '/programs/save', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('spaces', () => {
  it('creates, updates, lists, assigns devices (add and replace) and removes a space', async () => {
    const home = await setupHome();
    const { api, ids } = home;

    const created = await api('POST', '/spaces/save', { name: 'Living room', icon: 'sofa', floor: 'ground', order: 1 });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: 'Living room', icon: 'sofa', floor: 'ground', order: 1, activeSourceId: null });
    const living = created.body.id as string;
    expect(typeof living).toBe('string');
    const kitchen = (await api('POST', '/spaces/save', { name: 'Kitchen' })).body.id as string;

    advance(home, 1000);
    const updated = await api('POST', '/spaces/save', { id: living, name: 'Lounge', icon: 'tv' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: living, name: 'Lounge', icon: 'tv', createdAt: created.body.createdAt, updatedAt: created.body.updatedAt + 1000 });
    // Saving replaces the record: fields left out are gone.
    expect(updated.body.floor).toBeUndefined();

    const list = await api('GET', '/spaces');
    expect(only(list.body.spaces, [living, kitchen]).map((s: Json) => [s.id, s.name])).toEqual([
      [living, 'Lounge'],
      [kitchen, 'Kitchen'],
    ]);

    // add (the default) keeps current members
    let assigned = await api('POST', `/spaces/${living}/devices/assign`, { deviceIds: [ids.tv, ids.receiver] });
    expect(assigned.status).toBe(200);
    expect(assigned.body.spaceId).toBe(living);
    expect(assigned.body.devices.map((d: Json) => d.id).sort()).toEqual([ids.tv, ids.receiver].sort());
    assigned = await api('POST', `/spaces/${living}/devices/assign`, { deviceIds: [ids.lamp], mode: 'add' });
    expect(assigned.body.devices.map((d: Json) => d.id).sort()).toEqual([ids.tv, ids.receiver, ids.lamp].sort());

    // replace makes the list the whole membership
    assigned = await api('POST', `/spaces/${living}/devices/assign`, { deviceIds: [ids.tv, ids.speaker], mode: 'replace' });
    expect(assigned.body.devices.map((d: Json) => d.id).sort()).toEqual([ids.tv, ids.speaker].sort());
    expect((await api('GET', `/devices/${ids.receiver}`)).body.room).toBeNull();
    expect((await api('GET', `/devices/${ids.lamp}`)).body.room).toBeNull();
    expect((await api('GET', `/devices/${ids.tv}`)).body.room).toBe(living);

    // a device moves: assigning it elsewhere takes it out of its previous space
    await api('POST', `/spaces/${kitchen}/devices/assign`, { deviceIds: [ids.speaker] });
    expect((await api('GET', `/spaces/${living}/devices`)).body.devices.map((d: Json) => d.id)).toEqual([ids.tv]);

    // a missing device: 404 naming it, nothing changes
    const missing = await api('POST', `/spaces/${living}/devices/assign`, { deviceIds: [ids.lamp, 'no-such-device'], mode: 'replace' });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'DEVICE_NOT_FOUND', details: { deviceIds: ['no-such-device'] } });
    expect(missing.body.error.message).toContain('no-such-device');
    const devices = await api('GET', `/spaces/${living}/devices`);
    expect(devices.status).toBe(200);
    expect(devices.body).toMatchObject({ spaceId: living });
    expect(devices.body.devices.map((d: Json) => d.id)).toEqual([ids.tv]);
    expect(devices.body.devices[0]).toMatchObject({ id: ids.tv, name: 'Living Room TV', room: living, online: true });

    // remove: devices stay, unassigned
    const removed = await api('POST', `/spaces/${living}/remove`);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ removed: true, id: living, unassignedDevices: [ids.tv] });
    expect((await api('GET', `/devices/${ids.tv}`)).body.room).toBeNull();
    expect(only((await api('GET', '/spaces')).body.spaces, [living, kitchen]).map((s: Json) => s.id)).toEqual([kitchen]);
    expect((await api('GET', `/devices/${ids.speaker}`)).body.room).toBe(kitchen);

    // unknown space
    for (const [method, path, body] of [
      ['GET', `/spaces/${living}/devices`, undefined],
      ['POST', `/spaces/${living}/remove`, undefined],
      ['POST', `/spaces/${living}/devices/assign`, { deviceIds: [ids.tv] }],
      ['GET', `/spaces/${living}/remote-sources`, undefined],
    ] as const) {
      const res = await api(method, path, body);
      expect(res.status, path).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'SPACE_NOT_FOUND', details: { id: living } });
    }

    // validation
    const invalid = await api('POST', '/spaces/save', { name: '' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.code).toBe('VALIDATION_FAILED');
    expect(JSON.stringify(invalid.body.error.details)).toContain('body.name');
  });

  // BUG (src/domain/home/spaces.ts, SpaceService.remove): it walks
  // `registry.list({ includeRemoved: true })` and calls `registry.updateMetadata(id, { room: null })`
  // for every device of the space, but `updateMetadata` → `replace` → `registry.get(id)` throws
  // 404 DEVICE_NOT_FOUND for a removed device. So a space that ever held a device its driver has
  // since removed (DEVICE_REMOVED) cannot be removed: the answer is 404 DEVICE_NOT_FOUND naming the
  // removed device, the space stays, and the devices walked before it (here the lamp) have already
  // been unassigned: a partial change, and no way to remove the space through the API.
  it('removes a space that held a device its driver has since removed', async () => {
    const { api, ids, driver } = await setupHome();
    const space = (await api('POST', '/spaces/save', { name: 'Den' })).body.id as string;
    await api('POST', `/spaces/${space}/devices/assign`, { deviceIds: [ids.lamp, ids.sensor] });
    driver.send({ type: 'DEVICE_REMOVED', deviceId: 'sensor' });
    await eventually(async () => (await api('GET', `/devices/${ids.sensor}`)).status === 404, 3000, 'sensor removed');

    const removed = await api('POST', `/spaces/${space}/remove`);
    expect(removed.status).toBe(200);
    expect(only((await api('GET', '/spaces')).body.spaces, [space])).toEqual([]);
  });
});

describe('remote sources', () => {
  it('lists the sources of a space from device metadata and activates one', async () => {
    const home = await setupHome();
    const { api, ids, actions } = home;
    const space = (await api('POST', '/spaces/save', { name: 'Living room' })).body.id as string;

    const tvMeta = await api('POST', `/devices/${ids.tv}/metadata`, {
      room: space,
      remoteSources: [{ id: 'console', label: 'Game console', input: 'hdmi2', requires: [ids.receiver] }],
    });
    expect(tvMeta.status).toBe(200);
    expect(tvMeta.body).toMatchObject({ id: ids.tv, room: space, remoteSources: [{ id: 'console', label: 'Game console', input: 'hdmi2', requires: [ids.receiver] }] });
    await api('POST', `/devices/${ids.receiver}/metadata`, { room: space, remoteSources: [{ id: 'radio', label: 'FM radio' }] });
    // a source on a device in another space is not this space's
    await api('POST', `/devices/${ids.speaker}/metadata`, { remoteSources: [{ id: 'aux', label: 'Aux' }] });

    const consoleId = `${ids.tv}:console`;
    const radioId = `${ids.receiver}:radio`;
    const sources = await api('GET', `/spaces/${space}/remote-sources`);
    expect(sources.status).toBe(200);
    expect(sources.body.spaceId).toBe(space);
    expect(sources.body.activeSourceId).toBeNull();
    expect(sources.body.sources).toEqual(
      expect.arrayContaining([
        { id: consoleId, spaceId: space, deviceId: ids.tv, label: 'Game console', input: 'hdmi2', requires: [ids.receiver], active: false },
        { id: radioId, spaceId: space, deviceId: ids.receiver, label: 'FM radio', requires: [], active: false },
      ]),
    );
    expect(sources.body.sources).toHaveLength(2);

    actions.length = 0;
    const activated = await api('POST', `/spaces/${space}/remote-sources/${encodeURIComponent(consoleId)}/activate`);
    expect(activated.status).toBe(200);
    expect(activated.body.source).toMatchObject({ id: consoleId, active: true });
    expect(activated.body.results).toEqual([
      { deviceId: ids.receiver, ok: true, command: 'power_on' },
      { deviceId: ids.tv, ok: true, command: 'power_on' },
      { deviceId: ids.tv, ok: true, command: 'select_input' },
    ]);
    expect(actions).toEqual([
      { device: 'receiver', command: 'power_on', params: {} },
      { device: 'tv', command: 'power_on', params: {} },
      { device: 'tv', command: 'select_input', params: { input: 'hdmi2' } },
    ]);
    expect(only((await api('GET', '/spaces')).body.spaces, [space])[0]!.activeSourceId).toBe(consoleId);
    const after = await api('GET', `/spaces/${space}/remote-sources`);
    expect(after.body.activeSourceId).toBe(consoleId);
    expect(after.body.sources.find((s: Json) => s.id === consoleId).active).toBe(true);

    // another source takes over; a source without input only powers on
    actions.length = 0;
    const radio = await api('POST', `/spaces/${space}/remote-sources/${encodeURIComponent(radioId)}/activate`);
    expect(radio.status).toBe(200);
    expect(radio.body.results).toEqual([{ deviceId: ids.receiver, ok: true, command: 'power_on' }]);
    expect(actions).toEqual([{ device: 'receiver', command: 'power_on', params: {} }]);
    const now = await api('GET', `/spaces/${space}/remote-sources`);
    expect(now.body.activeSourceId).toBe(radioId);
    expect(now.body.sources.filter((s: Json) => s.active).map((s: Json) => s.id)).toEqual([radioId]);

    // unknown source, source of a device outside the space, unknown space
    for (const sourceId of [`${ids.tv}:nope`, `${ids.speaker}:aux`, 'garbage']) {
      const res = await api('POST', `/spaces/${space}/remote-sources/${encodeURIComponent(sourceId)}/activate`);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'REMOTE_SOURCE_NOT_FOUND', details: { spaceId: space, sourceId } });
    }
    const noSpace = await api('POST', `/spaces/nope/remote-sources/${encodeURIComponent(consoleId)}/activate`);
    expect(noSpace.status).toBe(404);
    expect(noSpace.body.error.code).toBe('SPACE_NOT_FOUND');
    expect((await api('GET', `/spaces/${space}/remote-sources`)).body.activeSourceId).toBe(radioId);
  });
});

describe('zones', () => {
  it('saves zones, resolves them, sets absolute and relative volume per device and runs the zone program', async () => {
    const home = await setupHome();
    const { api, ids, actions } = home;
    const program = await saveProgram(home, {
      name: 'Movie night',
      steps: [
        { type: 'command', deviceId: ids.lamp, command: 'turn_off' },
        { type: 'command', deviceId: ids.tv, command: 'power_on' },
      ],
    });

    const saved = await api('POST', '/zones/save', { name: 'Living', deviceIds: [ids.tv, ids.receiver, ids.speaker, ids.sensor, ids.tv], programId: program.id });
    expect(saved.status).toBe(200);
    const zone = saved.body;
    expect(zone).toMatchObject({
      name: 'Living',
      deviceIds: [ids.tv, ids.receiver, ids.speaker, ids.sensor],
      programId: program.id,
      program: { id: program.id, name: 'Movie night' },
      devices: [
        { id: ids.tv, name: 'Living Room TV', online: true, volumeCapable: true, volume: 20 },
        { id: ids.receiver, name: 'AV Receiver', online: true, volumeCapable: true, volume: 30 },
        { id: ids.speaker, name: 'Kitchen Speaker', online: true, volumeCapable: true, volume: 10 },
        { id: ids.sensor, name: 'Hall Sensor', online: true, volumeCapable: false, volume: null },
      ],
    });
    const listed = await api('GET', '/zones');
    expect(listed.status).toBe(200);
    expect(only(listed.body.zones, [zone.id])).toEqual([zone]);

    // absolute volume on a subset: per-device results; a device without volume is an error entry
    actions.length = 0;
    const absolute = await api('POST', `/zones/${zone.id}/volume`, { volume: 35, deviceIds: [ids.tv, ids.receiver, ids.sensor] });
    expect(absolute.status).toBe(200);
    expect(absolute.body).toEqual({
      zoneId: zone.id,
      results: [
        { deviceId: ids.tv, ok: true, command: 'volume_set', result: { volume: 35 } },
        { deviceId: ids.receiver, ok: true, command: 'volume_set', result: { volume: 35 } },
        { deviceId: ids.sensor, ok: false, error: { code: 'VOLUME_NOT_SUPPORTED', message: expect.any(String) } },
      ],
    });
    expect(actions.map((a) => [a.device, a.command, a.params]).sort()).toEqual([
      ['receiver', 'volume_set', { volume: 35 }],
      ['tv', 'volume_set', { volume: 35 }],
    ]);
    await eventually(async () => only((await api('GET', '/zones')).body.zones, [zone.id])[0]!.devices[0].volume === 35, 3000, 'volume reported');

    // relative: a setter with a known level sets level + delta; a stepping-only device is pressed
    actions.length = 0;
    const relative = await api('POST', `/zones/${zone.id}/volume`, { delta: -3, deviceIds: [ids.tv, ids.speaker] });
    expect(relative.status).toBe(200);
    expect(relative.body.results).toEqual([
      { deviceId: ids.tv, ok: true, command: 'volume_set', result: { volume: 32 } },
      { deviceId: ids.speaker, ok: true, command: 'volume_down', result: { presses: 3 } },
    ]);
    expect(actions.filter((a) => a.device === 'tv')).toEqual([{ device: 'tv', command: 'volume_set', params: { volume: 32 } }]);
    expect(actions.filter((a) => a.device === 'speaker').map((a) => a.command)).toEqual(['volume_down', 'volume_down', 'volume_down']);
    // relative volume is clamped to 0–100
    const clamped = await api('POST', `/zones/${zone.id}/volume`, { delta: 90, deviceIds: [ids.receiver] });
    expect(clamped.body.results).toEqual([{ deviceId: ids.receiver, ok: true, command: 'volume_set', result: { volume: 100 } }]);

    // the whole zone: a stepping-only device cannot take an absolute level
    const whole = await api('POST', `/zones/${zone.id}/volume`, { volume: 10 });
    expect(whole.status).toBe(200);
    expect(whole.body.results.map((r: Json) => [r.deviceId, r.ok, r.error?.code])).toEqual([
      [ids.tv, true, undefined],
      [ids.receiver, true, undefined],
      [ids.speaker, false, 'VOLUME_NOT_SUPPORTED'],
      [ids.sensor, false, 'VOLUME_NOT_SUPPORTED'],
    ]);

    // exactly one of volume and delta
    for (const body of [{ volume: 10, delta: 2 }, {}]) {
      const res = await api('POST', `/zones/${zone.id}/volume`, body);
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'VOLUME_CHANGE_REQUIRED', details: { fields: ['volume', 'delta'] } });
    }
    const outOfRange = await api('POST', `/zones/${zone.id}/volume`, { volume: 150 });
    expect(outOfRange.status).toBe(400);
    expect(JSON.stringify(outOfRange.body.error.details)).toContain('body.volume');
    const outside = await api('POST', `/zones/${zone.id}/volume`, { volume: 10, deviceIds: [ids.lamp] });
    expect(outside.status).toBe(422);
    expect(outside.body.error).toMatchObject({ code: 'DEVICE_NOT_IN_ZONE', details: { deviceIds: [ids.lamp] } });

    // the zone's program
    actions.length = 0;
    const run = await api('POST', `/zones/${zone.id}/program/run?wait=true`);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ programId: program.id, trigger: 'zone', path: 'on', status: 'succeeded' });
    expect(run.body.steps.map((s: Json) => s.status)).toEqual(['succeeded', 'succeeded']);
    expect(actions.map((a) => [a.device, a.command])).toEqual([
      ['lamp', 'turn_off'],
      ['tv', 'power_on'],
    ]);
    const badFlag = await api('POST', `/zones/${zone.id}/program/run?wait=maybe`);
    expect(badFlag.status).toBe(400);
    expect(JSON.stringify(badFlag.body.error.details)).toContain('querystring.wait');
    const started = await api('POST', `/zones/${zone.id}/program/run`);
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ programId: program.id, trigger: 'zone' });
    await eventually(async () => (await api('GET', `/programs/runs/${started.body.id}`)).body.status === 'succeeded', 3000, 'run finished');

    // a zone without a program
    const kitchen = await api('POST', '/zones/save', { name: 'Kitchen', deviceIds: [ids.lamp] });
    expect(kitchen.body).toMatchObject({ programId: null, program: null });
    const noProgram = await api('POST', `/zones/${kitchen.body.id}/program/run?wait=true`);
    expect(noProgram.status).toBe(409);
    expect(noProgram.body.error).toMatchObject({ code: 'ZONE_HAS_NO_PROGRAM', details: { zoneId: kitchen.body.id } });

    // updating a zone replaces it (a left-out program is unassigned)
    const updated = await api('POST', '/zones/save', { id: zone.id, name: 'Living (TV only)', deviceIds: [ids.tv] });
    expect(updated.body).toMatchObject({ id: zone.id, name: 'Living (TV only)', deviceIds: [ids.tv], programId: null, createdAt: zone.createdAt });

    // references are checked at save; unknown zones answer 404
    const zoneCount = (await api('GET', '/zones')).body.zones.length;
    const badDevice = await api('POST', '/zones/save', { name: 'Ghost', deviceIds: [ids.tv, 'ghost'] });
    expect(badDevice.status).toBe(404);
    expect(badDevice.body.error).toMatchObject({ code: 'DEVICE_NOT_FOUND', details: { deviceIds: ['ghost'] } });
    const badProgram = await api('POST', '/zones/save', { name: 'Ghost', deviceIds: [], programId: 'ghost' });
    expect(badProgram.status).toBe(404);
    expect(badProgram.body.error).toMatchObject({ code: 'PROGRAM_NOT_FOUND', details: { programId: 'ghost' } });
    expect((await api('GET', '/zones')).body.zones).toHaveLength(zoneCount);
    for (const path of ['/zones/nope/volume', '/zones/nope/program/run', '/zones/nope/remove']) {
      const res = await api('POST', path, path.endsWith('volume') ? { volume: 1 } : undefined);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('ZONE_NOT_FOUND');
    }
  });
});

describe('zone groups', () => {
  it('saves groups, assigns zones (add and replace), removes groups and follows zone removal', async () => {
    const { api, ids } = await setupHome();
    const zoneIds: string[] = [];
    for (const name of ['Living', 'Kitchen', 'Patio']) zoneIds.push((await api('POST', '/zones/save', { name, deviceIds: [ids.tv] })).body.id);
    const [living, kitchen, patio] = zoneIds as [string, string, string];

    const saved = await api('POST', '/zone-groups/save', { name: 'Downstairs', zoneIds: [living] });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ name: 'Downstairs', zoneIds: [living] });
    const group = saved.body.id as string;

    let res = await api('POST', `/zone-groups/${group}/zones/assign`, { zoneIds: [kitchen, living] });
    expect(res.status).toBe(200);
    expect(res.body.zoneIds).toEqual([living, kitchen]);
    res = await api('POST', `/zone-groups/${group}/zones/assign`, { zoneIds: [patio, kitchen], mode: 'replace' });
    expect(res.body.zoneIds).toEqual([patio, kitchen]);

    // unknown zone: 404 naming it, membership unchanged
    res = await api('POST', `/zone-groups/${group}/zones/assign`, { zoneIds: [living, 'nope'], mode: 'replace' });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'ZONE_NOT_FOUND', details: { zoneIds: ['nope'] } });
    res = await api('POST', '/zone-groups/save', { name: 'Bad', zoneIds: ['nope'] });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('ZONE_NOT_FOUND');

    // renaming without zoneIds keeps the members
    res = await api('POST', '/zone-groups/save', { id: group, name: 'Ground floor' });
    expect(res.body).toMatchObject({ id: group, name: 'Ground floor', zoneIds: [patio, kitchen] });
    let list = await api('GET', '/zone-groups');
    expect(only(list.body.zoneGroups, [group])).toEqual([res.body]);

    // removing a zone takes it out of its groups
    expect((await api('POST', `/zones/${patio}/remove`)).body).toEqual({ removed: true, id: patio });
    list = await api('GET', '/zone-groups');
    expect(only(list.body.zoneGroups, [group])[0]!.zoneIds).toEqual([kitchen]);

    res = await api('POST', '/zone-groups/nope/zones/assign', { zoneIds: [living] });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('ZONE_GROUP_NOT_FOUND');

    expect((await api('POST', `/zone-groups/${group}/remove`)).body).toEqual({ removed: true, id: group });
    expect(only((await api('GET', '/zone-groups')).body.zoneGroups, [group])).toEqual([]);
    // the zones stay
    expect(only((await api('GET', '/zones')).body.zones, zoneIds).map((z: Json) => z.id)).toEqual([living, kitchen]);
    res = await api('POST', `/zone-groups/${group}/remove`);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'ZONE_GROUP_NOT_FOUND', details: { id: group } });
  });
});

describe('macros', () => {
  it('runs steps in order with delays and answers each step', async () => {
    const { api, ids, actions } = await setupHome();
    const saved = await api('POST', '/macros/save', {
      name: 'Movie',
      steps: [
        { deviceId: ids.lamp, command: 'turn_off' },
        { deviceId: ids.tv, command: 'power_on', delayMs: 10 },
        { deviceId: ids.tv, command: 'select_input', params: { input: 'hdmi1' }, delayMs: 10 },
      ],
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ name: 'Movie', stopOnError: false });
    expect(saved.body.steps).toHaveLength(3);
    expect(only((await api('GET', '/macros')).body.macros, [saved.body.id])).toEqual([saved.body]);

    actions.length = 0;
    const started = Date.now();
    const run = await api('POST', `/macros/${saved.body.id}/run`);
    expect(run.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(18);
    expect(run.body).toEqual({
      macroId: saved.body.id,
      ok: true,
      steps: [
        { index: 0, deviceId: ids.lamp, command: 'turn_off', ok: true, status: 'succeeded' },
        { index: 1, deviceId: ids.tv, command: 'power_on', ok: true, status: 'succeeded' },
        { index: 2, deviceId: ids.tv, command: 'select_input', ok: true, status: 'succeeded' },
      ],
    });
    expect(actions).toEqual([
      { device: 'lamp', command: 'turn_off', params: {} },
      { device: 'tv', command: 'power_on', params: {} },
      { device: 'tv', command: 'select_input', params: { input: 'hdmi1' } },
    ]);
  });

  it('presses on after a failing step, or skips the rest with stopOnError', async () => {
    const { api, ids, actions } = await setupHome();
    const steps = [
      { deviceId: ids.tv, command: 'power_on' },
      { deviceId: ids.receiver, command: 'reboot' },
      { deviceId: ids.lamp, command: 'turn_on', delayMs: 10 },
    ];
    const lenient = (await api('POST', '/macros/save', { name: 'Lenient', steps })).body;
    const strict = (await api('POST', '/macros/save', { name: 'Strict', steps, stopOnError: true })).body;
    expect(strict.stopOnError).toBe(true);

    actions.length = 0;
    let run = await api('POST', `/macros/${lenient.id}/run`);
    expect(run.status).toBe(200);
    expect(run.body.ok).toBe(false);
    expect(run.body.steps.map((s: Json) => [s.index, s.status, s.ok])).toEqual([
      [0, 'succeeded', true],
      [1, 'failed', false],
      [2, 'succeeded', true],
    ]);
    expect(run.body.steps[1]).toMatchObject({ deviceId: ids.receiver, command: 'reboot', error: { code: 'DRIVER_ERROR', message: 'receiver busy' } });
    expect(actions.map((a) => a.command)).toEqual(['power_on', 'reboot', 'turn_on']);

    actions.length = 0;
    run = await api('POST', `/macros/${strict.id}/run`);
    expect(run.status).toBe(200);
    expect(run.body.ok).toBe(false);
    expect(run.body.steps).toEqual([
      { index: 0, deviceId: ids.tv, command: 'power_on', ok: true, status: 'succeeded' },
      expect.objectContaining({ index: 1, status: 'failed', ok: false }),
      { index: 2, deviceId: ids.lamp, command: 'turn_on', ok: false, status: 'skipped' },
    ]);
    expect(actions.map((a) => a.command)).toEqual(['power_on', 'reboot']);

    // a command the device does not offer fails its step too
    const unsupported = (await api('POST', '/macros/save', { name: 'Odd', steps: [{ deviceId: ids.lamp, command: 'explode' }] })).body;
    run = await api('POST', `/macros/${unsupported.id}/run`);
    expect(run.body.steps[0]).toMatchObject({ status: 'failed', error: { code: 'COMMAND_NOT_SUPPORTED' } });
  });

  it('refuses unknown devices at save, and removes macros', async () => {
    const { api, ids } = await setupHome();
    const macroCount = (await api('GET', '/macros')).body.macros.length;
    const bad = await api('POST', '/macros/save', {
      name: 'Ghost',
      steps: [
        { deviceId: ids.tv, command: 'power_on' },
        { deviceId: 'ghost', command: 'boo' },
        { deviceId: 'ghost', command: 'boo' },
      ],
    });
    expect(bad.status).toBe(404);
    expect(bad.body.error).toMatchObject({ code: 'DEVICE_NOT_FOUND', details: { deviceIds: ['ghost'] } });
    expect((await api('GET', '/macros')).body.macros).toHaveLength(macroCount);

    const empty = await api('POST', '/macros/save', { name: 'Empty', steps: [] });
    expect(empty.status).toBe(400);
    expect(JSON.stringify(empty.body.error.details)).toContain('body.steps');

    const macro = (await api('POST', '/macros/save', { name: 'One', steps: [{ deviceId: ids.tv, command: 'power_on' }] })).body;
    const renamed = await api('POST', '/macros/save', { id: macro.id, name: 'Uno', steps: macro.steps });
    expect(renamed.body).toMatchObject({ id: macro.id, name: 'Uno', createdAt: macro.createdAt });
    expect((await api('POST', `/macros/${macro.id}/remove`)).body).toEqual({ removed: true, id: macro.id });
    for (const path of [`/macros/${macro.id}/run`, `/macros/${macro.id}/remove`]) {
      const res = await api('POST', path);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('MACRO_NOT_FOUND');
    }
  });
});

describe('action maps and activity presets', () => {
  it('lists one preset per program and per action map, stays current, and runs both kinds', async () => {
    const home = await setupHome();
    const { api, ids, actions, tag } = home;
    const red = `red-${tag}`;
    const program = await saveProgram(home, { name: 'Bedtime', semantics: ['sleep'], steps: [{ type: 'command', deviceId: ids.lamp, command: 'turn_off' }] });

    const saved = await api('POST', '/action-maps/save', { name: 'Red button', controlKey: red, deviceId: ids.lamp, command: 'turn_on', params: { brightness: 80 } });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ name: 'Red button', controlKey: red, deviceId: ids.lamp, command: 'turn_on', params: { brightness: 80 }, spaceId: null });
    const map = saved.body;
    expect(only((await api('GET', '/action-maps')).body.actionMaps, [map.id])).toEqual([map]);
    const ghost = await api('POST', '/action-maps/save', { name: 'Ghost', controlKey: 'blue', deviceId: 'ghost', command: 'x' });
    expect(ghost.status).toBe(404);
    expect(ghost.body.error).toMatchObject({ code: 'DEVICE_NOT_FOUND', details: { deviceIds: ['ghost'] } });

    const programIds = [program.id as string];
    const mine = (list: Json[]) => list.filter((p) => programIds.includes(p.programId) || p.actionMapId === map.id);
    let presets = await api('GET', '/activity-presets');
    expect(presets.status).toBe(200);
    expect(mine(presets.body.presets)).toEqual([
      { id: `program:${program.id}`, kind: 'program', name: 'Bedtime', programId: program.id, semantics: ['sleep'] },
      { id: `action:${map.id}`, kind: 'action_map', name: 'Red button', actionMapId: map.id, controlKey: red, deviceId: ids.lamp, command: 'turn_on', spaceId: null },
    ]);

    // running an action-map preset sends the mapped command
    actions.length = 0;
    const action = await api('POST', `/activity-presets/${encodeURIComponent(`action:${map.id}`)}/run`);
    expect(action.status).toBe(200);
    expect(action.body).toEqual({ presetId: `action:${map.id}`, action: { deviceId: ids.lamp, ok: true, command: 'turn_on' } });
    expect(actions).toEqual([{ device: 'lamp', command: 'turn_on', params: { brightness: 80 } }]);

    // the mapped control can also be triggered by id or by its control key
    actions.length = 0;
    const byKey = await api('POST', `/action-maps/${red}/trigger`);
    expect(byKey.status).toBe(200);
    expect(byKey.body).toMatchObject({ actionMapId: map.id, deviceId: ids.lamp, ok: true, command: 'turn_on' });
    expect(actions).toHaveLength(1);

    // running a program preset runs the program
    actions.length = 0;
    const run = await api('POST', `/activity-presets/${encodeURIComponent(`program:${program.id}`)}/run?wait=true`);
    expect(run.status).toBe(200);
    expect(run.body.presetId).toBe(`program:${program.id}`);
    expect(run.body.run).toMatchObject({ programId: program.id, trigger: 'preset', status: 'succeeded' });
    expect(actions).toEqual([{ device: 'lamp', command: 'turn_off', params: {} }]);

    // presets follow programs and action maps
    const second = await saveProgram(home, { name: 'Morning', steps: [{ type: 'command', deviceId: ids.lamp, command: 'turn_on' }] });
    programIds.push(second.id);
    presets = await api('GET', '/activity-presets');
    expect(mine(presets.body.presets).map((p: Json) => p.id)).toEqual([`program:${program.id}`, `program:${second.id}`, `action:${map.id}`]);
    expect((await api('POST', `/programs/${program.id}/remove`)).status).toBe(200);
    expect((await api('POST', `/action-maps/${map.id}/remove`)).body).toEqual({ removed: true, id: map.id });
    presets = await api('GET', '/activity-presets');
    expect(mine(presets.body.presets).map((p: Json) => p.id)).toEqual([`program:${second.id}`]);

    const gone = await api('POST', `/activity-presets/${encodeURIComponent(`program:${program.id}`)}/run`);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ code: 'PRESET_NOT_FOUND', details: { id: `program:${program.id}` } });
    const noMap = await api('POST', `/action-maps/${red}/trigger`);
    expect(noMap.status).toBe(404);
    expect(noMap.body.error.code).toBe('ACTION_MAP_NOT_FOUND');
  });
});

describe('integrity', () => {
  it('refuses to remove programs and macros in use and to save programs with unknown references', async () => {
    const home = await setupHome();
    const { api, ids } = home;
    const program = await saveProgram(home, { name: 'Movie', steps: [{ type: 'command', deviceId: ids.tv, command: 'power_on' }] });
    const zone = (await api('POST', '/zones/save', { name: 'Living', deviceIds: [ids.tv], programId: program.id })).body;

    let res = await api('POST', `/programs/${program.id}/remove`);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'PROGRAM_IN_USE', details: { users: [{ kind: 'zone', id: zone.id, name: 'Living' }] } });
    expect(res.body.error.message).toContain('Living');

    // another program that runs it is a user too
    const caller = await saveProgram(home, { name: 'Evening', steps: [{ type: 'run_program', programId: program.id }] });
    res = await api('POST', `/programs/${program.id}/remove`);
    expect(res.status).toBe(409);
    expect(res.body.error.details.users).toEqual([
      { kind: 'zone', id: zone.id, name: 'Living' },
      { kind: 'program', id: caller.id, name: 'Evening' },
    ]);
    expect(only((await api('GET', '/programs')).body.programs, [program.id, caller.id])).toHaveLength(2);

    // once unused, it goes
    await api('POST', `/programs/${caller.id}/remove`);
    await api('POST', '/zones/save', { id: zone.id, name: 'Living', deviceIds: [ids.tv], programId: null });
    expect((await api('POST', `/programs/${program.id}/remove`)).status).toBe(200);

    // a macro a program runs
    const macro = (await api('POST', '/macros/save', { name: 'Dim', steps: [{ deviceId: ids.lamp, command: 'turn_off' }] })).body;
    const user = await saveProgram(home, { name: 'Night', steps: [{ type: 'condition', condition: { deviceId: ids.lamp, key: 'on', op: 'truthy' }, then: [{ type: 'run_macro', macroId: macro.id }] }] });
    res = await api('POST', `/macros/${macro.id}/remove`);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'MACRO_IN_USE', details: { users: [{ kind: 'program', id: user.id, name: 'Night' }] } });
    expect(only((await api('GET', '/macros')).body.macros, [macro.id])).toHaveLength(1);

    // unknown references at save
    const programCount = (await api('GET', '/programs')).body.programs.length;
    res = await api('POST', '/programs/save', {
      name: 'Broken',
      steps: [
        { type: 'command', deviceId: 'ghost-device', command: 'x' },
        { type: 'run_program', programId: 'ghost-program' },
        { type: 'parallel', branches: [[{ type: 'run_macro', macroId: 'ghost-macro' }], [{ type: 'zone_volume', zoneId: 'ghost-zone', delta: 2 }]] },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      code: 'UNKNOWN_REFERENCE',
      details: { devices: ['ghost-device'], programs: ['ghost-program'], macros: ['ghost-macro'], zones: ['ghost-zone'] },
    });
    res = await api('POST', '/programs/save', { name: 'Broken', steps: [{ type: 'run_macro', macroId: 'ghost-macro' }] });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual({ devices: [], programs: [], macros: ['ghost-macro'], zones: [] });
    expect((await api('GET', '/programs')).body.programs).toHaveLength(programCount);
  });

  // GAP (src/domain/home/zones.ts, ZoneService.remove): programs refer to zones through
  // `zone_volume` steps and saving one with an unknown zone is refused (422 UNKNOWN_REFERENCE), yet
  // removing the zone is not checked: it answers 200 and leaves the program pointing at nothing,
  // so its next run fails with ZONE_NOT_FOUND. Programs (PROGRAM_IN_USE) and macros (MACRO_IN_USE)
  // refuse removal while used; zones should do the same (409, naming the programs).
  it('refuses to remove a zone a program uses', async () => {
    const home = await setupHome();
    const zone = (await home.api('POST', '/zones/save', { name: 'Living', deviceIds: [home.ids.tv] })).body;
    await saveProgram(home, { name: 'Louder', steps: [{ type: 'zone_volume', zoneId: zone.id, delta: 5 }] });
    const res = await home.api('POST', `/zones/${zone.id}/remove`);
    expect(res.status).toBe(409);
  });
});

describe('alerts', () => {
  it('stores alerts newest first, filters them and pages without gaps or overlaps', async () => {
    const home = await setupHome();
    const { api, ids } = home;
    const submitted: Json[] = [];
    const inputs = [
      { type: 'smoke', severity: 'critical', message: 'Smoke in the kitchen', deviceId: ids.sensor, source: 'sensor', payload: { ppm: 300 } },
      { type: 'door_open', severity: 'warning', message: 'Front door open' },
      { type: 'battery_low', message: 'Remote battery low', deviceId: ids.speaker },
      { type: 'smoke', severity: 'warning', message: 'Smoke cleared?', deviceId: ids.sensor },
      { type: 'door_open', severity: 'info', message: 'Back door open' },
      { type: 'smoke', severity: 'critical', message: 'Smoke again', deviceId: ids.sensor },
      { type: 'battery_low', severity: 'info', message: 'Sensor battery low', deviceId: ids.sensor },
    ];
    for (const input of inputs) {
      advance(home, 1000);
      const res = await api('POST', '/alerts/submissions', input);
      expect(res.status).toBe(201);
      submitted.push(res.body);
    }
    expect(submitted[0]).toEqual({ id: expect.any(String), at: home.server.clock.now() - 6000, ...inputs[0] });
    expect(submitted[2]).toMatchObject({ severity: 'info' }); // the default
    const newestFirst = [...submitted].reverse();
    const mineOf = (list: Json[]) => list.filter((a) => submitted.some((s) => s.id === a.id));
    const idsOf = (list: Json[]) => list.map((a) => a.id as string);

    // this test's alerts are the newest ones
    let res = await api('GET', '/alerts/submissions');
    expect(res.status).toBe(200);
    expect(res.body.alerts.slice(0, 7)).toEqual(newestFirst);
    const everything = (await api('GET', '/alerts/submissions?limit=500')).body;
    expect(everything.nextBefore).toBeNull();
    const ats = everything.alerts.map((a: Json) => a.at as number);
    expect(ats).toEqual([...ats].sort((x, y) => y - x));

    // filters: every answer matches, and holds this test's matching alerts in order
    const filtered = async (query: string, keep: (a: Json) => boolean) => {
      const answer = await api('GET', `/alerts/submissions?limit=500&${query}`);
      expect(answer.status, query).toBe(200);
      expect(answer.body.alerts.every(keep), query).toBe(true);
      expect(idsOf(mineOf(answer.body.alerts)), query).toEqual(idsOf(newestFirst.filter(keep)));
      return answer.body.alerts as Json[];
    };
    await filtered('type=smoke', (a) => a.type === 'smoke');
    expect(idsOf(await filtered('severity=critical', (a) => a.severity === 'critical')).slice(0, 2)).toEqual([submitted[5]!.id, submitted[0]!.id]);
    expect(await filtered(`deviceId=${ids.sensor}`, (a) => a.deviceId === ids.sensor)).toHaveLength(4);
    expect(idsOf(await filtered(`since=${submitted[4]!.at}`, (a) => a.at >= submitted[4]!.at))).toEqual([submitted[6]!.id, submitted[5]!.id, submitted[4]!.id]);
    expect(
      idsOf(await filtered(`type=smoke&severity=critical&deviceId=${ids.sensor}&since=${submitted[1]!.at}`, (a) => a.type === 'smoke' && a.severity === 'critical' && a.at >= submitted[1]!.at)),
    ).toEqual([submitted[5]!.id]);

    // paging with limit and before: the pages put together are the whole list, once each
    const paged: string[] = [];
    let before: string | null = null;
    let pages = 0;
    do {
      const page: Answer = await api('GET', `/alerts/submissions?limit=3${before ? `&before=${before}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.alerts.length).toBeLessThanOrEqual(3);
      paged.push(...idsOf(page.body.alerts));
      before = page.body.nextBefore as string | null;
      if (before) expect(before).toBe(page.body.alerts.at(-1).id);
      pages += 1;
    } while (before && pages < 100);
    expect(paged).toEqual(idsOf(everything.alerts));
    expect(new Set(paged).size).toBe(paged.length);
    expect(pages).toBe(Math.ceil(paged.length / 3));

    // paging with a filter; a page that ends exactly at the end has no next page
    const first = await api('GET', `/alerts/submissions?deviceId=${ids.sensor}&limit=3`);
    expect(idsOf(first.body.alerts)).toEqual([submitted[6]!.id, submitted[5]!.id, submitted[3]!.id]);
    expect(first.body.nextBefore).toBe(submitted[3]!.id);
    const second = await api('GET', `/alerts/submissions?deviceId=${ids.sensor}&limit=3&before=${first.body.nextBefore}`);
    expect(second.body).toEqual({ alerts: [submitted[0]], nextBefore: null });
    const exact = await api('GET', `/alerts/submissions?deviceId=${ids.sensor}&limit=4`);
    expect(exact.body.alerts).toHaveLength(4);
    expect(exact.body.nextBefore).toBeNull();

    // validation
    res = await api('POST', '/alerts/submissions', { type: 'smoke', severity: 'apocalyptic', message: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(JSON.stringify(res.body.error.details)).toContain('body.severity');
    res = await api('POST', '/alerts/submissions', { type: 'smoke' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error.details)).toContain('body.message');
    for (const query of ['severity=apocalyptic', 'limit=0', 'limit=501', 'since=yesterday']) {
      res = await api('GET', `/alerts/submissions?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    }
    expect((await api('GET', '/alerts/submissions?limit=500')).body.alerts).toHaveLength(everything.alerts.length);
  });
});

describe('preferences, favorites and design profiles', () => {
  // One per hub: these tests need a server no other test has touched.
  let fresh: Promise<Running> | undefined;
  const freshServer = () => (fresh ??= boot());

  it('answers defaults, updates partially, validates and keeps favorites in order', async () => {
    const home = await setupHome(freshServer());
    const { api, ids } = home;
    let res = await api('GET', '/preferences/home');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      layout: 'grid',
      theme: 'system',
      temperatureUnit: 'C',
      showOfflineDevices: true,
      defaultSpaceId: null,
      sections: ['favorites', 'spaces', 'programs', 'media'],
      favorites: [],
      updatedAt: 0,
    });

    res = await api('POST', '/preferences/home', { theme: 'dark' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ theme: 'dark', layout: 'grid', temperatureUnit: 'C', updatedAt: home.server.clock.now() });
    res = await api('POST', '/preferences/home', { layout: 'list', temperatureUnit: 'F', showOfflineDevices: false, sections: ['spaces', 'favorites'] });
    expect(res.body).toMatchObject({ theme: 'dark', layout: 'list', temperatureUnit: 'F', showOfflineDevices: false, sections: ['spaces', 'favorites'] });

    for (const body of [{ theme: 'neon' }, { layout: 'cards' }, { temperatureUnit: 'K' }, { showOfflineDevices: 'yes' }]) {
      res = await api('POST', '/preferences/home', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(JSON.stringify(res.body.error.details)).toContain(`body.${Object.keys(body)[0]}`);
    }
    res = await api('POST', '/preferences/home', { defaultSpaceId: 'nowhere' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('SPACE_NOT_FOUND');
    const space = (await api('POST', '/spaces/save', { name: 'Living room' })).body.id as string;
    res = await api('POST', '/preferences/home', { defaultSpaceId: space });
    expect(res.body.defaultSpaceId).toBe(space);
    expect((await api('GET', '/preferences/home')).body).toMatchObject({ theme: 'dark', layout: 'list', defaultSpaceId: space });

    // favorites: order kept, duplicates dropped
    res = await api('POST', '/preferences/home/favorites', { favorites: [ids.lamp, ids.tv, ids.speaker, ids.lamp] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ favorites: [ids.lamp, ids.tv, ids.speaker] });
    expect((await api('GET', '/preferences/home/favorites')).body).toEqual({ favorites: [ids.lamp, ids.tv, ids.speaker] });
    // preferences updates leave favorites alone
    res = await api('POST', '/preferences/home', { theme: 'light' });
    expect(res.body.favorites).toEqual([ids.lamp, ids.tv, ids.speaker]);

    // an unknown device: 404 naming it, nothing changes
    res = await api('POST', '/preferences/home/favorites', { favorites: [ids.tv, 'ghost'] });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'DEVICE_NOT_FOUND', details: { deviceIds: ['ghost'] } });
    expect((await api('GET', '/preferences/home/favorites')).body.favorites).toEqual([ids.lamp, ids.tv, ids.speaker]);

    res = await api('POST', '/preferences/home/favorites', { favorites: [ids.speaker, ids.tv] });
    expect(res.body.favorites).toEqual([ids.speaker, ids.tv]);
    expect((await api('GET', '/preferences/home')).body.favorites).toEqual([ids.speaker, ids.tv]);
    res = await api('POST', '/preferences/home/favorites', {});
    expect(res.status).toBe(400);
  });

  it('lists profiles with one active, selects one and keeps it across a restart', async () => {
    const { server, token } = await freshServer();
    const api = client(server, token);
    let res = await api('GET', '/design-profiles');
    expect(res.status).toBe(200);
    const profiles = res.body.profiles as Json[];
    expect(profiles.map((p) => p.id)).toEqual(['classic', 'midnight', 'daylight', 'high-contrast']);
    expect(profiles.filter((p) => p.active).map((p) => p.id)).toEqual(['classic']);
    expect(profiles[1]).toMatchObject({ name: 'Midnight', builtIn: true, tokens: { colorScheme: 'dark', accent: expect.any(String), radius: expect.any(Number) } });
    res = await api('GET', '/design/live');
    expect(res.body).toMatchObject({ profile: { id: 'classic' }, selectedAt: null });

    (server.clock as ManualClock).advance(5000);
    res = await api('POST', '/design-profiles/select', { profileId: 'midnight' });
    expect(res.status).toBe(200);
    const { active: _active, ...midnight } = profiles[1]!;
    const selected = res.body;
    expect(selected).toEqual({ profile: midnight, selectedAt: server.clock.now() });
    expect((await api('GET', '/design/live')).body).toEqual(selected);
    res = await api('GET', '/design-profiles');
    expect(res.body.profiles.filter((p: Json) => p.active).map((p: Json) => p.id)).toEqual(['midnight']);

    res = await api('POST', '/design-profiles/select', { profileId: 'neon' });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'DESIGN_PROFILE_NOT_FOUND', details: { profileId: 'neon', available: ['classic', 'midnight', 'daylight', 'high-contrast'] } });
    expect((await api('GET', '/design/live')).body.profile.id).toBe('midnight');
    await api('POST', '/preferences/home', { theme: 'dark' });

    // restart on the same data directory: the selection (and the preferences) are kept
    await server.app.stop();
    const again = await boot({ dataDir: server.dataDir });
    const after = client(again.server, again.token);
    expect((await after('GET', '/design/live')).body).toEqual(selected);
    expect((await after('GET', '/design-profiles')).body.profiles.filter((p: Json) => p.active).map((p: Json) => p.id)).toEqual(['midnight']);
    expect((await after('GET', '/preferences/home')).body.theme).toBe('dark');
  });
});

describe('bootstrap', () => {
  it('answers one payload consistent with the individual routes', async () => {
    const home = await setupHome();
    const { api, ids } = home;
    const space = (await api('POST', '/spaces/save', { name: 'Living room' })).body.id as string;
    await api('POST', `/spaces/${space}/devices/assign`, { deviceIds: [ids.tv, ids.receiver] });
    const program = await saveProgram(home, { name: 'Movie', steps: [{ type: 'command', deviceId: ids.tv, command: 'power_on' }] });
    const zone = (await api('POST', '/zones/save', { name: 'Living', deviceIds: [ids.tv, ids.receiver], programId: program.id })).body;
    await api('POST', '/preferences/home', { theme: 'dark' });
    await api('POST', '/preferences/home/favorites', { favorites: [ids.lamp] });
    await api('POST', '/design-profiles/select', { profileId: 'daylight' });

    const res = await api('GET', '/bootstrap');
    expect(res.status).toBe(200);
    const boot = res.body;
    expect(Object.keys(boot).sort()).toEqual(['at', 'design', 'devices', 'media', 'preferences', 'programs', 'spaces', 'state', 'zones']);
    expect(boot.at).toBe(home.server.clock.now());
    expect(boot.media).toEqual((await api('GET', '/media/players')).body.players);
    expect(boot.devices).toEqual((await api('GET', '/devices')).body.devices);
    expect(boot.spaces).toEqual((await api('GET', '/spaces')).body.spaces);
    expect(boot.zones).toEqual((await api('GET', '/zones')).body.zones);
    expect(boot.programs).toEqual((await api('GET', '/programs')).body.programs);
    expect(boot.preferences).toEqual((await api('GET', '/preferences/home')).body);
    expect(boot.design).toEqual((await api('GET', '/design/live')).body);
    expect(boot.preferences).toMatchObject({ theme: 'dark', favorites: [ids.lamp] });
    expect(boot.design.profile.id).toBe('daylight');
    expect(only(boot.zones, [zone.id])[0]!.program).toEqual({ id: program.id, name: 'Movie' });
    expect(only(boot.spaces, [space])[0]).toMatchObject({ name: 'Living room' });
    expect(only(boot.devices, [ids.tv])[0]).toMatchObject({ room: space, online: true });

    expect(Object.keys(boot.state).sort()).toEqual(boot.devices.map((d: Json) => d.id).sort());
    expect(Object.keys(boot.state)).toEqual(expect.arrayContaining(Object.values(ids)));
    expect(boot.state[ids.tv]).toMatchObject({ state: { power: 'off', volume: 20 }, online: true, confirmed: true });
    expect(boot.state[ids.sensor].state).toEqual({ temperature: 21 });
    const snapshot = (await api('GET', `/devices/${ids.receiver}`)).body;
    expect(boot.state[ids.receiver].state).toEqual(snapshot.state.state);

    // the OS API is mounted under every base
    for (const base of ['/app/os', '/api/os']) {
      const other = await home.server.request('GET', `${base}/bootstrap`, { token: home.token });
      expect(other.status).toBe(200);
      expect(((await other.json()) as Json).spaces).toEqual(boot.spaces);
    }
    expect((await home.server.request('GET', '/v1/os/bootstrap')).status).toBe(401);
  });
});

describe('domain events', () => {
  it('emits an event for each mutation, and none for refused ones', async () => {
    const home = await setupHome();
    const { api, ids } = home;
    const seen: Array<{ name: string; payload: Json }> = [];
    const owner = {};
    const names: Array<keyof DomainEvents> = [
      'space.created',
      'space.updated',
      'space.devices_assigned',
      'space.source_activated',
      'space.removed',
      'zone.created',
      'zone.updated',
      'zone.volume_changed',
      'zone.removed',
      'zone_group.created',
      'zone_group.updated',
      'zone_group.removed',
      'macro.created',
      'macro.updated',
      'macro.run_started',
      'macro.run_finished',
      'macro.removed',
      'action_map.created',
      'action_map.triggered',
      'action_map.removed',
      'alert.submitted',
      'preferences.updated',
      'design.published',
      'program.created',
      'program.run_started',
      'program.run_finished',
    ];
    for (const name of names) home.server.app.hub.events.on(owner, name, (payload) => seen.push({ name, payload: payload as Json }));
    const take = (name: string) => {
      const found = seen.filter((e) => e.name === name);
      expect(found.length, name).toBeGreaterThan(0);
      return found.at(-1)!.payload;
    };
    const at = home.server.clock.now();

    const space = (await api('POST', '/spaces/save', { name: 'Den' })).body;
    expect(take('space.created')).toEqual({ space, at });
    await api('POST', '/spaces/save', { id: space.id, name: 'Study' });
    expect(take('space.updated').space).toMatchObject({ id: space.id, name: 'Study' });
    await api('POST', `/spaces/${space.id}/devices/assign`, { deviceIds: [ids.tv], mode: 'replace' });
    expect(take('space.devices_assigned')).toEqual({ spaceId: space.id, deviceIds: [ids.tv], mode: 'replace', at });
    await api('POST', `/devices/${ids.tv}/metadata`, { remoteSources: [{ id: 'tuner', label: 'TV' }] });
    await api('POST', `/spaces/${space.id}/remote-sources/${encodeURIComponent(`${ids.tv}:tuner`)}/activate`);
    expect(take('space.source_activated')).toEqual({ spaceId: space.id, sourceId: `${ids.tv}:tuner`, deviceId: ids.tv, at });

    const zone = (await api('POST', '/zones/save', { name: 'Living', deviceIds: [ids.tv] })).body;
    expect(take('zone.created').zone).toMatchObject({ id: zone.id, name: 'Living', deviceIds: [ids.tv], programId: null });
    await api('POST', '/zones/save', { id: zone.id, name: 'Lounge', deviceIds: [ids.tv] });
    expect(take('zone.updated').zone).toMatchObject({ id: zone.id, name: 'Lounge' });
    await api('POST', `/zones/${zone.id}/volume`, { volume: 12 });
    expect(take('zone.volume_changed')).toEqual({ zoneId: zone.id, results: [{ deviceId: ids.tv, ok: true, command: 'volume_set', result: { volume: 12 } }], at });
    const group = (await api('POST', '/zone-groups/save', { name: 'All', zoneIds: [zone.id] })).body;
    expect(take('zone_group.created')).toEqual({ group, at });
    await api('POST', `/zone-groups/${group.id}/zones/assign`, { zoneIds: [], mode: 'replace' });
    expect(take('zone_group.updated').group).toMatchObject({ id: group.id, zoneIds: [] });
    await api('POST', `/zone-groups/${group.id}/remove`);
    expect(take('zone_group.removed')).toEqual({ groupId: group.id, at });
    await api('POST', `/zones/${zone.id}/remove`);
    expect(take('zone.removed')).toEqual({ zoneId: zone.id, at });

    const macro = (await api('POST', '/macros/save', { name: 'M', steps: [{ deviceId: ids.lamp, command: 'turn_on' }] })).body;
    expect(take('macro.created')).toEqual({ macro, at });
    await api('POST', '/macros/save', { id: macro.id, name: 'M2', steps: macro.steps });
    expect(take('macro.updated').macro).toMatchObject({ id: macro.id, name: 'M2' });
    await api('POST', `/macros/${macro.id}/run`);
    expect(take('macro.run_started')).toEqual({ macroId: macro.id, at });
    expect(take('macro.run_finished')).toEqual({ macroId: macro.id, ok: true, at });
    await api('POST', `/macros/${macro.id}/remove`);
    expect(take('macro.removed')).toEqual({ macroId: macro.id, at });

    const map = (await api('POST', '/action-maps/save', { name: 'Red', controlKey: 'red', deviceId: ids.lamp, command: 'turn_on' })).body;
    expect(take('action_map.created')).toEqual({ actionMap: map, at });
    await api('POST', `/activity-presets/${encodeURIComponent(`action:${map.id}`)}/run`);
    expect(take('action_map.triggered')).toEqual({ actionMapId: map.id, ok: true, at });
    await api('POST', `/action-maps/${map.id}/remove`);
    expect(take('action_map.removed')).toEqual({ actionMapId: map.id, at });

    const program = await saveProgram(home, { name: 'P', steps: [{ type: 'command', deviceId: ids.lamp, command: 'turn_off' }] });
    expect(take('program.created').program).toMatchObject({ id: program.id, name: 'P' });
    const run = (await api('POST', `/activity-presets/${encodeURIComponent(`program:${program.id}`)}/run?wait=true`)).body.run;
    expect(take('program.run_started').run).toMatchObject({ id: run.id, trigger: 'preset', status: 'running' });
    expect(take('program.run_finished').run).toMatchObject({ id: run.id, status: 'succeeded' });

    const alert = (await api('POST', '/alerts/submissions', { type: 'smoke', message: 'Smoke' })).body;
    expect(take('alert.submitted')).toEqual({ alert, at });
    const prefs = (await api('POST', '/preferences/home', { theme: 'dark' })).body;
    expect(take('preferences.updated')).toEqual({ preferences: prefs, at });
    await api('POST', '/preferences/home/favorites', { favorites: [ids.tv] });
    expect(take('preferences.updated').preferences.favorites).toEqual([ids.tv]);
    const live = (await api('POST', '/design-profiles/select', { profileId: 'midnight' })).body;
    expect(take('design.published')).toEqual({ design: live, at });

    await api('POST', `/spaces/${space.id}/remove`);
    expect(take('space.removed')).toEqual({ spaceId: space.id, at });

    // refused mutations publish nothing
    const count = seen.length;
    expect((await api('POST', '/spaces/save', { name: '' })).status).toBe(400);
    expect((await api('POST', '/zones/save', { name: 'X', deviceIds: ['ghost'] })).status).toBe(404);
    expect((await api('POST', '/preferences/home/favorites', { favorites: ['ghost'] })).status).toBe(404);
    expect((await api('POST', '/design-profiles/select', { profileId: 'neon' })).status).toBe(404);
    expect((await api('POST', '/macros/save', { name: 'X', steps: [{ deviceId: 'ghost', command: 'x' }] })).status).toBe(404);
    expect(seen.slice(count)).toEqual([]);
    home.server.app.hub.events.removeOwner(owner);
  });
});
