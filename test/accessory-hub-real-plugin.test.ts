import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';
import { freePort } from './support/net.js';

/**
 * A real Homebridge plugin from npm, as a new user would use it: homebridge-dummy 2.1.1 installed
 * through the hub from the registry, configured through its own config.schema.json (Homebridge's
 * dialect: `"required": true` on properties), its accessories imported, and each showing the class,
 * reading and standard commands of the device model. It needs the npm registry, so it runs when
 * HCS_REAL_PLUGINS is set (CI's .ci/run sets it); everything else it talks to is on 127.0.0.1.
 */
const REAL = process.env.HCS_REAL_PLUGINS === '1';
const PLUGIN = 'homebridge-dummy';
const VERSION = '2.1.1';

type Json = Record<string, unknown>;
interface Device {
  id: string;
  name: string;
  driverKey: string;
  deviceClass: string;
  attributes: Json;
  reading: Json;
  commands: Array<{ name: string }>;
}

let server: TestServer;
let token: string;


const api = async (method: string, p: string, body?: unknown) => {
  const res = await server.request(method, `/v1/os${p}`, { token, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: (await res.json()) as Json };
};
const imported = async () => ((await api('GET', '/devices')).body.devices as Device[]).filter((d) => d.driverKey === 'accessory-hub');
const named = async (name: string) => (await imported()).find((d) => d.name === name)!;
const command = async (name: string, cmd: string, params?: Json) => api('POST', `/devices/${(await named(name)).id}/command`, { command: cmd, ...(params ? { params } : {}) });

const ACCESSORIES: Array<[string, string]> = [
  ['Dummy Lamp', 'Lightbulb'],
  ['Dummy Outlet', 'Outlet'],
  ['Dummy Lock', 'LockMechanism'],
  ['Dummy Thermostat', 'Thermostat'],
  ['Dummy Blinds', 'WindowCovering'],
  ['Dummy Garage', 'GarageDoorOpener'],
  ['Dummy Temperature', 'TemperatureSensor'],
  ['Dummy Motion', 'MotionSensor'],
  ['Dummy Contact', 'ContactSensor'],
  ['Dummy Button', 'StatelessProgrammableSwitch'],
];

describe.skipIf(!REAL)(`a real plugin from npm: ${PLUGIN} ${VERSION}`, () => {
  beforeAll(async () => {
    server = await startServer({ env: { ACCESSORY_HUB: 'on', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_PORT: String(await freePort()), ACCESSORY_HUB_POLL_MS: '1000' } });
    token = await server.login();
    await eventually(async () => ((await api('GET', '/accessory-hub/status')).body.state === 'running' ? true : undefined), 30_000, 'Homebridge running');
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  it('installs from the registry, lists only it as a plugin, and takes a configuration in its own schema dialect', async () => {
    const installed = await api('POST', `/accessory-hub/plugins/${PLUGIN}/install`, { version: VERSION });
    expect(installed.status, JSON.stringify(installed.body)).toBe(200);
    const plugins = (await api('GET', '/accessory-hub/plugins')).body.plugins as Array<{ name: string }>;
    // homebridge-lib comes with it, and is not a plugin.
    expect(plugins.map((p) => p.name)).toEqual([PLUGIN]);
    expect((await api('GET', '/accessory-hub/status')).body).toMatchObject({ pluginCount: 1 });

    const schema = (await api('GET', `/accessory-hub/plugins/${PLUGIN}/config-schema`)).body;
    expect(JSON.stringify(schema)).toContain('"required":true');
    // A field its schema requires, left out: 400 naming it, not 500.
    const missing = await api('POST', `/accessory-hub/plugins/${PLUGIN}/config`, { name: 'Dummy', accessories: [{ name: 'No type' }] });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'INVALID_PLUGIN_CONFIG' });
    const configured = await api('POST', `/accessory-hub/plugins/${PLUGIN}/config`, { name: 'Dummy', accessories: ACCESSORIES.map(([name, type]) => ({ name, type })) });
    expect(configured.status, JSON.stringify(configured.body)).toBe(200);
  }, 180_000);

  it('imports its accessories as devices of the model, with their class, attributes and reading', async () => {
    const importable = await eventually(async () => {
      const list = (await api('POST', '/accessory-hub/import-accessories/resync')).body.accessories as Array<{ accessoryId: string; name: string }> | undefined;
      return list && ACCESSORIES.every(([name]) => list.some((a) => a.name === name)) ? list : undefined;
    }, 60_000, 'the dummy accessories served');
    for (const a of importable) {
      const res = await api('POST', `/accessory-hub/import-accessories/${a.accessoryId}/import`);
      expect(res.status, `${a.name}: ${JSON.stringify(res.body)}`).toBe(200);
      // The answer is the logical device GET /devices/:id finds.
      expect((await api('GET', `/devices/${res.body.deviceId as string}`)).status).toBe(200);
    }
    const classes = Object.fromEntries((await imported()).map((d) => [d.name, d.deviceClass]));
    expect(classes).toEqual({
      'Dummy Lamp': 'light',
      'Dummy Outlet': 'outlet',
      'Dummy Lock': 'lock',
      'Dummy Thermostat': 'climate',
      'Dummy Blinds': 'cover',
      'Dummy Garage': 'cover',
      'Dummy Temperature': 'sensor',
      'Dummy Motion': 'binary_sensor',
      'Dummy Contact': 'binary_sensor',
      'Dummy Button': 'button',
    });
    expect(await named('Dummy Thermostat')).toMatchObject({ attributes: { hvacModes: ['off', 'heat', 'cool', 'auto'] }, reading: { targetTemperature: expect.any(Number) } });
    expect(await named('Dummy Temperature')).toMatchObject({ attributes: { sensorClass: 'temperature' }, reading: { value: expect.any(Number) } });
    expect(await named('Dummy Motion')).toMatchObject({ attributes: { sensorClass: 'motion' }, reading: { detected: false } });
    expect(await named('Dummy Lock')).toMatchObject({ reading: { locked: expect.any(Boolean) } });
  }, 120_000);

  it("takes the classes' standard commands, and refuses what a class does not take", async () => {
    expect((await command('Dummy Lamp', 'turn_on')).status).toBe(200);
    expect((await command('Dummy Lock', 'unlock')).status).toBe(200);
    expect((await command('Dummy Thermostat', 'set_target_temperature', { temperature: 22 })).status).toBe(200);
    expect((await command('Dummy Thermostat', 'set_hvac_mode', { mode: 'heat' })).status).toBe(200);
    expect((await command('Dummy Blinds', 'open')).status).toBe(200);
    await eventually(async () => ((await named('Dummy Lamp')).reading.on === true ? true : undefined), 10_000, 'lamp on');
    await eventually(async () => ((await named('Dummy Lock')).reading.locked === false ? true : undefined), 10_000, 'lock unlocked');
    await eventually(async () => {
      const r = (await named('Dummy Thermostat')).reading;
      return r.targetTemperature === 22 && r.hvacMode === 'heat' ? true : undefined;
    }, 10_000, 'thermostat target and mode');
    await eventually(async () => ((await named('Dummy Blinds')).reading.coverState === 'open' ? true : undefined), 10_000, 'blinds open');
    expect((await command('Dummy Lamp', 'lock')).body.error).toMatchObject({ code: 'COMMAND_NOT_IN_CLASS' });
    expect((await command('Dummy Thermostat', 'set_target_temperature', { temperature: 60 })).status).toBe(400);
  }, 60_000);
});
