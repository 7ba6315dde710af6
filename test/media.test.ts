import fs from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect as connectSocket } from 'socket.io-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startRokuEcpEmulator, type RokuEcpEmulator, type RokuEmulatorOptions } from './support/roku-ecp-emulator.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { SseClient } from './support/sse-client.js';

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const OS = '/app/os';

interface Player {
  id: string;
  name: string;
  kind: string;
  deviceId: string | null;
  endpointId: string | null;
  capabilities: string[];
  online: boolean;
  status: string;
  statusSource: string;
  power: string | null;
  nowPlaying: { app: string | null; appId: string | null; playback: string | null } | null;
}

async function server(env: Record<string, string> = {}, dataDir?: string) {
  // Real timers, short polls: these tests watch a device over the network.
  const s = await startServer({ env: { ROKU_POLL_INTERVAL_MS: '150', ROKU_REQUEST_TIMEOUT_MS: '400', ...env }, ...(dataDir ? { dataDir } : {}) });
  closers.push(() => s.close());
  return { s, token: await s.login() };
}

async function emulator(options: RokuEmulatorOptions = {}) {
  const e = await startRokuEcpEmulator(options);
  closers.push(() => e.close());
  return e;
}

async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

async function players(s: TestServer, token: string): Promise<Player[]> {
  const res = await s.request('GET', `${OS}/media/players`, { token });
  expect(res.status).toBe(200);
  return (await json<{ players: Player[] }>(res)).players;
}

