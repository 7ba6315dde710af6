import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveAction } from '../src/domain/devices/actions.js';
import { declaredAttributesOf } from '../src/domain/devices/capability-schemas.js';
import type { DeviceAttributes } from '../src/domain/devices/capabilities.js';
import type { DeviceCommandSpec, LogicalDevice } from '../src/domain/devices/model.js';
import { commandStateKeys, modelOf, readingOf } from '../src/domain/devices/readings.js';
import { startServer, type TestServer } from './support/server.js';
import { TestDriver, eventually, type Message } from './support/ws-driver.js';

/**
 * Readings from the state key a device's own command writes (`dim {level}` → `level`), from the
 * common synonyms with their scales (`level`, Hue's `bri`, Tasmota's `Dimmer`), and from the keys a
 * driver declares in `attributes.stateKeys`; unit checks, then through the real server with a
 * WebSocket driver and a local driver process.
 */

type Json = Record<string, unknown>;

/** The light of the report: power_on/power_off, and dim {level}. */
const DIM_LEVEL_COMMANDS: DeviceCommandSpec[] = [{ name: 'power_on' }, { name: 'power_off' }, { name: 'dim', params: { level: { type: 'number', minimum: 0, maximum: 100 } } }];

function logical(fields: Partial<LogicalDevice>): LogicalDevice {
  return {
    id: 'dev-1',
    name: 'Device',
    driverKey: 'acme.test',
    driverDeviceId: 'd1',
    category: 'generic',
    room: null,
    tags: [],
    capabilities: [],
    properties: {},
    commands: [],
    remoteSources: [],
    removed: false,
    createdAt: 0,
    updatedAt: 0,
    ...fields,
  };
}

const light = (state: Json, attributes: DeviceAttributes = {}, commands: DeviceCommandSpec[] = []) => readingOf('light', attributes, state, { commands, capabilities: [], driverKey: 'acme.test' });

