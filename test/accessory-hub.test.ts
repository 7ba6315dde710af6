import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNpmRegistry, type NpmRegistry } from './support/npm-registry.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';
import { freePort } from './support/net.js';
import { findHomebridge } from '../src/adapters/hap/homebridge-install.js';

/** The Homebridge the hub manages (package.json pins it). */
const HOMEBRIDGE_VERSION = findHomebridge()!.version;

const FIXTURE = path.resolve(import.meta.dirname, 'fixtures/homebridge-hcs-test');

let server: TestServer;
let token: string;
let port: number;
let registry: NpmRegistry;
let hubDir: string;
let driver: TestDriver;
const actions: Message[] = [];
let importedId = '';

const fixture = (file: string) => fs.readFileSync(path.join(FIXTURE, file), 'utf8');

type Json = Record<string, unknown>;

/** A free port on loopback for Homebridge's accessory server. */

const status = async () => (await (await server.request('GET', '/v1/os/accessory-hub/status', { token })).json()) as Json;

beforeAll(async () => {
  port = await freePort();
  // The test plugin is published to a registry on loopback, with one whose install script fails.
  registry = await startNpmRegistry([
    { name: 'homebridge-hcs-test', version: '1.0.0', files: { 'package.json': fixture('package.json'), 'index.js': fixture('index.js'), 'config.schema.json': fixture('config.schema.json') } },
    // One that declares no Homebridge version (Homebridge refuses to load it), and one that declares only 1.x (Homebridge 2 loads it, warning).
    { name: 'homebridge-hcs-unversioned', version: '0.2.0', files: { 'package.json': JSON.stringify({ name: 'homebridge-hcs-unversioned', version: '0.2.0', keywords: ['homebridge-plugin'], engines: { node: '>=18' } }), 'index.js': '' } },
    { name: 'homebridge-hcs-one', version: '1.4.0', files: { 'package.json': JSON.stringify({ name: 'homebridge-hcs-one', version: '1.4.0', keywords: ['homebridge-plugin'], engines: { homebridge: '^1.6.0' } }), 'index.js': 'module.exports = () => undefined;\n' } },
    {
      name: 'homebridge-hcs-broken',
      version: '0.1.0',
      files: { 'package.json': JSON.stringify({ name: 'homebridge-hcs-broken', version: '0.1.0', description: 'Fails to install', keywords: ['homebridge-plugin'], engines: { homebridge: '^1.6.0 || ^2.0.0' }, scripts: { install: 'node -e "process.exit(3)"' } }), 'index.js': '' },
    },
  ]);
  const dataDir = tempDataDir();
  hubDir = path.join(dataDir, 'accessory-hub');
  fs.mkdirSync(hubDir, { recursive: true });
  fs.writeFileSync(path.join(hubDir, 'config.json'), JSON.stringify({ bridge: { name: 'HCS Test Bridge', username: '0E:AA:BB:CC:DD:01', port, pin: '031-45-154', advertiser: 'ciao' }, accessories: [], platforms: [] }));
  server = await startServer({ dataDir, env: { ACCESSORY_HUB: 'on', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_REGISTRY: registry.url, ACCESSORY_HUB_POLL_MS: '60000' }, timers: undefined });
  token = await server.login();
  // A hub device the plugin bridge exposes in HomeKit.
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'porch.driver');
  driver.serveActions((action) => {
    actions.push(action);
    driver.send({ type: 'STATE_UPDATE', deviceId: 'porch', state: { on: action.command === 'turn_on' } });
    return { done: action.command };
  });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'porch', name: 'Porch lamp', commands: ['turn_on', 'turn_off'], state: { on: false } } });
  await eventually(async () => (await status()).state === 'running', 30_000, 'Homebridge running');
}, 60_000);
afterAll(async () => {
  driver?.close();
  await server?.close();
  await registry?.close();
});

/** The token the hub issued its plugin bridge, as the plugin reads it from its config block. */
const pluginToken = () => (JSON.parse(fs.readFileSync(path.join(hubDir, 'config.json'), 'utf8')).platforms as Array<Json>).find((p) => p.platform === 'HomeControlBridge')!.token as string;

const running = (pid?: unknown) => eventually(async () => {
  const s = await status();
  return s.state === 'running' && (pid === undefined || s.pid !== pid) ? s : undefined;
}, 30_000, 'Homebridge running');

const post = async (p: string, body: unknown = {}) => {
  const res = await server.request('POST', `/v1/os/accessory-hub${p}`, { token, body });
  return { status: res.status, body: (await res.json()) as Json };
};

