import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { ManualClock } from '../src/platform/clock.js';
import { HttpListener } from '../src/surfaces/http/listener.js';
import { ADMIN, startServer, tempDataDir, type TestServer } from './support/server.js';
import { TestDriver, eventually, type Message } from './support/ws-driver.js';

/**
 * The door of the driver WebSocket (docs/drivers.md#authentication): DRIVER_AUTH=token with
 * driver tokens issued per driverKey, and DRIVER_AUTH=open's refusal to hand a connected
 * driverKey to another address. "Another address" is another loopback address: Linux routes all
 * of 127.0.0.0/8 to lo, and the `ws` client binds its end with `localAddress`.
 */

const FIXTURES = path.resolve(import.meta.dirname, 'fixtures/drivers');
const OTHER_HOST = '127.0.0.2';

const drivers: TestDriver[] = [];
afterEach(() => {
  for (const d of drivers.splice(0)) d.close();
});

const wsUrl = (s: TestServer) => `${s.url.replace('http', 'ws')}/driver`;

/** A DRIVERS_DIR with the js-lamp fixture (a local driver the hub launches). */
function driversDirWithLamp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-drivers-'));
  fs.cpSync(path.join(FIXTURES, 'js-lamp'), path.join(dir, 'js-lamp'), { recursive: true });
  return dir;
}

interface Attempt {
  driver: TestDriver;
  status: Message;
}

/** Connects (from `localAddress`, with upgrade `headers`) and sends driver.register; resolves with the first DRIVER_STATUS. */
async function attempt(
  s: TestServer,
  registration: { driverKey: string; instanceId?: string; token?: string },
  options: { localAddress?: string; headers?: Record<string, string> } = {},
): Promise<Attempt> {
  const driver = await TestDriver.connect(wsUrl(s), options);
  drivers.push(driver);
  const status = driver.next((m) => m.type === 'DRIVER_STATUS');
  driver.send({ method: 'driver.register', protocolVersion: 1, instanceId: `${registration.driverKey}-1`, ...registration });
  return { driver, status: await status };
}

async function expectRefused(a: Attempt, code: string, closeCode: number): Promise<{ code: number; reason: string }> {
  expect(a.status).toMatchObject({ type: 'DRIVER_STATUS', status: 'error', code });
  expect(typeof a.status.message).toBe('string');
  const closed = await a.driver.whenClosed();
  expect(closed.code).toBe(closeCode);
  return closed;
}

type TokenRecord = { id: string; driverKey: string; label: string | null; createdBy: string | null; createdAt: number; connected: number };
type Device = { id: string; driverKey: string; driverDeviceId: string; online: boolean };