/** Polls the roster until `match` holds (bounded: 5 s). */
async function waitForPlayer(s: TestServer, token: string, match: (p: Player) => boolean): Promise<Player> {
  const until = Date.now() + 5000;
  for (let i = 0; i < 500 && Date.now() < until; i++) {
    const found = (await players(s, token)).find(match);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('player never matched');
}

async function addRoku(s: TestServer, token: string, e: RokuEcpEmulator) {
  const res = await s.request('POST', `${OS}/media-services/endpoints/discover`, { token, body: { timeoutMs: 100, probe: [{ kind: 'roku', host: e.host, port: e.port }] } });
  expect(res.status).toBe(200);
  const body = await json<{ found: Array<{ id: string; kind: string; name: string }>; new: string[] }>(res);
  const id = `roku:${e.serialNumber}`;
  expect(body.found.map((f) => f.id)).toContain(id);
  return waitForPlayer(s, token, (p) => p.endpointId === id && p.online);
}

async function command(s: TestServer, token: string, id: string, cmd: string, params?: Record<string, unknown>) {
  return s.request('POST', `${OS}/media/players/${encodeURIComponent(id)}/command`, { token, body: { command: cmd, ...(params ? { params } : {}) } });
}

describe('Roku, built in', () => {
  it('a Roku added by address becomes a logical device and a player with the normalized commands it can do', async () => {
    const { s, token } = await server();
    const e = await emulator({ userDeviceName: 'Den TV', isTv: true });
    const player = await addRoku(s, token, e);
    expect(player).toMatchObject({ name: 'Den TV', kind: 'roku', statusSource: 'runtime', status: 'online', power: 'on' });
    expect(player.deviceId).toBe(player.id);
    expect(player.capabilities).toEqual(['play', 'pause', 'toggle', 'volume_step', 'mute', 'power_on', 'power_off', 'launch_app', 'select_source']);
    expect(player.nowPlaying?.app).toBe('Home');

    // The same device in the device routes, with the driver `roku`.
    const device = await json<{ driverKey: string; driverDeviceId: string; online: boolean; category: string }>(await s.request('GET', `${OS}/devices/${player.id}`, { token }));
    expect(device).toMatchObject({ driverKey: 'roku', driverDeviceId: `roku:${e.serialNumber}`, online: true, category: 'tv' });
    const apps = await json<{ apps: Array<{ id: string; name: string }> }>(await s.request('GET', `${OS}/devices/${player.id}/apps`, { token }));
    expect(apps.apps.map((a) => a.name)).toContain('Netflix');
    const icon = await s.request('GET', `${OS}/devices/${player.id}/apps/2285/icon`, { token });
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/jpeg');
    expect((await s.request('POST', `${OS}/devices/${player.id}/apps/837/launch`, { token })).status).toBe(200);
    expect(e.state.activeAppId).toBe('837');
    expect((await s.request('POST', `${OS}/devices/${player.id}/command`, { token, body: { command: 'home' } })).status).toBe(200);
    expect(e.state.keys).toContain('Home');
    // Every request carried the device's own address as Host.
    expect(e.requests.every((r) => r.host === `${e.host}:${e.port}`)).toBe(true);
  });

  it('maps normalized commands to ECP: volume steps, play/pause by the player state, launch with a deep link, inputs', async () => {
    const { s, token } = await server();
    const e = await emulator({ isTv: true });
    const { id } = await addRoku(s, token, e);

    let res = await command(s, token, id, 'volume_step', { delta: -3 });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ ok: true, command: 'volume_step', deviceCommand: 'volume_down', result: { presses: 3 } });
    expect(e.state.keys.filter((k) => k === 'VolumeDown')).toHaveLength(3);

    res = await command(s, token, id, 'launch_app', { appId: '12', contentId: 'tt123', mediaType: 'movie' });
    expect(res.status).toBe(200);
    expect(e.state.activeAppId).toBe('12');
    expect(e.state.launchParams).toMatchObject({ contentId: 'tt123', mediaType: 'movie' });
    expect(e.state.player).toBe('play');

    // Playing already: play sends nothing; pause presses Play once.
    const before = e.state.keys.length;
    expect(await json(await command(s, token, id, 'play'))).toMatchObject({ ok: true, result: { unchanged: true } });
    expect(e.state.keys.length).toBe(before);
    expect((await command(s, token, id, 'pause')).status).toBe(200);
    expect(e.state.player).toBe('pause');
    expect((await command(s, token, id, 'toggle')).status).toBe(200);
    expect(e.state.player).toBe('play');

    expect((await command(s, token, id, 'select_source', { source: 'hdmi1' })).status).toBe(200);
    expect(e.state.keys.at(-1)).toBe('InputHDMI1');
    res = await command(s, token, id, 'select_source', { source: 'scart' });
    expect(res.status).toBe(422);
    expect(await json(res)).toMatchObject({ error: { code: 'COMMAND_REJECTED' } });

    expect((await command(s, token, id, 'power_off')).status).toBe(200);
    await waitForPlayer(s, token, (p) => p.id === id && p.power === 'off');
  });

  it('refuses what a player lacks (422 listing what it has) and params that do not fit (400), changing nothing', async () => {
    const { s, token } = await server();
    const e = await emulator({ isTv: false });
    const { id, capabilities } = await addRoku(s, token, e);
    expect(capabilities).not.toContain('select_source');
    expect(capabilities).not.toContain('power_on');

    let res = await command(s, token, id, 'seek', { position: 30 });
    expect(res.status).toBe(422);
    const body = await json<{ error: { code: string; details: { supported: string[] } } }>(res);
    expect(body.error.code).toBe('COMMAND_NOT_SUPPORTED');
    expect(body.error.details.supported).toEqual(capabilities);

    res = await command(s, token, id, 'volume_step', { delta: 0 });
    expect(res.status).toBe(400);
    expect((await json<{ error: { code: string } }>(res)).error.code).toBe('INVALID_COMMAND_PARAMS');
    res = await command(s, token, id, 'volume_set', { volume: 50, extra: 1 });
    expect(res.status).toBe(400);
    res = await command(s, token, id, 'dance');
    expect(res.status).toBe(400);
    res = await command(s, token, 'roku:nope', 'play');
    expect(res.status).toBe(404);
    expect(e.state.keys).toEqual([]);
  });

  it('a dead Roku fails its own commands (502/504) and goes offline; the roster keeps answering at once', async () => {
    const { s, token } = await server();
    const alive = await emulator({ userDeviceName: 'Alive' });
    const doomed = await emulator({ userDeviceName: 'Doomed' });
    const good = await addRoku(s, token, alive);
    const bad = await addRoku(s, token, doomed);

    doomed.setMode('dead');
    let res = await command(s, token, bad.id, 'volume_step', { delta: 1 });
    expect([502, 504]).toContain(res.status);
    expect(['DEVICE_UNREACHABLE', 'DEVICE_TIMEOUT']).toContain((await json<{ error: { code: string } }>(res)).error.code);
    await waitForPlayer(s, token, (p) => p.id === bad.id && !p.online);

    const started = performance.now();
    const roster = await players(s, token);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(roster.find((p) => p.id === good.id)).toMatchObject({ online: true });
    expect(roster.find((p) => p.id === bad.id)).toMatchObject({ online: false, status: 'offline', statusSource: 'runtime' });
    res = await command(s, token, good.id, 'mute');
    expect(res.status).toBe(200);

    doomed.setMode('ok');
    await waitForPlayer(s, token, (p) => p.id === bad.id && p.online);
  });

  it('player state flows through the state authority to the SSE stream and /socket/device-state', async () => {
    const { s, token } = await server();
    const e = await emulator();
    const { id } = await addRoku(s, token, e);
    const sse = await SseClient.open(`${s.url}${OS}/state/stream`, { authorization: `Bearer ${token}` });
    closers.push(() => sse.close());
    await sse.next((ev) => ev.event === 'snapshot');
    const socket = connectSocket(`${s.url}/socket/device-state`, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true });
    closers.push(() => socket.disconnect());
    const viaSocket = new Promise<{ deviceId: string; state: Record<string, unknown> }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no device:state:update for the Roku')), 5000);
      socket.on('device:state:update', (update: { deviceId: string; state: Record<string, unknown> }) => {
        if (update.deviceId === id && update.state.app === 'YouTube') {
          clearTimeout(timer);
          resolve(update);
        }
      });
    });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    expect((await command(s, token, id, 'launch_app', { appId: '837' })).status).toBe(200);
    const event = await sse.next((ev) => ev.event === 'state' && (ev.data as { deviceId: string; state: { app?: string } }).deviceId === id && (ev.data as { state: { app?: string } }).state.app === 'YouTube');
    expect((event.data as { state: { app_id: string; playback: string } }).state).toMatchObject({ app_id: '837', playback: 'playing' });
    expect((await viaSocket).state).toMatchObject({ app: 'YouTube', app_id: '837' });
  });

  it('a probe of an address where no Roku answers is 502 and stores nothing', async () => {
    const { s, token } = await server();
    const e = await emulator();
    e.setMode('dead');
    const res = await s.request('POST', `${OS}/media-services/endpoints/discover`, { token, body: { timeoutMs: 100, probe: [{ kind: 'roku', host: e.host, port: e.port }] } });
    expect(res.status).toBe(502);
    expect((await json<{ error: { code: string } }>(res)).error.code).toBe('ENDPOINT_PROBE_FAILED');
    const list = await json<{ endpoints: unknown[] }>(await s.request('GET', `${OS}/media-services/endpoints`, { token }));
    expect(list.endpoints).toEqual([]);
    const bad = await s.request('POST', `${OS}/media-services/endpoints/discover`, { token, body: { probe: [{ kind: 'cast', host: '127.0.0.1' }] } });
    expect(bad.status).toBe(400);
  });
});

