import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';

const FIXTURE = path.resolve(import.meta.dirname, 'fixtures/homebridge-hcs-test');

let server: TestServer;
let token: string;
let port: number;

type Json = Record<string, unknown>;

/** A free port on loopback for Homebridge's accessory server. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port: p } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return p;
}

const status = async () => (await (await server.request('GET', '/v1/os/accessory-hub/status', { token })).json()) as Json;

beforeAll(async () => {
  port = await freePort();
  const dataDir = tempDataDir();
  const hubDir = path.join(dataDir, 'accessory-hub');
  // The test plugin is in Homebridge's plugin folder, configured with one switch.
  fs.mkdirSync(path.join(hubDir, 'node_modules'), { recursive: true });
  fs.cpSync(FIXTURE, path.join(hubDir, 'node_modules', 'homebridge-hcs-test'), { recursive: true });
  fs.writeFileSync(
    path.join(hubDir, 'config.json'),
    JSON.stringify({ bridge: { name: 'HCS Test Bridge', username: '0E:AA:BB:CC:DD:01', port, pin: '031-45-154', advertiser: 'ciao' }, accessories: [{ accessory: 'HcsTestSwitch', name: 'Test Switch' }], platforms: [] }),
  );
  server = await startServer({ dataDir, env: { ACCESSORY_HUB: 'on', ACCESSORY_HUB_BIND: '127.0.0.1' }, timers: undefined });
  token = await server.login();
  await eventually(async () => (await status()).state === 'running', 30_000, 'Homebridge running');
}, 60_000);
afterAll(async () => {
  await server?.close();
});

describe('accessory hub: a managed Homebridge', () => {
  it('reports the running Homebridge: pid, version, pairing code and QR payload, plugins', async () => {
    const s = await status();
    expect(s).toMatchObject({ enabled: true, state: 'running', pid: expect.any(Number), version: '1.11.4', bridge: { name: 'HCS Test Bridge', port, pin: '031-45-154' }, pluginCount: 1 });
    expect((s.bridge as Json).setupUri).toMatch(/^X-HM:\/\/[0-9A-Z]+$/);
  });

  it("lists Homebridge's accessories read over HAP, with services and characteristics", async () => {
    const res = await server.request('GET', '/v1/os/accessory-hub/accessories', { token });
    expect(res.status).toBe(200);
    const { accessories } = (await res.json()) as { accessories: Array<{ aid: number; name: string | null; services: Array<{ characteristics: Array<{ type: string; value?: unknown }> }> }> };
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