describe('DRIVER_AUTH=token', () => {
  let server: TestServer;
  let admin: string;
  let driversDir: string;

  beforeAll(async () => {
    driversDir = driversDirWithLamp();
    server = await startServer({ env: { DRIVER_AUTH: 'token', DRIVERS_DIR: driversDir } });
    admin = await server.login();
  });
  afterAll(async () => {
    await server?.close();
    fs.rmSync(driversDir, { recursive: true, force: true });
  });

  async function issue(driverKey: string, label?: string): Promise<TokenRecord & { token: string }> {
    const res = await server.request('POST', '/admin/driver-tokens', { token: admin, body: { driverKey, ...(label ? { label } : {}) } });
    expect(res.status).toBe(201);
    return (await res.json()) as TokenRecord & { token: string };
  }

  it('issues a token once, lists tokens without it, and revokes by id (admin REST)', async () => {
    const created = await issue('acme.blinds', 'garage bridge');
    expect(created).toMatchObject({ driverKey: 'acme.blinds', label: 'garage bridge', createdBy: 'admin', connected: 0 });
    expect(created.token).toMatch(/^[A-Za-z0-9_-]{40,}$/);

    const listed = await server.request('GET', '/admin/driver-tokens', { token: admin });
    expect(listed.status).toBe(200);
    const text = await listed.text();
    const { tokens } = JSON.parse(text) as { tokens: Array<Record<string, unknown>> };
    const entry = tokens.find((t) => t.id === created.id);
    expect(entry).toEqual({ id: created.id, driverKey: 'acme.blinds', label: 'garage bridge', createdBy: 'admin', createdAt: created.createdAt, connected: 0 });
    // Never the token, nor its hash.
    expect(text).not.toContain(created.token);
    expect(text).not.toContain('tokenHash');

    const revoked = await server.request('DELETE', `/admin/driver-tokens/${created.id}`, { token: admin });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ id: created.id, driverKey: 'acme.blinds', disconnected: 0 });
    const again = await server.request('DELETE', `/admin/driver-tokens/${created.id}`, { token: admin });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('DRIVER_TOKEN_NOT_FOUND');
    const after = (await (await server.request('GET', '/admin/driver-tokens', { token: admin })).json()) as { tokens: TokenRecord[] };
    expect(after.tokens.some((t) => t.id === created.id)).toBe(false);

    // Bad input is refused before anything is issued; without an admin credential, nothing.
    for (const body of [{}, { driverKey: 'has space' }, { driverKey: 'ok', extra: 1 }, { driverKey: 'ok', label: '' }]) {
      const bad = await server.request('POST', '/admin/driver-tokens', { token: admin, body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    expect((await server.request('GET', '/admin/driver-tokens')).status).toBe(401);
    expect((await server.request('POST', '/admin/driver-tokens', { body: { driverKey: 'acme.blinds' } })).status).toBe(401);
  });

  it('refuses a registration without a token, with a wrong token, and with the token of another driverKey', async () => {
    const other = await issue('acme.other');
    await issue('acme.lights');

    const none = await attempt(server, { driverKey: 'acme.lights' });
    const closed = await expectRefused(none, 'DRIVER_TOKEN_REQUIRED', 1008);
    expect(closed.reason).toBe('DRIVER_TOKEN_REQUIRED');

    const wrong = await attempt(server, { driverKey: 'acme.lights', token: 'not-a-token-this-hub-issued' });
    await expectRefused(wrong, 'DRIVER_TOKEN_INVALID', 1008);
    expect(wrong.status.message).toContain('acme.lights');

    const foreign = await attempt(server, { driverKey: 'acme.lights', token: other.token });
    await expectRefused(foreign, 'DRIVER_TOKEN_INVALID', 1008);

    // A wrong bearer on the upgrade is refused alike.
    const wrongBearer = await attempt(server, { driverKey: 'acme.lights' }, { headers: { authorization: 'Bearer nope' } });
    await expectRefused(wrongBearer, 'DRIVER_TOKEN_INVALID', 1008);

    const { connected } = (await (await server.request('GET', '/admin/drivers', { token: admin })).json()) as { connected: Array<{ driverKey: string }> };
    expect(connected.some((c) => c.driverKey === 'acme.lights')).toBe(false);
  });

  it('accepts the token in driver.register, and as a bearer on the upgrade request', async () => {
    const issued = await issue('acme.sensors');

    const inMessage = await attempt(server, { driverKey: 'acme.sensors', instanceId: 'sensors-a', token: issued.token });
    expect(inMessage.status).toMatchObject({ status: 'registered' });
    const asBearer = await attempt(server, { driverKey: 'acme.sensors', instanceId: 'sensors-b' }, { headers: { authorization: `Bearer ${issued.token}` } });
    expect(asBearer.status).toMatchObject({ status: 'registered' });

    // The registered driver works as any other.
    inMessage.driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'temp-1', name: 'Hall temperature' } });
    await eventually(async () => {
      const { devices } = (await (await server.request('GET', '/v1/os/devices', { token: admin })).json()) as { devices: Device[] };
      return devices.find((d) => d.driverDeviceId === 'temp-1' && d.online);
    });

    const { connected } = (await (await server.request('GET', '/admin/drivers', { token: admin })).json()) as { connected: Array<{ instanceId: string; tokenId?: string; address?: string }> };
    expect(connected.filter((c) => c.instanceId.startsWith('sensors-'))).toEqual(
      expect.arrayContaining([expect.objectContaining({ instanceId: 'sensors-a', tokenId: issued.id, address: '127.0.0.1' }), expect.objectContaining({ instanceId: 'sensors-b', tokenId: issued.id })]),
    );
    const { tokens } = (await (await server.request('GET', '/admin/driver-tokens', { token: admin })).json()) as { tokens: TokenRecord[] };
    expect(tokens.find((t) => t.id === issued.id)?.connected).toBe(2);
  });

  it('refuses a revoked token, and closes the instances that registered with it', async () => {
    const issued = await issue('acme.locks');
    const live = await attempt(server, { driverKey: 'acme.locks', token: issued.token });
    expect(live.status).toMatchObject({ status: 'registered' });

    const revoked = await server.request('DELETE', `/admin/driver-tokens/${issued.id}`, { token: admin });
    expect(await revoked.json()).toMatchObject({ id: issued.id, disconnected: 1 });
    expect(await live.driver.next((m) => m.type === 'DRIVER_STATUS')).toMatchObject({ status: 'error', code: 'DRIVER_TOKEN_REVOKED' });
    expect((await live.driver.whenClosed()).code).toBe(1008);

    const retry = await attempt(server, { driverKey: 'acme.locks', token: issued.token });
    await expectRefused(retry, 'DRIVER_TOKEN_INVALID', 1008);
  });

  it('lets a valid token replace a live instance connected from another address', async () => {
    const issued = await issue('acme.garage');
    const first = await attempt(server, { driverKey: 'acme.garage', instanceId: 'garage-1', token: issued.token });
    expect(first.status).toMatchObject({ status: 'registered' });
    const second = await attempt(server, { driverKey: 'acme.garage', instanceId: 'garage-1', token: issued.token }, { localAddress: OTHER_HOST });
    expect(second.status).toMatchObject({ status: 'registered' });
    expect((await first.driver.whenClosed()).code).toBe(4001);
  });

  it('leaves local drivers the hub launches alone (they present no token)', async () => {
    const lamp = await eventually(async () => {
      const { devices } = (await (await server.request('GET', '/v1/os/devices', { token: admin })).json()) as { devices: Device[] };
      return devices.find((d) => d.driverKey === 'js-lamp' && d.online);
    }, 10_000, 'local lamp online');
    const res = await server.request('POST', `/v1/os/devices/${lamp.id}/command`, { token: admin, body: { command: 'toggle' } });
    expect(res.status).toBe(200);
  });

  /** A panel form posted as a browser would (Accept: text/html), its 303 not followed; the `done` flash of its redirect. */
  async function postForm(url: string, fields: Record<string, string>): Promise<string | null> {
    const res = await fetch(server.url + url, {
      method: 'POST',
      redirect: 'manual',
      headers: { authorization: `Bearer ${admin}`, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    expect(res.status).toBe(303);
    return new URL(res.headers.get('location')!, server.url).searchParams.get('done');
  }

  it('shows, issues (once) and revokes tokens on the admin panel', async () => {
    const page = await server.request('GET', '/admin/panel/drivers', { token: admin, headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('DRIVER_AUTH=token');

    // The token is on the page the form answers with (never in a redirect's URL).
    const created = await fetch(`${server.url}/admin/panel/driver-tokens/create`, {
      method: 'POST',
      redirect: 'manual',
      headers: { authorization: `Bearer ${admin}`, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ driverKey: 'acme.panel', label: 'from the panel' }).toString(),
    });
    expect(created.status).toBe(200);
    expect(created.headers.get('location')).toBeNull();
    expect(created.headers.get('cache-control')).toBe('no-store');
    const token = /<pre id="secret-value"[^>]*>([^<]+)<\/pre>/.exec(await created.text())?.[1];
    expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/);

    const listed = await (await server.request('GET', '/admin/panel/drivers', { token: admin, headers: { accept: 'text/html' } })).text();
    const id = /data-driver-token="([^"]+)"><td>acme\.panel<\/td><td>from the panel<\/td>/.exec(listed)?.[1];
    expect(id).toBeTruthy();
    expect(listed).not.toContain(token!);

    const registered = await attempt(server, { driverKey: 'acme.panel', token: token! });
    expect(registered.status).toMatchObject({ status: 'registered' });

    expect(await postForm(`/admin/panel/driver-tokens/${id}/revoke`, {})).toContain('1 connected instance closed');
    expect((await registered.driver.whenClosed()).code).toBe(1008);
  });
});

