import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribeHapEvents } from '../src/adapters/hap/hap-client.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';
import { freePort } from './support/net.js';
import { SseClient } from './support/sse-client.js';

/**
 * The plugin bridge (docs/accessory-hub.md) in a real Homebridge (2.x) on loopback: a WebSocket
 * driver's devices of every kind HomeKit shows, checked over HAP (insecure mode, the setup code as
 * authorization) as a HomeKit controller would see them.
 */

type Json = Record<string, unknown>;
interface HapCharacteristic {
  iid: number;
  type: string;
  value?: unknown;
  minValue?: number;
  maxValue?: number;
  minStep?: number;
  'valid-values'?: number[];
}
interface HapService {
  iid: number;
  type: string;
  characteristics: HapCharacteristic[];
}
interface HapAccessory {
  aid: number;
  services: HapService[];
}

const PIN = '031-45-154';

/** HAP's short type ids (HAP-NodeJS's toShortForm of Apple's UUIDs). */
const SERVICE = {
  AccessoryInformation: '3E',
  ProtocolInformation: 'A2',
  Lightbulb: '43',
  Switch: '49',
  Outlet: '47',
  WindowCovering: '8C',
  Thermostat: '4A',
  Fanv2: 'B7',
  LockMechanism: '45',
  TemperatureSensor: '8A',
  ContactSensor: '80',
  StatelessProgrammableSwitch: '89',
} as const;
const CHAR = {
  Name: '23',
  On: '25',
  Brightness: '8',
  ColorTemperature: 'CE',
  Hue: '13',
  CurrentPosition: '6D',
  TargetPosition: '7C',
  PositionState: '72',
  CurrentTemperature: '11',
  TargetTemperature: '35',
  CurrentHeatingCoolingState: 'F',
  TargetHeatingCoolingState: '33',
  TemperatureDisplayUnits: '36',
  Active: 'B0',
  RotationSpeed: '29',
  SwingMode: 'B6',
  RotationDirection: '28',
  LockCurrentState: '1D',
  LockTargetState: '1E',
  ContactSensorState: '6A',
  ProgrammableSwitchEvent: '73',
} as const;

/** A short HAP type, however HAP spelt it (short or full form, any case). */
const shortType = (type: string) => type.toUpperCase().replace(/-0000-1000-8000-0026BB765291$/, '').replace(/^0+(?=.)/, '');

let server: TestServer;
let token: string;
let port: number;
let hubDir: string;
let driver: TestDriver;
const actions: Message[] = [];


const status = async () => (await (await server.request('GET', '/v1/os/accessory-hub/status', { token })).json()) as Json;
/** Homebridge's last output, to say why when HAP does not show what it should. */
const output = async () => ((await status()).recentOutput as string[] | undefined)?.join('\n') ?? '';

/** Every accessory the bridge serves, as a HAP controller reads them. */
async function hapAccessories(): Promise<HapAccessory[]> {
  const res = await fetch(`http://127.0.0.1:${port}/accessories`, { headers: { authorization: PIN }, signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`HAP answered ${res.status}`);
  return ((await res.json()) as { accessories: HapAccessory[] }).accessories;
}

/** A bridged device's accessory by name, with its one service (besides the accessory information). */
async function hapDevice(name: string): Promise<{ aid: number; services: HapService[]; service: HapService } | undefined> {
  const accessory = (await hapAccessories()).find((a) =>
    a.services.some((s) => shortType(s.type) === SERVICE.AccessoryInformation && s.characteristics.some((c) => shortType(c.type) === CHAR.Name && c.value === name)),
  );
  if (!accessory) return undefined;
  const services = accessory.services.filter((s) => shortType(s.type) !== SERVICE.AccessoryInformation && shortType(s.type) !== SERVICE.ProtocolInformation);
  return { aid: accessory.aid, services, service: services[0]! };
}

/** Waits (bounded) until the accessory named so is served with a service of this type. */
const served = (name: string, type: string, timeoutMs = 20_000) =>
  eventually(async () => {
    const device = await hapDevice(name);
    return device?.services.some((s) => shortType(s.type) === type) ? device : undefined;
  }, timeoutMs, `${name} served as HAP service ${type}`).catch(async (err: Error) => {
    throw new Error(`${err.message}\n${await output()}`);
  });

function characteristic(service: HapService, type: string): HapCharacteristic {
  const found = service.characteristics.find((c) => shortType(c.type) === type);
  if (!found) throw new Error(`no characteristic ${type} in service ${service.type}: ${JSON.stringify(service.characteristics.map((c) => shortType(c.type)))}`);
  return found;
}

/** A characteristic's value read over HAP now. */
async function hapValue(aid: number, iid: number): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}/characteristics?id=${aid}.${iid}`, { headers: { authorization: PIN }, signal: AbortSignal.timeout(5000) });
  return ((await res.json()) as { characteristics: Array<{ value: unknown }> }).characteristics[0]!.value;
}

/** A HomeKit write over HAP; every characteristic must take it. */
async function hapWrite(writes: Array<{ aid: number; iid: number; value: unknown }>): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/characteristics`, {
    method: 'PUT',
    headers: { authorization: PIN, 'content-type': 'application/json' },
    body: JSON.stringify({ characteristics: writes }),
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status === 204) return;
  const body = (await res.json().catch(() => ({}))) as { characteristics?: Array<{ status?: number }> };
  if (!res.ok || body.characteristics?.some((c) => c.status)) throw new Error(`HAP refused the write: ${res.status} ${JSON.stringify(body)}`);
}