describe('reading synonyms (unit)', () => {
  it.each([
    ['brightness', { brightness: 40 }, 40],
    ['level (SmartThings, Z-Wave multilevel; 0–100)', { level: 70 }, 70],
    ['bri (Hue; 0–254, full)', { bri: 254 }, 100],
    ['bri (Hue; half)', { bri: 127 }, 50],
    ['bri (Hue; rounded)', { bri: 200 }, 79],
    ['bri (Hue; off the scale, clamped)', { bri: 400 }, 100],
    ['Dimmer (Tasmota; 0–100)', { Dimmer: 35 }, 35],
    ['level above 100, clamped', { level: 150 }, 100],
  ])('reads brightness from %s', (_name, state, brightness) => {
    expect(light({ power: 'on', ...state })).toEqual({ on: true, brightness });
  });

  it('lets an explicit brightness win over every synonym, and takes the synonyms in the table order', () => {
    expect(light({ brightness: 10, level: 70, bri: 254, Dimmer: 90 }).brightness).toBe(10);
    expect(light({ level: 70, bri: 254, Dimmer: 90 }).brightness).toBe(70);
    expect(light({ bri: 254, Dimmer: 90 }).brightness).toBe(100);
    // Not a number: the next key.
    expect(light({ brightness: 'high', level: 30 }).brightness).toBe(30);
    expect(light({ power: 'on', lvl: 50 })).toEqual({ on: true });
  });

  it("reads the key the device's own set_brightness command writes", () => {
    const dimValue: DeviceCommandSpec[] = [{ name: 'turn_on' }, { name: 'dim', params: { value: { type: 'number' } } }];
    expect(commandStateKeys({ commands: dimValue, capabilities: [], driverKey: 'acme.test' })).toEqual({ brightness: 'value' });
    // The hub writes `value`…
    expect(resolveAction({ commands: dimValue, capabilities: [], category: 'light', driverKey: 'acme.test' }, { action: 'set_brightness', value: 30 })).toEqual({ command: 'dim', params: { value: 30 } });
    // …and reads it back, before the synonyms and after an explicit brightness.
    expect(light({ value: 30, level: 70 }, {}, dimValue).brightness).toBe(30);
    expect(light({ brightness: 20, value: 30 }, {}, dimValue).brightness).toBe(20);
    // Without the device, `value` means nothing to a light.
    expect(readingOf('light', {}, { value: 30 })).toEqual({});
    // dim {level} writes a synonym; a declared `set_level` without params writes `level` too.
    expect(commandStateKeys({ commands: DIM_LEVEL_COMMANDS, capabilities: [], driverKey: 'acme.test' })).toEqual({ brightness: 'level' });
    expect(commandStateKeys({ commands: [{ name: 'set_level' }], capabilities: [], driverKey: 'acme.test' })).toEqual({ brightness: 'level' });
    // The canonical command writes the canonical key: nothing to add. IR keys write nothing.
    expect(commandStateKeys({ commands: [{ name: 'set_brightness', params: { brightness: {} } }], capabilities: [], driverKey: 'acme.test' })).toEqual({});
    expect(commandStateKeys({ commands: [{ name: 'dim', params: { value: {} } }], capabilities: [], driverKey: 'GENERIC_IR' })).toEqual({});
  });

  it('reads the other fields from the keys their commands write, but never a target temperature from `temperature`', () => {
    const cover = readingOf('cover', {}, { pos: 30 }, { commands: [{ name: 'set_position', params: { pos: { type: 'number' } } }], capabilities: [], driverKey: 'acme.test' });
    expect(cover).toEqual({ position: 30, coverState: 'open' });
    const fan = readingOf('fan', {}, { on: true, step: 60 }, { commands: [{ name: 'turn_on' }, { name: 'set_speed', params: { step: {} } }], capabilities: [], driverKey: 'acme.test' });
    expect(fan).toEqual({ on: true, percentage: 60 });
    const speaker = readingOf('media_player', {}, { level: 25 }, { commands: [{ name: 'set_volume', params: { level: {} } }], capabilities: [], driverKey: 'acme.test' });
    expect(speaker).toEqual({ volume: 25 });
    const thermostat = readingOf('climate', {}, { temperature: 19, setpoint: 21 }, { commands: [{ name: 'set_temperature', params: { temperature: {} } }], capabilities: [], driverKey: 'acme.test' });
    expect(thermostat).toEqual({ currentTemperature: 19, targetTemperature: 21 });
    // The synonyms the model always read stay as they were.
    expect(readingOf('cover', {}, { current_position: 40, tilt_position: 10 })).toEqual({ position: 40, tilt: 10, coverState: 'open' });
    expect(readingOf('fan', {}, { speed: 66.7 })).toEqual({ percentage: 66.7 });
    expect(readingOf('climate', {}, { current_temperature: 20, target_temperature: 22, current_humidity: 40 })).toEqual({ currentTemperature: 20, targetTemperature: 22, humidity: 40 });
  });

  it('reads a field from the key the driver declares in attributes.stateKeys, and from that key only', () => {
    expect(light({ lum: 55, brightness: 10, level: 70 }, { stateKeys: { brightness: 'lum' } }).brightness).toBe(55);
    // A declared synonym keeps its scale.
    expect(light({ bri: 127 }, { stateKeys: { brightness: 'bri' } }).brightness).toBe(50);
    // Declared and absent: unknown, not guessed from another key.
    expect(light({ on: true, brightness: 10 }, { stateKeys: { brightness: 'lum' } })).toEqual({ on: true });
    // The declaration beats the key the command writes.
    expect(light({ level: 70, lum: 5 }, { stateKeys: { brightness: 'lum' } }, DIM_LEVEL_COMMANDS).brightness).toBe(5);
    // Other fields too; unknown fields, and fields read otherwise, are ignored.
    expect(readingOf('climate', { stateKeys: { targetTemperature: 'sp', currentTemperature: 'room', humidity: 'rh' } }, { sp: 21.5, room: 19, rh: 45, target_temperature: 30 })).toEqual({
      currentTemperature: 19,
      targetTemperature: 21.5,
      humidity: 45,
    });
    expect(light({ on: true, brightness: 40, x: false }, { stateKeys: { on: 'x', bogus: 'brightness', colorTempKelvin: 'brightness' } })).toEqual({ on: true, brightness: 40 });
    // Not a string: ignored (the schema already drops such a declaration).
    expect(light({ brightness: 40 }, { stateKeys: { brightness: 7 } } as unknown as DeviceAttributes).brightness).toBe(40);
  });

  it('keeps a declared stateKeys of strings, and drops one with any other value', () => {
    expect(declaredAttributesOf({ stateKeys: { brightness: 'lum', bogus: 'x' }, tilt: true })).toEqual({ stateKeys: { brightness: 'lum', bogus: 'x' }, tilt: true });
    expect(declaredAttributesOf({ stateKeys: { brightness: 7 }, tilt: true })).toEqual({ tilt: true });
    expect(declaredAttributesOf({ stateKeys: 'lum' })).toEqual({});
    expect(declaredAttributesOf({ stateKeys: { brightness: '' } })).toEqual({});
  });

  it('models the dim {level} light of the report: a dimmable light reading its level', () => {
    const model = modelOf(logical({ commands: DIM_LEVEL_COMMANDS }), { power: 'on', level: 70 });
    expect(model).toMatchObject({ deviceClass: 'light', capabilities: ['power', 'brightness'], attributes: { colorModes: ['brightness'] }, reading: { on: true, brightness: 70 } });
    const declared = modelOf(logical({ declaredClass: 'light', declaredAttributes: declaredAttributesOf({ stateKeys: { brightness: 'lum' } }) }), { on: true, lum: 12 });
    expect(declared).toMatchObject({ deviceClass: 'light', attributes: { stateKeys: { brightness: 'lum' } }, reading: { on: true, brightness: 12 } });
    expect(modelOf(logical({ declaredClass: 'light' }), { on: true, bri: 254 }).reading).toEqual({ on: true, brightness: 100 });
    expect(modelOf(logical({ declaredClass: 'light' }), { on: true, Dimmer: 45 }).reading).toEqual({ on: true, brightness: 45 });
  });
});

