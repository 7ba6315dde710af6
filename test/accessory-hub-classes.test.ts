import fs from 'node:fs';
import path from 'node:path';
import { io as connect, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessoryImports } from '../src/domain/accessory-hub/imports.js';
import { createDomainEventBus } from '../src/domain/events.js';
import { systemClock, systemTimers } from '../src/platform/clock.js';
import { DocumentCollection } from '../src/platform/document-collection.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';
import { freePort } from './support/net.js';

/**
 * Homebridge accessories as devices of the model (docs/accessory-hub.md, "Services as device
 * classes"): the real Homebridge (2.x) runs the fixture plugin `homebridge-hcs-classes` (one
 * accessory per HAP service the hub maps, one with two services, one with a service of its own);
 * every accessory is imported, and each device is checked over the hub's REST API against
 * Homebridge's own characteristics read over HAP. One Homebridge start for the file.
 */

const FIXTURE = path.resolve(import.meta.dirname, 'fixtures/homebridge-hcs-classes');
const PIN = '031-45-155';
/** The fixture's own characteristic (a custom UUID: HAP reports it in full). */
const PRESS = '5F1C0002-8A7E-4C52-9A54-48435354524B';

type Json = Record<string, unknown>;
interface Device {
  id: string;
  name: string;
  driverKey: string;
  driverDeviceId: string;
  deviceClass: string;
  attributes: Json;
  reading: Json;
  commands: Array<{ name: string }>;
  properties: Json;
  online: boolean;
}
interface HapAccessory {
  aid: number;
  services: Array<{ iid: number; type: string; characteristics: Array<{ iid: number; type: string; value?: unknown; description?: string }> }>;
}

let server: TestServer;
let token: string;
let port: number;
let dataDir: string;
let client: Socket;
const hubEvents: Array<{ type: string; data: Json }> = [];
/** Device ids by device name. */
const ids: Record<string, string> = {};
let accessories: HapAccessory[] = [];