/** The driver's ACTION for this device and command, once it came (bounded). */
const action = (deviceId: string, command: string, after = 0) =>
  eventually(() => actions.slice(after).find((a) => a.deviceId === deviceId && a.command === command), 5000, `${command} to ${deviceId}`);

const DEVICES = [
  {
    id: 'desk',
    name: 'Desk light',
    deviceClass: 'light',
    attributes: { colorModes: ['brightness', 'color_temp'], minKelvin: 2200, maxKelvin: 6500 },
    commands: ['turn_on', 'turn_off', 'set_brightness', 'set_color_temp'],
    state: { on: true, brightness: 70, color_temp_kelvin: 4000 },
  },
  { id: 'front', name: 'Front door', deviceClass: 'lock', commands: ['lock', 'unlock'], state: { locked: false } },
  { id: 'blinds', name: 'Living blinds', deviceClass: 'cover', commands: ['open', 'close', 'stop', 'set_position'], state: { position: 30 } },
  {
    id: 'thermo',
    name: 'Hall thermostat',
    deviceClass: 'climate',
    attributes: { minTemperature: 10, maxTemperature: 30, temperatureStep: 0.5, hvacModes: ['off', 'heat', 'cool', 'auto'] },
    commands: ['set_target_temperature', 'set_hvac_mode'],
    state: { current_temperature: 19.5, target_temperature: 21, hvac_mode: 'heat' },
  },
  {
    id: 'fan',
    name: 'Ceiling fan',
    deviceClass: 'fan',
    attributes: { oscillate: true, direction: true },
    commands: ['turn_on', 'turn_off', 'set_percentage', 'oscillate', 'set_direction'],
    state: { on: true, percentage: 50, oscillating: false, direction: 'forward' },
  },
  { id: 'kitchen-temp', name: 'Kitchen temperature', deviceClass: 'sensor', state: { temperature: 22.5 } },
  { id: 'back-door', name: 'Back door', deviceClass: 'binary_sensor', attributes: { sensorClass: 'contact' }, state: { contact: true } },
];

beforeAll(async () => {
  port = await freePort();
  const dataDir = tempDataDir();
  hubDir = path.join(dataDir, 'accessory-hub');
  fs.mkdirSync(hubDir, { recursive: true });
  fs.writeFileSync(path.join(hubDir, 'config.json'), JSON.stringify({ bridge: { name: 'HCS Bridge Test', username: '0E:AA:BB:CC:DD:02', port, pin: PIN, advertiser: 'ciao' }, accessories: [], platforms: [] }));
  // No registry is involved: the plugin bridge is the hub's own, copied in at start.
  server = await startServer({
    dataDir,
    env: { ACCESSORY_HUB: 'on', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_REGISTRY: 'http://127.0.0.1:9/', ACCESSORY_HUB_POLL_MS: '60000' },
    timers: undefined,
  });
  token = await server.login();
  // Apple Home shows the hub's devices only once an admin turns it on.
  expect((await server.request('POST', '/v1/os/accessory-hub/homekit', { token, body: { exposed: true } })).status).toBe(200);
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'bridge.driver');
  driver.serveActions((a) => {
    actions.push(a);
    return { done: a.command };
  });
  for (const device of DEVICES) driver.send({ type: 'DEVICE_DISCOVERED', device });
  await eventually(async () => (await status()).state === 'running', 30_000, 'Homebridge running');
}, 60_000);

