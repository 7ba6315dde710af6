import fs from 'node:fs';
import path from 'node:path';
import { io as connect, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './support/server.js';
import { TestDriver, eventually, type Message } from './support/ws-driver.js';

/**
 * The device model through the real server: the same devices of each class from a WebSocket
 * driver and from a local driver process, a driver that declares nothing, and every surface
 * (REST, hub protocol, intents, event streams) reading them the same way and refusing what a
 * class does not take before the driver sees it.
 */

const MODEL_DRIVERS = path.resolve(import.meta.dirname, 'fixtures/model-drivers');
/** One device of each class, announced alike by the WebSocket driver here and the local driver. */
const DECLARED = JSON.parse(fs.readFileSync(path.join(MODEL_DRIVERS, 'home/devices.json'), 'utf8')) as Array<{ id: string } & Record<string, unknown>>;
const SOURCES = ['acme.model', 'model-local'] as const;
type Source = (typeof SOURCES)[number];

type Json = Record<string, unknown>;
interface Device {
  id: string;
  name: string;
  driverKey: string;
  driverDeviceId: string;
  deviceClass: string;
  attributes: Json;
  reading: Json;
  online: boolean;
}

let server: TestServer;
let token: string;
let declared: TestDriver;
let plain: TestDriver;
let client: Socket;
const ids: Record<string, string> = {};
/** Logical ids by source and the drivers' own device id. */
const idsOf: Record<Source, Record<string, string>> = { 'acme.model': {}, 'model-local': {} };
const hubEvents: Array<{ type: string; data: Json }> = [];

const wsUrl = (s: TestServer) => `${s.url.replace('http', 'ws')}/driver`;

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await server.request(method, `/v1/os${path}`, { token, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

async function devices(): Promise<Device[]> {
  return (await api('GET', '/devices')).body.devices as Device[];
}

async function device(driverDeviceId: string, driverKey?: string): Promise<Device> {
  return eventually(async () => (await devices()).find((d) => d.driverDeviceId === driverDeviceId && (!driverKey || d.driverKey === driverKey) && d.online), 15_000, `device ${driverDeviceId}`);
}

/** Sends a command and returns the ACTION the driver received for it (or the refusal). */
async function command(driver: TestDriver, key: string, name: string, params: Json = {}): Promise<{ status: number; body: Json; action?: Message }> {
  const action = driver.next((m) => m.type === 'ACTION', 3000).catch(() => undefined);
  const res = await api('POST', `/devices/${ids[key]}/command`, { command: name, params });
  return { ...res, ...(res.status === 200 ? { action: await action } : {}) };
}

const hub = (command: string, payload: unknown): Promise<{ ok: boolean; data: Json }> => client.emitWithAck('hub:command', { command, payload, requestId: `${command}-${Math.random()}` });

beforeAll(async () => {
  server = await startServer({ env: { DRIVERS_DIR: MODEL_DRIVERS } });
  token = await server.login();
  declared = await TestDriver.register(wsUrl(server), 'acme.model');
  declared.serveActions((m) => ({ did: m.command, params: m.params }));
  for (const announced of DECLARED) declared.send({ type: 'DEVICE_DISCOVERED', device: announced });

  plain = await TestDriver.register(wsUrl(server), 'acme.plain');
  plain.serveActions((m) => ({ did: m.command, params: m.params }));
  const derive = (id: string, fields: Json) => plain.send({ type: 'DEVICE_DISCOVERED', device: { id, name: id, ...fields } });
  derive('d-lamp', { category: 'lamp', state: { on: false, brightness: 10 } });
  derive('d-lock', { commands: ['lock', 'unlock'], state: { locked: false } });
  derive('d-thermostat', { commands: ['set_temperature'], state: { current_temperature: 20, target_temperature: 21 } });
  derive('d-motion', { state: { motion: false, battery: 80 } });
  derive('d-humidity', { category: 'sensor', state: { humidity: 40 } });
  derive('d-fan', { commands: ['turn_on', 'turn_off', 'set_speed'] });
  derive('d-blind', { commands: ['open', 'close', 'set_position'], state: { position: 100 } });
  derive('d-plug', { category: 'plug', commands: ['turn_on', 'turn_off'] });
  derive('d-tv', { category: 'tv', commands: ['power_on', 'power_off', 'volume_up', 'volume_down'] });
  derive('d-thing', { commands: ['frobnicate'] });

  for (const source of SOURCES) for (const { id } of DECLARED) idsOf[source][id] = (await device(id, source)).id;
  Object.assign(ids, idsOf['acme.model']);
  for (const key of ['d-lamp', 'd-lock']) ids[key] = (await device(key)).id;
  const space = async (name: string, keys: string[]) => {
    const saved = (await api('POST', '/spaces/save', { name })).body as { id: string };
    expect((await api('POST', `/spaces/${saved.id}/devices/assign`, { deviceIds: keys.map((k) => ids[k]) })).status).toBe(200);
  };
  await space('Living room', ['lamp', 'blind', 'tv']);
  await space('Kitchen', ['thermostat', 'kitchen-temp', 'plug']);
  await space('Hall', ['door', 'door-contact']);

  client = connect(`${server.url}/socket/hub-protocol`, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true });
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('connect_error', reject);
  });
  client.on('hub:event', (e: { type: string; data: Json }) => hubEvents.push(e));
}, 30_000);