// ---------------------------------------------------------------------------------------------
// Through the real server.

interface Device {
  id: string;
  driverKey: string;
  driverDeviceId: string;
  deviceClass: string;
  attributes: Json;
  reading: Json;
  online: boolean;
}

/** The report's light, as both drivers announce it. */
const DIMMER = { name: 'Porch dimmer', commands: DIM_LEVEL_COMMANDS, state: { power: 'on', level: 70 } };

/** A local driver announcing the report's light, writing `level` back when dimmed, and echoing every action. */
const LOCAL_DRIVER = `
const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
send({ type: 'DEVICE_DISCOVERED', device: { id: 'local-dimmer', ...${JSON.stringify(DIMMER)} } });
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let newline;
  while ((newline = buffer.indexOf('\\n')) >= 0) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    if (!line.trim()) continue;
    const message = JSON.parse(line);
    if (message.type === 'PING') send({ type: 'PONG', id: message.id });
    else if (message.type === 'ACTION' || message.type === 'COMMAND_EXECUTE') {
      if (message.command === 'dim') send({ type: 'STATE_UPDATE', deviceId: message.deviceId, state: { level: message.params.level } });
      send({ type: 'ACTION_RESULT', actionId: message.actionId, ok: true, result: { did: message.command, params: message.params } });
    }
  }
});
process.stdin.on('end', () => process.exit(0));
`;

let server: TestServer;
let token: string;
let driver: TestDriver;
let driversDir: string;

const wsUrl = (s: TestServer) => `${s.url.replace('http', 'ws')}/driver`;

async function api(method: string, p: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await server.request(method, `/v1/os${p}`, { token, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

async function listed(driverDeviceId: string): Promise<Device> {
  return eventually(async () => ((await api('GET', '/devices')).body.devices as Device[]).find((d) => d.driverDeviceId === driverDeviceId && d.online), 15_000, `device ${driverDeviceId}`);
}

/** The device's reading as GET /v1/os/devices lists it, once it matches. */
function readingBecomes(driverDeviceId: string, expected: Json): Promise<Device> {
  return eventually(
    async () => {
      const d = await listed(driverDeviceId);
      return Object.entries(expected).every(([k, v]) => d.reading[k] === v) ? d : undefined;
    },
    5000,
    `${driverDeviceId} reading ${JSON.stringify(expected)}`,
  );
}

beforeAll(async () => {
  driversDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-reading-synonyms-'));
  fs.mkdirSync(path.join(driversDir, 'dimmer'));
  fs.writeFileSync(path.join(driversDir, 'dimmer', 'dimmer.driver.json'), JSON.stringify({ driverKey: 'synonyms-local', driverFile: 'dimmer.js', driverType: 'javascript', name: 'dim {level} light (test)' }));
  fs.writeFileSync(path.join(driversDir, 'dimmer', 'dimmer.js'), LOCAL_DRIVER);
  server = await startServer({ env: { DRIVERS_DIR: driversDir } });
  token = await server.login();
  driver = await TestDriver.register(wsUrl(server), 'acme.synonyms');
  driver.serveActions((m) => {
    if (m.command === 'dim') driver.send({ type: 'STATE_UPDATE', deviceId: m.deviceId, state: { level: (m.params as Json).level } });
    return { did: m.command, params: m.params };
  });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'ws-dimmer', ...DIMMER } });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'ws-pct', name: 'Percent dimmer', commands: ['turn_on', 'turn_off', { name: 'dim', params: { pct: { type: 'number' } } }], state: { on: true, pct: 15 } } });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'ws-hue', name: 'Hue bulb', deviceClass: 'light', state: { on: true, bri: 127 } } });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'ws-declared', name: 'Declared keys', deviceClass: 'light', attributes: { stateKeys: { brightness: 'lum', bogus: 'x' } }, state: { on: true, lum: 33, brightness: 90 } } });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'ws-misdeclared', name: 'Misdeclared keys', deviceClass: 'light', attributes: { stateKeys: { brightness: 7 }, colorModes: ['brightness'] }, state: { on: true, lum: 33, brightness: 90 } } });
}, 30_000);