describe('DRIVER_AUTH=open (the default)', () => {
  let server: TestServer;
  let admin: string;
  let driversDir: string;

  beforeAll(async () => {
    driversDir = driversDirWithLamp();
    server = await startServer({ env: { DRIVERS_DIR: driversDir } });
    admin = await server.login();
  });
  afterAll(async () => {
    await server?.close();
    fs.rmSync(driversDir, { recursive: true, force: true });
  });

  it('refuses to hand a connected driverKey to another address (4009); the same address replaces its instance', async () => {
    const owner = await attempt(server, { driverKey: 'acme.door', instanceId: 'door-1' });
    expect(owner.status).toMatchObject({ status: 'registered' });
    owner.driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'front', name: 'Front door' } });
    const door = await eventually(async () => {
      const { devices } = (await (await server.request('GET', '/v1/os/devices', { token: admin })).json()) as { devices: Device[] };
      return devices.find((d) => d.driverDeviceId === 'front' && d.online);
    });

    // Same instanceId, or another one: neither takes the driverKey from another address.
    for (const instanceId of ['door-1', 'door-2']) {
      const intruder = await attempt(server, { driverKey: 'acme.door', instanceId }, { localAddress: OTHER_HOST });
      const closed = await expectRefused(intruder, 'DRIVER_KEY_CONNECTED_ELSEWHERE', 4009);
      expect(closed.reason).toBe('driverKey acme.door is connected from another address');
    }
    // The owner kept its connection and its devices.
    expect(owner.driver.closed).toBeUndefined();
    owner.driver.serveActions((a) => ({ by: 'owner', command: a.command }));
    const res = await server.request('POST', `/v1/os/devices/${door.id}/command`, { token: admin, body: { command: 'unlock' } });
    expect(await res.json()).toEqual({ ok: true, result: { by: 'owner', command: 'unlock' } });

    // A reconnect from the same address replaces the instance, as before.
    const reconnect = await attempt(server, { driverKey: 'acme.door', instanceId: 'door-1' });
    expect(reconnect.status).toMatchObject({ status: 'registered' });
    expect((await owner.driver.whenClosed()).code).toBe(4001);

    // Once no connection holds the driverKey, another address may register it.
    reconnect.driver.close();
    await reconnect.driver.whenClosed();
    await eventually(async () => {
      const { connected } = (await (await server.request('GET', '/admin/drivers', { token: admin })).json()) as { connected: Array<{ driverKey: string }> };
      return !connected.some((c) => c.driverKey === 'acme.door');
    });
    const moved = await attempt(server, { driverKey: 'acme.door', instanceId: 'door-1' }, { localAddress: OTHER_HOST });
    expect(moved.status).toMatchObject({ status: 'registered' });
  });

  it('refuses a driverKey the hub runs itself, and ignores tokens', async () => {
    await eventually(async () => {
      const { connected } = (await (await server.request('GET', '/admin/drivers', { token: admin })).json()) as { connected: Array<{ driverKey: string }> };
      return connected.some((c) => c.driverKey === 'js-lamp');
    }, 10_000, 'local lamp connected');
    const squatter = await attempt(server, { driverKey: 'js-lamp', instanceId: 'lamp-squatter' });
    const closed = await expectRefused(squatter, 'DRIVER_KEY_RESERVED', 4009);
    expect(closed.reason).toBe('driverKey js-lamp is run by the hub itself');

    const withToken = await attempt(server, { driverKey: 'acme.any', token: 'whatever' }, { headers: { authorization: 'Bearer whatever' } });
    expect(withToken.status).toMatchObject({ status: 'registered' });
  });
});

