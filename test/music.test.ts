import { afterEach, describe, expect, it } from 'vitest';
import { MpdConnection } from '../src/adapters/mpd/mpd-connection.js';
import { systemTimers } from '../src/platform/clock.js';
import { createServer as createHttpServer } from 'node:http';
import { startMpdEmulator, type MpdEmulator } from './support/mpd-emulator.js';
import { startRokuEcpEmulator } from './support/roku-ecp-emulator.js';
import { startServer } from './support/server.js';
import { SseClient } from './support/sse-client.js';
import { freePort } from './support/net.js';

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const OS = '/app/os';
type Json = Record<string, unknown> & { error?: { code: string; message: string } };


async function mpd(options: { port?: number; password?: string } = {}) {
  const e = await startMpdEmulator(options);
  closers.push(() => e.close());
  return e;
}

async function hub(e: { port: number }, env: Record<string, string> = {}) {
  const s = await startServer({ env: { MPD_HOST: '127.0.0.1', MPD_PORT: String(e.port), MPD_TIMEOUT_MS: '1000', ...env } });
  closers.push(() => s.close());
  const token = await s.login();
  const call = async (method: string, path: string, body?: unknown, prefix = OS): Promise<{ status: number; body: Json }> => {
    const res = await s.request(method, `${prefix}${path}`, { token, ...(body === undefined ? {} : { body }) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  return { s, token, call };
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  for (let i = 0; i < 1000 && Date.now() < deadline; i++) {
    last = await read();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never: ${what} (last ${JSON.stringify(last)})`);
}

/** A second client at MPD, as another app would be: changes made there reach the hub through idle. */
async function directClient(e: MpdEmulator) {
  const c = await MpdConnection.open({ host: e.host, port: e.port, timeoutMs: 2000, timers: systemTimers });
  closers.push(() => c.close());
  return c;
}

describe('local media controller (MPD)', () => {
  it('starts without MPD, reports connected: false, and connects once MPD is up', async () => {
    const port = await freePort();
    const { call } = await hub({ port });
    let state = await call('GET', '/media-controller/state');
    expect(state.status).toBe(200);
    expect(state.body).toMatchObject({ connected: false, playback: null, server: { host: '127.0.0.1', port } });
    expect(state.body.error).toEqual(expect.any(String));
    const res = await call('POST', '/media-controller/control', { action: 'play' });
    expect(res.status).toBe(503);
    expect(res.body.error?.code).toBe('MEDIA_CONTROLLER_OFFLINE');

    await mpd({ port });
    state = await until(() => call('GET', '/media-controller/state'), (r) => r.body.connected === true, 'connected', 8000);
    expect(state.body).toMatchObject({ connected: true, error: null, playback: 'stopped', volume: 50, queueLength: 0, server: { version: '0.23.5' }, options: { random: false, repeat: false, single: false, consume: false } });
  });

  it('runs actions: add, play, volume, seek, options, next; MPD\'s ACK is 422 with its message; bad input is 400', async () => {
    const e = await mpd();
    const { call } = await hub(e);
    await until(() => call('GET', '/media-controller/state'), (r) => r.body.connected === true, 'connected');
    const album = e.library[0]!.file.split('/').slice(0, 3).join('/');
    expect((await call('POST', '/media-controller/control', { action: 'add', params: { uri: album } })).status).toBe(200);
    let state = await call('POST', '/media-controller/control', { action: 'play_index', params: { index: 1 } });
    expect(state.status).toBe(200);
    state = await until(() => call('GET', '/media-controller/state'), (r) => r.body.playback === 'playing', 'playing');
    expect(state.body).toMatchObject({ queueLength: 10, song: { uri: e.library[1]!.file, title: e.library[1]!.Title, artist: e.library[1]!.Artist, album: e.library[1]!.Album, position: 1 }, durationSeconds: e.library[1]!.Time });
    expect((await call('POST', '/media-controller/control', { action: 'volume_set', params: { volume: 35 } })).status).toBe(200);
    expect((await call('POST', '/media-controller/control', { action: 'volume_step', params: { delta: -5 } })).status).toBe(200);
    expect(e.state.volume).toBe(30);
    expect((await call('POST', '/media-controller/control', { action: 'seek', params: { position: 42 } })).status).toBe(200);
    state = await until(() => call('GET', '/media-controller/state'), (r) => Number(r.body.elapsedSeconds) >= 42, 'elapsed after seek');
    expect((await call('POST', '/media-controller/control', { action: 'random', params: { enabled: true } })).status).toBe(200);
    expect((await call('POST', '/media-controller/control', { action: 'next' })).status).toBe(200);
    state = await until(() => call('GET', '/media-controller/state'), (r) => (r.body.song as { position: number } | null)?.position === 2 && (r.body.options as { random: boolean }).random, 'next song, random on');
    expect((await call('POST', '/media-controller/control', { action: 'toggle' })).status).toBe(200);
    expect(e.state.state).toBe('pause');

    const ack = await call('POST', '/media-controller/control', { action: 'play_index', params: { index: 99 } });
    expect(ack.status).toBe(422);
    expect(ack.body.error).toMatchObject({ code: 'MEDIA_CONTROLLER_REJECTED', message: expect.stringContaining('Bad song index') });
    expect((await call('POST', '/media-controller/control', { action: 'dance' })).status).toBe(400);
    const bad = await call('POST', '/media-controller/control', { action: 'volume_set', params: { volume: 101 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error?.code).toBe('INVALID_CONTROL_PARAMS');
    expect((await call('POST', '/media-controller/control', { action: 'add', params: {} })).status).toBe(400);
    expect(e.state.volume).toBe(30);
  });

  it('streams ready, snapshot, then state from MPD idle within 200 ms of a change at MPD; a lost MPD is reported and recovered', async () => {
    const e = await mpd();
    const { s, call } = await hub(e);
    await until(() => call('GET', '/media-controller/state'), (r) => r.body.connected === true, 'connected');
    const streamToken = ((await call('POST', '/auth/stream-token')).body as { accessToken: string }).accessToken;
    const sse = await SseClient.open(`${s.url}${OS}/media-controller/stream?accessToken=${streamToken}`);
    closers.push(() => sse.close());
    expect(sse.status).toBe(200);
    await sse.next((ev) => ev.event === 'snapshot');
    expect(sse.events.map((ev) => ev.event).slice(0, 2)).toEqual(['ready', 'snapshot']);

    const direct = await directClient(e);
    const changedAt = Date.now();
    await direct.command('setvol', [77]);
    await sse.next((ev) => ev.event === 'state' && (ev.data as { volume: number }).volume === 77, 2000);
    expect(Date.now() - changedAt).toBeLessThan(200);

    await e.kill();
    await sse.next((ev) => ev.event === 'state' && (ev.data as { connected: boolean }).connected === false, 3000);
    await e.restart();
    const back = await sse.next((ev) => ev.event === 'state' && (ev.data as { connected: boolean }).connected === true, 8000);
    expect(back.data).toMatchObject({ connected: true, volume: 77 });
    expect(sse.ended).toBe(false);
  });

  it('refuses a stream without a token', async () => {
    const e = await mpd();
    const { s } = await hub(e);
    const sse = await SseClient.open(`${s.url}${OS}/media-controller/stream`);
    closers.push(() => sse.close());
    expect(sse.status).toBe(401);
  });
});

describe('music services', () => {
  it('searches the MPD library, plays items (replace, append, next), reads the queue and commands the hub player', async () => {
    const e = await mpd();
    const { call } = await hub(e);
    await until(() => call('GET', '/media-controller/state'), (r) => r.body.connected === true, 'connected');

    let res = await call('POST', '/media-services/search', { query: 'song 00001' });
    expect(res.status).toBe(200);
    const items = res.body.items as Array<{ type: string; uri: string; name: string }>;
    expect(items.filter((i) => i.type === 'track').map((i) => i.name)).toEqual(expect.arrayContaining(['Song 000010', 'Song 000011']));
    res = await call('POST', '/media-services/search', { query: 'Album 00002', types: ['album'] });
    expect(res.body.items).toEqual([{ type: 'album', uri: 'album:Album 00002', name: 'Album 00002', artist: null, album: 'Album 00002', durationSeconds: null, source: 'local' }]);
    res = await call('POST', '/media-services/search', { query: 'fav', types: ['playlist'], limit: 5 });
    expect((res.body.items as Array<{ uri: string }>).map((i) => i.uri)).toEqual(['playlist:Favourites']);
    expect((await call('POST', '/media-services/search', { query: 'x', source: 'spotify' })).status).toBe(404);
    expect((await call('POST', '/media-services/search', { query: '' })).status).toBe(400);

    res = await call('POST', '/media-services/play', { targetId: 'local', uri: 'album:Album 00001', mode: 'replace' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ targetId: 'local', added: 10 });
    await until(() => call('GET', '/media-controller/state'), (r) => r.body.playback === 'playing', 'playing');
    expect(e.queue()).toHaveLength(10);
    res = await call('POST', '/media-services/play', { targetId: 'local', items: [{ uri: e.library[25]!.file }], mode: 'next' });
    expect(res.body).toMatchObject({ added: 1 });
    expect(e.queue()[1]).toBe(e.library[25]!.file);
    await call('POST', '/media-services/play', { targetId: 'local', uri: 'playlist:Favourites', mode: 'append' });
    const queue = await call('GET', '/media-services/queue/local');
    expect(queue.status).toBe(200);
    expect((queue.body.items as Array<{ uri: string }>).map((i) => i.uri)).toEqual(e.queue());
    expect(queue.body.items).toHaveLength(14);
    res = await call('POST', '/media-services/play', { targetId: 'local', uri: 'music/nowhere.flac' });
    expect(res.status).toBe(422);

    res = await call('POST', '/media-services/command', { targetId: 'local', command: 'pause' });
    expect(res.status).toBe(200);
    expect(e.state.state).toBe('pause');
    expect((await call('POST', '/media-services/command', { targetId: 'local', command: 'volume_set', params: { volume: 12 } })).status).toBe(200);
    expect(e.state.volume).toBe(12);
    expect((await call('POST', '/media-services/command', { targetId: 'local', command: 'shuffle', params: { enabled: true } })).status).toBe(200);
    expect(e.state.random).toBe(true);
    expect((await call('POST', '/media-services/command', { targetId: 'local', command: 'power_on' })).status).toBe(422);
    expect((await call('POST', '/media-services/command', { targetId: 'nope', command: 'play' })).status).toBe(404);
    expect((await call('POST', '/media-services/play', { targetId: 'nope', uri: 'x' })).status).toBe(404);
    expect((await call('GET', '/media-services/queue/nope')).status).toBe(404);
  });

  it('lists the hub player with the media players, a status snapshot with sessions and queues, and the legacy App API in the envelope', async () => {
    const e = await mpd();
    const { call } = await hub(e);
    await until(() => call('GET', '/media-controller/state'), (r) => r.body.connected === true, 'connected');
    await call('POST', '/media-services/play', { targetId: 'local', uri: 'album:Album 00000' });
    await until(() => call('GET', '/media-controller/state'), (r) => r.body.playback === 'playing', 'playing');
    // A bridge endpoint: a media player that takes commands but not music items.
    await call('POST', '/media-services/bridge/endpoints/register', { id: 'kitchen', name: 'Kitchen', callbackUrl: 'http://127.0.0.1:9/x', commands: ['play', 'pause'] });

    const players = await call('GET', '/media-services/players');
    const list = players.body.players as Array<{ id: string; kind: string; playsItems: boolean; capabilities: string[]; nowPlaying: { title: string } | null }>;
    expect(list[0]).toMatchObject({ id: 'local', kind: 'local', playsItems: true, nowPlaying: { title: e.library[0]!.Title } });
    expect(list[0]!.capabilities).toEqual(expect.arrayContaining(['play', 'pause', 'seek', 'volume_set', 'shuffle', 'repeat']));
    const kitchen = list.find((p) => p.kind === 'bridge');
    expect(kitchen).toMatchObject({ playsItems: false });
    const refused = await call('POST', '/media-services/play', { targetId: kitchen!.id, uri: 'album:Album 00000' });
    expect(refused.status).toBe(422);
    expect(refused.body.error?.code).toBe('TARGET_CANNOT_PLAY');

    const status = await call('POST', '/media-services/status', { includeQueues: true });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ sources: [{ id: 'local', kind: 'mpd', connected: true }], sessions: [{ targetId: 'local' }] });
    expect((status.body.queues as Record<string, unknown[]>).local).toHaveLength(10);
    expect((await call('GET', '/media-services/status')).body.queues).toBeUndefined();

    const legacy = await call('GET', '/media-services/players', undefined, '/app');
    expect(legacy.status).toBe(200);
    expect(legacy.body).toMatchObject({ status: true, data: expect.arrayContaining([expect.objectContaining({ id: 'local' })]) });
    const legacySearch = await call('POST', '/media-services/search', { query: 'Song 000001' }, '/api');
    expect(legacySearch.body).toMatchObject({ status: true, data: [expect.objectContaining({ type: 'track', name: 'Song 000001' })] });
    const legacyBad = await call('POST', '/media-services/command', { targetId: 'nope', command: 'play' }, '/app');
    expect(legacyBad.status).toBe(404);
    expect(legacyBad.body).toMatchObject({ status: false, code: 'MUSIC_TARGET_NOT_FOUND' });
  });

  it('moves playback between two MPD instances, at its position, with or without the queue, and stops the source', async () => {
    const first = await mpd();
    const second = await mpd();
    const { call } = await hub(first, { MPD_TARGETS: `den=127.0.0.1:${second.port}` });
    for (const id of ['local', 'mpd:den']) {
      await until(() => call('GET', '/media-services/players'), (r) => (r.body.players as Array<{ id: string; online: boolean }>).some((p) => p.id === id && p.online), `${id} online`);
    }
    await call('POST', '/media-services/play', { targetId: 'local', uri: 'album:Album 00001' });
    await call('POST', '/media-controller/control', { action: 'play_index', params: { index: 3 } });
    await call('POST', '/media-controller/control', { action: 'seek', params: { position: 30 } });
    await until(() => call('GET', '/media-controller/state'), (r) => (r.body.song as { position: number } | null)?.position === 3 && Number(r.body.elapsedSeconds) >= 30, 'song 3 at 30 s');

    let res = await call('POST', '/media-services/transfer', { fromTargetId: 'local', toTargetId: 'mpd:den', includeQueue: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ fromTargetId: 'local', toTargetId: 'mpd:den', moved: 10, song: { uri: first.library[13]!.file, position: 3 } });
    expect(Number(res.body.positionSeconds)).toBeGreaterThanOrEqual(30);
    expect(second.queue()).toEqual(first.queue());
    expect(second.state).toMatchObject({ state: 'play', song: 3 });
    expect(first.state.state).toBe('stop');
    const den = await until(() => call('GET', '/media-services/queue/mpd:den'), (r) => r.status === 200, 'den queue');
    expect(den.body.items).toHaveLength(10);

    // Back, the current song only.
    res = await call('POST', '/media-services/transfer', { fromTargetId: 'mpd:den', toTargetId: 'local' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ moved: 1 });
    expect(first.queue()).toEqual([first.library[13]!.file]);
    expect(second.state.state).toBe('stop');

    res = await call('POST', '/media-services/transfer', { fromTargetId: 'mpd:den', toTargetId: 'local' });
    expect(res.status).toBe(409);
    expect(res.body.error?.code).toBe('NOTHING_PLAYING');
    expect((await call('POST', '/media-services/transfer', { fromTargetId: 'local', toTargetId: 'local' })).status).toBe(400);
    expect((await call('POST', '/media-services/transfer', { fromTargetId: 'local', toTargetId: 'nowhere' })).status).toBe(404);
    expect((await call('POST', '/media-services/command', { targetId: 'mpd:den', command: 'volume_set', params: { volume: 9 } })).status).toBe(200);
    expect(second.state.volume).toBe(9);
  });

  it('plays a stream URL on a Roku (Play on Roku) and on a bridge endpoint that plays URLs; library items there are 422', async () => {
    const e = await mpd();
    const { call } = await hub(e);
    const roku = await startRokuEcpEmulator({ userDeviceName: 'Attic Roku' });
    closers.push(() => roku.close());
    await call('POST', '/media-services/endpoints/discover', { timeoutMs: 100, probe: [{ kind: 'roku', host: roku.host, port: roku.port }] });
    const players = await until(() => call('GET', '/media-services/players'), (r) => (r.body.players as Array<{ kind: string; online: boolean }>).some((p) => p.kind === 'roku' && p.online), 'roku online');
    const rokuPlayer = (players.body.players as Array<{ id: string; kind: string; playsItems: boolean }>).find((p) => p.kind === 'roku')!;
    expect(rokuPlayer.playsItems).toBe(true);
    let res = await call('POST', '/media-services/play', { targetId: rokuPlayer.id, uri: 'http://127.0.0.1:8000/radio.mp3' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ targetId: rokuPlayer.id, added: 1, state: null });
    expect(roku.state.activeAppId).toBe('15985');
    expect(roku.state.launchParams).toMatchObject({ t: 'a', u: 'http://127.0.0.1:8000/radio.mp3' });
    res = await call('POST', '/media-services/play', { targetId: rokuPlayer.id, uri: 'album:Album 00000' });
    expect(res.status).toBe(422);
    expect(res.body.error?.code).toBe('TARGET_CANNOT_PLAY');

    const received: unknown[] = [];
    const callback = createHttpServer((req, r) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push(JSON.parse(body));
        r.writeHead(200, { 'content-type': 'application/json' }).end('{"queued":true}');
      });
    });
    await new Promise<void>((r) => callback.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => callback.close(() => r())));
    const url = `http://127.0.0.1:${(callback.address() as { port: number }).port}/cb`;
    await call('POST', '/media-services/bridge/endpoints/register', { id: 'porch', name: 'Porch', callbackUrl: url, commands: ['play', 'pause'], playsUrls: true });
    const porch = await until(() => call('GET', '/media-services/players'), (r) => (r.body.players as Array<{ kind: string }>).some((p) => p.kind === 'bridge'), 'porch listed');
    const porchId = (porch.body.players as Array<{ id: string; kind: string }>).find((p) => p.kind === 'bridge')!.id;
    res = await call('POST', '/media-services/play', { targetId: porchId, uri: 'https://radio.example/stream', mode: 'append' });
    expect(res.status).toBe(200);
    expect(received).toEqual([{ endpointId: 'bridge:porch', command: 'play_url', params: { url: 'https://radio.example/stream', mode: 'append' } }]);
  });
});
