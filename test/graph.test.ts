/**
 * The home graph, capabilities, entities, scenes and abstract actions, against the real server:
 * a real WebSocket driver reports a home (lights, a TV, a thermostat, a blind, a sensor, a speaker
 * with scenes, a scene bridge that fails and one that never answers) and a GENERIC_IR projector is
 * saved over REST. Operations are called through their handlers, their input and output checked
 * against their own schemas.
 */
import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceActions, resolveAction } from '../src/domain/devices/actions.js';
import { deriveCapabilities, entityDomainsOf } from '../src/domain/devices/capabilities.js';
import { assignSlugs, slugify } from '../src/platform/slugs.js';
import { deviceActionOperations } from '../src/domain/devices/action-operations.js';
import { graphOperations } from '../src/domain/graph/operations.js';
import { sceneOperations } from '../src/domain/scenes/operations.js';
import { stateOperations } from '../src/domain/state/operations.js';
import { SceneCatalog } from '../src/domain/scenes/catalog.js';
import { DomainError } from '../src/platform/errors.js';
import type { Operation, OperationContext } from '../src/platform/operations.js';
import { startServer, type TestServer } from './support/server.js';
import { TestDriver, eventually, type Message } from './support/ws-driver.js';

// An admin's call: operations that filter by caller see everything for an admin.
const ctx: OperationContext = { principal: { userId: 'admin', username: 'admin', role: 'admin', scope: 'os_api_admin', tokenHash: 't' }, clientAddress: '127.0.0.1', requestId: 't' };
const IR = { freq_khz: 38, raw: [9000, 4500, 560, 560] };

const DEVICES = [
  {
    id: 'lamp',
    name: 'Living Lamp',
    category: 'light',
    commands: ['turn_on', 'turn_off', { name: 'dim', params: { level: { type: 'integer', minimum: 0, maximum: 100 } } }],
    state: { on: false, brightness: 0 },
  },
  { id: 'desk', name: 'Desk Lamp', category: 'light', commands: ['power_on', 'power_off', 'set_brightness'], state: { power: 'off' } },
  // Same name: its entities get object id desk_lamp_2. Only a toggle; a numeric reading besides.
  { id: 'plug', name: 'Desk Lamp', category: 'switch', commands: ['toggle'], state: { on: true, power_w: 12.5 } },
  {
    id: 'tv',
    name: 'Living Room TV',
    category: 'tv',
    commands: ['power_on', 'power_off', 'volume_up', 'volume_down', 'volume_set', 'mute', 'select_input', 'apps.list', 'apps.launch', 'scenes.list', 'scenes.run'],
    state: { power: 'on', volume: 20, input: 'hdmi1', muted: false },
  },
  {
    id: 'thermostat',
    name: 'Hallway Thermostat',
    category: 'thermostat',
    commands: [{ name: 'set_temperature', params: { type: 'object', properties: { temperature: { type: 'number' } } } }, 'set_mode'],
    state: { current_temperature: 20.5, target_temperature: 21, mode: 'heat', humidity: 41 },
  },
  { id: 'blind', name: 'Bedroom Blind', category: 'blind', commands: ['open', 'close', 'set_position', 'stop'], state: { position: 0 } },
  // No commands, only readings: a sensor whatever its category says.
  { id: 'garden', name: 'Garden Sensor', category: 'climate', state: { temperature: 12.5, humidity: 80, battery: 90 } },
  {
    id: 'speaker',
    name: 'Kitchen Speaker',
    category: 'speaker',
    commands: ['play', 'pause', 'stop', 'next', 'previous', 'volume_up', 'volume_down', 'scenes.list', 'scenes.run'],
    state: { playback: 'paused', volume: 10 },
  },
  // Declares scenes and nothing else; its scenes.list fails.
  { id: 'bridge', name: 'Hue Bridge', category: 'bridge', capabilities: ['scenes'] },
] as const;

type Key = (typeof DEVICES)[number]['id'] | 'attic' | 'projector';

interface Home {
  server: TestServer;
  driver: TestDriver;
  slow: TestDriver;
  ids: Record<Key, string>;
  /** ACTIONs the acme driver received, with its own device ids. */
  actions: Array<{ device: string; command: string; params: Record<string, unknown> }>;
  /** scenes.list answers of the acme driver by its device id (a function may throw). */
  sceneLists: Record<string, () => unknown>;
  /** The graph, scene, state and device action operations, over a scene catalog with short time-outs. */
  ops: ReturnType<typeof operationsUnderTest>;
  scenes: SceneCatalog;
}

let home: Home;

const compiled = new Map<TSchema, ReturnType<typeof Compile>>();
function check(schema: TSchema, value: unknown, what: string): void {
  let c = compiled.get(schema);
  if (!c) compiled.set(schema, (c = Compile(schema)));
  if (!c.Check(value)) throw new Error(`${what} does not match its schema: ${JSON.stringify(c.Errors(value).slice(0, 3))}\n${JSON.stringify(value).slice(0, 500)}`);
}

/** Calls an operation's handler, checking input and output against the operation's schemas. */
async function call<I extends TSchema, O extends TSchema>(op: Operation<I, O>, input: Static<I>): Promise<Static<O>> {
  check(op.input, input, `${op.name} input`);
  const output = await op.handler(input, ctx);
  check(op.output, output, `${op.name} output`);
  return output;
}

async function failure(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a DomainError');
}

function lastAction() {
  return home.actions.at(-1);
}

