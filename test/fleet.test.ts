import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';

/**
 * Two hubs on loopback, linked through the bridge: A (the garage, with a driver) and B (the
 * house), each with its own data folder.
 */
const FAST = { BRIDGE_POLL_INTERVAL_MS: '150', BRIDGE_MAX_BACKOFF_MS: '300', BRIDGE_REQUEST_TIMEOUT_MS: '1500', ACTION_TIMEOUT_MS: '1500' };
const dataA = tempDataDir();
let a: TestServer;
let b: TestServer;
let tokenA: string;
let tokenB: string;
let driver: TestDriver;
let bridgeToken: string;
let hubA: string;
let lampId: string;
const actions: Message[] = [];

type Json = Record<string, unknown>;
const json = async (res: Response) => (await res.json()) as Json;

async function connectDriver(server: TestServer): Promise<TestDriver> {
  const d = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'garage.lights');
  d.serveActions((action) => {
    actions.push(action);
    if (action.command === 'explode') throw new Error('the lamp refuses');
    return { did: action.command };
  });
  d.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Garage lamp', commands: ['turn_on', 'turn_off', 'explode'], state: { on: false } } });
  return d;
}

async function fleetOfB() {
  return (await json(await b.request('GET', '/v1/os/home-fleet-devices', { token: tokenB }))) as { hubId: string; devices: Array<Json & { fleetDeviceId: string; state: Json }> };
}

beforeAll(async () => {
  a = await startServer({ dataDir: dataA, env: FAST, timers: undefined });
  b = await startServer({ env: FAST });
  tokenA = await a.login();
  tokenB = await b.login();
  driver = await connectDriver(a);
  lampId = await eventually(async () => {
    const devices = (await json(await a.request('GET', '/v1/os/devices', { token: tokenA }))).devices as Array<{ id: string; name: string }>;
    return devices.find((d) => d.name === 'Garage lamp')?.id;
  });
}, 60_000);
afterAll(async () => {
  driver?.close();
  await b?.close();
  await a?.close();
});

