import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseClient } from './support/sse-client.js';
import { startServer, type TestServer } from './support/server.js';
import { eventually, TestDriver } from './support/ws-driver.js';

let dev: TestServer;
let token: string;
let driver: TestDriver;

type Json = Record<string, unknown>;

beforeAll(async () => {
  dev = await startServer({ env: { NODE_ENV: 'development', MPD_PASSWORD: 'mpd-secret' } });
  token = await dev.login();
  driver = await TestDriver.register(`${dev.url.replace('http', 'ws')}/driver`, 'acme.debug');
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Debug lamp', state: { on: false } } });
  await eventually(async () => ((await (await dev.request('GET', '/app/os/devices', { token })).json()) as { devices: unknown[] }).devices.length > 0);
});
afterAll(async () => {
  driver?.close();
  await dev?.close();
});

describe('debug routes (NODE_ENV=development)', () => {
  it('tails every domain event live, filtered by prefix', async () => {
    const all = await SseClient.open(`${dev.url}/dev/events?accessToken=${token}`);
    const devices = await SseClient.open(`${dev.url}/dev/events?type=device.&accessToken=${token}`);
    expect([all.status, devices.status]).toEqual([200, 200]);
    await all.next((e) => e.event === 'ready');
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { on: true } });
    const changed = await devices.next((e) => e.event === 'device.state_changed');
    expect(changed.data).toMatchObject({ changed: { on: true } });
    await all.next((e) => e.event === 'device.state_changed');
    expect(devices.events.every((e) => e.event === 'ready' || e.event === 'ping' || e.event.startsWith('device.'))).toBe(true);
    all.close();
    devices.close();
    const bare = await SseClient.open(`${dev.url}/dev/events`);
    expect(bare.status).toBe(401);
  });

  it('dumps the state authority, the registry and the connected drivers', async () => {
    const res = await dev.request('GET', '/dev/state', { token });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { devices: Array<{ device: Json; state: Json }>; drivers: Json[] };
    expect(body.devices.find((d) => d.device.driverKey === 'acme.debug')).toMatchObject({ device: { name: 'Debug lamp', driverDeviceId: 'lamp' }, state: { online: true } });
    expect(body.drivers).toContainEqual(expect.objectContaining({ driverKey: 'acme.debug', transport: 'websocket', devices: 1 }));
  });

  it('injects a driver message as if the driver had sent it: same checks, same effects', async () => {
    const res = await dev.request('POST', '/dev/drivers/acme.debug/inject', { token, body: { message: { type: 'STATE_UPDATE', deviceId: 'lamp', state: { brightness: 42 } } } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, instanceId: 'acme.debug-1' });
    const devices = (await (await dev.request('GET', '/app/os/devices', { token })).json()) as { devices: Array<{ id: string; driverKey: string }> };
    const id = devices.devices.find((d) => d.driverKey === 'acme.debug')!.id;
    const snapshot = (await (await dev.request('GET', '/app/os/state/snapshot', { token })).json()) as { devices: Record<string, { state: Json }> };
    expect(snapshot.devices[id]?.state).toMatchObject({ on: true, brightness: 42 });

    const unknown = await dev.request('POST', '/dev/drivers/nobody/inject', { token, body: { message: { type: 'STATE_UPDATE', deviceId: 'x', state: {} } } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: Json }).error.code).toBe('DRIVER_INSTANCE_NOT_FOUND');
    const bad = await dev.request('POST', '/dev/drivers/acme.debug/inject', { token, body: { message: { type: 'STATE_UPDATE', deviceId: 'lamp' } } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: Json }).error).toMatchObject({ code: 'INVALID_MESSAGE', message: expect.stringMatching(/state/) });
    const strange = await dev.request('POST', '/dev/drivers/acme.debug/inject', { token, body: { message: { type: 'NOT_A_TYPE' } } });
    expect(((await strange.json()) as { error: Json }).error.code).toBe('UNKNOWN_TYPE');
  });

  it('shows the routes and the configuration with every secret masked', async () => {
    const routes = (await (await dev.request('GET', '/dev/routes')).json()) as { routes: Array<{ url: string }> };
    expect(routes.routes.some((r) => r.url === '/dev/events')).toBe(true);
    const config = (await (await dev.request('GET', '/dev/config', { token })).json()) as Json;
    expect(config).toMatchObject({ adminPassword: '<set>', isDevelopment: true });
    expect(JSON.stringify(config)).not.toContain('mpd-secret');
    expect(JSON.stringify(config)).not.toContain('test-password-1');
    expect((await dev.request('GET', '/dev/config')).status).toBe(401);
  });
});

describe('debug routes in production', () => {
  it('answers 404 on every /dev path', async () => {
    const prod = await startServer();
    try {
      const t = await prod.login();
      for (const [method, p] of [
        ['GET', '/dev/events'],
        ['GET', '/dev/state'],
        ['GET', '/dev/routes'],
        ['GET', '/dev/config'],
        ['POST', '/dev/drivers/x/inject'],
        ['GET', '/dev/anything/else'],
      ] as const) {
        const res = await prod.request(method, p, { token: t, ...(method === 'POST' ? { body: {} } : {}) });
        expect(res.status, p).toBe(404);
        expect(((await res.json()) as { error: Json }).error.code, p).toBe('ROUTE_NOT_FOUND');
      }
    } finally {
      await prod.close();
    }
  });
});