beforeAll(async () => {
  const server = await startServer();
  const token = await server.login();
  const wsUrl = `${server.url.replace('http', 'ws')}/driver`;
  const driver = await TestDriver.register(wsUrl, 'acme.home');
  const actions: Home['actions'] = [];
  const sceneLists: Home['sceneLists'] = {
    tv: () => [{ id: 'p', name: 'Party' }],
    speaker: () => ({ scenes: [{ id: 'morning', name: 'Morning Jazz' }, { sceneId: 'party', label: 'Party' }] }),
    bridge: () => {
      throw new Error('bridge busy');
    },
  };
  driver.serveActions((action: Message) => {
    const device = String(action.deviceId);
    const command = String(action.command);
    const params = (action.params ?? {}) as Record<string, unknown>;
    actions.push({ device, command, params });
    if (command === 'scenes.list') return sceneLists[device]?.();
    if (command === 'scenes.run') return { ran: params.sceneId };
    return undefined;
  });
  for (const device of DEVICES) driver.send({ type: 'DEVICE_DISCOVERED', device });
  await eventually(() => server.app.hub.devices.list().length === DEVICES.length && server.app.hub.devices.list().every((d) => d.online), 3000, 'devices discovered');

  // A second driver that never answers: its bridge times out.
  const slow = await TestDriver.register(wsUrl, 'slow.bridge');
  slow.send({ type: 'DEVICE_DISCOVERED', device: { id: 'attic', name: 'Attic Bridge', category: 'bridge', capabilities: ['scenes'] } });
  await eventually(() => server.app.hub.devices.list().length === DEVICES.length + 1, 3000, 'slow device discovered');

  const res = await server.request('POST', '/v1/os/devices/ir/save', {
    token,
    body: { name: 'Den Projector', extenderIp: '127.0.0.1', irCommands: { power: IR, volume_up: IR, volume_down: IR, input_hdmi1: IR } },
  });
  expect(res.status).toBe(200);
  const projector = ((await res.json()) as { id: string }).id;

  const hub = server.app.hub;
  const idOf = (driverKey: string, driverDeviceId: string) => hub.devices.registry.findByDriver(driverKey, driverDeviceId)!.id;
  const ids = Object.fromEntries(DEVICES.map((d) => [d.id, idOf('acme.home', d.id)])) as Record<Key, string>;
  ids.attic = idOf('slow.bridge', 'attic');
  ids.projector = projector;

  const living = await hub.home.spaces.save({ name: 'Living room' });
  const bedroom = await hub.home.spaces.save({ name: 'Bedroom' });
  const kitchen = await hub.home.spaces.save({ name: 'Kitchen' });
  await hub.home.spaces.assign(living.id, [ids.lamp, ids.tv], 'add');
  await hub.home.spaces.assign(bedroom.id, [ids.blind], 'add');
  await hub.home.spaces.assign(kitchen.id, [ids.speaker], 'add');
  await hub.home.zones.save({ name: 'Downstairs', deviceIds: [ids.tv, ids.speaker] });
  await hub.programs.save({ name: 'Evening', steps: [{ type: 'command', deviceId: ids.lamp, command: 'turn_on' }], semantics: ['evening'] });
  await hub.programs.save({ name: 'Bedtime', steps: [{ type: 'command', deviceId: ids.blind, command: 'close' }], timer: { kind: 'daily', time: '22:00', enabled: true } });
  await hub.home.macros.save({ name: 'Movie', steps: [{ deviceId: ids.tv, command: 'power_on' }] });

  const scenes = new SceneCatalog(hub.devices, hub.clock, { timeoutMs: 300, concurrency: 2 });
  home = { server, driver, slow, ids, actions, sceneLists, ops: operationsUnderTest(server, scenes), scenes };
});

function operationsUnderTest(server: TestServer, scenes: SceneCatalog) {
  const hub = server.app.hub;
  const actions = new DeviceActions(hub.devices);
  const now = () => hub.clock.now();
  return {
    ...graphOperations({
      devices: hub.devices,
      spaces: hub.home.spaces,
      zones: hub.home.zones,
      macros: hub.home.macros,
      programs: hub.programs,
      scenes,
      actions,
      drivers: hub.drivers,
      localDrivers: hub.localDrivers,
      readiness: hub.readiness,
      audiences: hub.access,
      now,
    }),
    ...sceneOperations(scenes, hub.access, (id) => hub.devices.registry.find(id)),
    ...stateOperations(hub.devices, now),
    ...deviceActionOperations(hub.devices, actions),
  };
}

afterAll(async () => {
  home?.driver.close();
  home?.slow.close();
  await home?.server.close();
});

