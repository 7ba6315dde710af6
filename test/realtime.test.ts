import net from 'node:net';
import { io as connect, type Socket } from 'socket.io-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './support/server.js';
import { SseClient } from './support/sse-client.js';
import { TestDriver, eventually } from './support/ws-driver.js';
import { startItachEmulator } from './support/itach-emulator.js';

let server: TestServer;
const closers: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await server?.close();
});

async function streamToken(token: string) {
  return ((await (await server.request('POST', '/v1/os/auth/stream-token', { token })).json()) as { accessToken: string }).accessToken;
}

async function driverWithLamp(s: TestServer, token: string) {
  const driver = await TestDriver.register(`${s.url.replace('http', 'ws')}/driver`, 'acme.rt');
  closers.push(() => driver.close());
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Lamp', state: { on: false } } });
  const id = await eventually(async () => {
    const { devices } = (await (await s.request('GET', '/v1/os/devices', { token })).json()) as { devices: Array<{ id: string }> };
    return devices[0]?.id;
  });
  return { driver, id };
}

function socket(namespace: string, auth: Record<string, unknown> = {}, query: Record<string, string> = {}): Socket {
  const s = connect(`${server.url}${namespace}`, { transports: ['websocket'], auth, query, reconnection: false, forceNew: true });
  closers.push(() => {
    s.disconnect();
  });
  return s;
}

function once<T>(s: Socket, event: string, timeoutMs = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} within ${timeoutMs} ms`)), timeoutMs);
    s.once(event, (payload: T) => {
      clearTimeout(timer);
      resolve(payload);
    });
  });
}

describe('state SSE stream', () => {
  it('sends ready, snapshot, then state events, with the right headers, under every base', async () => {
    server = await startServer();
    const token = await server.login();
    const { driver, id } = await driverWithLamp(server, token);
    for (const base of ['/app/os', '/api/os', '/v1/os']) {
      const sse = await SseClient.open(`${server.url}${base}/state/stream?accessToken=${await streamToken(token)}`);
      closers.push(() => sse.close());
      expect(sse.status).toBe(200);
      expect(sse.headers?.get('content-type')).toMatch(/^text\/event-stream/);
      expect(sse.headers?.get('cache-control')).toMatch(/no-cache/);
      expect(sse.headers?.get('x-accel-buffering')).toBe('no');
      await sse.next((e) => e.event === 'snapshot');
      expect(sse.events.slice(0, 2).map((e) => e.event)).toEqual(['ready', 'snapshot']);
      expect(sse.events[1]!.data).toEqual({ [id]: { on: false } });
    }
    const sse = await SseClient.open(`${server.url}/v1/os/state/stream?accessToken=${token}`);
    closers.push(() => sse.close());
    await sse.next((e) => e.event === 'snapshot');
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { on: true } });
    const state = await sse.next((e) => e.event === 'state');
    expect(state.data).toEqual({ deviceId: id, state: { on: true } });
    expect(Number(state.id)).toBeGreaterThan(0);
  });

  it('refuses missing or bad tokens and heartbeats with ping', async () => {
    server = await startServer({ env: { SSE_PING_INTERVAL_MS: '100' } });
    const token = await server.login();
    expect((await SseClient.open(`${server.url}/v1/os/state/stream`)).status).toBe(401);
    expect((await SseClient.open(`${server.url}/v1/os/state/stream?accessToken=nope`)).status).toBe(401);
    const sse = await SseClient.open(`${server.url}/v1/os/state/stream?accessToken=${await streamToken(token)}`);
    closers.push(() => sse.close());
    await sse.next((e) => e.event === 'ping', 2000);
  });

  it('resumes from Last-Event-ID with the missed events instead of a snapshot', async () => {
    server = await startServer();
    const token = await server.login();
    const { driver } = await driverWithLamp(server, token);
    const first = await SseClient.open(`${server.url}/v1/os/state/stream?accessToken=${token}`);
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { level: 1 } });
    const seen = await first.next((e) => e.event === 'state');
    first.close();
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { level: 2 } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { level: 3 } });
    await eventually(() => server.app.hub.feed.lastSeq >= Number(seen.id) + 2);
    const resumed = await SseClient.open(`${server.url}/v1/os/state/stream?accessToken=${token}`, { 'last-event-id': seen.id! });
    closers.push(() => resumed.close());
    await resumed.next((e) => e.event === 'state' && (e.data as { state: { level: number } }).state.level === 3);
    expect(resumed.events.map((e) => e.event)).toEqual(['ready', 'state', 'state']);
  });

  it('drops a client that does not read, without holding back the others, and cleans up on disconnect', async () => {
    server = await startServer({ env: { SSE_MAX_BUFFER_BYTES: String(256 * 1024) } });
    const token = await server.login();
    const { driver } = await driverWithLamp(server, token);
    const port = Number(new URL(server.url).port);
    // A raw client that sends the request and never reads the answer.
    const stalled = net.connect(port, '127.0.0.1');
    closers.push(() => {
      stalled.destroy();
    });
    stalled.on('error', () => undefined);
    stalled.write(`GET /v1/os/state/stream?accessToken=${token} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    stalled.pause();
    const healthy = await SseClient.open(`${server.url}/v1/os/state/stream?accessToken=${token}`);
    closers.push(() => healthy.close());
    await healthy.next((e) => e.event === 'snapshot');
    // Far more than the kernel's socket buffers hold for the stalled client: 600 × 32 KiB.
    const big = 'x'.repeat(32 * 1024);
    // Sent in batches that the healthy client drains before the next, so only the stalled one lags.
    for (let batch = 0; batch < 60; batch++) {
      for (let i = batch * 10; i < batch * 10 + 10; i++) driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { i, big } });
      const last = batch * 10 + 9;
      await healthy.next((e) => e.event === 'state' && (e.data as { state: { i: number } }).state.i === last, 15_000);
    }
    expect(healthy.ended).toBe(false);
    // The slow client's subscription is gone; only the healthy one (and Socket.IO's) remain.
    healthy.close();
    await eventually(() => (server.app.hub.feed as unknown as { subscribers: Map<object, unknown> }).subscribers.size <= 1, 5000, 'subscriptions cleaned up');
  });
});

