import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNpmRegistry, type NpmRegistry } from './support/npm-registry.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually, TestDriver } from './support/ws-driver.js';
import { freePort } from './support/net.js';

/**
 * Homebridge only when something uses it (issue 37): a fresh hub with the default ACCESSORY_HUB
 * does not run it; Apple Home turned on, or a plugin installed, starts it without a restart of
 * the hub; the last of them going stops it again; a hub paired before the upgrade keeps showing
 * its devices. Real Homebridge, a registry on loopback, a WebSocket driver.
 */

const FIXTURE = path.resolve(import.meta.dirname, 'fixtures/homebridge-hcs-test');
const fixture = (file: string) => fs.readFileSync(path.join(FIXTURE, file), 'utf8');
type Json = Record<string, unknown>;

let registry: NpmRegistry;
const servers: TestServer[] = [];
const drivers: TestDriver[] = [];

const env = async (extra: Record<string, string> = {}) => ({ ACCESSORY_HUB: 'auto', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_PORT: String(await freePort()), ACCESSORY_HUB_REGISTRY: registry.url, ACCESSORY_HUB_POLL_MS: '60000', ...extra });

async function hub(dataDir = tempDataDir()) {
  const server = await startServer({ dataDir, env: await env(), timers: undefined });
  servers.push(server);
  const token = await server.login();
  const call = async (method: 'GET' | 'POST', p: string, body?: unknown) => {
    const res = await server.request(method, `/v1/os/accessory-hub${p}`, { token, ...(body === undefined ? {} : { body }) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const status = async () => (await call('GET', '/status')).body;
  const hubDir = path.join(dataDir, 'accessory-hub');
  const pluginToken = () => (JSON.parse(fs.readFileSync(path.join(hubDir, 'config.json'), 'utf8')).platforms as Json[]).find((p) => p.platform === 'HomeControlBridge')!.token as string;
  const bootstrap = async () => ((await (await server.request('GET', '/v1/os/accessory-hub/plugin/bootstrap', { token: pluginToken() })).json()) as { devices: Array<{ id: string; name: string }> }).devices;
  return { server, token, call, status, dataDir, hubDir, bootstrap };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  registry = await startNpmRegistry([{ name: 'homebridge-hcs-test', version: '1.0.0', files: { 'package.json': fixture('package.json'), 'index.js': fixture('index.js'), 'config.schema.json': fixture('config.schema.json') } }]);
});

afterAll(async () => {
  for (const d of drivers) d.close();
  for (const s of servers) await s.close();
  await registry?.close();
});

describe('accessory hub: Homebridge only when used', () => {
  it('does not start Homebridge on a fresh hub; Apple Home turned on starts it, with the devices chosen; off again stops it', async () => {
    const h = await hub();
    const before = await h.status();
    expect(before).toMatchObject({ enabled: true, state: 'stopped', usedFor: { plugins: false, homekit: false, environment: false }, pluginCount: 0 });
    expect(before.pid).toBeUndefined();
    expect((await h.call('GET', '/homekit')).body).toMatchObject({ exposed: false, devices: 'all', shown: 0, limit: 149, state: 'stopped' });

    const driver = await TestDriver.register(`${h.server.url.replace('http', 'ws')}/driver`, 'lights.driver');
    drivers.push(driver);
    driver.serveActions((a) => ({ done: a.command }));
    for (const id of ['hall', 'desk', 'porch']) driver.send({ type: 'DEVICE_DISCOVERED', device: { id, name: `${id} light`, category: 'light', commands: ['turn_on', 'turn_off'], state: { on: false } } });
    const ids = await eventually(async () => {
      const list = ((await (await h.server.request('GET', '/v1/os/devices', { token: h.token })).json()) as { devices: Array<{ id: string; name: string }> }).devices;
      return list.length === 3 ? Object.fromEntries(list.map((d) => [d.name, d.id])) : undefined;
    }, 10_000, 'three lights');

    // Bad choices change nothing and start nothing.
    for (const body of [{ devices: ['no-such-device'] }, { exposed: 'yes' }, { devices: Array.from({ length: 150 }, () => ids['hall light']) }, { other: true }]) {
      const bad = await h.call('POST', '/homekit', body);
      expect(bad.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(bad.body.error).toBeDefined();
    }
    expect((await h.status()).state).toBe('stopped');

    const on = await h.call('POST', '/homekit', { exposed: true });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ exposed: true, devices: 'all', shown: 3, bridgeable: 3 });
    const running = await eventually(async () => {
      const s = await h.status();
      return s.state === 'running' ? s : undefined;
    }, 30_000, 'Homebridge running');
    expect(running.usedFor).toMatchObject({ homekit: true, plugins: false });
    expect((await h.bootstrap()).map((d) => d.name).sort()).toEqual(['desk light', 'hall light', 'porch light']);

    // Two devices chosen: the third leaves the bridge.
    const chosen = await h.call('POST', '/homekit', { devices: [ids['hall light'], ids['porch light']] });
    expect(chosen.body).toMatchObject({ exposed: true, devices: [ids['hall light'], ids['porch light']], shown: 2 });
    expect((await h.bootstrap()).map((d) => d.name).sort()).toEqual(['hall light', 'porch light']);

    const pid = running.pid as number;
    const off = await h.call('POST', '/homekit', { exposed: false });
    expect(off.body).toMatchObject({ exposed: false, shown: 0, state: 'stopped' });
    expect((await h.status()).usedFor).toMatchObject({ homekit: false, plugins: false });
    await eventually(async () => !alive(pid), 10_000, 'Homebridge gone');

    // The choice is kept across a restart of the hub: off, with the two devices remembered.
    await h.server.close();
    const again = await hub(h.dataDir);
    expect((await again.call('GET', '/homekit')).body).toMatchObject({ exposed: false, devices: [ids['hall light'], ids['porch light']] });
    expect((await again.status()).state).toBe('stopped');
  }, 90_000);

  it('starts Homebridge when a plugin is installed and stops it when the last one is uninstalled', async () => {
    const h = await hub();
    expect((await h.status()).state).toBe('stopped');
    const installed = await h.call('POST', '/plugins/homebridge-hcs-test/install', {});
    expect(installed.status).toBe(200);
    const running = await eventually(async () => {
      const s = await h.status();
      return s.state === 'running' ? s : undefined;
    }, 30_000, 'Homebridge running for the plugin');
    expect(running.usedFor).toMatchObject({ plugins: true, homekit: false });
    // Apple Home is still off: the bridge shows none of the hub's devices.
    expect(await h.bootstrap()).toEqual([]);

    const removed = await h.call('POST', '/plugins/homebridge-hcs-test/uninstall', {});
    expect(removed.status).toBe(200);
    await eventually(async () => (await h.status()).state === 'stopped', 15_000, 'Homebridge stopped with no plugin left');
    expect(alive(running.pid as number)).toBe(false);
  }, 90_000);

  it('keeps a pairing made before the upgrade: a paired Homebridge starts and shows the devices', async () => {
    const dataDir = tempDataDir();
    const persist = path.join(dataDir, 'accessory-hub', 'persist');
    fs.mkdirSync(persist, { recursive: true });
    // What HAP-NodeJS keeps of a bridge a phone paired with (the hub once ran Homebridge on every start).
    fs.writeFileSync(path.join(persist, 'AccessoryInfo.0EAABBCCDD07.json'), JSON.stringify({ displayName: 'Home Control Accessory Hub', pairedClients: { 'A1B2C3D4-0000-0000-0000-000000000000': { publicKey: 'AA', permission: 1 } } }));
    const h = await hub(dataDir);
    expect((await h.call('GET', '/homekit')).body).toMatchObject({ exposed: true, devices: 'all' });
    await eventually(async () => (await h.status()).state === 'running', 30_000, 'Homebridge running for the pairing');
  }, 60_000);
});