describe('endpoints', () => {
  it('a disabled endpoint leaves the roster; labels, enabled state and control survive a restart', async () => {
    const dataDir = tempDataDir();
    const e = await emulator({ userDeviceName: 'Bedroom' });
    const firstServer = await startServer({ env: { ROKU_POLL_INTERVAL_MS: '150', ROKU_REQUEST_TIMEOUT_MS: '400' }, dataDir });
    const first = { s: firstServer, token: await firstServer.login() };
    const { id, endpointId } = await addRoku(first.s, first.token, e);

    let res = await first.s.request('POST', `${OS}/media-services/endpoints/update`, { token: first.token, body: { id: endpointId, label: 'Kids TV' } });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ id: endpointId, label: 'Kids TV', enabled: true, deviceId: id });
    await waitForPlayer(first.s, first.token, (p) => p.id === id && p.name === 'Kids TV');

    res = await first.s.request('POST', `${OS}/media-services/endpoints/update`, { token: first.token, body: { id: endpointId, enabled: false } });
    expect(await json(res)).toMatchObject({ enabled: false });
    expect((await players(first.s, first.token)).map((p) => p.id)).not.toContain(id);
    expect((await command(first.s, first.token, id, 'mute')).status).toBe(404);
    res = await first.s.request('POST', `${OS}/media-services/endpoints/update`, { token: first.token, body: { id: 'roku:missing', enabled: false } });
    expect(res.status).toBe(404);
    res = await first.s.request('POST', `${OS}/media-services/endpoints/update`, { token: first.token, body: { id: endpointId, enabled: 'yes' } });
    expect(res.status).toBe(400);
    res = await first.s.request('POST', `${OS}/media-services/endpoints/update`, { token: first.token, body: { id: endpointId, enabled: true } });
    expect(res.status).toBe(200);
    await waitForPlayer(first.s, first.token, (p) => p.id === id && p.online);
    await first.s.close();

    const second = await server({}, dataDir);
    closers.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const endpoints = await json<{ endpoints: Array<{ id: string; label: string | null; enabled: boolean; deviceId: string | null }> }>(
      await second.s.request('GET', `${OS}/media-services/endpoints`, { token: second.token }),
    );
    expect(endpoints.endpoints).toEqual([expect.objectContaining({ id: endpointId, label: 'Kids TV', enabled: true, deviceId: id })]);
    // The same player id after the restart, controlled again without a new discovery.
    const back = await waitForPlayer(second.s, second.token, (p) => p.id === id && p.online);
    expect(back.name).toBe('Kids TV');
    expect((await command(second.s, second.token, id, 'mute')).status).toBe(200);
    expect(e.state.keys).toContain('VolumeMute');
  });

  it('bootstrap lists the same roster', async () => {
    const { s, token } = await server();
    const e = await emulator();
    const player = await addRoku(s, token, e);
    const boot = await json<{ media: Player[] }>(await s.request('GET', `${OS}/bootstrap`, { token }));
    expect(boot.media.map((p) => p.id)).toEqual((await players(s, token)).map((p) => p.id));
    expect(boot.media.map((p) => p.id)).toContain(player.id);
  });
});

