import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toStandardJsonSchema } from '../src/domain/accessory-hub/config-schema.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';
import { freePort } from './support/net.js';

type Json = Record<string, unknown>;

/** Shaped like homebridge-dummy 2.x's: nested definitions whose properties say `"required": true` (and `false`). */
const DUMMY_SCHEMA = {
  type: 'object',
  definitions: {
    limiter: {
      type: 'object',
      properties: {
        duration: { type: 'integer', minimum: 1, required: true },
        units: { type: 'string', enum: ['seconds', 'minutes', 'hours'], required: true },
        note: { type: 'string', required: false },
      },
    },
    accessory: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, required: true },
        kind: { type: 'string', enum: ['Switch', 'Lightbulb'], required: false },
        limiter: { $ref: '#/definitions/limiter' },
      },
    },
  },
  properties: {
    name: { type: 'string', default: 'Fake Dummy', required: true },
    accessories: { type: 'array', items: { $ref: '#/definitions/accessory' } },
  },
};

/** A platform plugin like homebridge-dummy: one switch per configured accessory (a static platform). */
const DUMMY_INDEX = `'use strict';
module.exports = (api) => {
  const { Service, Characteristic } = api.hap;
  class DummySwitch {
    constructor(name) {
      this.name = name;
      this.on = false;
      this.service = new Service.Switch(name);
      this.service.getCharacteristic(Characteristic.On).onGet(() => this.on).onSet((value) => { this.on = Boolean(value); });
    }
    getServices() { return [this.service]; }
  }
  class FakeDummy {
    constructor(log, config) { this.config = config; }
    accessories(callback) { callback((this.config.accessories || []).map((a) => new DummySwitch(a.name))); }
  }
  api.registerPlatform('homebridge-fake-dummy', 'FakeDummy', FakeDummy);
};
`;

const NOOP_PLATFORM = (plugin: string, platform: string) => `'use strict';
module.exports = (api) => {
  api.registerPlatform('${plugin}', '${platform}', class { constructor() {} accessories(callback) { callback([]); } });
};
`;

/** A package folder in the accessory hub's plugin folder, as npm would leave it (no npm run: the tests stay off the network). */
function writePackage(modules: string, name: string, files: Record<string, string | object>): void {
  const dir = path.join(modules, ...name.split('/'));
  fs.mkdirSync(dir, { recursive: true });
  for (const [file, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
}


let server: TestServer;
let token: string;
let hubDir: string;
/** Another program on the configured HAP port (another hub, or a Homebridge of the household). */
let squatter: net.Server;
let takenPort: number;

const status = async () => (await (await server.request('GET', '/v1/os/accessory-hub/status', { token })).json()) as Json;
const post = async (p: string, body: unknown = {}) => {
  const res = await server.request('POST', `/v1/os/accessory-hub${p}`, { token, body });
  return { status: res.status, body: (await res.json()) as Json };
};
const configJson = () => JSON.parse(fs.readFileSync(path.join(hubDir, 'config.json'), 'utf8')) as { bridge: Json; platforms: Json[] };
const bridgeBlock = () => configJson().platforms.find((p) => p.platform === 'HomeControlBridge');
const running = (pid?: unknown) =>
  eventually(async () => {
    const s = await status();
    return s.state === 'running' && (pid === undefined || s.pid !== pid) ? s : undefined;
  }, 30_000, 'Homebridge running').catch(async (err: Error) => {
    throw new Error(`${err.message}\n${((await status()).recentOutput as string[]).join('\n')}`);
  });

beforeAll(async () => {
  takenPort = await freePort();
  squatter = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => squatter.listen(takenPort, '127.0.0.1', resolve));

  const dataDir = tempDataDir();
  hubDir = path.join(dataDir, 'accessory-hub');
  const modules = path.join(hubDir, 'node_modules');
  writePackage(modules, 'homebridge-fake-dummy', {
    'package.json': { name: 'homebridge-fake-dummy', version: '2.1.1', main: 'index.js', keywords: ['homebridge-plugin'], engines: { homebridge: '>=1.6.0' } },
    'index.js': DUMMY_INDEX,
    'config.schema.json': { pluginAlias: 'FakeDummy', pluginType: 'platform', singular: true, schema: DUMMY_SCHEMA },
  });
  writePackage(modules, 'homebridge-fake-broken-schema', {
    'package.json': { name: 'homebridge-fake-broken-schema', version: '0.1.0', main: 'index.js', keywords: ['homebridge-plugin'], engines: { homebridge: '>=1.6.0' } },
    'index.js': NOOP_PLATFORM('homebridge-fake-broken-schema', 'FakeBroken'),
    'config.schema.json': { pluginAlias: 'FakeBroken', pluginType: 'platform', schema: { type: 'object', properties: { host: { type: 'hostname-ish' } } } },
  });
  writePackage(modules, '@hcs-test/homebridge-scoped', {
    'package.json': { name: '@hcs-test/homebridge-scoped', version: '1.0.0', main: 'index.js', keywords: ['homebridge-plugin'], engines: { homebridge: '>=1.6.0' } },
    'index.js': NOOP_PLATFORM('@hcs-test/homebridge-scoped', 'HcsScoped'),
  });
  // A plugin's dependency with a plugin-like name: no homebridge-plugin keyword, so no plugin.
  writePackage(modules, 'homebridge-lib', { 'package.json': { name: 'homebridge-lib', version: '7.1.4', main: 'index.js', keywords: ['homebridge', 'library'] }, 'index.js': 'module.exports = {};\n' });

  // No config.json yet: the hub writes the first one, with ACCESSORY_HUB_PORT taken.
  server = await startServer({
    dataDir,
    env: { ACCESSORY_HUB: 'on', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_PORT: String(takenPort), ACCESSORY_HUB_REGISTRY: 'http://127.0.0.1:9/', ACCESSORY_HUB_POLL_MS: '60000' },
    timers: undefined,
  });
  token = await server.login();
  await running();
}, 60_000);

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => squatter?.close(resolve));
});