describe('Socket.IO namespaces', () => {
  it('refuse connections without a valid token in every namespace (remote-connect admits token-less pairing)', async () => {
    server = await startServer();
    const token = await server.login();
    for (const ns of ['/socket/device-state', '/socket/hub-protocol', '/socket/remote-connect', '/socket/designer', '/socket/device-ir-test']) {
      // A remote pairs before it holds a token (docs/remote.md); every other namespace needs one.
      if (ns === '/socket/remote-connect') await once(socket(ns), 'connect');
      else expect((await once<Error & { data?: { code: string } }>(socket(ns), 'connect_error')).data?.code, ns).toBe('AUTH_REQUIRED');
      const bad = await once<Error & { data?: { code: string } }>(socket(ns, { token: 'forged' }), 'connect_error');
      expect(bad.data?.code).toBe('INVALID_TOKEN');
      const good = socket(ns, { token });
      await once(good, 'connect');
      const viaQuery = socket(ns, {}, { accessToken: token });
      await once(viaQuery, 'connect');
    }
  });

  it('delivers one state change to SSE and Socket.IO clients alike, after the snapshot', async () => {
    server = await startServer();
    const token = await server.login();
    const { driver, id } = await driverWithLamp(server, token);
    const ds = socket('/socket/device-state', { token });
    const snapshot = await once<{ deviceId: string; state: unknown }>(ds, 'device:state:snapshot');
    expect(snapshot).toEqual({ deviceId: id, state: { on: false } });
    const sse = await SseClient.open(`${server.url}/v1/os/state/stream?accessToken=${token}`);
    closers.push(() => sse.close());
    await sse.next((e) => e.event === 'snapshot');
    const update = once<{ deviceId: string; state: unknown }>(ds, 'device:state:update');
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { on: true, level: 5 } });
    expect(await update).toEqual({ deviceId: id, state: { on: true, level: 5 } });
    expect((await sse.next((e) => e.event === 'state')).data).toEqual({ deviceId: id, state: { on: true, level: 5 } });
  });

  it('delivers a burst of changes to every client as separate events, in order, none lost', async () => {
    server = await startServer();
    const token = await server.login();
    const { driver, id } = await driverWithLamp(server, token);
    const ds = socket('/socket/device-state', { token });
    await once(ds, 'device:state:snapshot');
    const received: number[] = [];
    ds.on('device:state:update', (u: { deviceId: string; state: { n?: number } }) => {
      if (u.deviceId === id && typeof u.state.n === 'number') received.push(u.state.n);
    });
    const sse = await SseClient.open(`${server.url}/v1/os/state/stream?accessToken=${token}`);
    closers.push(() => sse.close());
    await sse.next((e) => e.event === 'snapshot');
    for (let n = 1; n <= 50; n++) driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { n } });
    const viaSse = () => sse.events.filter((e) => e.event === 'state').map((e) => (e.data as { state: { n: number } }).state.n);
    await eventually(() => viaSse().length >= 50);
    const expected = Array.from({ length: 50 }, (_, i) => i + 1);
    expect(viaSse()).toEqual(expected);
    await eventually(() => received.length >= 50);
    expect(received).toEqual(expected);
  });

  it('answers hub commands with hub:response and an ack, and broadcasts hub events', async () => {
    server = await startServer();
    const token = await server.login();
    const hp = socket('/socket/hub-protocol', { token });
    await once(hp, 'connect');
    const ack = await hp.emitWithAck('hub:command', { command: 'LIST_DEVICES', payload: {}, requestId: 'r1' });
    expect(ack).toMatchObject({ command: 'LIST_DEVICES', ok: true, requestId: 'r1', data: { devices: [] } });
    const response = once<{ ok: boolean; data: { error: { code: string } } }>(hp, 'hub:response');
    hp.emit('hub:command', { command: 'NOT_A_COMMAND', payload: {} });
    expect(await response).toMatchObject({ ok: false, data: { error: { code: 'UNKNOWN_COMMAND' } } });
    const invalid = await hp.emitWithAck('hub:command', { command: 'PROGRAM_RUN', payload: { id: 42 } });
    expect(invalid).toMatchObject({ ok: false, data: { error: { code: 'INVALID_PAYLOAD' } } });
    const missing = await hp.emitWithAck('hub:command', { command: 'PROGRAM_RUN', payload: { id: 'nope' } });
    expect(missing).toMatchObject({ ok: false, data: { error: { code: 'PROGRAM_NOT_FOUND' } } });

    const events: Array<{ type: string; data: { device?: { name: string } } }> = [];
    hp.on('hub:event', (e: (typeof events)[number]) => events.push(e));
    await driverWithLamp(server, token);
    const discovered = await eventually(() => events.find((e) => e.type === 'device.discovered'));
    expect(discovered.data.device?.name).toBe('Lamp');
    expect(events.map((e) => e.type)).toContain('driver.connected');
  });

  it('publishes designs and refreshes designer clients', async () => {
    server = await startServer();
    const token = await server.login();
    const designer = socket('/socket/designer', { token });
    expect(await once<{ profile: { id: string } }>(designer, 'designer:published')).toMatchObject({ profile: { id: 'classic' } });
    const published = once<{ profile: { id: string } }>(designer, 'designer:published');
    await server.request('POST', '/v1/os/design-profiles/select', { token, body: { profileId: 'midnight' } });
    expect(await published).toMatchObject({ profile: { id: 'midnight' } });
    const refresh = once<{ reason: string }>(designer, 'designer:refresh');
    await server.request('POST', '/v1/os/preferences/home', { token, body: { layout: 'list' } });
    expect(await refresh).toMatchObject({ reason: 'preferences' });
  });

  it('reports every IR transmission on the IR test namespace and sends test signals', async () => {
    const emulator = await startItachEmulator();
    closers.push(() => emulator.close());
    server = await startServer({ env: { IR_EXTENDER_PORT: String(emulator.port) } });
    const token = await server.login();
    const ir = socket('/socket/device-ir-test', { token });
    await once(ir, 'connect');
    const data = once<{ host: string; freqKhz: number; raw: number[]; line: string }>(ir, 'ir:data');
    const result = await ir.emitWithAck('ir:send', { extenderIp: '127.0.0.1', freq_khz: 38, raw: [9000, 4500] });
    expect(result).toMatchObject({ ok: true, data: { line: expect.stringMatching(/^sendir,1:1,\d+,38000,1,1,342,171$/) } });
    expect(await data).toMatchObject({ host: '127.0.0.1', freqKhz: 38, raw: [9000, 4500] });
    const bad = await ir.emitWithAck('ir:send', { extenderIp: '127.0.0.1', freq_khz: 5, raw: [1] });
    expect(bad).toMatchObject({ ok: false, error: { code: 'INVALID_IR_COMMAND' } });
  });
});