interface Callback {
  url: string;
  received: Array<{ body: Record<string, unknown>; authorization: string | undefined }>;
  answer: (req: IncomingMessage, res: ServerResponse) => void;
  server: Server;
}

async function callbackServer(): Promise<Callback> {
  const cb = {
    received: [] as Callback['received'],
    answer: (_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ accepted: true }));
    },
  } as Callback;
  cb.server = createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      cb.received.push({ body: JSON.parse(data || '{}') as Record<string, unknown>, authorization: req.headers.authorization });
      cb.answer(req, res);
    });
  });
  await new Promise<void>((r) => cb.server.listen(0, '127.0.0.1', r));
  const address = cb.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  cb.url = `http://127.0.0.1:${address.port}/player`;
  closers.push(() => new Promise<void>((r) => {
    cb.server.closeAllConnections();
    cb.server.close(() => r());
  }));
  return cb;
}

describe('bridge endpoints', () => {
  it('a registered endpoint joins the roster and its commands are forwarded to the callback, normalized', async () => {
    const { s, token } = await server();
    const cb = await callbackServer();
    const res = await s.request('POST', `${OS}/media-services/bridge/endpoints/register`, {
      token,
      body: { id: 'garage-speaker', name: 'Garage speaker', callbackUrl: cb.url, commands: ['play', 'pause', 'toggle', 'volume_set', 'volume_step', 'mute'], callbackToken: 's3cret', timeoutMs: 300, state: { volume: 20, playback: 'paused', title: 'Song' } },
    });
    expect(res.status).toBe(200);
    const registered = await json<{ created: boolean; endpoint: Record<string, unknown> }>(res);
    expect(registered.created).toBe(true);
    expect(JSON.stringify(registered)).not.toContain('s3cret');

    const player = await waitForPlayer(s, token, (p) => p.endpointId === 'bridge:garage-speaker');
    expect(player).toMatchObject({ kind: 'bridge', online: true, name: 'Garage speaker', volume: 20 });
    expect(player.capabilities).toEqual(['play', 'pause', 'toggle', 'volume_set', 'volume_step', 'mute']);
    expect(player.nowPlaying).toMatchObject({ title: 'Song', playback: 'paused' });

    let out = await command(s, token, player.id, 'toggle');
    expect(out.status).toBe(200);
    expect(await json(out)).toMatchObject({ ok: true, result: { accepted: true } });
    expect(cb.received.at(-1)).toEqual({ body: { endpointId: 'bridge:garage-speaker', command: 'toggle', params: {} }, authorization: 'Bearer s3cret' });
    expect((await command(s, token, player.id, 'volume_set', { volume: 35 })).status).toBe(200);
    expect(cb.received.at(-1)?.body).toMatchObject({ command: 'volume_set', params: { volume: 35 } });
    expect((await command(s, token, player.id, 'power_on')).status).toBe(422);

    // The callback's failures, mapped: its 4xx → 422, its 5xx → 502, silence → 504, gone → 502.
    cb.answer = (_req, r) => {
      r.writeHead(409, { 'content-type': 'application/json' });
      r.end(JSON.stringify({ message: 'nothing queued' }));
    };
    out = await command(s, token, player.id, 'play');
    expect(out.status).toBe(422);
    expect((await json<{ error: { message: string } }>(out)).error.message).toContain('nothing queued');
    cb.answer = (_req, r) => {
      r.writeHead(500);
      r.end();
    };
    expect((await command(s, token, player.id, 'play')).status).toBe(502);
    cb.answer = () => undefined;
    out = await command(s, token, player.id, 'play');
    expect(out.status).toBe(504);
    expect((await json<{ error: { code: string } }>(out)).error.code).toBe('DEVICE_TIMEOUT');
    cb.server.closeAllConnections();
    await new Promise<void>((r) => cb.server.close(() => r()));
    out = await command(s, token, player.id, 'play');
    expect(out.status).toBe(502);
    expect((await json<{ error: { code: string } }>(out)).error.code).toBe('DEVICE_UNREACHABLE');
    await waitForPlayer(s, token, (p) => p.id === player.id && !p.online);
  });

  it('refuses a callback that is not http(s), and registration fields that do not fit', async () => {
    const { s, token } = await server();
    let res = await s.request('POST', `${OS}/media-services/bridge/endpoints/register`, { token, body: { id: 'x', name: 'X', callbackUrl: 'file:///etc/passwd', commands: ['play'] } });
    expect(res.status).toBe(400);
    expect((await json<{ error: { code: string } }>(res)).error.code).toBe('BRIDGE_CALLBACK_INVALID');
    res = await s.request('POST', `${OS}/media-services/bridge/endpoints/register`, { token, body: { id: 'x', name: 'X', callbackUrl: 'http://127.0.0.1:1/x', commands: ['fly'] } });
    expect(res.status).toBe(400);
    expect((await players(s, token)).length).toBe(0);
  });
});