const api = async (method: string, p: string, body?: unknown) => {
  const res = await server.request(method, `/v1/os${p}`, { token, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: (await res.json()) as Json };
};
const hubDevices = async () => ((await api('GET', '/devices')).body.devices as Device[]).filter((d) => d.driverKey === 'accessory-hub');
const device = async (name: string) => (await api('GET', `/devices/${ids[name]!}`)).body as unknown as Device;
const command = (name: string, cmd: string, params?: Json) => api('POST', `/devices/${ids[name]!}/command`, { command: cmd, ...(params ? { params } : {}) });

const hap = (p: string, init: RequestInit = {}) => fetch(`http://127.0.0.1:${port}${p}`, { ...init, headers: { authorization: PIN, 'content-type': 'application/json' }, signal: AbortSignal.timeout(3000) });
const accessoryNamed = (name: string) => accessories.find((a) => a.services.some((s) => s.characteristics.some((c) => c.type === '23' && c.value === name)))!;
/** A characteristic of the accessory (its service named so), by HAP short type. */
function characteristic(name: string, type: string): { aid: number; iid: number } {
  const a = accessoryNamed(name);
  const service = a.services.find((s) => s.characteristics.some((c) => c.type === '23' && c.value === name) && s.characteristics.some((c) => c.type === type)) ?? a.services.find((s) => s.characteristics.some((c) => c.type === type))!;
  return { aid: a.aid, iid: service.characteristics.find((c) => c.type === type)!.iid };
}
/** Homebridge's value of a characteristic, read over HAP. */
async function hapValue(name: string, type: string): Promise<unknown> {
  const { aid, iid } = characteristic(name, type);
  const body = (await (await hap(`/characteristics?id=${aid}.${iid}`)).json()) as { characteristics: Array<{ value: unknown }> };
  return body.characteristics[0]!.value;
}
async function hapWrite(name: string, type: string, value: unknown): Promise<void> {
  const { aid, iid } = characteristic(name, type);
  const res = await hap('/characteristics', { method: 'PUT', body: JSON.stringify({ characteristics: [{ aid, iid, value }] }) });
  expect(res.status).toBeLessThan(300);
}
/** Waits until the device's reading has these fields. */
const readingOf = (name: string, expected: Json, label = `${name} reading ${JSON.stringify(expected)}`) =>
  eventually(async () => {
    const { reading } = await device(name);
    return Object.entries(expected).every(([k, v]) => (typeof v === 'number' ? typeof reading[k] === 'number' && Math.abs((reading[k] as number) - v) < 0.05 : reading[k] === v)) ? reading : undefined;
  }, 5000, label);

const NAMES = [
  'Desk Lamp',
  'Wall Outlet',
  'Living Blinds',
  'Back Door',
  'Garage',
  'Front Lock',
  'Hall Thermostat',
  'Bedroom AC',
  'Ceiling Fan',
  'Tower Fan',
  'Kitchen Temperature',
  'Bathroom Humidity',
  'Garden Light Level',
  'Office CO2',
  'Bedroom Air',
  'Remote Battery',
  'Hall Motion',
  'Study Occupancy',
  'Front Door Contact',
  'Sink Leak',
  'Kitchen Smoke',
  'Scene Button',
  'Button Trigger',
  'Ceiling Combo',
];

describe('Homebridge services as device classes', () => {
  beforeAll(async () => {
    port = await freePort();
    dataDir = tempDataDir();
    const hubDir = path.join(dataDir, 'accessory-hub');
    // The plugin as npm would leave it in the plugin folder (no registry), configured before the first start.
    const pluginDir = path.join(hubDir, 'node_modules', 'homebridge-hcs-classes');
    fs.mkdirSync(pluginDir, { recursive: true });
    for (const file of ['package.json', 'index.js', 'config.schema.json']) fs.copyFileSync(path.join(FIXTURE, file), path.join(pluginDir, file));
    fs.writeFileSync(
      path.join(hubDir, 'config.json'),
      JSON.stringify({ bridge: { name: 'HCS Classes Bridge', username: '0E:AA:BB:CC:DD:02', port, pin: PIN, advertiser: 'ciao' }, accessories: [], platforms: [{ platform: 'HcsClasses', name: 'HCS Classes' }] }),
    );
    server = await startServer({ dataDir, env: { ACCESSORY_HUB: 'on', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_REGISTRY: 'http://127.0.0.1:9/', ACCESSORY_HUB_POLL_MS: '60000' }, timers: undefined });
    token = await server.login();
    // Apple Home shows the hub's devices only once an admin turns it on.
    expect((await server.request('POST', '/v1/os/accessory-hub/homekit', { token, body: { exposed: true } })).status).toBe(200);
    // Every accessory served over HAP.
    accessories = await eventually(async () => {
      const res = await hap('/accessories').catch(() => undefined);
      if (!res?.ok) return undefined;
      const list = ((await res.json()) as { accessories: HapAccessory[] }).accessories;
      const named = new Set(list.flatMap((a) => a.services.flatMap((s) => s.characteristics.filter((c) => c.type === '23').map((c) => c.value))));
      return NAMES.every((n) => named.has(n)) ? list : undefined;
    }, 40_000, 'the fixture accessories served').catch(async (err: Error) => {
      const status = (await api('GET', '/accessory-hub/status')).body;
      throw new Error(`${err.message}\n${((status.recentOutput as string[] | undefined) ?? []).join('\n')}`);
    });

    client = connect(`${server.url}/socket/hub-protocol`, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true });
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('connect_error', reject);
    });
    client.on('hub:event', (e: { type: string; data: Json }) => hubEvents.push(e));

    // Every accessory imported.
    const importable = (await api('GET', '/accessory-hub/import-accessories')).body.accessories as Array<{ accessoryId: string; name: string }>;
    expect(importable.map((a) => a.name).sort()).toEqual([...NAMES].sort());
    const answered: Record<string, string[]> = {};
    for (const a of importable) {
      const res = await api('POST', `/accessory-hub/import-accessories/${a.accessoryId}/import`);
      expect(res.status, `${a.name}: ${JSON.stringify(res.body)}`).toBe(200);
      answered[a.name] = res.body.deviceIds as string[];
      expect((res.body.deviceIds as string[])[0]).toBe(res.body.deviceId);
    }
    for (const d of await hubDevices()) ids[d.name] = d.id;
    // The import answers every device it made, each one GET /devices/:id finds.
    const made = Object.values(answered).flat();
    expect(new Set(made).size).toBe(made.length);
    expect(made.every((id) => Object.values(ids).includes(id))).toBe(true);
    expect(Math.max(...Object.values(answered).map((list) => list.length))).toBeGreaterThan(1);
  }, 90_000);

  afterAll(async () => {
    client?.disconnect();
    await server?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('imports one device per service, each with its class, attributes and reading', async () => {
    const devices = await hubDevices();
    const byName = Object.fromEntries(devices.map((d) => [d.name, d]));
    // 24 accessories, one of them with two services.
    expect(devices).toHaveLength(25);
    const expectations: Record<string, { deviceClass: string; attributes?: Json; reading: Json; commands?: string[] }> = {
      'Desk Lamp': {
        deviceClass: 'light',
        attributes: { colorModes: ['hs', 'color_temp'], minKelvin: 2000, maxKelvin: 7142 },
        reading: { on: false, brightness: 40, colorTempKelvin: 4000, hue: 30, saturation: 50 },
        commands: ['turn_on', 'turn_off', 'toggle', 'set_brightness', 'set_color_temp', 'set_hs_color'],
      },
      'Wall Outlet': { deviceClass: 'outlet', reading: { on: false }, commands: ['turn_on', 'turn_off', 'toggle'] },
      'Living Blinds': { deviceClass: 'cover', attributes: { tilt: true }, reading: { position: 0, coverState: 'closed', tilt: 50 }, commands: ['open', 'close', 'stop', 'set_position', 'set_tilt_position'] },
      'Back Door': { deviceClass: 'cover', attributes: { tilt: false }, reading: { position: 100, coverState: 'open' }, commands: ['open', 'close', 'stop', 'set_position'] },
      Garage: { deviceClass: 'cover', reading: { coverState: 'closed' }, commands: ['open', 'close'] },
      'Front Lock': { deviceClass: 'lock', reading: { locked: true, jammed: false }, commands: ['lock', 'unlock'] },
      'Hall Thermostat': {
        deviceClass: 'climate',
        attributes: { minTemperature: 10, maxTemperature: 30, temperatureStep: 0.5, temperatureUnit: '°C', hvacModes: ['off', 'heat', 'auto'] },
        reading: { currentTemperature: 19.5, targetTemperature: 20, hvacMode: 'heat', humidity: 40 },
        commands: ['set_target_temperature', 'set_hvac_mode'],
      },
      'Bedroom AC': {
        deviceClass: 'climate',
        attributes: { minTemperature: 16, maxTemperature: 30, hvacModes: ['off', 'auto', 'heat', 'cool'] },
        reading: { on: true, currentTemperature: 26, targetTemperature: 24, hvacMode: 'cool' },
        commands: ['turn_on', 'turn_off', 'toggle', 'set_target_temperature', 'set_hvac_mode'],
      },
      'Ceiling Fan': { deviceClass: 'fan', attributes: { oscillate: false, direction: true }, reading: { on: false, percentage: 50, direction: 'forward' }, commands: ['turn_on', 'turn_off', 'toggle', 'set_percentage', 'set_direction'] },
      'Tower Fan': { deviceClass: 'fan', attributes: { oscillate: true, direction: false }, reading: { on: false, percentage: 33.3, oscillating: false }, commands: ['turn_on', 'turn_off', 'toggle', 'set_percentage', 'oscillate'] },
      'Kitchen Temperature': { deviceClass: 'sensor', attributes: { sensorClass: 'temperature', unit: '°C' }, reading: { value: 21.5, unit: '°C' }, commands: [] },
      'Bathroom Humidity': { deviceClass: 'sensor', attributes: { sensorClass: 'humidity', unit: '%' }, reading: { value: 55, unit: '%' } },
      'Garden Light Level': { deviceClass: 'sensor', attributes: { sensorClass: 'illuminance', unit: 'lx' }, reading: { value: 320, unit: 'lx' } },
      'Office CO2': { deviceClass: 'sensor', attributes: { sensorClass: 'co2', unit: 'ppm' }, reading: { value: 650, unit: 'ppm' } },
      'Bedroom Air': { deviceClass: 'sensor', attributes: { sensorClass: 'pm25', unit: 'µg/m³' }, reading: { value: 12, unit: 'µg/m³' } },
      'Remote Battery': { deviceClass: 'sensor', attributes: { sensorClass: 'battery', unit: '%' }, reading: { value: 80, unit: '%' } },
      'Hall Motion': { deviceClass: 'binary_sensor', attributes: { sensorClass: 'motion' }, reading: { detected: true }, commands: [] },
      'Study Occupancy': { deviceClass: 'binary_sensor', attributes: { sensorClass: 'occupancy' }, reading: { detected: true } },
      // ContactSensorState 0: the contact is made, the door is closed.
      'Front Door Contact': { deviceClass: 'binary_sensor', attributes: { sensorClass: 'contact' }, reading: { detected: false } },
      'Sink Leak': { deviceClass: 'binary_sensor', attributes: { sensorClass: 'leak' }, reading: { detected: false } },
      'Kitchen Smoke': { deviceClass: 'binary_sensor', attributes: { sensorClass: 'smoke' }, reading: { detected: false } },
      'Scene Button': { deviceClass: 'button', attributes: { presses: ['single', 'double', 'long'] }, reading: {}, commands: [] },
      // A service HomeKit does not know stays generic: its characteristics by their description.
      'Button Trigger': { deviceClass: 'generic', reading: {}, commands: ['set_press'] },
      'Combo Fan': { deviceClass: 'fan', reading: { on: false, percentage: 20 } },
      'Combo Light': { deviceClass: 'light', attributes: { colorModes: ['brightness'] }, reading: { on: false, brightness: 100 } },
    };
    for (const [name, want] of Object.entries(expectations)) {
      const d = byName[name];
      expect(d, name).toBeDefined();
      expect(d!.deviceClass, name).toBe(want.deviceClass);
      if (want.attributes) expect(d!.attributes, name).toMatchObject(want.attributes);
      for (const [k, v] of Object.entries(want.reading)) {
        if (typeof v === 'number') expect(d!.reading[k], `${name} ${k}`).toBeCloseTo(v, 1);
        else expect(d!.reading[k], `${name} ${k}`).toEqual(v);
      }
      if (want.commands) expect(d!.commands.map((c) => c.name), name).toEqual(want.commands);
      expect(d!.online, name).toBe(true);
    }
    expect(byName['Scene Button']!.reading).toEqual({});
    expect((await api('GET', `/devices/${ids['Kitchen Temperature']!}`)).body).toMatchObject({ reading: { value: 21.5, unit: '°C' } });
  });

  it('keeps an accessory with several services together: hb-<aid> for the first, hb-<aid>-<iid> for the others', async () => {
    const combo = accessoryNamed('Ceiling Combo');
    const fan = await device('Combo Fan');
    const light = await device('Combo Light');
    expect(fan.driverDeviceId).toBe(`hb-${combo.aid}`);
    const lightService = combo.services.find((s) => s.characteristics.some((c) => c.type === '23' && c.value === 'Combo Light'))!;
    expect(light.driverDeviceId).toBe(`hb-${combo.aid}-${lightService.iid}`);
    for (const d of [fan, light]) expect(d.properties).toMatchObject({ aid: combo.aid, accessory: { aid: combo.aid, name: 'Ceiling Combo' } });
    expect(light.properties).toMatchObject({ iid: lightService.iid, hapService: 'Lightbulb' });
    // A single-service accessory keeps the id it always had.
    expect((await device('Desk Lamp')).driverDeviceId).toBe(`hb-${accessoryNamed('Desk Lamp').aid}`);
  });

  it('turns a light on, dims it and sets its colour temperature in kelvin: HAP writes, and the reading follows', async () => {
    expect((await command('Desk Lamp', 'turn_on')).status).toBe(200);
    expect(await hapValue('Desk Lamp', '25')).toBeOneOf([true, 1]);
    await readingOf('Desk Lamp', { on: true });

    expect((await command('Desk Lamp', 'set_brightness', { brightness: 70 })).status).toBe(200);
    expect(await hapValue('Desk Lamp', '8')).toBe(70);
    await readingOf('Desk Lamp', { brightness: 70 });

    // 2700 K is 370 mireds for HAP; HAP's 370 mireds read back as 2703 K.
    expect((await command('Desk Lamp', 'set_color_temp', { kelvin: 2700 })).status).toBe(200);
    expect(await hapValue('Desk Lamp', 'CE')).toBe(370);
    await readingOf('Desk Lamp', { colorTempKelvin: 2703 });

    expect((await command('Desk Lamp', 'set_hs_color', { hue: 200, saturation: 80 })).status).toBe(200);
    expect(await hapValue('Desk Lamp', '13')).toBe(200);
    await readingOf('Desk Lamp', { hue: 200, saturation: 80 });

    expect((await command('Desk Lamp', 'toggle')).status).toBe(200);
    expect(await hapValue('Desk Lamp', '25')).toBeOneOf([false, 0]);
    await readingOf('Desk Lamp', { on: false });
  });

  it('refuses before HAP: a command outside the class is 422, a value out of range 400', async () => {
    const notInClass = await command('Desk Lamp', 'lock');
    expect(notInClass.status).toBe(422);
    expect((notInClass.body.error as Json).code).toBe('COMMAND_NOT_IN_CLASS');
    const tooBright = await command('Desk Lamp', 'set_brightness', { brightness: 150 });
    expect(tooBright.status).toBe(400);
    expect(tooBright.body.error).toMatchObject({ code: 'INVALID_COMMAND_PARAMS', details: { field: 'params.brightness' } });
    const tooCold = await command('Desk Lamp', 'set_color_temp', { kelvin: 9000 });
    expect(tooCold.status).toBe(400);
    const tooHot = await command('Hall Thermostat', 'set_target_temperature', { temperature: 35 });
    expect(tooHot.status).toBe(400);
    expect(tooHot.body.error).toMatchObject({ code: 'INVALID_COMMAND_PARAMS', details: { field: 'params.temperature' } });
    // Cool is not among the thermostat's modes (its TargetHeatingCoolingState allows off, heat, auto).
    const cool = await command('Hall Thermostat', 'set_hvac_mode', { mode: 'cool' });
    expect(cool.status).toBe(400);
    expect((await command('Kitchen Temperature', 'turn_on')).status).toBe(422);
    expect((await command('Front Lock', 'set_position', { position: 50 })).status).toBe(422);
    // Nothing reached Homebridge.
    expect(await hapValue('Desk Lamp', '8')).toBe(70);
    expect(await hapValue('Desk Lamp', 'CE')).toBe(370);
    expect(await hapValue('Hall Thermostat', '35')).toBe(20);
    expect(await hapValue('Hall Thermostat', '33')).toBe(1);
  });

  it('moves covers: a blind to a position and its tilt, a garage door open', async () => {
    expect((await command('Living Blinds', 'set_position', { position: 40 })).status).toBe(200);
    expect(await hapValue('Living Blinds', '7C')).toBe(40);
    // The plugin reports the blind there (CurrentPosition), and the HAP event brings it to the hub.
    await readingOf('Living Blinds', { position: 40, coverState: 'open' });
    expect((await command('Living Blinds', 'set_tilt_position', { tilt: 100 })).status).toBe(200);
    expect(await hapValue('Living Blinds', '7B')).toBe(90);
    await readingOf('Living Blinds', { tilt: 100 });
    expect((await command('Living Blinds', 'close')).status).toBe(200);
    await readingOf('Living Blinds', { position: 0, coverState: 'closed' });

    expect((await command('Garage', 'open')).status).toBe(200);
    expect(await hapValue('Garage', '32')).toBe(0);
    await readingOf('Garage', { coverState: 'open' });
    // A garage door has no position: 0 and 100 are close and open.
    expect((await command('Garage', 'set_position', { position: 0 })).status).toBe(200);
    await readingOf('Garage', { coverState: 'closed' });
  });

  it('locks and unlocks a lock', async () => {
    expect((await command('Front Lock', 'unlock')).status).toBe(200);
    expect(await hapValue('Front Lock', '1E')).toBe(0);
    await readingOf('Front Lock', { locked: false, jammed: false });
    expect(await hapValue('Front Lock', '1D')).toBe(0);
    expect((await command('Front Lock', 'lock')).status).toBe(200);
    await readingOf('Front Lock', { locked: true });
    expect(await hapValue('Front Lock', '1D')).toBe(1);
  });

  it('answers intents for Homebridge devices as for any driver: lights to a percentage, a lock, a temperature', async () => {
    const intent = async (text: string) =>
      ((await client.emitWithAck('hub:command', { command: 'INTENT_EXECUTE', payload: { text }, requestId: `i-${Math.random()}` })) as { ok: boolean; data: { ok: boolean; speech: string } }).data;
    expect(await intent('set the desk lamp to 30 %')).toMatchObject({ ok: true, speech: 'Set the Desk Lamp to 30 percent.' });
    expect(await hapValue('Desk Lamp', '8')).toBe(30);
    expect(await intent('unlock the front lock')).toMatchObject({ ok: true });
    expect(await hapValue('Front Lock', '1E')).toBe(0);
    expect(await intent('lock the front lock')).toMatchObject({ ok: true, speech: 'Locked the Front Lock.' });
    expect(await hapValue('Front Lock', '1E')).toBe(1);
    const temperature = await intent('what is the temperature of the kitchen temperature');
    expect(temperature.ok).toBe(true);
    expect(temperature.speech).toMatch(/Kitchen Temperature/);
    expect(temperature.speech).toMatch(/\d/);
  });

  it("sets a thermostat's target temperature and mode, and a heater-cooler's", async () => {
    expect((await command('Hall Thermostat', 'set_target_temperature', { temperature: 22.5 })).status).toBe(200);
    expect(await hapValue('Hall Thermostat', '35')).toBe(22.5);
    await readingOf('Hall Thermostat', { targetTemperature: 22.5 });
    expect((await command('Hall Thermostat', 'set_hvac_mode', { mode: 'auto' })).status).toBe(200);
    expect(await hapValue('Hall Thermostat', '33')).toBe(3);
    await readingOf('Hall Thermostat', { hvacMode: 'auto' });

    expect((await command('Bedroom AC', 'set_hvac_mode', { mode: 'heat' })).status).toBe(200);
    expect(await hapValue('Bedroom AC', 'B2')).toBe(1);
    // In heat, the target is the heating threshold.
    await readingOf('Bedroom AC', { hvacMode: 'heat', targetTemperature: 20 });
    expect((await command('Bedroom AC', 'set_target_temperature', { temperature: 21 })).status).toBe(200);
    expect(await hapValue('Bedroom AC', '12')).toBe(21);
    expect(await hapValue('Bedroom AC', 'D')).toBe(24);
    await readingOf('Bedroom AC', { targetTemperature: 21 });
    expect((await command('Bedroom AC', 'set_hvac_mode', { mode: 'off' })).status).toBe(200);
    expect(await hapValue('Bedroom AC', 'B0')).toBe(0);
    await readingOf('Bedroom AC', { hvacMode: 'off', on: false });
  });

  it("sets a fan's speed (in the characteristic's own range), direction and oscillation", async () => {
    expect((await command('Ceiling Fan', 'set_percentage', { percentage: 80 })).status).toBe(200);
    expect(await hapValue('Ceiling Fan', '29')).toBe(80);
    expect(await hapValue('Ceiling Fan', '25')).toBeOneOf([true, 1]);
    await readingOf('Ceiling Fan', { on: true, percentage: 80 });
    expect((await command('Ceiling Fan', 'set_direction', { direction: 'reverse' })).status).toBe(200);
    expect(await hapValue('Ceiling Fan', '28')).toBe(1);
    await readingOf('Ceiling Fan', { direction: 'reverse' });
    expect((await command('Ceiling Fan', 'set_percentage', { percentage: 0 })).status).toBe(200);
    await readingOf('Ceiling Fan', { on: false });
    expect((await command('Ceiling Fan', 'set_percentage', { percentage: 101 })).status).toBe(400);

    // Speeds 0–3: 70 % is speed 2, read back as 66.7 %.
    expect((await command('Tower Fan', 'set_percentage', { percentage: 70 })).status).toBe(200);
    expect(await hapValue('Tower Fan', '29')).toBe(2);
    expect(await hapValue('Tower Fan', 'B0')).toBe(1);
    await readingOf('Tower Fan', { on: true, percentage: 66.7 });
    expect((await command('Tower Fan', 'oscillate', { oscillating: true })).status).toBe(200);
    expect(await hapValue('Tower Fan', 'B6')).toBe(1);
    await readingOf('Tower Fan', { oscillating: true });
  });

  it('follows changes made in Homebridge (HAP events; the poll is a minute away)', async () => {
    await hapWrite('Wall Outlet', '25', true);
    await readingOf('Wall Outlet', { on: true });
    await hapWrite('Combo Light', '8', 35);
    await readingOf('Combo Light', { brightness: 35 });
    const snapshot = (await api('GET', '/state/snapshot')).body as { devices: Record<string, { state: Json }> };
    // The raw state is in the model's keys.
    expect(snapshot.devices[ids['Combo Light']!]!.state).toMatchObject({ on: false, brightness: 35 });
    expect(snapshot.devices[ids['Living Blinds']!]!.state).toMatchObject({ position: 0, target_position: 0, state: 'closed' });
    expect(snapshot.devices[ids['Front Door Contact']!]!.state).toMatchObject({ contact: true });
  });

  it("brings a programmable switch's presses to the hub as device.button_pressed", async () => {
    const before = hubEvents.length;
    // The fixture's trigger makes the Scene Button send ProgrammableSwitchEvent 1 (double).
    await hapWrite('Button Trigger', PRESS, 1);
    const pressed = await eventually(() => hubEvents.slice(before).find((e) => e.type === 'device.button_pressed'), 5000, 'device.button_pressed');
    expect(pressed.data).toMatchObject({ deviceId: ids['Scene Button'], press: 'double' });
    await readingOf('Scene Button', { lastPress: 'double' });
    await hapWrite('Button Trigger', PRESS, 2);
    const long = await eventually(() => hubEvents.slice(before).find((e) => e.type === 'device.button_pressed' && e.data.press === 'long'), 5000, 'long press');
    expect(long.data).toMatchObject({ deviceId: ids['Scene Button'] });
    // The generic device of the trigger follows its characteristic as before.
    await eventually(async () => ((await api('GET', '/state/snapshot')).body as { devices: Record<string, { state: Json }> }).devices[ids['Button Trigger']!]?.state.press === 2, 5000, 'the trigger state');
  });

  it("removes an accessory's devices together", async () => {
    const combo = accessoryNamed('Ceiling Combo');
    const res = await api('POST', `/accessory-hub/import-accessories/hb-${combo.aid}/remove`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accessoryId: `hb-${combo.aid}`, deviceId: ids['Combo Fan'] });
    await eventually(async () => !(await hubDevices()).some((d) => d.name.startsWith('Combo')), 5000, 'combo devices removed');
  });
});