describe('capabilities', () => {
  it('derives each device\'s capabilities from its commands, category, declarations and state', async () => {
    const graph = await call(home.ops.graph, {});
    const caps = (key: Key) => graph.devices.find((d) => d.id === home.ids[key])!.capabilities;
    expect(caps('lamp')).toEqual(['power', 'brightness']);
    expect(caps('desk')).toEqual(['power', 'brightness']);
    expect(caps('plug')).toEqual(['power']);
    expect(caps('tv')).toEqual(['power', 'volume', 'input', 'apps', 'scenes']);
    expect(caps('thermostat')).toEqual(['temperature', 'climate_mode']);
    // `stop` alone does not make the blind a media player; set_position makes it positionable.
    expect(caps('blind')).toEqual(['cover', 'position']);
    expect(caps('garden')).toEqual(['sensor']);
    expect(caps('speaker')).toEqual(['volume', 'media', 'scenes']);
    expect(caps('bridge')).toEqual(['scenes']);
    expect(caps('attic')).toEqual(['scenes']);
    // IR keys named power/volume_up; input_hdmi1 is just a key.
    expect(caps('projector')).toEqual(['power', 'volume', 'ir']);
  });

  it('accepts command synonyms and reads categories and state', () => {
    const device = (fields: { category?: string; commands?: string[]; capabilities?: string[]; driverKey?: string }) => ({
      driverKey: fields.driverKey ?? 'x',
      category: fields.category ?? 'generic',
      capabilities: fields.capabilities ?? [],
      commands: (fields.commands ?? []).map((name) => ({ name })),
    });
    expect(deriveCapabilities(device({ commands: ['on', 'off', 'brightness_set'] }))).toEqual(['power', 'brightness']);
    expect(deriveCapabilities(device({ commands: ['Power-On', 'set_volume', 'set_input', 'play_pause'] }))).toEqual(['power', 'volume', 'media', 'input']);
    expect(deriveCapabilities(device({ commands: ['set_target_temperature', 'set_hvac_mode'] }))).toEqual(['temperature', 'climate_mode']);
    expect(deriveCapabilities(device({ commands: ['equalizer.get', 'apps.launch'] }))).toEqual(['apps', 'equalizer']);
    // A light is dimmable only with a brightness command or state key.
    expect(deriveCapabilities(device({ category: 'light', commands: ['turn_on', 'turn_off'] }))).toEqual(['power']);
    expect(deriveCapabilities(device({ category: 'light', commands: ['turn_on', 'turn_off'] }), { brightness: 30 })).toEqual(['power', 'brightness']);
    expect(deriveCapabilities(device({ category: 'light' }), { on: true })).toEqual(['power']);
    // Declared aliases.
    expect(deriveCapabilities(device({ capabilities: ['dimmer', 'media_player'] }))).toEqual(['power', 'brightness', 'media']);
    // State and no commands: a sensor; nothing at all: nothing.
    expect(deriveCapabilities(device({}), { co2: 600 })).toEqual(['sensor']);
    expect(deriveCapabilities(device({}))).toEqual([]);
    // IR: only power/volume/media from key names; an "open" key is a disc tray, not a cover.
    expect(deriveCapabilities(device({ driverKey: 'GENERIC_IR', capabilities: ['ir'], commands: ['power', 'vol_up', 'open', 'play'] }))).toEqual(['power', 'volume', 'media', 'ir']);
    expect(entityDomainsOf({ deviceClass: 'switch', capabilities: ['power'] })).toEqual(['switch']);
    expect(entityDomainsOf({ deviceClass: 'light', capabilities: ['power'] })).toEqual(['light']);
    expect(entityDomainsOf({ deviceClass: 'media_player', capabilities: ['power', 'volume', 'ir'] })).toEqual(['media_player', 'remote']);
  });

  it('resolves abstract actions to the device\'s own command', () => {
    const dev = (commands: Array<string | { name: string; params?: Record<string, unknown> }>, category = 'generic', driverKey = 'x') => ({
      driverKey,
      category,
      capabilities: driverKey === 'GENERIC_IR' ? ['ir'] : [],
      commands: commands.map((c) => (typeof c === 'string' ? { name: c } : c)),
    });
    expect(resolveAction(dev(['set_brightness']), { action: 'set_brightness', value: 40 })).toEqual({ command: 'set_brightness', params: { brightness: 40 } });
    expect(resolveAction(dev(['dim']), { action: 'set_brightness', value: 40.4 })).toEqual({ command: 'dim', params: { level: 40 } });
    expect(resolveAction(dev([{ name: 'brightness', params: { pct: { type: 'number' } } }]), { action: 'set_brightness', value: 140 })).toEqual({ command: 'brightness', params: { pct: 100 } });
    // toggle from state, and on/off through a toggle
    expect(resolveAction(dev(['turn_on', 'turn_off']), { action: 'toggle' }, { on: true })).toEqual({ command: 'turn_off', params: {} });
    expect(resolveAction(dev(['power_on', 'power_off']), { action: 'toggle' }, { power: 'off' })).toEqual({ command: 'power_on', params: {} });
    expect(resolveAction(dev(['toggle']), { action: 'turn_off' }, { on: true })).toEqual({ command: 'toggle', params: {} });
    expect(resolveAction(dev(['toggle']), { action: 'turn_off' }, { on: false })).toMatchObject({ command: 'toggle', noop: true });
    // volume: setter when the level is known, else steps for the caller to repeat
    expect(resolveAction(dev(['volume_set', 'volume_up']), { action: 'volume_up', value: 5 }, { volume: 30 })).toEqual({ command: 'volume_set', params: { volume: 35 } });
    expect(resolveAction(dev(['volume_up', 'volume_down']), { action: 'volume_up', value: 3 })).toEqual({ command: 'volume_up', params: {}, repeat: 3 });
    expect(resolveAction(dev(['volume_up', 'volume_down']), { action: 'set_volume', value: 8 }, { volume: 10 })).toEqual({ command: 'volume_down', params: {}, repeat: 2 });
    expect(resolveAction(dev(['volume_up', 'volume_down']), { action: 'set_volume', value: 8 })).toBeUndefined();
    // covers: open/close through set_position and back
    expect(resolveAction(dev(['set_position']), { action: 'open' })).toEqual({ command: 'set_position', params: { position: 100 } });
    expect(resolveAction(dev(['open', 'close']), { action: 'set_position', value: 0 })).toEqual({ command: 'close', params: {} });
    expect(resolveAction(dev(['open', 'close']), { action: 'set_position', value: 40 })).toBeUndefined();
    // a driver without a command list takes the canonical names for what its category allows
    expect(resolveAction(dev([], 'light'), { action: 'toggle' }, { on: false, brightness: 10 })).toEqual({ command: 'turn_on', params: {} });
    expect(resolveAction(dev([], 'light'), { action: 'set_brightness', value: 20 }, { on: false, brightness: 10 })).toEqual({ command: 'set_brightness', params: { brightness: 20 } });
    expect(resolveAction(dev([], 'light'), { action: 'play' })).toBeUndefined();
    // IR keys carry no parameters
    expect(resolveAction(dev(['power', 'volume_up'], 'tv', 'GENERIC_IR'), { action: 'turn_on' })).toEqual({ command: 'power', params: {} });
    expect(resolveAction(dev(['power', 'volume_up'], 'tv', 'GENERIC_IR'), { action: 'set_volume', value: 20 })).toBeUndefined();
    expect(resolveAction(dev(['play']), { action: 'set_temperature', value: 20 })).toBeUndefined();
  });

  it('lists the capability model and the entity domains', async () => {
    const model = await call(home.ops.capabilityModel, {});
    expect(model.capabilities.map((c) => c.name)).toEqual([
      'power', 'brightness', 'color', 'volume', 'temperature', 'climate_mode', 'media', 'cover', 'position', 'lock', 'fan_speed',
      'input', 'apps', 'equalizer', 'scenes', 'ir', 'sensor', 'binary_sensor', 'button',
    ]);
    expect(model.classes.map((c) => c.deviceClass)).toEqual(['light', 'switch', 'outlet', 'cover', 'climate', 'fan', 'lock', 'sensor', 'binary_sensor', 'button', 'media_player', 'remote', 'generic']);
    expect(model.capabilities.find((c) => c.name === 'brightness')).toMatchObject({ entityDomain: 'light', stateKeys: [{ key: 'brightness', type: 'number' }] });
    expect(model.actions.find((a) => a.action === 'set_position')).toMatchObject({ capability: 'position', also: ['cover'], value: 'required', param: 'position' });
    const { domains } = await call(home.ops.entityDomains, {});
    expect(domains.map((d) => d.domain)).toEqual(['light', 'switch', 'fan', 'lock', 'media_player', 'climate', 'cover', 'remote', 'sensor', 'binary_sensor', 'event', 'scene']);
    expect(domains.find((d) => d.domain === 'cover')!.services.map((s) => s.service)).toEqual(['open_cover', 'close_cover', 'stop_cover', 'set_cover_position', 'set_cover_tilt_position']);
    // The operations under test are the ones the hub serves, under the same names.
    for (const op of Object.values(home.ops)) expect(home.server.app.hub.operations.get(op.name).summary).toBe(op.summary);
  });
});