describe('live connections follow their credential', () => {
  async function secondAdmin(adminToken: string): Promise<{ id: string; token: string }> {
    const created = await server.request('POST', '/admin/users', { token: adminToken, body: { username: 'ops', password: 'ops-password', role: 'admin' } });
    expect(created.status).toBe(201);
    const login = await server.request('POST', '/v1/os/auth/login', { body: { username: 'ops', password: 'ops-password' } });
    return { id: ((await created.json()) as { id: string }).id, token: ((await login.json()) as { accessToken: string }).accessToken };
  }

  it('closes the sockets and streams of an account that is disabled, and of a token that logs out', async () => {
    server = await startServer();
    const admin = await server.login();
    const ops = await secondAdmin(admin);
    const hubSocket = socket('/socket/hub-protocol', { token: ops.token });
    await once(hubSocket, 'connect');
    const sse = await SseClient.open(`${server.url}/v1/os/state/stream?accessToken=${await streamToken(ops.token)}`);
    const bystander = socket('/socket/device-state', { token: admin });
    await once(bystander, 'connect');

    const dropped = once<string>(hubSocket, 'disconnect');
    expect((await server.request('POST', `/admin/users/${ops.id}`, { token: admin, body: { disabled: true } })).status).toBe(200);
    expect(await dropped).toBe('io server disconnect');
    await eventually(() => sse.ended, 2000, 'state stream ended');
    expect(bystander.connected).toBe(true);

    const own = socket('/socket/hub-protocol', { token: admin });
    await once(own, 'connect');
    const loggedOut = once<string>(own, 'disconnect');
    expect((await server.request('POST', '/v1/os/auth/logout', { token: admin })).status).toBe(200);
    expect(await loggedOut).toBe('io server disconnect');
    await eventually(() => !bystander.connected, 2000, 'the same token on another namespace is closed too');
  });
});