describe('accessory hub: a managed Homebridge', () => {
  it('reports the running Homebridge: pid, version, pairing code and QR payload, plugins', async () => {
    const s = await status();
    expect(s).toMatchObject({ enabled: true, state: 'running', pid: expect.any(Number), version: HOMEBRIDGE_VERSION, node: { version: expect.stringMatching(/^v(22|24)\./), source: process.env.HCS_TEST_HOMEBRIDGE_NODE ? 'configured' : 'hub' }, bridge: { name: 'HCS Test Bridge', port, pin: '031-45-154' }, pluginCount: 0 });
    expect((s.bridge as Json).setupUri).toMatch(/^X-HM:\/\/[0-9A-Z]+$/);
  });

  it('searches and resolves plugins through the registry, and refuses names that are no plugin names', async () => {
    const search = (await (await server.request('GET', '/v1/os/accessory-hub/plugins/search?q=hcs', { token })).json()) as { results: Array<{ name: string }> };
    expect(search.results.map((r) => r.name).sort()).toEqual(['homebridge-hcs-broken', 'homebridge-hcs-one', 'homebridge-hcs-test', 'homebridge-hcs-unversioned']);
    const resolved = (await (await server.request('GET', '/v1/os/accessory-hub/plugins/resolve?name=homebridge-hcs-test', { token })).json()) as Json;
    expect(resolved).toMatchObject({ name: 'homebridge-hcs-test', versions: ['1.0.0'], distTags: { latest: '1.0.0' }, latest: { engines: { homebridge: '>=1.6.0' } }, verified: null });
    for (const name of ['homebridge-x;rm -rf ~', 'homebridge-$(reboot)', 'left-pad', '../homebridge-up', 'Homebridge-Caps']) {
      const res = await post(`/plugins/${encodeURIComponent(name)}/install`);
      expect(res.status, name).toBe(400);
      expect((res.body.error as Json).code, name).toBe('INVALID_PLUGIN_NAME');
    }
    const missing = await post('/plugins/homebridge-nothing-here/install');
    expect(missing.status).toBe(404);
    expect((missing.body.error as Json).code).toBe('PLUGIN_NOT_IN_REGISTRY');
  });

  it('installs a plugin with npm, configures it through its schema, and its accessory appears', async () => {
    const before = (await status()).pid;
    const installed = await post('/plugins/homebridge-hcs-test/install', { version: '1.0.0' });
    expect(installed.status, JSON.stringify(installed.body)).toBe(200);
    expect(installed.body).toMatchObject({ name: 'homebridge-hcs-test', installed: true, version: '1.0.0', enabled: true, hasConfigSchema: true, configBlocks: 0 });
    const schema = (await (await server.request('GET', '/v1/os/accessory-hub/plugins/homebridge-hcs-test/config-schema', { token })).json()) as Json;
    expect(schema).toMatchObject({ pluginAlias: 'HcsTestSwitch', pluginType: 'accessory' });

    const bad = await post('/plugins/homebridge-hcs-test/config', { name: '' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_PLUGIN_CONFIG', message: expect.stringMatching(/body\.name/) });
    const configured = await post('/plugins/homebridge-hcs-test/config', { name: 'Test Switch' });
    expect(configured.body).toMatchObject({ block: { accessory: 'HcsTestSwitch', name: 'Test Switch' } });
    await running(before);
    const names = await eventually(async () => {
      const res = await server.request('GET', '/v1/os/accessory-hub/accessories', { token });
      if (res.status !== 200) return undefined;
      const list = ((await res.json()) as { accessories: Array<{ name: string | null }> }).accessories.map((a) => a.name);
      return list.includes('Test Switch') ? list : undefined;
    }, 30_000, 'the switch served');
    expect(names).toContain('Test Switch');
    expect((await status()).pluginCount).toBe(1);
  });

  it('imports the accessory as a hub device and toggles it both ways: through the hub, and in Homebridge over HAP', async () => {
    const list = (await (await server.request('GET', '/v1/os/accessory-hub/import-accessories', { token })).json()) as { accessories: Array<{ accessoryId: string; name: string; imported: boolean; characteristics: Array<{ key: string; writable: boolean }> }> };
    const sw = list.accessories.find((a) => a.name === 'Test Switch')!;
    expect(sw).toMatchObject({ imported: false, characteristics: [{ key: 'on', writable: true }] });
    expect(list.accessories.some((a) => a.name.startsWith('HCS Test Bridge'))).toBe(false);
    const imported = await post(`/import-accessories/${sw.accessoryId}/import`);
    expect(imported.status).toBe(200);
    importedId = sw.accessoryId;
    const deviceId = imported.body.deviceId as string;
    const device = await eventually(async () => {
      const devices = ((await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Array<Json & { driverDeviceId: string }> }).devices;
      return devices.find((d) => d.driverKey === 'accessory-hub' && d.id === deviceId);
    }, 5000, 'the device');
    expect(device.driverDeviceId).toBe(sw.accessoryId);
    // A HAP Switch is a switch of the device model: its class's standard commands, its state in the model's keys.
    expect(device).toMatchObject({ deviceClass: 'switch', reading: { on: false } });
    expect((device.commands as Array<{ name: string }>).map((c) => c.name)).toEqual(['turn_on', 'turn_off', 'toggle']);

    // Through the hub: the command is a HAP write.
    const on = await server.request('POST', `/v1/os/devices/${String(device.id)}/command`, { token, body: { command: 'turn_on' } });
    expect(on.status, await on.clone().text()).toBe(200);
    const hap = async () => ((await (await fetch(`http://127.0.0.1:${port}/characteristics?id=${sw.accessoryId.slice(3)}.10`, { headers: { authorization: '031-45-154' } })).json()) as { characteristics: Array<{ value: unknown }> }).characteristics[0]!.value;
    expect(await hap()).toBeOneOf([true, 1]);
    // In Homebridge: a HAP write reaches the hub's state through a HAP event (the poll is a minute away).
    const put = await fetch(`http://127.0.0.1:${port}/characteristics`, { method: 'PUT', headers: { authorization: '031-45-154', 'content-type': 'application/json' }, body: JSON.stringify({ characteristics: [{ aid: Number(sw.accessoryId.slice(3)), iid: 10, value: false }] }) });
    expect(put.status).toBeLessThan(300);
    await eventually(async () => {
      const snapshot = (await (await server.request('GET', '/v1/os/state/snapshot', { token })).json()) as { devices: Record<string, { state: Json }> };
      return snapshot.devices[String(device.id)]?.state.on === false;
    }, 5000, 'off seen by the hub');
    // Imported, it is no longer importable.
    expect(((await (await server.request('GET', '/v1/os/accessory-hub/import-accessories', { token })).json()) as { accessories: Array<{ name: string }> }).accessories.map((a) => a.name)).not.toContain('Test Switch');
    expect((await post('/import-accessories/hb-999/import')).status).toBe(404);
  });

  it("exposes a hub device through the plugin bridge once Apple Home is on: a HAP write reaches the device's driver", async () => {
    const bootstrap = async () => ((await (await server.request('GET', '/v1/os/accessory-hub/plugin/bootstrap', { token: pluginToken() })).json()) as { devices: Array<{ name: string }> }).devices.map((d) => d.name);
    // Off (as on a fresh hub), the bridge shows nothing of the hub.
    expect(await bootstrap()).toEqual([]);
    expect((await post('/homekit', { exposed: true })).status).toBe(200);
    expect(await bootstrap()).toContain('Porch lamp');
    const porch = await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${port}/accessories`, { headers: { authorization: '031-45-154' } }).catch(() => undefined);
      if (!res?.ok) return undefined;
      const { accessories } = (await res.json()) as { accessories: Array<{ aid: number; services: Array<{ type: string; characteristics: Array<{ iid: number; type: string; value?: unknown }> }> }> };
      return accessories.find((a) => a.services.some((s) => s.characteristics.some((c) => c.type === '23' && c.value === 'Porch lamp')));
    }, 20_000, 'the porch lamp in Homebridge').catch(async (err: Error) => {
      throw new Error(`${err.message}\n${((await status()).recentOutput as string[]).join('\n')}`);
    });
    const on = porch.services.flatMap((s) => s.characteristics).find((c) => c.type === '25')!;
    const before = actions.length;
    const put = await fetch(`http://127.0.0.1:${port}/characteristics`, { method: 'PUT', headers: { authorization: '031-45-154', 'content-type': 'application/json' }, body: JSON.stringify({ characteristics: [{ aid: porch.aid, iid: on.iid, value: true }] }) });
    expect(put.status).toBeLessThan(300);
    await eventually(() => actions.length > before, 5000, 'the ACTION');
    expect(actions.at(-1)).toMatchObject({ command: 'turn_on', deviceId: 'porch' });

    // Its token opens /accessory-hub/plugin/* only.
    const token2 = pluginToken();
    expect((await server.request('GET', '/v1/os/accessory-hub/plugin/bootstrap', { token: token2 })).status).toBe(200);
    expect((await server.request('GET', '/v1/os/accessory-hub/status', { token: token2 })).status).toBe(403);
    expect((await server.request('GET', '/v1/os/accessory-hub/plugin/bootstrap', { token })).status).toBe(403);
    // It reports the other plugins' accessories.
    const external = await eventually(async () => {
      const body = (await (await server.request('GET', '/v1/os/accessory-hub/external-accessories', { token })).json()) as { accessories: Array<{ displayName: string }> };
      return body.accessories.length > 0 ? body.accessories : undefined;
    }, 10_000, 'external accessories reported');
    expect(external.map((a) => a.displayName)).toContain('Test Switch');
  });

  it("delivers the hub's import commands to the plugin at least once, until it acknowledges them", async () => {
    const queue = async () => ((await (await server.request('GET', '/v1/os/accessory-hub/plugin/import-commands', { token: pluginToken() })).json()) as { commands: Array<{ accessoryId: string }> }).commands;
    // The import made earlier was queued; the plugin pulls and acknowledges it.
    await eventually(async () => (await queue()).length === 0, 10_000, 'acknowledged by the plugin');
    expect((await server.request('POST', '/v1/os/accessory-hub/plugin/import-commands/nope/ack', { token: pluginToken(), body: {} })).status).toBe(404);
  });

  it("refuses a plugin that declares no Homebridge version, naming what it declares, and takes one that declares only 1.x, saying it does not fit", async () => {
    const manifest = fs.readFileSync(path.join(hubDir, 'package.json'), 'utf8');
    const refused = await post('/plugins/homebridge-hcs-unversioned/install');
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'PLUGIN_NOT_FOR_THIS_HOMEBRIDGE', message: `homebridge-hcs-unversioned@0.2.0 declares no Homebridge version it works with (its engines: node >=18, no homebridge), and Homebridge ${HOMEBRIDGE_VERSION} loads no plugin without one; it was not installed.` });
    expect(fs.readFileSync(path.join(hubDir, 'package.json'), 'utf8')).toBe(manifest);
    expect(fs.existsSync(path.join(hubDir, 'node_modules', 'homebridge-hcs-unversioned'))).toBe(false);

    const taken = await post('/plugins/homebridge-hcs-one/install');
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    expect(taken.body).toMatchObject({ name: 'homebridge-hcs-one', installed: true, version: '1.4.0', homebridgeRange: '^1.6.0', fitsHomebridge: HOMEBRIDGE_VERSION.startsWith('1.') });
    await eventually(async () => ((await status()).state === 'running' ? true : undefined), 30_000, 'Homebridge running with the 1.x plugin');
    const before = (await status()).pid;
    expect((await post('/plugins/homebridge-hcs-one/uninstall')).status).toBe(200);
    // The uninstall restarts Homebridge after it answers: the next case starts from the new one running.
    await running(before);
  }, 90_000);

  it('keeps its previous plugins when an install script fails', async () => {
    const manifest = fs.readFileSync(path.join(hubDir, 'package.json'), 'utf8');
    const failed = await post('/plugins/homebridge-hcs-broken/install');
    expect(failed.status).toBe(422);
    expect(failed.body.error).toMatchObject({ code: 'PLUGIN_INSTALL_FAILED', message: expect.stringMatching(/keeps its previous plugins/) });
    expect(fs.readFileSync(path.join(hubDir, 'package.json'), 'utf8')).toBe(manifest);
    const list = (await (await server.request('GET', '/v1/os/accessory-hub/plugins', { token })).json()) as { plugins: Array<{ name: string; installed: boolean }> };
    expect(list.plugins.filter((p) => p.installed).map((p) => p.name)).toEqual(['homebridge-hcs-test']);
    expect((await status()).state).toBe('running');
  });

  it('disables, enables and catalogues a plugin', async () => {
    expect((await post('/plugins/homebridge-hcs-test/disable')).body).toMatchObject({ enabled: false });
    expect(JSON.parse(fs.readFileSync(path.join(hubDir, 'config.json'), 'utf8')).disabledPlugins).toEqual(['homebridge-hcs-test']);
    expect((await post('/plugins/homebridge-hcs-test/enable')).body).toMatchObject({ enabled: true });
    expect((await post('/plugins/custom', { name: 'homebridge-hcs-test', verified: true, description: 'Our test switch' })).body).toMatchObject({ catalogued: true, verified: true });
    expect((await post('/plugins/homebridge-hcs-test/catalog-remove')).status).toBe(200);
    await running();
  });

  it("lists Homebridge's accessories read over HAP, with services and characteristics", async () => {
    const res = await server.request('GET', '/v1/os/accessory-hub/accessories', { token });
    expect(res.status).toBe(200);
    const { accessories } = (await res.json()) as { accessories: Array<{ aid: number; name: string | null; services: Array<{ characteristics: Array<{ type: string; value?: unknown }> }> }> };
    // The configured switch and the bridge itself.
    const names = accessories.map((a) => a.name);
    // Homebridge names its bridge accessory after the bridge, with a suffix from its id.
    expect(names.some((n) => n?.startsWith('HCS Test Bridge'))).toBe(true);
    expect(names).toContain('Test Switch');
    const sw = accessories.find((a) => a.name === 'Test Switch')!;
    // HAP's On characteristic (type 25), off to begin with.
    expect(sw.services.flatMap((svc) => svc.characteristics).find((c) => c.type === '25' || c.type.startsWith('00000025-'))?.value).toBeOneOf([false, 0]);
  });

  it('refuses bad settings, and restarts Homebridge into good ones', async () => {
    const bad = await server.request('POST', '/v1/os/accessory-hub/settings', { token, body: { pin: '12345678' } });
    expect(bad.status).toBe(400);
    const before = (await status()).pid;
    const res = await server.request('POST', '/v1/os/accessory-hub/settings', { token, body: { name: 'Garage Bridge' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: 'Garage Bridge', port, pin: '031-45-154' });
    await eventually(async () => {
      const s = await status();
      return s.state === 'running' && s.pid !== before && (s.bridge as Json).name === 'Garage Bridge';
    }, 30_000, 'restarted with the new name');
  });

  it('restarts Homebridge after a SIGKILL and keeps serving everything else meanwhile', async () => {
    const { pid, restarts } = (await status()) as { pid: number; restarts: number };
    process.kill(pid, 'SIGKILL');
    const down = await eventually(async () => {
      const s = await status();
      return s.pid !== pid && s.state !== 'running' ? s : undefined;
    }, 10_000, 'Homebridge seen down');
    expect(down).toMatchObject({ lastExit: { signal: 'SIGKILL' }, lastError: expect.stringMatching(/SIGKILL/) });
    // The hub answers as ever.
    expect((await server.request('GET', '/v1/os/devices', { token })).status).toBe(200);
    const back = await eventually(async () => {
      const s = await status();
      return s.state === 'running' && s.pid !== pid ? s : undefined;
    }, 30_000, 'Homebridge back');
    expect(back.restarts).toBeGreaterThan(restarts);
  });
});

describe('accessory hub: undoing', () => {
  it('removes an imported accessory: its device goes', async () => {
    const imported = { accessoryId: importedId };
    expect((await post(`/import-accessories/${imported.accessoryId}/remove`)).status).toBe(200);
    // Homebridge still has the switch, so a resync lists it again, not imported. By name: HAP-NodeJS
    // drops an accessory's aid when a run publishes without it, so the switch may have a new
    // `hb-<aid>` since the plugin was disabled and enabled above.
    const list = (await (await server.request('POST', '/v1/os/accessory-hub/import-accessories/resync', { token, body: {} })).json()) as { accessories: Array<{ accessoryId: string; name: string; imported: boolean }> };
    expect(list.accessories.find((a) => a.name === 'Test Switch')).toMatchObject({ imported: false });
    await eventually(async () => {
      const devices = ((await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Array<Json> }).devices;
      return !devices.some((d) => d.driverKey === 'accessory-hub');
    }, 5000, 'device removed');
    expect((await post(`/import-accessories/${imported.accessoryId}/remove`)).status).toBe(404);
  });

  it('uninstalls a plugin with npm; Homebridge restarts without it', async () => {
    const before = (await status()).pid;
    const res = await post('/plugins/homebridge-hcs-test/uninstall');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'homebridge-hcs-test', installed: false });
    expect(fs.existsSync(path.join(hubDir, 'node_modules', 'homebridge-hcs-test'))).toBe(false);
    expect((await post('/plugins/homebridge-hcs-test/uninstall')).status).toBe(409);
    const back = await running(before);
    expect(back.pluginCount).toBe(0);
  });
});

describe('accessory hub off', () => {
  it('says it is off, and its operations answer 503', async () => {
    const off = await startServer();
    try {
      const t = await off.login();
      expect(await (await off.request('GET', '/v1/os/accessory-hub/status', { token: t })).json()).toEqual({ enabled: false, state: 'off' });
      const res = await off.request('GET', '/v1/os/accessory-hub/accessories', { token: t });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: Json }).error.code).toBe('ACCESSORY_HUB_OFF');
    } finally {
      await off.close();
    }
  });
});