afterAll(async () => {
  driver?.close();
  await server?.close();
  if (driversDir) fs.rmSync(driversDir, { recursive: true, force: true });
});

describe('reading synonyms (end to end)', () => {
  it('reads the dim {level} light of a WebSocket driver, and sends set_brightness as dim {level}', async () => {
    const dimmer = await listed('ws-dimmer');
    expect(dimmer).toMatchObject({ driverKey: 'acme.synonyms', deviceClass: 'light', reading: { on: true, brightness: 70 } });

    const action = driver.next((m: Message) => m.type === 'ACTION' && m.command === 'dim' && m.deviceId === 'ws-dimmer', 5000);
    const res = await api('POST', `/devices/${dimmer.id}/command`, { command: 'set_brightness', params: { brightness: 40 } });
    expect(res.status).toBe(200);
    expect(await action).toMatchObject({ command: 'dim', params: { level: 40 } });
    expect((await action).params).toEqual({ level: 40 });
    // What the hub wrote comes back as the reading.
    await readingBecomes('ws-dimmer', { on: true, brightness: 40 });
  });

  it('reads a key no synonym names when it is the one the light\'s own dim command writes', async () => {
    const dimmer = await listed('ws-pct');
    expect(dimmer).toMatchObject({ deviceClass: 'light', reading: { on: true, brightness: 15 } });
    const action = driver.next((m: Message) => m.type === 'ACTION' && m.command === 'dim' && m.deviceId === 'ws-pct', 5000);
    expect((await api('POST', `/devices/${dimmer.id}/command`, { command: 'set_brightness', params: { brightness: 80 } })).status).toBe(200);
    expect((await action).params).toEqual({ pct: 80 });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'ws-pct', state: { pct: 80 } });
    await readingBecomes('ws-pct', { brightness: 80 });
  });

  it('reads the same light from a local driver process, and sends it dim {level}', async () => {
    const dimmer = await listed('local-dimmer');
    expect(dimmer).toMatchObject({ driverKey: 'synonyms-local', deviceClass: 'light', reading: { on: true, brightness: 70 } });

    const res = await api('POST', `/devices/${dimmer.id}/command`, { command: 'set_brightness', params: { brightness: 25 } });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).toContain(JSON.stringify({ did: 'dim', params: { level: 25 } }));
    await readingBecomes('local-dimmer', { on: true, brightness: 25 });
  });

  it("scales Hue's bri to percent", async () => {
    expect((await listed('ws-hue')).reading).toEqual({ on: true, brightness: 50 });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'ws-hue', state: { bri: 254 } });
    await readingBecomes('ws-hue', { brightness: 100 });
  });

  it('reads the key a driver declares in attributes.stateKeys, and drops a declaration that is not strings', async () => {
    const declared = await listed('ws-declared');
    expect(declared.attributes.stateKeys).toEqual({ brightness: 'lum', bogus: 'x' });
    expect(declared.reading).toEqual({ on: true, brightness: 33 });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'ws-declared', state: { lum: 64 } });
    await readingBecomes('ws-declared', { brightness: 64 });

    const misdeclared = await listed('ws-misdeclared');
    expect(misdeclared.attributes).not.toHaveProperty('stateKeys');
    expect(misdeclared.attributes).toMatchObject({ colorModes: ['brightness'] });
    expect(misdeclared.reading).toEqual({ on: true, brightness: 90 });
  });
});