afterAll(async () => {
  driver?.close();
  await server?.close();
});

describe('plugin bridge: each hub device as the HAP service of its class', () => {
  it('serves every device with its service and characteristics, the values from its reading', async () => {
    const light = await served('Desk light', SERVICE.Lightbulb);
    expect(light.services).toHaveLength(1);
    expect(characteristic(light.service, CHAR.On).value).toBeOneOf([true, 1]);
    expect(characteristic(light.service, CHAR.Brightness).value).toBe(70);
    // Colour temperature in mireds, its range from the light's kelvin range (6500 K … 2200 K).
    expect(characteristic(light.service, CHAR.ColorTemperature)).toMatchObject({ value: 250, minValue: 154, maxValue: 454 });
    // No hs among its colour modes: no Hue.
    expect(light.service.characteristics.some((c) => shortType(c.type) === CHAR.Hue)).toBe(false);

    const lock = await served('Front door', SERVICE.LockMechanism);
    expect(characteristic(lock.service, CHAR.LockCurrentState).value).toBe(0);
    expect(characteristic(lock.service, CHAR.LockTargetState).value).toBe(0);

    const cover = await served('Living blinds', SERVICE.WindowCovering);
    expect(characteristic(cover.service, CHAR.CurrentPosition).value).toBe(30);
    expect(characteristic(cover.service, CHAR.TargetPosition).value).toBe(30);
    expect(characteristic(cover.service, CHAR.PositionState).value).toBe(2);

    const thermostat = await served('Hall thermostat', SERVICE.Thermostat);
    expect(characteristic(thermostat.service, CHAR.CurrentTemperature).value).toBe(19.5);
    expect(characteristic(thermostat.service, CHAR.TargetTemperature)).toMatchObject({ value: 21, minValue: 10, maxValue: 30, minStep: 0.5 });
    expect(characteristic(thermostat.service, CHAR.CurrentHeatingCoolingState).value).toBe(1);
    expect(characteristic(thermostat.service, CHAR.TargetHeatingCoolingState)).toMatchObject({ value: 1, 'valid-values': [0, 1, 2, 3] });
    expect(characteristic(thermostat.service, CHAR.TemperatureDisplayUnits).value).toBe(0);

    const fan = await served('Ceiling fan', SERVICE.Fanv2);
    expect(characteristic(fan.service, CHAR.Active).value).toBe(1);
    expect(characteristic(fan.service, CHAR.RotationSpeed).value).toBe(50);
    expect(characteristic(fan.service, CHAR.SwingMode).value).toBe(0);
    expect(characteristic(fan.service, CHAR.RotationDirection).value).toBe(0);

    const temperature = await served('Kitchen temperature', SERVICE.TemperatureSensor);
    expect(characteristic(temperature.service, CHAR.CurrentTemperature).value).toBe(22.5);

    // `contact: true`: the contact is made, the door closed: CONTACT_DETECTED (0).
    const contact = await served('Back door', SERVICE.ContactSensor);
    expect(characteristic(contact.service, CHAR.ContactSensorState).value).toBe(0);

    // What the plugin was given: the model's class, attributes and reading, not just on/off.
    const bootstrap = (await (await server.request('GET', '/v1/os/accessory-hub/plugin/bootstrap', { token: pluginToken() })).json()) as { devices: Array<Json> };
    expect(bootstrap.devices.find((d) => d.name === 'Desk light')).toMatchObject({
      service: 'Lightbulb',
      deviceClass: 'light',
      attributes: { colorModes: ['brightness', 'color_temp'], minKelvin: 2200, maxKelvin: 6500 },
      reading: { on: true, brightness: 70, colorTempKelvin: 4000 },
      online: true,
    });
  });

  it("carries HomeKit writes to the driver as the device's own commands, with the values converted", async () => {
    const light = await hapDevice('Desk light');
    let mark = actions.length;
    await hapWrite([{ aid: light!.aid, iid: characteristic(light!.service, CHAR.Brightness).iid, value: 40 }]);
    expect(await action('desk', 'set_brightness', mark)).toMatchObject({ params: { brightness: 40 } });
    mark = actions.length;
    // 300 mireds is 3333 K.
    await hapWrite([{ aid: light!.aid, iid: characteristic(light!.service, CHAR.ColorTemperature).iid, value: 300 }]);
    expect(await action('desk', 'set_color_temp', mark)).toMatchObject({ params: { kelvin: 3333 } });
    mark = actions.length;
    await hapWrite([{ aid: light!.aid, iid: characteristic(light!.service, CHAR.On).iid, value: false }]);
    await action('desk', 'turn_off', mark);

    const lock = await hapDevice('Front door');
    mark = actions.length;
    await hapWrite([{ aid: lock!.aid, iid: characteristic(lock!.service, CHAR.LockTargetState).iid, value: 1 }]);
    await action('front', 'lock', mark);

    const cover = await hapDevice('Living blinds');
    mark = actions.length;
    await hapWrite([{ aid: cover!.aid, iid: characteristic(cover!.service, CHAR.TargetPosition).iid, value: 80 }]);
    expect(await action('blinds', 'set_position', mark)).toMatchObject({ params: { position: 80 } });
    // HomeKit's target holds until the cover gets there.
    expect(await hapValue(cover!.aid, characteristic(cover!.service, CHAR.TargetPosition).iid)).toBe(80);

    const thermostat = await hapDevice('Hall thermostat');
    mark = actions.length;
    await hapWrite([{ aid: thermostat!.aid, iid: characteristic(thermostat!.service, CHAR.TargetTemperature).iid, value: 22.5 }]);
    expect(await action('thermo', 'set_target_temperature', mark)).toMatchObject({ params: { temperature: 22.5 } });
    mark = actions.length;
    await hapWrite([{ aid: thermostat!.aid, iid: characteristic(thermostat!.service, CHAR.TargetHeatingCoolingState).iid, value: 2 }]);
    expect(await action('thermo', 'set_hvac_mode', mark)).toMatchObject({ params: { mode: 'cool' } });

    const fan = await hapDevice('Ceiling fan');
    mark = actions.length;
    await hapWrite([{ aid: fan!.aid, iid: characteristic(fan!.service, CHAR.RotationSpeed).iid, value: 75 }]);
    expect(await action('fan', 'set_percentage', mark)).toMatchObject({ params: { percentage: 75 } });
    mark = actions.length;
    await hapWrite([{ aid: fan!.aid, iid: characteristic(fan!.service, CHAR.SwingMode).iid, value: 1 }]);
    expect(await action('fan', 'oscillate', mark)).toMatchObject({ params: { oscillating: true } });
    mark = actions.length;
    await hapWrite([{ aid: fan!.aid, iid: characteristic(fan!.service, CHAR.RotationDirection).iid, value: 1 }]);
    expect(await action('fan', 'set_direction', mark)).toMatchObject({ params: { direction: 'reverse' } });
    mark = actions.length;
    await hapWrite([{ aid: fan!.aid, iid: characteristic(fan!.service, CHAR.Active).iid, value: 0 }]);
    await action('fan', 'turn_off', mark);

    // Through the plugin's command route with its token: in the activity log as the plugin's writes.
    const activity = (await (await server.request('GET', '/admin/activity?operation=accessory_hub.plugin.command&limit=50', { token })).json()) as { entries: Array<Json> };
    expect(activity.entries.some((e) => e.ok === true && (e.input as Json | undefined)?.command === 'set_brightness')).toBe(true);
  });

  it('refuses through the plugin route what the HAP service does not write, and values outside the attributes', async () => {
    const { devices } = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Array<{ id: string; driverDeviceId: string }> };
    const idOf = (driverDeviceId: string) => devices.find((d) => d.driverDeviceId === driverDeviceId)!.id;
    const command = (driverDeviceId: string, body: Json) => server.request('POST', `/v1/os/accessory-hub/plugin/devices/${idOf(driverDeviceId)}/command`, { token: pluginToken(), body });
    const notInService = await command('front', { command: 'set_brightness', params: { brightness: 10 } });
    expect(notInService.status).toBe(422);
    expect(((await notInService.json()) as { error: Json }).error.code).toBe('COMMAND_NOT_IN_CLASS');
    const outOfRange = await command('thermo', { command: 'set_target_temperature', params: { temperature: 40 } });
    expect(outOfRange.status).toBe(400);
    expect(((await outOfRange.json()) as { error: Json }).error.code).toBe('INVALID_COMMAND_PARAMS');
    expect((await command('kitchen-temp', { command: 'turn_on' })).status).toBe(422);
  });

  it("brings a driver's STATE_UPDATE to HAP", async () => {
    driver.send({ type: 'STATE_UPDATE', deviceId: 'front', state: { locked: true } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'blinds', state: { position: 80 } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'desk', state: { on: true, brightness: 40, color_temp_kelvin: 2500 } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'kitchen-temp', state: { temperature: 23 } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'back-door', state: { contact: false } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'thermo', state: { current_temperature: 20, hvac_mode: 'cool', target_temperature: 18 } });
    const read = async (name: string, type: string) => {
      const device = await hapDevice(name);
      return hapValue(device!.aid, characteristic(device!.service, type).iid);
    };
    const reaches = (name: string, type: string, value: unknown) =>
      eventually(async () => (await read(name, type)) === value, 5000, `${name} ${type} = ${String(value)}`);
    await reaches('Front door', CHAR.LockCurrentState, 1);
    await reaches('Front door', CHAR.LockTargetState, 1);
    await reaches('Living blinds', CHAR.CurrentPosition, 80);
    await reaches('Living blinds', CHAR.TargetPosition, 80);
    await reaches('Desk light', CHAR.Brightness, 40);
    await reaches('Desk light', CHAR.ColorTemperature, 400);
    await reaches('Kitchen temperature', CHAR.CurrentTemperature, 23);
    // Open: CONTACT_NOT_DETECTED (1).
    await reaches('Back door', CHAR.ContactSensorState, 1);
    await reaches('Hall thermostat', CHAR.TargetHeatingCoolingState, 2);
    await reaches('Hall thermostat', CHAR.CurrentHeatingCoolingState, 2);
    await reaches('Hall thermostat', CHAR.TargetTemperature, 18);
  });
});