describe('the HAP port', () => {
  it('is another free one when the configured port is taken at the first config write, and is kept in config.json', async () => {
    const { port } = configJson().bridge as { port: number };
    expect(port).not.toBe(takenPort);
    expect(port).toBeGreaterThan(0);
    expect(await status()).toMatchObject({ state: 'running', bridge: { port } });
    expect(bridgeBlock()).toMatchObject({ hapPort: port, hapPin: configJson().bridge.pin });
  });
});

describe('plugins', () => {
  it('lists Homebridge plugins only (not a dependency named like one), and the status counts the same', async () => {
    const { plugins } = (await (await server.request('GET', '/v1/os/accessory-hub/plugins', { token })).json()) as { plugins: Array<{ name: string; installed: boolean }> };
    const installed = plugins.filter((p) => p.installed).map((p) => p.name);
    expect(installed).toEqual(['@hcs-test/homebridge-scoped', 'homebridge-fake-broken-schema', 'homebridge-fake-dummy']);
    expect(plugins.map((p) => p.name)).not.toContain('homebridge-lib');
    expect((await status()).pluginCount).toBe(installed.length);
    expect((await server.request('GET', '/v1/os/accessory-hub/plugins/homebridge-lib', { token })).status).toBe(404);
  });

  it("translates Homebridge's schema dialect (boolean required on properties) into standard JSON Schema", () => {
    const before = JSON.stringify(DUMMY_SCHEMA);
    const standard = toStandardJsonSchema(DUMMY_SCHEMA) as Json;
    expect(JSON.stringify(DUMMY_SCHEMA)).toBe(before);
    expect(standard).toEqual({
      type: 'object',
      definitions: {
        limiter: {
          type: 'object',
          properties: { duration: { type: 'integer', minimum: 1 }, units: { type: 'string', enum: ['seconds', 'minutes', 'hours'] }, note: { type: 'string' } },
          required: ['duration', 'units'],
        },
        accessory: {
          type: 'object',
          properties: { name: { type: 'string', minLength: 1 }, kind: { type: 'string', enum: ['Switch', 'Lightbulb'] }, limiter: { $ref: '#/definitions/limiter' } },
          required: ['name'],
        },
      },
      properties: { name: { type: 'string', default: 'Fake Dummy' }, accessories: { type: 'array', items: { $ref: '#/definitions/accessory' } } },
      required: ['name'],
    });
    // Through the other places a subschema sits, next to a standard `required` list that stays.
    expect(
      toStandardJsonSchema({
        type: 'object',
        required: ['a'],
        properties: { a: { type: 'string' }, b: { type: 'string', required: true } },
        additionalProperties: { type: 'object', properties: { c: { required: true } } },
        patternProperties: { '^x': { type: 'object', required: true, properties: { d: { required: true } } } },
        oneOf: [{ properties: { e: { required: true } } }],
        $defs: { f: { items: [{ properties: { g: { required: true } } }] } },
        dependencies: { a: ['b'], b: { properties: { h: { required: true } } } },
        default: { required: true },
      }),
    ).toEqual({
      type: 'object',
      required: ['a', 'b'],
      properties: { a: { type: 'string' }, b: { type: 'string' } },
      additionalProperties: { type: 'object', properties: { c: {} }, required: ['c'] },
      patternProperties: { '^x': { type: 'object', properties: { d: {} }, required: ['d'] } },
      oneOf: [{ properties: { e: {} }, required: ['e'] }],
      $defs: { f: { items: [{ properties: { g: {} }, required: ['g'] }] } },
      dependencies: { a: ['b'], b: { properties: { h: {} }, required: ['h'] } },
      default: { required: true },
    });
    const ajv = new Ajv({ strict: false, logger: false });
    expect(() => ajv.compile(DUMMY_SCHEMA)).toThrow(/required must be array/);
    const validate = ajv.compile(standard);
    expect(validate({ name: 'x', accessories: [{ name: 'Dummy', limiter: { duration: 5, units: 'minutes' } }] })).toBe(true);
    expect(validate({ name: 'x', accessories: [{ name: 'Dummy', limiter: { duration: 5 } }] })).toBe(false);
  });

  it('configures a plugin whose schema is in that dialect: 400 for a configuration it refuses, then 2xx and Homebridge serves it', async () => {
    const missingUnits = await post('/plugins/homebridge-fake-dummy/config', { name: 'Fake Dummy', accessories: [{ name: 'Dummy Switch', limiter: { duration: 5 } }] });
    expect(missingUnits.status, JSON.stringify(missingUnits.body)).toBe(400);
    expect(missingUnits.body.error).toMatchObject({ code: 'INVALID_PLUGIN_CONFIG', message: expect.stringMatching(/body\.accessories\.0\.limiter\.units/) });
    const noName = await post('/plugins/homebridge-fake-dummy/config', { accessories: [] });
    expect(noName.status).toBe(400);

    const before = (await status()).pid;
    const configured = await post('/plugins/homebridge-fake-dummy/config', { name: 'Fake Dummy', accessories: [{ name: 'Dummy Switch', kind: 'Switch', limiter: { duration: 5, units: 'minutes' } }] });
    expect(configured.status, JSON.stringify(configured.body)).toBe(200);
    expect(configured.body).toMatchObject({ name: 'homebridge-fake-dummy', block: { platform: 'FakeDummy', name: 'Fake Dummy' } });
    expect(configJson().platforms.filter((p) => p.platform === 'FakeDummy')).toHaveLength(1);
    await running(before);
    await eventually(async () => {
      const res = await server.request('GET', '/v1/os/accessory-hub/accessories', { token });
      if (res.status !== 200) return undefined;
      return ((await res.json()) as { accessories: Array<{ name: string | null }> }).accessories.some((a) => a.name === 'Dummy Switch');
    }, 30_000, 'the dummy switch served');
  });

  it('answers 422 with its code when a schema cannot be compiled even in standard JSON Schema', async () => {
    const res = await server.request('POST', '/v1/os/accessory-hub/plugins/homebridge-fake-broken-schema/config', { token, body: { host: 'a' } });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: Json };
    expect(body.error).toMatchObject({ code: 'PLUGIN_CONFIG_SCHEMA_UNUSABLE', message: expect.stringMatching(/homebridge-fake-broken-schema.*type/) });
    expect(configJson().platforms.some((p) => p.platform === 'FakeBroken')).toBe(false);
  });
});