describe('home graph', () => {
  it('builds spaces, devices, zones, programs and macros from memory without asking drivers', async () => {
    const before = home.actions.length;
    const graph = await call(home.ops.graph, {});
    expect(home.actions.length).toBe(before);
    const { ids } = home;
    expect(graph.generatedAt).toBe(home.server.clock.now());
    expect(graph.devices.map((d) => d.name)).toEqual([
      'Living Lamp',
      'Desk Lamp',
      'Desk Lamp',
      'Living Room TV',
      'Hallway Thermostat',
      'Bedroom Blind',
      'Garden Sensor',
      'Kitchen Speaker',
      'Hue Bridge',
      'Attic Bridge',
      'Den Projector',
    ]);
    expect(graph.devices.every((d) => d.online)).toBe(true);
    expect(graph.spaces.map((s) => [s.name, s.deviceIds])).toEqual([
      ['Living room', [ids.lamp, ids.tv]],
      ['Bedroom', [ids.blind]],
      ['Kitchen', [ids.speaker]],
    ]);
    const living = graph.spaces[0]!.id;
    expect(graph.devices.find((d) => d.id === ids.tv)).toMatchObject({
      spaceId: living,
      category: 'tv',
      state: { power: 'on', volume: 20, input: 'hdmi1' },
      commands: expect.arrayContaining(['power_on', 'select_input', 'scenes.run']),
      entityIds: ['media_player.living_room_tv'],
    });
    expect(graph.devices.find((d) => d.id === ids.garden)!.spaceId).toBeNull();
    expect(graph.zones).toEqual([{ id: expect.any(String), name: 'Downstairs', deviceIds: [ids.tv, ids.speaker], programId: null }]);
    expect(graph.programs.map((p) => ({ name: p.name, semantics: p.semantics, hasTimer: p.hasTimer }))).toEqual([
      { name: 'Evening', semantics: ['evening'], hasTimer: false },
      { name: 'Bedtime', semantics: [], hasTimer: true },
    ]);
    expect(graph.macros.map((m) => m.name)).toEqual(['Movie']);
    expect(graph.scenes).toEqual([]);
  });

  it('adds drivers, counts and readiness in the system snapshot', async () => {
    const snapshot = await call(home.ops.systemSnapshot, {});
    expect(snapshot.ready).toBe(true);
    expect(snapshot.waitingFor).toEqual([]);
    expect(snapshot.graph.devices).toHaveLength(11);
    // The built-in integrations (Roku, Android TV, Cast, media bridge) are connected links too, with no devices here.
    expect(snapshot.drivers.connected.map((d) => [d.driverKey, d.devices]).sort()).toEqual([
      ['acme.home', DEVICES.length],
      ['androidtv', 0],
      ['cast', 0],
      ['media-bridge', 0],
      ['roku', 0],
      ['slow.bridge', 1],
    ]);
    expect(snapshot.drivers.local.total).toBe(snapshot.drivers.local.drivers.length);
    expect(snapshot.counts).toMatchObject({ devices: 11, onlineDevices: 11, spaces: 3, zones: 1, macros: 1, programs: 2, automations: 1, enabledAutomations: 1, scenes: 0 });
    // 9 device entities (the IR projector is a remote, the bridges have none) and no scenes yet
    expect(snapshot.counts.entities).toBe(9);
  });

  it('narrows to a space or a device with the zones, programs and macros that touch it', async () => {
    const { ids, ops } = home;
    const graph = await call(ops.graph, {});
    const [living, bedroom, kitchen] = graph.spaces.map((s) => s.id) as [string, string, string];

    const room = await call(ops.contextSnapshot, { spaceId: living });
    expect(room.space).toMatchObject({ id: living, name: 'Living room' });
    expect(room.devices.map((d) => d.id)).toEqual([ids.lamp, ids.tv]);
    expect(room.entities.map((e) => e.entityId)).toEqual(['light.living_lamp', 'media_player.living_room_tv']);
    expect(room.zones.map((z) => z.name)).toEqual(['Downstairs']);
    expect(room.programs.map((p) => p.name)).toEqual(['Evening']);
    expect(room.macros.map((m) => m.name)).toEqual(['Movie']);

    const blind = await call(ops.contextSnapshot, { deviceId: ids.blind });
    expect(blind.space?.id).toBe(bedroom);
    expect(blind.devices.map((d) => d.id)).toEqual([ids.blind]);
    expect(blind.programs.map((p) => p.name)).toEqual(['Bedtime']);
    expect(blind.zones).toEqual([]);
    expect(blind.macros).toEqual([]);

    const both = await call(ops.contextSnapshot, { spaceId: kitchen, deviceId: ids.speaker });
    expect(both.devices.map((d) => d.id)).toEqual([ids.speaker]);
    expect(both.zones.map((z) => z.name)).toEqual(['Downstairs']);

    expect(await failure(call(ops.contextSnapshot, { spaceId: living, deviceId: ids.speaker }))).toMatchObject({ kind: 'unprocessable', code: 'DEVICE_NOT_IN_SPACE' });
    expect(await failure(call(ops.contextSnapshot, {}))).toMatchObject({ kind: 'invalid', code: 'CONTEXT_REQUIRED' });
    expect(await failure(call(ops.contextSnapshot, { spaceId: 'nope' }))).toMatchObject({ kind: 'not_found', code: 'SPACE_NOT_FOUND' });
    expect(await failure(call(ops.contextSnapshot, { deviceId: 'nope' }))).toMatchObject({ kind: 'not_found', code: 'DEVICE_NOT_FOUND' });
  });
});