describe('imported accessories across restarts and changes (the import driver alone, HAP faked)', () => {
  type Emitted = { type: string; device?: Json & { id: string }; deviceId?: string; state?: Json };
  const characteristicJson = (iid: number, type: string, value: unknown, extra: Json = {}) => ({ iid, type, value, perms: ['ev', 'pr', 'pw'], description: type, ...extra });
  const info = { iid: 1, type: '3E', characteristics: [{ iid: 2, type: '23', value: 'Old Lamp', perms: ['pr'], description: 'Name', format: 'string' }] };
  const lightbulb = { iid: 9, type: '43', characteristics: [{ iid: 8, type: '23', value: 'Old Lamp', perms: ['pr'], format: 'string' }, characteristicJson(10, '25', 1, { format: 'bool', description: 'On' }), characteristicJson(11, '8', 60, { format: 'int', description: 'Brightness', minValue: 0, maxValue: 100, minStep: 1 })] };
  const nightSwitch = { iid: 20, type: '49', characteristics: [{ iid: 19, type: '23', value: 'Night Mode', perms: ['pr'], format: 'string' }, characteristicJson(21, '25', false, { format: 'bool', description: 'On' })] };
  const fan = { iid: 30, type: '00000040-0000-1000-8000-0026BB765291', characteristics: [characteristicJson(31, '00000025-0000-1000-8000-0026BB765291', true, { format: 'bool', description: 'On' })] };

  async function driver(docs: Map<string, Json>, services: unknown[]) {
    const repo = {
      list: async () => [...docs.values()],
      get: async (id: string) => docs.get(id),
      save: async (doc: Json & { id: string }) => void docs.set(doc.id, structuredClone(doc)),
      remove: async (id: string) => docs.delete(id),
    };
    const writes: unknown[] = [];
    const homebridge = { accessories: async () => [{ aid: 7, services }], settings: async () => ({ port: 9, pin: PIN }) };
    const hapClient = { accessories: async () => [], write: async (_p: number, _pin: string, w: unknown[]) => void writes.push(...w), subscribe: async () => ({ close() {} }) };
    const emitted: Emitted[] = [];
    const online = new Map<string, boolean>();
    const imports = new AccessoryImports(
      new DocumentCollection(repo as never, systemClock, () => new Error('missing') as never),
      homebridge as never,
      hapClient as never,
      systemTimers,
      60_000,
      { findByDriver: () => undefined, events: createDomainEventBus() },
    );
    await imports.load();
    imports.connect({ emit: (e) => void emitted.push(e as unknown as Emitted), setOnline: (id, on) => void online.set(id, on), fail: () => undefined });
    return { imports, emitted, online, writes };
  }
  const discovered = (emitted: Emitted[]) => emitted.filter((e) => e.type === 'DEVICE_DISCOVERED').map((e) => e.device!);

  it('makes an import from before services its devices at the next read, keeping hb-<aid>; a restart keeps the ids; a new service is added, a gone one removed', async () => {
    // As an import was stored before: one generic device, the characteristics by their description.
    const docs = new Map<string, Json>([['hb-7', { id: 'hb-7', aid: 7, name: 'Old Lamp', characteristics: [{ key: 'on', iid: 10, writable: true, format: 'bool' }, { key: 'brightness', iid: 11, writable: true, format: 'int', minValue: 0, maxValue: 100 }], createdAt: 1, updatedAt: 1 }]]);
    const first = await driver(docs, [info, lightbulb, nightSwitch]);
    // At once, from the store: the device as it was.
    expect(discovered(first.emitted)[0]).toMatchObject({ id: 'hb-7', commands: [{ name: 'set_on' }, { name: 'turn_on' }, { name: 'turn_off' }, { name: 'set_brightness' }] });
    expect(discovered(first.emitted)[0]!.deviceClass).toBeUndefined();
    // At the first read: a light (the same driver device id) and a switch beside it.
    await eventually(() => discovered(first.emitted).length === 3, 3000, 'rediscovered');
    const [, lamp, night] = discovered(first.emitted);
    expect(lamp).toMatchObject({ id: 'hb-7', name: 'Old Lamp', deviceClass: 'light', attributes: { colorModes: ['brightness'] }, state: { on: true, brightness: 60 }, properties: { aid: 7, iid: 9, hapService: 'Lightbulb', accessory: { aid: 7, name: 'Old Lamp' } } });
    expect(night).toMatchObject({ id: 'hb-7-20', name: 'Night Mode', deviceClass: 'switch', state: { on: false } });
    expect(first.online.get('hb-7-20')).toBe(true);
    expect((docs.get('hb-7')!.services as Json[]).map((s) => s.id)).toEqual(['hb-7', 'hb-7-20']);
    expect(docs.get('hb-7')!.characteristics).toBeUndefined();
    // A standard command is a HAP write of the right characteristic.
    first.imports.receive({ type: 'ACTION', actionId: 'a1', deviceId: 'hb-7', command: 'set_brightness', params: { brightness: 25 } });
    await eventually(() => first.emitted.some((e) => e.type === 'ACTION_RESULT'), 3000, 'the action answered');
    expect(first.writes).toEqual([{ aid: 7, iid: 11, value: 25 }]);
    expect(first.emitted.find((e) => e.type === 'STATE_UPDATE' && e.deviceId === 'hb-7')).toMatchObject({ state: { brightness: 25 } });
    first.imports.disconnect();

    // The hub restarted: the same ids from the store, before any read; then a Fan replaces the switch.
    const second = await driver(docs, [info, lightbulb, fan]);
    expect(discovered(second.emitted).slice(0, 2).map((d) => [d.id, d.deviceClass])).toEqual([
      ['hb-7', 'light'],
      ['hb-7-20', 'switch'],
    ]);
    await eventually(() => second.emitted.some((e) => e.type === 'DEVICE_REMOVED'), 3000, 'the switch removed');
    expect(second.emitted.find((e) => e.type === 'DEVICE_REMOVED')).toMatchObject({ deviceId: 'hb-7-20' });
    expect(discovered(second.emitted).slice(2).map((d) => [d.id, d.deviceClass])).toEqual([
      ['hb-7', 'light'],
      ['hb-7-30', 'fan'],
    ]);
    second.imports.disconnect();
  });
});