describe('two hubs linked through the bridge', () => {
  it('links B to A with a bridge token A issued, checked against A at once', async () => {
    const issued = await a.request('POST', '/v1/os/bridge/token', { token: tokenA, body: { expiresInDays: 30 } });
    expect(issued.status).toBe(201);
    const body = (await issued.json()) as { token: string; scope: string; tokenType: string; hubId: string; id: string; expiresIn: number };
    expect(body).toMatchObject({ scope: 'bridge', tokenType: 'Bearer', expiresIn: 30 * 86_400 });
    bridgeToken = body.token;
    hubA = body.hubId;

    expect(await json(await b.request('GET', '/v1/os/bridge/link', { token: tokenB }))).toMatchObject({ state: 'unlinked', peerUrl: null });
    const bad = await b.request('POST', '/v1/os/bridge/link/save', { token: tokenB, body: { peerUrl: a.url, token: 'not-a-token' } });
    expect(await json(bad)).toMatchObject({ state: 'error', lastError: expect.stringMatching(/INVALID_TOKEN/) });
    const saved = await b.request('POST', '/v1/os/bridge/link/save', { token: tokenB, body: { peerUrl: a.url, token: bridgeToken } });
    expect(saved.status).toBe(200);
    expect(await saved.json()).toMatchObject({ state: 'linked', peerUrl: a.url, peerHubId: hubA, lastError: null, lastContactAt: expect.any(Number) });
  });

  it("lists A's device on B as a fleet device with a stable fleet id, commands it across the bridge, and sees its state", async () => {
    const fleetId = `${hubA}:${lampId}`;
    const fleet = await fleetOfB();
    expect(fleet.devices.find((d) => d.fleetDeviceId === fleetId)).toMatchObject({ name: 'Garage lamp', origin: 'peer', hubId: hubA, online: true, state: { on: false }, releases: [] });
    expect(fleet.devices.filter((d) => d.origin === 'local')).toEqual([]);

    const sent = await b.request('POST', '/v1/os/integration/home/device/command', { token: tokenB, body: { fleetDeviceId: fleetId, command: 'turn_on' } });
    expect(sent.status).toBe(200);
    expect(await sent.json()).toMatchObject({ ok: true, fleetDeviceId: fleetId, hubId: hubA, result: { did: 'turn_on' } });
    expect(actions.at(-1)).toMatchObject({ type: 'ACTION', command: 'turn_on', deviceId: 'lamp' });

    const refused = await b.request('POST', '/v1/os/integration/home/device/command', { token: tokenB, body: { fleetDeviceId: fleetId, command: 'explode' } });
    expect(refused.status).toBe(502);
    expect(((await refused.json()) as { error: Json }).error).toMatchObject({ code: 'BRIDGE_PEER_REFUSED', message: expect.stringMatching(/the lamp refuses/) });

    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { on: true } });
    await eventually(async () => ((await fleetOfB()).devices.find((d) => d.fleetDeviceId === fleetId)?.state as Json | undefined)?.on === true, 5000, 'state across the bridge');
  });

  it('accepts on each fleet route exactly the credential the spec gives it', async () => {
    const appLogin = await b.request('POST', '/admin/users', { token: tokenB, body: { username: 'dora', password: 'dora-password' } });
    expect(appLogin.status).toBe(201);
    const appToken = ((await json(await b.request('POST', '/app/auth/login', { body: { username: 'dora', password: 'dora-password' } }))).data as Json).token as string;
    const streamToken = ((await json(await b.request('POST', '/v1/os/auth/stream-token', { token: tokenB }))) as { accessToken: string }).accessToken;
    const bBridge = ((await json(await b.request('POST', '/v1/os/bridge/token', { token: tokenB, body: {} }))) as { token: string }).token;
    const routes: Array<[method: string, path: string, scheme: 'osApiAuth' | 'osBridgeAuth' | 'appAuth']> = [
      ['GET', '/home-fleet-devices', 'osApiAuth'],
      ['POST', '/home-fleet-devices/releases/k/status', 'osApiAuth'],
      ['POST', '/device/home/category', 'appAuth'],
      ['POST', '/integration/home/device/command', 'appAuth'],
      ['GET', '/bridge/link', 'osApiAuth'],
      ['POST', '/bridge/link/save', 'osApiAuth'],
      ['POST', '/bridge/token', 'osApiAuth'],
      ['GET', '/bridge/health', 'osBridgeAuth'],
      ['GET', '/bridge/capabilities', 'osBridgeAuth'],
      ['GET', '/bridge/devices', 'osBridgeAuth'],
      ['GET', '/bridge/devices/state', 'osBridgeAuth'],
      ['POST', '/bridge/devices/register', 'osBridgeAuth'],
      ['POST', '/bridge/devices/update', 'osBridgeAuth'],
      ['POST', '/bridge/devices/x:y/command', 'osBridgeAuth'],
    ];
    const credentials = { osApiAuth: tokenB, osBridgeAuth: bBridge, appAuth: appToken } as const;
    for (const [method, path, scheme] of routes) {
      const label = `${method} ${path}`;
      const call = (token?: string) => b.request(method, `/v1/os${path}`, { ...(token ? { token } : {}), ...(method === 'POST' ? { body: {} } : {}) });
      expect((await call()).status, `${label} without a credential`).toBe(401);
      expect((await call(streamToken)).status, `${label} with a stream token`).toBe(401);
      for (const [other, token] of Object.entries(credentials)) {
        const res = await call(token);
        // The admin's OS API token also signs in to the App API (CONTRACT), so it passes appAuth.
        if (other === scheme || (scheme === 'appAuth' && other === 'osApiAuth')) expect(res.status, `${label} with ${other}`).not.toBeOneOf([401, 403]);
        else expect(res.status, `${label} with ${other}`).toBe(403);
        await res.body?.cancel();
      }
    }
    // A revoked bridge token is refused at once.
    const issued = (await json(await b.request('POST', '/v1/os/bridge/token', { token: tokenB, body: {} }))) as { token: string; id: string };
    expect((await b.request('GET', '/v1/os/bridge/health', { token: issued.token })).status).toBe(200);
    expect((await b.request('POST', '/v1/os/bridge/token/revoke', { token: tokenB, body: { id: issued.id } })).status).toBe(200);
    expect((await b.request('GET', '/v1/os/bridge/health', { token: issued.token })).status).toBe(401);
  });

  it("moves a device's release status through validated transitions, refusing an illegal one with the current status", async () => {
    const fleetId = `${hubA}:${lampId}`;
    const set = (status: string, error?: string) =>
      b.request('POST', '/v1/os/home-fleet-devices/releases/garage.lights/status', { token: tokenB, body: { fleetDeviceId: fleetId, status, ...(error ? { error } : {}) } });
    expect((await set('installing')).status).toBe(409);
    for (const status of ['pending', 'installing', 'failed', 'pending', 'installing', 'installed']) expect((await set(status, status === 'failed' ? 'disk full' : undefined)).status, status).toBe(200);
    const illegal = await set('installing');
    expect(illegal.status).toBe(409);
    expect(((await illegal.json()) as { error: Json }).error).toMatchObject({ code: 'FLEET_STATUS_TRANSITION', details: { current: 'installed', allowed: ['rolled_back', 'pending'] } });
    const device = (await fleetOfB()).devices.find((d) => d.fleetDeviceId === fleetId)!;
    expect(device.releases).toMatchObject([{ key: 'garage.lights', status: 'installed', error: null, history: expect.arrayContaining([expect.objectContaining({ status: 'failed', error: 'disk full' })]) }]);
  });

  it('lists the devices another hub announces with its bridge token, and their updates', async () => {
    const token = ((await json(await a.request('POST', '/v1/os/bridge/token', { token: tokenA, body: {} }))) as { token: string }).token;
    const registered = await a.request('POST', '/v1/os/bridge/devices/register', {
      token,
      body: { hubId: 'cabin', devices: [{ deviceId: 'heater', name: 'Cabin heater', category: 'climate', commands: [{ name: 'turn_on' }], state: { temperature: 12 } }] },
    });
    expect(registered.status).toBe(200);
    expect(await registered.json()).toEqual({ registered: [{ fleetDeviceId: 'cabin:heater', name: 'Cabin heater' }] });
    expect((await a.request('POST', '/v1/os/bridge/devices/update', { token, body: { fleetDeviceId: 'cabin:heater', state: { temperature: 18 }, online: false } })).status).toBe(200);
    const fleet = (await json(await a.request('GET', '/v1/os/home-fleet-devices', { token: tokenA }))) as { devices: Array<Json> };
    expect(fleet.devices.find((d) => d.fleetDeviceId === 'cabin:heater')).toMatchObject({ origin: 'registered', hubId: 'cabin', name: 'Cabin heater', category: 'climate', online: false, state: { temperature: 18 } });
    expect((await a.request('POST', '/v1/os/bridge/devices/update', { token, body: { fleetDeviceId: 'cabin:nothing', online: true } })).status).toBe(404);
  });

  it('sets a device category with appAuth', async () => {
    const res = await a.request('POST', '/v1/os/device/home/category', { token: tokenA, body: { deviceId: lampId, category: 'light' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: lampId, category: 'light' });
  });

  it('reports the link lost when A stops (commands 502/504), retries with back-off, and recovers when A is back', async () => {
    const fleetId = `${hubA}:${lampId}`;
    const port = new URL(a.url).port;
    driver.close();
    await a.close();
    const lost = await eventually(async () => {
      const link = await json(await b.request('GET', '/v1/os/bridge/link', { token: tokenB }));
      return link.state === 'error' ? link : undefined;
    }, 5000, 'link lost');
    expect(lost).toMatchObject({ state: 'error', lastError: expect.any(String), failures: expect.any(Number), nextAttemptAt: expect.any(Number) });
    const failed = await b.request('POST', '/v1/os/integration/home/device/command', { token: tokenB, body: { fleetDeviceId: fleetId, command: 'turn_off' } });
    expect([502, 504]).toContain(failed.status);
    expect(((await failed.json()) as { error: Json }).error.code).toMatch(/^BRIDGE_(UNREACHABLE|TIMEOUT)$/);
    expect((await fleetOfB()).devices.find((d) => d.fleetDeviceId === fleetId)?.online).toBe(false);

    a = await startServer({ dataDir: dataA, env: { ...FAST, PORT: port } });
    tokenA = await a.login();
    driver = await connectDriver(a);
    await eventually(async () => (await json(await b.request('GET', '/v1/os/bridge/link', { token: tokenB }))).state === 'linked', 10_000, 'link back');
    await eventually(async () => (await fleetOfB()).devices.find((d) => d.fleetDeviceId === fleetId)?.online === true, 5000, 'device back');
    const again = await b.request('POST', '/v1/os/integration/home/device/command', { token: tokenB, body: { fleetDeviceId: fleetId, command: 'turn_off' } });
    expect(again.status).toBe(200);
  });
});