describe('entities', () => {
  it('names entities domain.object_id, de-duplicated in device creation order', async () => {
    const { entities } = await call(home.ops.listEntities, {});
    expect(entities.map((e) => e.entityId)).toEqual([
      'light.living_lamp',
      'light.desk_lamp',
      'switch.desk_lamp_2',
      'media_player.living_room_tv',
      'climate.hallway_thermostat',
      'cover.bedroom_blind',
      'sensor.garden_sensor',
      'media_player.kitchen_speaker',
      // An IR projector is a remote (its class), whatever its keys are named.
      'remote.den_projector',
    ]);
    expect(entities.find((e) => e.entityId === 'switch.desk_lamp_2')).toMatchObject({ deviceId: home.ids.plug, name: 'Desk Lamp', domain: 'switch', objectId: 'desk_lamp_2' });
    const lights = await call(home.ops.listEntities, { domain: 'light' });
    expect(lights.entities.map((e) => e.entityId)).toEqual(['light.living_lamp', 'light.desk_lamp']);
    const graph = await call(home.ops.graph, {});
    const living = await call(home.ops.listEntities, { spaceId: graph.spaces[0]!.id });
    expect(living.entities.map((e) => e.entityId)).toEqual(['light.living_lamp', 'media_player.living_room_tv']);

    expect(slugify('Café Lamp #2 ')).toBe('cafe_lamp_2');
    expect(slugify('???')).toBe('unnamed');
    const slugs = assignSlugs([
      { id: 'a', name: 'Lamp' },
      { id: 'b', name: 'Lamp 2' },
      { id: 'c', name: 'lamp' },
      { id: 'd', name: 'LAMP' },
    ]);
    expect([...slugs.values()]).toEqual(['lamp', 'lamp_2', 'lamp_3', 'lamp_4']);
  });

  it('gives each entity a state, attributes and the services it supports', async () => {
    const get = (entityId: string) => call(home.ops.getEntity, { entityId });
    expect(await get('light.living_lamp')).toMatchObject({
      domain: 'light',
      state: 'off',
      attributes: { friendly_name: 'Living Lamp', brightness: 0 },
      services: ['turn_on', 'turn_off', 'toggle'],
    });
    expect(await get('media_player.living_room_tv')).toMatchObject({
      state: 'on',
      attributes: { volume: 20, muted: false, input: 'hdmi1' },
      services: ['turn_on', 'turn_off', 'toggle', 'volume_set', 'volume_up', 'volume_down'],
    });
    expect(await get('media_player.kitchen_speaker')).toMatchObject({ state: 'paused', attributes: { playback: 'paused', volume: 10 } });
    expect(await get('climate.hallway_thermostat')).toMatchObject({
      state: 'heat',
      attributes: { current_temperature: 20.5, target_temperature: 21, mode: 'heat' },
      services: ['set_temperature', 'set_hvac_mode'],
    });
    expect(await get('cover.bedroom_blind')).toMatchObject({ state: 'closed', attributes: { position: 0 }, services: ['open_cover', 'close_cover', 'stop_cover', 'set_cover_position'] });
    expect(await get('sensor.garden_sensor')).toMatchObject({
      state: '12.5',
      attributes: { device_class: 'temperature', state_key: 'temperature', humidity: 80, battery: 90 },
      services: [],
    });
    expect(await get('remote.den_projector')).toMatchObject({ state: 'unknown', services: ['turn_on', 'turn_off', 'toggle'] });
    expect(await failure(get('light.nope'))).toMatchObject({ kind: 'not_found', code: 'ENTITY_NOT_FOUND', details: { entityId: 'light.nope' } });
    expect(await failure(get('nodot'))).toMatchObject({ code: 'ENTITY_NOT_FOUND' });
  });

  it('lists sensors: sensor devices and the numeric readings of other devices', async () => {
    const { sensors } = await call(home.ops.listSensors, {});
    expect(sensors.map((s) => [s.entityId, s.state])).toEqual([
      ['sensor.garden_sensor', '12.5'],
      ['sensor.desk_lamp_2_power_w', '12.5'],
      ['sensor.hallway_thermostat_current_temperature', '20.5'],
      ['sensor.hallway_thermostat_humidity', '41'],
    ]);
    const humidity = await call(home.ops.getEntity, { entityId: 'sensor.hallway_thermostat_humidity' });
    expect(humidity).toMatchObject({ deviceId: home.ids.thermostat, name: 'Hallway Thermostat humidity', attributes: { device_class: 'humidity', unit_of_measurement: '%', state_key: 'humidity' } });
    const mine = await call(home.ops.listSensors, { deviceId: home.ids.thermostat });
    expect(mine.sensors).toHaveLength(2);
  });

  it('performs entity services as the device\'s own commands', async () => {
    const { ids, ops } = home;
    const cases: Array<[string, string, Record<string, unknown> | undefined, Key, string, Record<string, unknown>]> = [
      ['light.living_lamp', 'turn_on', { brightness: 40 }, 'lamp', 'dim', { level: 40 }],
      ['light.living_lamp', 'turn_on', undefined, 'lamp', 'turn_on', {}],
      ['light.living_lamp', 'turn_off', undefined, 'lamp', 'turn_off', {}],
      ['light.living_lamp', 'toggle', undefined, 'lamp', 'turn_on', {}],
      ['light.desk_lamp', 'turn_on', { brightness_pct: 60 }, 'desk', 'set_brightness', { brightness: 60 }],
      ['light.desk_lamp', 'turn_off', undefined, 'desk', 'power_off', {}],
      ['switch.desk_lamp_2', 'toggle', undefined, 'plug', 'toggle', {}],
      ['switch.desk_lamp_2', 'turn_off', undefined, 'plug', 'toggle', {}],
      ['media_player.living_room_tv', 'volume_set', { volume_level: 0.35 }, 'tv', 'volume_set', { volume: 35 }],
      ['media_player.living_room_tv', 'volume_set', { volume: 12 }, 'tv', 'volume_set', { volume: 12 }],
      ['media_player.living_room_tv', 'volume_up', undefined, 'tv', 'volume_up', {}],
      ['media_player.living_room_tv', 'turn_off', undefined, 'tv', 'power_off', {}],
      ['climate.hallway_thermostat', 'set_temperature', { temperature: 22.5 }, 'thermostat', 'set_temperature', { temperature: 22.5 }],
      ['cover.bedroom_blind', 'open_cover', undefined, 'blind', 'open', {}],
      ['cover.bedroom_blind', 'close_cover', undefined, 'blind', 'close', {}],
      ['cover.bedroom_blind', 'set_cover_position', { position: 30 }, 'blind', 'set_position', { position: 30 }],
      ['media_player.kitchen_speaker', 'media_play', undefined, 'speaker', 'play', {}],
      ['media_player.kitchen_speaker', 'media_pause', undefined, 'speaker', 'pause', {}],
      ['media_player.kitchen_speaker', 'media_next_track', undefined, 'speaker', 'next', {}],
      ['media_player.kitchen_speaker', 'media_previous_track', undefined, 'speaker', 'previous', {}],
    ];
    for (const [entityId, service, data, device, command, params] of cases) {
      const before = home.actions.length;
      const result = await call(ops.entityAction, { entityId, service, ...(data ? { data } : {}) });
      expect(result, `${entityId} ${service}`).toMatchObject({ entityId, service, deviceId: ids[device], ok: true, command });
      expect(home.actions.length, `${entityId} ${service}`).toBe(before + 1);
      expect(lastAction(), `${entityId} ${service}`).toEqual({ device, command, params });
    }

    // Only a toggle and already on: nothing is sent.
    let before = home.actions.length;
    expect(await call(ops.entityAction, { entityId: 'switch.desk_lamp_2', service: 'turn_on' })).toMatchObject({ ok: true, result: { unchanged: true } });
    expect(home.actions.length).toBe(before);

    // Step-only volume with a known level: pressed as often as needed.
    before = home.actions.length;
    expect(await call(ops.entityAction, { entityId: 'media_player.kitchen_speaker', service: 'volume_set', data: { volume: 13 } })).toMatchObject({
      ok: true,
      command: 'volume_up',
      result: { presses: 3 },
    });
    expect(home.actions.slice(before)).toEqual(Array.from({ length: 3 }, () => ({ device: 'speaker', command: 'volume_up', params: {} })));

    // The device cannot: the call fails with what was attempted; nothing sent.
    before = home.actions.length;
    expect(await failure(call(ops.entityAction, { entityId: 'media_player.living_room_tv', service: 'media_play' }))).toMatchObject({
      kind: 'unprocessable',
      code: 'ACTION_NOT_SUPPORTED',
      details: { ok: false, action: 'play', error: { code: 'ACTION_NOT_SUPPORTED' } },
    });
    expect(home.actions.length).toBe(before);

    expect(await failure(call(ops.entityAction, { entityId: 'sensor.garden_sensor', service: 'turn_on' }))).toMatchObject({ kind: 'unprocessable', code: 'SERVICE_NOT_SUPPORTED' });
    expect(await failure(call(ops.entityAction, { entityId: 'cover.bedroom_blind', service: 'turn_on' }))).toMatchObject({ code: 'SERVICE_NOT_SUPPORTED' });
    expect(await failure(call(ops.entityAction, { entityId: 'cover.bedroom_blind', service: 'set_cover_position' }))).toMatchObject({ kind: 'invalid', code: 'INVALID_SERVICE_DATA' });
    expect(await failure(call(ops.entityAction, { entityId: 'media_player.living_room_tv', service: 'volume_set', data: { volume: 'loud' } }))).toMatchObject({ code: 'INVALID_SERVICE_DATA' });
    expect(await failure(call(ops.entityAction, { entityId: 'light.nope', service: 'turn_on' }))).toMatchObject({ kind: 'not_found', code: 'ENTITY_NOT_FOUND' });
  });
});