describe('plugin bridge: what it costs under a flood', () => {
  it('sends each device once per turn (at most every 100 ms while changes keep coming), and nothing for a change HomeKit does not render', async () => {
    const stream = await SseClient.open(`${server.url}/v1/os/accessory-hub/plugin/state/stream`, { authorization: `Bearer ${pluginToken()}` });
    try {
      await stream.next((e) => e.event === 'ready');
      const { devices } = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Array<{ id: string; driverDeviceId: string }> };
      const deskId = devices.find((d) => d.driverDeviceId === 'desk')!.id;
      const deskStates = () => stream.events.filter((e) => e.event === 'state' && (e.data as { deviceId: string }).deviceId === deskId);
      for (let i = 0; i < 300; i++) driver.send({ type: 'STATE_UPDATE', deviceId: 'desk', state: { brightness: 1 + (i % 90) } });
      driver.send({ type: 'STATE_UPDATE', deviceId: 'desk', state: { brightness: 55 } });
      await stream.next((e) => e.event === 'state' && (e.data as { reading: { brightness?: number } }).reading.brightness === 55, 10_000);
      const sent = deskStates().length;
      expect(sent).toBeGreaterThan(0);
      expect(sent).toBeLessThan(30);
      // A key the light's reading does not have changes nothing HomeKit shows: no message for it.
      const before = deskStates().length;
      driver.send({ type: 'STATE_UPDATE', deviceId: 'desk', state: { firmware_note: 'updated' } });
      driver.send({ type: 'STATE_UPDATE', deviceId: 'blinds', state: { position: 81 } });
      await stream.next((e) => e.event === 'state' && (e.data as { reading: { position?: number } }).reading.position === 81, 10_000);
      expect(deskStates().length).toBe(before);
      // And Homebridge has the last value.
      const desk = await hapDevice('Desk light');
      await eventually(async () => (await hapValue(desk!.aid, characteristic(desk!.service, CHAR.Brightness).iid)) === 55, 5000, 'Desk light brightness 55');
    } finally {
      stream.close();
    }
  });
});