describe('DRIVER_AUTH=token while the hub starts', () => {
  it('holds a registration (and what follows it) until the driver tokens are loaded', async () => {
    const dataDir = tempDataDir();
    const env = { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password, LOG_LEVEL: 'silent', ACCESSORY_HUB: 'off', DRIVER_AUTH: 'token' };
    const first = await startServer({ dataDir, env: { DRIVER_AUTH: 'token' } });
    const admin = await first.login();
    const { token } = (await (await first.request('POST', '/admin/driver-tokens', { token: admin, body: { driverKey: 'acme.early' } })).json()) as { token: string };
    await first.close();

    // As main.ts does: the port listens (and the driver WebSocket takes upgrades) before the hub has started.
    const listener = new HttpListener();
    const address = await listener.listen(0, '127.0.0.1');
    const app = await createApp(loadConfig(env), { listener, clock: new ManualClock(Date.now()), logger: pino({ level: 'silent' }) });
    try {
      const driver = await TestDriver.connect(`ws://127.0.0.1:${address.port}/driver`);
      drivers.push(driver);
      driver.send({ method: 'driver.register', driverKey: 'acme.early', instanceId: 'early-1', protocolVersion: 1, token });
      driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'early-device', name: 'Early' } });
      await new Promise((r) => setTimeout(r, 200));
      expect(driver.received).toEqual([]);

      await app.start();
      expect(await driver.next((m) => m.type === 'DRIVER_STATUS')).toMatchObject({ status: 'registered' });
      // The DEVICE_DISCOVERED sent right after the registration waited behind it, and applies now.
      await eventually(() => app.hub.devices.list().some((d) => d.driverDeviceId === 'early-device'), 3000, 'queued DEVICE_DISCOVERED applied');
    } finally {
      await app.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('DRIVER_AUTH configuration', () => {
  it('defaults to open, takes token, and refuses anything else naming the variable', () => {
    expect(loadConfig({}).driverAuth).toBe('open');
    expect(loadConfig({ DRIVER_AUTH: 'token' }).driverAuth).toBe('token');
    for (const value of ['tokens', 'TOKEN', 'closed']) {
      expect(() => loadConfig({ DRIVER_AUTH: value }), value).toThrow(ConfigError);
      expect(() => loadConfig({ DRIVER_AUTH: value })).toThrow(/^DRIVER_AUTH: expected one of open, token/);
    }
  });
});