describe('devices: states, commands and abstract actions', () => {
  it('lists states and one device\'s state', async () => {
    const { states } = await call(home.ops.listStates, {});
    expect(states).toHaveLength(11);
    expect(states.find((s) => s.deviceId === home.ids.garden)).toMatchObject({ name: 'Garden Sensor', state: { temperature: 12.5 }, online: true, confirmed: true });
    // IR devices have no state but are as online as their configuration
    expect(states.find((s) => s.deviceId === home.ids.projector)).toMatchObject({ state: {}, online: true, confirmed: false, updatedAt: null });
    expect(await call(home.ops.getDeviceState, { deviceId: home.ids.blind })).toMatchObject({ deviceId: home.ids.blind, state: { position: 0 }, online: true });
    expect(await failure(call(home.ops.getDeviceState, { deviceId: 'nope' }))).toMatchObject({ kind: 'not_found', code: 'DEVICE_NOT_FOUND' });
  });

  it('lists a device\'s commands and the abstract actions they serve', async () => {
    const lamp = await call(home.ops.listDeviceCommands, { deviceId: home.ids.lamp });
    expect(lamp.capabilities).toEqual(['power', 'brightness']);
    expect(lamp.commands).toEqual([
      { name: 'turn_on', capability: 'power', meaning: 'turn_on' },
      { name: 'turn_off', capability: 'power', meaning: 'turn_off' },
      { name: 'dim', params: { level: { type: 'integer', minimum: 0, maximum: 100 } }, capability: 'brightness', meaning: 'set_brightness' },
    ]);
    expect(lamp.actions).toEqual([
      { action: 'turn_on', command: 'turn_on' },
      { action: 'turn_off', command: 'turn_off' },
      { action: 'toggle', command: 'turn_on' },
      { action: 'set_brightness', command: 'dim', valueParam: 'level' },
    ]);
    const projector = await call(home.ops.listDeviceCommands, { deviceId: home.ids.projector });
    expect(projector.commands.map((c) => [c.name, c.capability])).toEqual([
      ['power', 'power'],
      ['volume_up', 'volume'],
      ['volume_down', 'volume'],
      ['input_hdmi1', 'ir'],
    ]);
    expect(projector.actions.map((a) => a.action)).toEqual(['turn_on', 'turn_off', 'toggle', 'volume_up', 'volume_down']);

    const dim = await call(home.ops.getDeviceCommand, { deviceId: home.ids.lamp, command: 'dim' });
    expect(dim).toEqual({ deviceId: home.ids.lamp, command: lamp.commands[2], actions: ['set_brightness'] });
    const stop = await call(home.ops.getDeviceCommand, { deviceId: home.ids.blind, command: 'stop' });
    expect(stop.command).toMatchObject({ capability: 'cover', meaning: 'stop' });
    expect(stop.actions).toEqual(['stop']);
    expect(await failure(call(home.ops.getDeviceCommand, { deviceId: home.ids.lamp, command: 'explode' }))).toMatchObject({ kind: 'not_found', code: 'COMMAND_NOT_FOUND' });
    expect(await failure(call(home.ops.listDeviceCommands, { deviceId: 'nope' }))).toMatchObject({ code: 'DEVICE_NOT_FOUND' });
  });

  it('performs DEVICE_ACTION through the device\'s own command', async () => {
    const { ids, ops } = home;
    expect(await call(ops.deviceAction, { deviceId: ids.blind, action: 'set_position', value: 55 })).toMatchObject({ action: 'set_position', ok: true, command: 'set_position' });
    expect(lastAction()).toEqual({ device: 'blind', command: 'set_position', params: { position: 55 } });
    expect(await call(ops.deviceAction, { deviceId: ids.lamp, action: 'set_brightness', value: 70 })).toMatchObject({ ok: true, command: 'dim' });
    expect(lastAction()).toEqual({ device: 'lamp', command: 'dim', params: { level: 70 } });
    expect(await call(ops.deviceAction, { deviceId: ids.tv, action: 'volume_down', value: 5 })).toMatchObject({ ok: true, command: 'volume_set' });
    expect(lastAction()).toEqual({ device: 'tv', command: 'volume_set', params: { volume: 15 } });
    const before = home.actions.length;
    expect(await call(ops.deviceAction, { deviceId: ids.speaker, action: 'volume_down', value: 2 })).toMatchObject({ ok: true, command: 'volume_down', result: { presses: 2 } });
    expect(home.actions.length).toBe(before + 2);
    // An action that did not happen fails the operation, with the attempt in the details.
    expect(await failure(call(ops.deviceAction, { deviceId: ids.thermostat, action: 'play' }))).toMatchObject({ code: 'ACTION_NOT_SUPPORTED', details: { ok: false, action: 'play' } });
    expect(await failure(call(ops.deviceAction, { deviceId: ids.garden, action: 'turn_on' }))).toMatchObject({ code: 'ACTION_NOT_SUPPORTED' });
    expect(await failure(call(ops.deviceAction, { deviceId: ids.lamp, action: 'set_brightness' }))).toMatchObject({ kind: 'invalid', code: 'ACTION_VALUE_REQUIRED' });
    expect(await failure(call(ops.deviceAction, { deviceId: 'nope', action: 'turn_on' }))).toMatchObject({ kind: 'not_found', code: 'DEVICE_NOT_FOUND' });

    // DeviceActions itself never throws.
    const actions = new DeviceActions(home.server.app.hub.devices);
    expect(await actions.perform('nope', { action: 'turn_on' })).toEqual({ deviceId: 'nope', ok: false, error: { code: 'DEVICE_NOT_FOUND', message: 'No device nope.' } });
    expect(await actions.perform(ids.lamp, { action: 'set_brightness', value: Number.NaN })).toMatchObject({ ok: false, error: { code: 'INVALID_ACTION_VALUE' } });
  });
});