afterAll(async () => {
  client?.disconnect();
  declared?.close();
  plain?.close();
  await server?.close();
});

describe('device classes', () => {
  it.each(SOURCES)('reads declared classes, attributes and the canonical reading on every device record (%s)', async (source) => {
    const byKey = async (key: string) => (await api('GET', `/devices/${idsOf[source][key]}`)).body as unknown as Device;
    expect(await byKey('lamp')).toMatchObject({ deviceClass: 'light', attributes: { colorModes: ['color_temp'], minKelvin: 2700, maxKelvin: 6500 }, reading: { on: true, brightness: 20, colorTempKelvin: 2703 } });
    expect(await byKey('blind')).toMatchObject({ deviceClass: 'cover', attributes: { tilt: false }, reading: { position: 40, coverState: 'open' } });
    expect(await byKey('thermostat')).toMatchObject({
      deviceClass: 'climate',
      attributes: { minTemperature: 10, maxTemperature: 30, hvacModes: ['off', 'heat', 'auto'] },
      reading: { currentTemperature: 19.5, targetTemperature: 20, hvacMode: 'heat' },
    });
    expect(await byKey('door')).toMatchObject({ deviceClass: 'lock', reading: { locked: true, jammed: false } });
    expect(await byKey('fan')).toMatchObject({ deviceClass: 'fan', reading: { on: true, percentage: 50 } });
    // A declared attribute that does not fit the model is dropped; the others stay.
    const sensor = await byKey('kitchen-temp');
    expect(sensor).toMatchObject({ deviceClass: 'sensor', attributes: { sensorClass: 'temperature', unit: '°C' }, reading: { value: 21.5, unit: '°C' } });
    expect(sensor.attributes).not.toHaveProperty('minKelvin');
    expect(await byKey('door-contact')).toMatchObject({ deviceClass: 'binary_sensor', attributes: { sensorClass: 'contact' }, reading: { detected: false } });
    expect(await byKey('button')).toMatchObject({ deviceClass: 'button', attributes: { presses: ['single', 'double', 'long'] } });
    expect(await byKey('plug')).toMatchObject({ deviceClass: 'outlet', reading: { on: false, value: 0, unit: 'W' } });
    // "standby" is off, whatever the integration.
    expect(await byKey('tv')).toMatchObject({ deviceClass: 'media_player', reading: { on: false, volume: 12 } });
    // A class the model does not know is ignored: the class is derived.
    expect(await byKey('vacuum')).toMatchObject({ deviceClass: 'generic' });
  });

  it('derives the class of a driver that declares nothing', async () => {
    const all = await devices();
    const cls = (id: string) => all.find((d) => d.driverDeviceId === id)?.deviceClass;
    expect(Object.fromEntries(['d-lamp', 'd-lock', 'd-thermostat', 'd-motion', 'd-humidity', 'd-fan', 'd-blind', 'd-plug', 'd-tv', 'd-thing'].map((id) => [id, cls(id)]))).toEqual({
      'd-lamp': 'light',
      'd-lock': 'lock',
      'd-thermostat': 'climate',
      'd-motion': 'binary_sensor',
      'd-humidity': 'sensor',
      'd-fan': 'fan',
      'd-blind': 'cover',
      'd-plug': 'outlet',
      'd-tv': 'media_player',
      'd-thing': 'generic',
    });
    const humidity = all.find((d) => d.driverDeviceId === 'd-humidity')!;
    expect(humidity).toMatchObject({ attributes: { sensorClass: 'humidity', unit: '%' }, reading: { value: 40, unit: '%' } });
    expect(all.find((d) => d.driverDeviceId === 'd-motion')).toMatchObject({ attributes: { sensorClass: 'motion' }, reading: { detected: false } });
    // A light without a command list takes the class's canonical commands.
    const lamp = await command(plain, 'd-lamp', 'set_brightness', { brightness: 60 });
    expect(lamp.status).toBe(200);
    expect(lamp.action).toMatchObject({ command: 'set_brightness', params: { brightness: 60 } });
    expect((await command(plain, 'd-lock', 'unlock')).action).toMatchObject({ command: 'unlock' });
  });

  it("translates each class's standard commands to the driver's own, with its units", async () => {
    const cases: Array<[string, string, Json, string, Json]> = [
      ['lamp', 'turn_off', {}, 'power_off', {}],
      ['lamp', 'set_brightness', { brightness: 30 }, 'dim', { level: 30 }],
      // The driver takes mireds: 1,000,000 / 4000 K.
      ['lamp', 'set_color_temp', { kelvin: 4000 }, 'set_ct', { mireds: 250 }],
      ['blind', 'set_position', { position: 70 }, 'set_cover_position', { position: 70 }],
      ['blind', 'stop', {}, 'stop_cover', {}],
      ['blind', 'open', {}, 'open_cover', {}],
      ['thermostat', 'set_target_temperature', { temperature: 22.5 }, 'set_setpoint', { temperature: 22.5 }],
      ['thermostat', 'set_hvac_mode', { mode: 'auto' }, 'set_hvac_mode', { mode: 'auto' }],
      ['door', 'unlock', {}, 'unlock_door', {}],
      ['door', 'lock', {}, 'lock_door', {}],
      ['fan', 'set_percentage', { percentage: 80 }, 'set_speed', { percentage: 80 }],
      ['plug', 'turn_on', {}, 'on', {}],
      ['tv', 'volume_set', { volume: 25 }, 'set_volume', { volume: 25 }],
    ];
    for (const [key, name, params, own, ownParams] of cases) {
      const sent = await command(declared, key, name, params);
      expect(sent.status, `${key} ${name}`).toBe(200);
      expect(sent.action, `${key} ${name}`).toMatchObject({ command: own, params: ownParams });
      expect(sent.body).toEqual({ ok: true, result: { did: own, params: ownParams } });
      // The local driver process gets the same translation (it echoes what it received).
      const local = await api('POST', `/devices/${idsOf['model-local'][key]}/command`, { command: name, params });
      expect(local, `local ${key} ${name}`).toEqual({ status: 200, body: { ok: true, result: { did: own, params: ownParams } } });
    }
  });

  it('refuses commands outside the class and values outside its ranges before the driver sees them', async () => {
    const refusals: Array<[string, string, Json, number, string, string?]> = [
      ['lamp', 'lock', {}, 422, 'COMMAND_NOT_IN_CLASS'],
      ['door', 'set_brightness', { brightness: 10 }, 422, 'COMMAND_NOT_IN_CLASS'],
      ['lamp', 'set_brightness', { brightness: 140 }, 400, 'INVALID_COMMAND_PARAMS', 'params.brightness'],
      ['lamp', 'set_color_temp', { kelvin: 9000 }, 400, 'INVALID_COMMAND_PARAMS', 'params.kelvin'],
      // Colour by hue is not among this light's colour modes... but it has no command for it either.
      ['lamp', 'set_hs_color', { hue: 400, saturation: 10 }, 400, 'INVALID_COMMAND_PARAMS', 'params.hue'],
      ['thermostat', 'set_target_temperature', { temperature: 45 }, 400, 'INVALID_COMMAND_PARAMS', 'params.temperature'],
      ['thermostat', 'set_hvac_mode', { mode: 'cool' }, 400, 'INVALID_COMMAND_PARAMS', 'params.mode'],
      ['blind', 'set_position', { position: -1 }, 400, 'INVALID_COMMAND_PARAMS', 'params.position'],
      ['fan', 'set_percentage', { percentage: 'fast' }, 400, 'INVALID_COMMAND_PARAMS', 'params.percentage'],
      // In the class, but this fan has no way to oscillate.
      ['fan', 'oscillate', { oscillating: true }, 422, 'COMMAND_NOT_SUPPORTED'],
      ['kitchen-temp', 'turn_on', {}, 422, 'COMMAND_NOT_IN_CLASS'],
    ];
    const before = declared.received.filter((m) => m.type === 'ACTION').length;
    for (const [key, name, params, status, code, field] of refusals) {
      for (const source of SOURCES) {
        const res = await api('POST', `/devices/${idsOf[source][key]}/command`, { command: name, params });
        expect(res.status, `${source} ${key} ${name}`).toBe(status);
        const error = res.body.error as { code: string; details?: Json };
        expect(error.code, `${source} ${key} ${name}`).toBe(code);
        if (field) expect(error.details?.field).toBe(field);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(declared.received.filter((m) => m.type === 'ACTION').length).toBe(before);
  });

  it('answers the same class and reading through the hub protocol, entities and intents', async () => {
    const listed = await hub('LIST_DEVICES', {});
    expect(listed.ok).toBe(true);
    const lamp = (listed.data.devices as Device[]).find((d) => d.id === ids.lamp)!;
    expect(lamp).toMatchObject({ deviceClass: 'light', reading: { brightness: expect.any(Number) } });
    const entity = await hub('GET_ENTITY', { entityId: 'lock.front_door' });
    expect(entity).toMatchObject({ ok: true, data: { domain: 'lock', services: ['lock', 'unlock'] } });

    const intent = async (text: string) => (await hub('INTENT_EXECUTE', { text })).data;
    const dim = declared.next((m) => m.type === 'ACTION' && m.command === 'dim');
    expect(await intent('set the living room lights to 30 %')).toMatchObject({ ok: true });
    expect(await dim).toMatchObject({ deviceId: 'lamp', params: { level: 30 } });
    const lock = declared.next((m) => m.type === 'ACTION' && m.command === 'lock_door');
    expect(await intent('lock the front door')).toMatchObject({ ok: true, speech: 'Locked the Front door.' });
    await lock;
    // The kitchen's thermostat (19.5) and its sensor (21.5), averaged.
    expect(((await intent('what is the temperature in the kitchen')) as { speech: string }).speech).toMatch(/20\.5/);
    const blind = declared.next((m) => m.type === 'ACTION' && m.command === 'set_cover_position');
    expect(await intent('set the living room blind to 25 %')).toMatchObject({ ok: true });
    expect(await blind).toMatchObject({ params: { position: 25 } });
    expect(((await intent('is the front door locked')) as { speech: string }).speech).toMatch(/^(Yes|No), the Front door is/);
  });

  it('keeps the device list in step with state changes, one device at a time and many at once', async () => {
    const listed = async (key: string) => (await devices()).find((d) => d.id === ids[key])!;
    const before = await listed('blind');
    declared.send({ type: 'STATE_UPDATE', deviceId: 'fan', state: { speed: 10 } });
    await eventually(async () => ((await listed('fan')).reading.percentage === 10 ? true : undefined), 3000, 'fan reading in the list');
    expect(await listed('blind')).toEqual(before);
    // More than a quarter of the list at once: the list is made again whole, with the same result.
    for (const { id } of DECLARED) declared.send({ type: 'STATE_UPDATE', deviceId: id, state: { tick: 1 } });
    declared.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { brightness: 77 } });
    await eventually(async () => ((await listed('lamp')).reading.brightness === 77 ? true : undefined), 3000, 'lamp reading in the list');
    const detail = (await api('GET', `/devices/${ids.lamp}`)).body as unknown as Device;
    expect((await listed('lamp')).reading).toEqual(detail.reading);
    // Offline shows in the list as in the record.
    plain.send({ type: 'DEVICE_REMOVED', deviceId: 'd-lamp' });
    await eventually(async () => ((await devices()).some((d) => d.id === ids['d-lamp']) ? undefined : true), 3000, 'removed device gone from the list');
  });

  it('carries button presses as hub events, and the device records of device events', async () => {
    declared.send({ type: 'BUTTON_PRESSED', deviceId: 'button', press: 'double' });
    const pressed = await eventually(() => hubEvents.find((e) => e.type === 'device.button_pressed'), 3000, 'button event');
    expect(pressed.data).toEqual({ deviceId: ids.button, press: 'double' });
    expect((await api('GET', `/devices/${ids.button}`)).body).toMatchObject({ reading: { lastPress: 'double' } });
    // A press for a device the driver never announced is refused, and nothing is published.
    declared.send({ type: 'BUTTON_PRESSED', deviceId: 'nope', press: 'single' });
    declared.send({ type: 'BUTTON_PRESSED', deviceId: 'button', press: 'triple' });
    declared.send({ type: 'DEVICE_UPDATED', device: { id: 'fan', attributes: { oscillate: true } } });
    const updated = await eventually(() => hubEvents.find((e) => e.type === 'device.updated' && (e.data.device as Device).driverDeviceId === 'fan'), 3000, 'fan update');
    expect(updated.data.device).toMatchObject({ deviceClass: 'fan', attributes: { oscillate: true }, reading: { percentage: expect.any(Number) } });
    expect(hubEvents.filter((e) => e.type === 'device.button_pressed')).toHaveLength(1);
  });
});