describe('plugin bridge: devices come and go without a resync', () => {
  it('adds a device discovered after start, rebuilds it when its class changes, and removes it when it goes', async () => {
    const pid = (await status()).pid;
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'late', name: 'Late lamp', deviceClass: 'switch', commands: ['turn_on', 'turn_off'], state: { on: false } } });
    const added = await served('Late lamp', SERVICE.Switch, 10_000);
    expect(characteristic(added.service, CHAR.On).value).toBeOneOf([false, 0]);
    const mark = actions.length;
    await hapWrite([{ aid: added.aid, iid: characteristic(added.service, CHAR.On).iid, value: true }]);
    await action('late', 'turn_on', mark);

    // Another class: the accessory is built anew as the new class's service, and only that one.
    driver.send({ type: 'DEVICE_UPDATED', device: { id: 'late', deviceClass: 'light', attributes: { colorModes: ['brightness'] }, state: { on: true, brightness: 20 } } });
    const rebuilt = await served('Late lamp', SERVICE.Lightbulb, 10_000);
    expect(rebuilt.services.map((s) => shortType(s.type))).toEqual([SERVICE.Lightbulb]);
    await eventually(async () => (await hapValue(rebuilt.aid, characteristic(rebuilt.service, CHAR.Brightness).iid)) === 20, 5000, 'its brightness');

    driver.send({ type: 'DEVICE_REMOVED', deviceId: 'late' });
    await eventually(async () => (await hapDevice('Late lamp')) === undefined, 10_000, 'Late lamp gone from HAP');
    // None of it restarted Homebridge.
    expect((await status()).pid).toBe(pid);
  });

  it("turns a hub button's presses into ProgrammableSwitchEvent events", async () => {
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'btn', name: 'Bedside button', deviceClass: 'button' } });
    const button = await served('Bedside button', SERVICE.StatelessProgrammableSwitch, 10_000);
    const event = characteristic(button.service, CHAR.ProgrammableSwitchEvent);
    expect(event['valid-values']).toEqual([0, 1, 2]);
    const seen: unknown[] = [];
    const subscription = await subscribeHapEvents(port, PIN, [{ aid: button.aid, iid: event.iid }], (changes) => seen.push(...changes.map((c) => c.value)), () => undefined);
    try {
      driver.send({ type: 'BUTTON_PRESSED', deviceId: 'btn', press: 'double' });
      await eventually(() => seen.includes(1), 5000, 'a double press (1)');
      driver.send({ type: 'BUTTON_PRESSED', deviceId: 'btn', press: 'long' });
      await eventually(() => seen.includes(2), 5000, 'a long press (2)');
    } finally {
      subscription.close();
    }
  });
});