describe('scenes', () => {
  it('refreshes, lists and runs scenes; failing and silent devices do not break the refresh', async () => {
    const { ids, ops } = home;
    // The catalog is a cache: listing asks nobody.
    let before = home.actions.length;
    expect(await call(ops.listScenes, {})).toEqual({ scenes: [] });
    expect(home.actions.length).toBe(before);

    const started = Date.now();
    const { scenes, refreshed } = await call(ops.listScenes, { refresh: true });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(refreshed).toEqual([
      { deviceId: ids.tv, ok: true, scenes: 1 },
      { deviceId: ids.speaker, ok: true, scenes: 2 },
      { deviceId: ids.bridge, ok: false, error: { code: 'DRIVER_ERROR', message: 'bridge busy' } },
      { deviceId: ids.attic, ok: false, error: { code: 'DRIVER_TIMEOUT', message: expect.stringContaining('300 ms') } },
    ]);
    expect(scenes).toEqual([
      { id: `${ids.tv}:p`, deviceId: ids.tv, sceneId: 'p', name: 'Party', entityId: 'scene.party' },
      { id: `${ids.speaker}:morning`, deviceId: ids.speaker, sceneId: 'morning', name: 'Morning Jazz', entityId: 'scene.morning_jazz' },
      { id: `${ids.speaker}:party`, deviceId: ids.speaker, sceneId: 'party', name: 'Party', entityId: 'scene.party_2' },
    ]);
    const graph = await call(ops.graph, {});
    expect(graph.scenes.map((s) => s.id)).toEqual(scenes.map((s) => s.id));
    const sceneEntities = await call(ops.listEntities, { domain: 'scene' });
    expect(sceneEntities.entities.map((e) => [e.entityId, e.name, e.sceneId])).toEqual(scenes.map((s) => [s.entityId, s.name, s.id]));
    expect(await call(ops.getEntity, { entityId: 'scene.morning_jazz' })).toMatchObject({ state: 'unknown', services: ['turn_on'], deviceId: ids.speaker });

    // Running: as an entity service and by id.
    expect(await call(ops.entityAction, { entityId: 'scene.morning_jazz', service: 'turn_on' })).toMatchObject({
      ok: true,
      action: 'scene.run',
      command: 'scenes.run',
      deviceId: ids.speaker,
      result: { ran: 'morning' },
    });
    expect(lastAction()).toEqual({ device: 'speaker', command: 'scenes.run', params: { sceneId: 'morning' } });
    expect(await call(ops.runScene, { sceneId: `${ids.tv}:p` })).toEqual({ sceneId: `${ids.tv}:p`, deviceId: ids.tv, ok: true, result: { ran: 'p' } });
    expect(lastAction()).toEqual({ device: 'tv', command: 'scenes.run', params: { sceneId: 'p' } });
    before = home.actions.length;
    for (const sceneId of [`${ids.tv}:nope`, `${ids.lamp}:p`, 'nope:p', 'nocolon']) {
      expect(await failure(call(ops.runScene, { sceneId })), sceneId).toMatchObject({ kind: 'not_found', code: 'SCENE_NOT_FOUND' });
    }
    expect(home.actions.length).toBe(before);

    // A failed refresh keeps the device's last good list.
    home.sceneLists.speaker = () => {
      throw new Error('speaker rebooting');
    };
    const again = await call(ops.listScenes, { refresh: true });
    expect(again.refreshed!.find((r) => r.deviceId === ids.speaker)).toMatchObject({ ok: false, error: { code: 'DRIVER_ERROR' } });
    expect(again.scenes.map((s) => s.entityId)).toEqual(['scene.party', 'scene.morning_jazz', 'scene.party_2']);

    // One device on request; an unknown one is not found.
    home.sceneLists.tv = () => ['p', 'cinema'];
    expect(await home.scenes.refresh(ids.tv)).toEqual([{ deviceId: ids.tv, ok: true, scenes: 2 }]);
    expect(home.scenes.list().filter((s) => s.deviceId === ids.tv).map((s) => s.name)).toEqual(['p', 'cinema']);
    expect(await failure(home.scenes.refresh('nope'))).toMatchObject({ code: 'DEVICE_NOT_FOUND' });
  });
});