describe('importing', () => {
  it('answers the logical device id, which GET /devices/:id finds', async () => {
    const list = (await (await server.request('GET', '/v1/os/accessory-hub/import-accessories', { token })).json()) as { accessories: Array<{ accessoryId: string; name: string }> };
    const dummy = list.accessories.find((a) => a.name === 'Dummy Switch')!;
    expect(dummy).toBeDefined();
    const imported = await post(`/import-accessories/${dummy.accessoryId}/import`);
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    const deviceId = imported.body.deviceId as string;
    expect(deviceId).not.toBe(dummy.accessoryId);
    const res = await server.request('GET', `/v1/os/devices/${encodeURIComponent(deviceId)}`, { token });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: deviceId, driverKey: 'accessory-hub', driverDeviceId: dummy.accessoryId, name: 'Dummy Switch' });

    const removed = await post(`/import-accessories/${dummy.accessoryId}/remove`);
    expect(removed.body).toMatchObject({ accessoryId: dummy.accessoryId, deviceId });
  });
});

describe('the HAP port, changed', () => {
  it('is followed by the plugin bridge; taken, the status says so and Homebridge is not restarted in a loop; free again, it runs', async () => {
    const taken = await post('/settings', { port: takenPort });
    expect(taken.status).toBe(200);
    expect(bridgeBlock()).toMatchObject({ hapPort: takenPort });
    const failed = await eventually(async () => {
      const s = await status();
      return s.state === 'failed' ? s : undefined;
    }, 30_000, 'Homebridge seen failing on the taken port');
    expect(failed.lastError).toMatch(new RegExp(`port ${takenPort} is in use.*EADDRINUSE`));
    expect(failed.pid).toBeUndefined();
    // Past the first back-off (1 s), twice over: still failed, no restart.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await status()).toMatchObject({ state: 'failed', restarts: failed.restarts, lastError: failed.lastError });

    const port = await freePort();
    expect((await post('/settings', { port })).status).toBe(200);
    const back = await running();
    expect(back).toMatchObject({ bridge: { port } });
    expect(back.lastError).toBeUndefined();
    expect(bridgeBlock()).toMatchObject({ hapPort: port });
  });
});