describe('plugin bridge: across a Homebridge restart', () => {
  it('takes its cached accessories back: one per device, the same service, writes reaching the driver', async () => {
    const before = (await status()).pid;
    expect((await server.request('POST', '/v1/os/accessory-hub/resync', { token, body: {} })).status).toBe(200);
    await eventually(async () => {
      const s = await status();
      return s.state === 'running' && s.pid !== before;
    }, 30_000, 'Homebridge restarted');
    const fan = await served('Ceiling fan', SERVICE.Fanv2);
    const names = (await hapAccessories()).flatMap((a) => a.services.filter((s) => shortType(s.type) === SERVICE.AccessoryInformation).map((s) => characteristic(s, CHAR.Name).value));
    expect(names.filter((n) => n === 'Ceiling fan')).toHaveLength(1);
    const mark = actions.length;
    // HAP serves the cached accessory at once, before the plugin's stream to the hub is back: a
    // write in that window is refused, or (seen once in a loaded CI run) accepted and not passed on,
    // as a controller would see "No Response". Written again (each try waits 5 s for the action) until one reaches the driver.
    const speed = { aid: fan.aid, iid: characteristic(fan.service, CHAR.RotationSpeed).iid, value: 30 };
    const reached = await eventually(async () => {
      await hapWrite([speed]).catch(() => undefined);
      return action('fan', 'set_percentage', mark).catch(() => undefined);
    }, 20_000, 'set_percentage to fan once the plugin is linked again');
    expect(reached).toMatchObject({ params: { percentage: 30 } });
    // The removed device stayed out.
    expect(await hapDevice('Late lamp')).toBeUndefined();
  }, 60_000);
});

/** The token the hub issued its plugin bridge, as the plugin reads it from its config block. */
function pluginToken(): string {
  return (JSON.parse(fs.readFileSync(path.join(hubDir, 'config.json'), 'utf8')).platforms as Array<Json>).find((p) => p.platform === 'HomeControlBridge')!.token as string;
}