describe('changes', () => {
  it('drops removed devices without renaming the others, and a watching catalog learns new scenes', async () => {
    const { ids, ops, driver } = home;
    const hub = home.server.app.hub;
    const watching = new SceneCatalog(hub.devices, hub.clock, { timeoutMs: 300 });
    const stop = watching.watch(hub.events);
    home.sceneLists.porch = () => [{ id: 'welcome', name: 'Welcome' }];
    try {
      driver.send({ type: 'DEVICE_REMOVED', deviceId: 'desk' });
      driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'porch', name: 'Porch Lights', category: 'light', commands: ['turn_on', 'turn_off', 'scenes.list', 'scenes.run'], state: { on: false } } });
      const porch = await eventually(() => watching.list().find((s) => s.sceneId === 'welcome'), 3000, 'porch scenes listed');
      expect(porch.name).toBe('Welcome');
    } finally {
      stop();
    }
    const graph = await call(ops.graph, {});
    expect(graph.devices.some((d) => d.id === ids.desk)).toBe(false);
    // The plug keeps desk_lamp_2: object ids are allocated over every device ever registered.
    expect(graph.devices.find((d) => d.id === ids.plug)!.entityIds).toEqual(['switch.desk_lamp_2']);
    expect(graph.devices.at(-1)).toMatchObject({ name: 'Porch Lights', entityIds: ['light.porch_lights'], capabilities: ['power', 'scenes'] });
    expect(await failure(call(ops.getEntity, { entityId: 'light.desk_lamp' }))).toMatchObject({ code: 'ENTITY_NOT_FOUND' });
    // A light that cannot dim switches on when asked for a brightness.
    expect(await call(ops.entityAction, { entityId: 'light.porch_lights', service: 'turn_on', data: { brightness: 50 } })).toMatchObject({ ok: true, action: 'turn_on', command: 'turn_on' });
    expect(lastAction()).toEqual({ device: 'porch', command: 'turn_on', params: {} });
    expect(await call(ops.deviceAction, { deviceId: ids.desk, action: 'turn_on' }).catch((e: unknown) => e)).toMatchObject({ code: 'DEVICE_NOT_FOUND' });
  });
});
