import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startAndroidTvEmulator, type AndroidTvEmulator } from './support/androidtv-emulator.js';
import { startMdnsResponder, type MdnsTestService } from './support/mdns-responder.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const OS = '/app/os';
type Json = Record<string, unknown> & { error?: { code: string; message: string } };

interface Setup {
  s: TestServer;
  /** Stops the server (once; afterEach does it otherwise). */
  stop(): Promise<void>;
  token: string;
  tv: AndroidTvEmulator;
  endpointId: string;
}

async function call(s: TestServer, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await s.request(method, `${OS}${path}`, { token, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: (await res.json()) as Json };
}

async function setup(options: { dataDir?: string; env?: Record<string, string>; tv?: AndroidTvEmulator; silentPairing?: boolean } = {}): Promise<Setup> {
  const tv = options.tv ?? (await startAndroidTvEmulator({ silentPairing: options.silentPairing ?? false }));
  if (!options.tv) closers.push(() => tv.close());
  const services: MdnsTestService[] = [
    { type: '_androidtvremote2._tcp', instanceName: 'Den TV', host: 'den-tv.local', port: tv.remotePort, addresses: ['127.0.0.1'], txt: { bt: '11:22:33:44:55:66' } },
    { type: '_googlecast._tcp', instanceName: 'Speaker-1', host: 'speaker.local', port: 8009, addresses: ['127.0.0.3'], txt: { id: 'spk1', fn: 'Speaker' } },
  ];
  const mdns = await startMdnsResponder({ services });
  closers.push(() => mdns.close());
  const s = await startServer({ env: { MEDIA_MDNS_ADDRESS: `127.0.0.1:${mdns.port}`, CAST_PAIRING_STEP_TIMEOUT_MS: '2000', ...options.env }, ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await s.close();
  };
  closers.push(stop);
  const token = await s.login();
  const found = await call(s, token, 'POST', '/media-services/endpoints/discover', { timeoutMs: 300 });
  expect(found.status).toBe(200);
  const endpointId = 'androidtv:11:22:33:44:55:66';
  expect((found.body.found as Array<{ id: string }>).map((f) => f.id)).toContain(endpointId);
  return { s, stop, token, tv, endpointId };
}

async function players(s: TestServer, token: string) {
  return (await call(s, token, 'GET', '/media/players')).body.players as Array<{ id: string; endpointId: string; online: boolean; capabilities: string[]; power: string | null; volume: number | null; nowPlaying: { app: string | null } | null }>;
}

async function waitForPlayer(s: TestServer, token: string, endpointId: string, match: (p: Awaited<ReturnType<typeof players>>[number]) => boolean) {
  for (let i = 0; i < 200; i++) {
    const p = (await players(s, token)).find((x) => x.endpointId === endpointId);
    if (p && match(p)) return p;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`player ${endpointId} never matched`);
}

async function pair({ s, token, tv, endpointId }: Setup) {
  const start = await call(s, token, 'POST', '/media-services/endpoints/cast/pair/start', { endpointId, port: tv.pairingPort });
  expect(start.status).toBe(200);
  expect(start.body).toMatchObject({ endpointId, status: 'awaiting_code' });
  const finish = await call(s, token, 'POST', '/media-services/endpoints/cast/pair/finish', { code: tv.shownCode() });
  expect(finish.status).toBe(200);
  return finish.body;
}

describe('cast pairing (Android TV Remote v2) through the routes', () => {
  it('pairs with the code on the TV, then controls it: state, normalized commands, app launch', async () => {
    const setUp = await setup();
    const { s, token, tv, endpointId } = setUp;
    // Unpaired: listed, nothing to command.
    expect((await players(s, token)).find((p) => p.endpointId === endpointId)).toMatchObject({ capabilities: [], online: false });

    const finished = await pair(setUp);
    expect(finished.endpoint).toMatchObject({ id: endpointId, paired: true, pairedAt: expect.any(Number) });
    expect(JSON.stringify(finished)).not.toContain('PRIVATE KEY');
    expect(tv.pairedClients).toHaveLength(1);

    const player = await waitForPlayer(s, token, endpointId, (p) => p.online && p.volume === 20);
    expect(player).toMatchObject({ power: 'on', nowPlaying: expect.objectContaining({ app: 'com.google.android.tvlauncher' }) });
    expect(player.capabilities).toEqual(['play', 'pause', 'toggle', 'stop', 'next', 'previous', 'volume_set', 'volume_step', 'mute', 'power_on', 'power_off', 'launch_app', 'select_source']);

    const command = (command: string, params?: Record<string, unknown>) => call(s, token, 'POST', `/media/players/${player.id}/command`, { command, ...(params ? { params } : {}) });
    expect((await command('volume_step', { delta: 2 })).status).toBe(200);
    await waitForPlayer(s, token, endpointId, (p) => p.volume === 22);
    expect((await command('volume_set', { volume: 20 })).body).toMatchObject({ ok: true, deviceCommand: 'volume_down', result: { presses: 2 } });
    expect((await command('toggle')).status).toBe(200);
    expect((await command('launch_app', { appId: 'com.netflix.ninja' })).status).toBe(200);
    await waitForPlayer(s, token, endpointId, (p) => p.nowPlaying?.app === 'com.netflix.ninja');
    expect(tv.appLinks).toEqual(['market://launch?id=com.netflix.ninja']);
    const bad = await command('launch_app', { appId: 'not a package' });
    expect(bad.status).toBe(422);
    expect(bad.body.error?.code).toBe('COMMAND_REJECTED');
    // power_on while on sends nothing; power_off presses POWER once.
    expect((await command('power_on')).body).toMatchObject({ ok: true, result: { unchanged: true } });
    expect((await command('power_off')).status).toBe(200);
    await waitForPlayer(s, token, endpointId, (p) => p.power === 'off');
    expect(tv.keys).toEqual([24, 24, 25, 25, 85, 26]);
  });

  it('answers 409 without a pairing in progress or while one waits, 422 for a wrong code and for a kind that does not pair', async () => {
    const setUp = await setup();
    const { s, token, tv, endpointId } = setUp;
    let res = await call(s, token, 'POST', '/media-services/endpoints/cast/pair/finish', { code: 'ABCDEF' });
    expect(res.status).toBe(409);
    expect(res.body.error?.code).toBe('CAST_PAIRING_NOT_STARTED');
    res = await call(s, token, 'POST', '/media-services/endpoints/cast/pair/start', { endpointId: 'cast:spk1' });
    expect(res.status).toBe(422);
    expect(res.body.error?.code).toBe('ENDPOINT_NOT_PAIRABLE');
    res = await call(s, token, 'POST', '/media-services/endpoints/cast/pair/start', { endpointId: 'androidtv:nope' });
    expect(res.status).toBe(404);

    expect((await call(s, token, 'POST', '/media-services/endpoints/cast/pair/start', { endpointId, port: tv.pairingPort })).status).toBe(200);
    res = await call(s, token, 'POST', '/media-services/endpoints/cast/pair/start', { endpointId, port: tv.pairingPort });
    expect(res.status).toBe(409);
    expect(res.body.error?.code).toBe('CAST_PAIRING_IN_PROGRESS');
    const code = tv.shownCode()!;
    const wrong = ((Number.parseInt(code.slice(0, 2), 16) + 1) % 256).toString(16).padStart(2, '0') + code.slice(2);
    res = await call(s, token, 'POST', '/media-services/endpoints/cast/pair/finish', { code: wrong });
    expect(res.status).toBe(422);
    expect(res.body.error?.code).toBe('CAST_PAIRING_CODE_WRONG');
    res = await call(s, token, 'POST', '/media-services/endpoints/cast/pair/finish', { code: 'not-hex' });
    expect(res.status).toBe(400);
    // The pairing stayed open: the right code still pairs.
    res = await call(s, token, 'POST', '/media-services/endpoints/cast/pair/finish', { code });
    expect(res.status).toBe(200);
    expect(tv.pairedClients).toHaveLength(1);
  });

  it('a TV that cannot be reached is 502, one that does not answer is 504, and neither leaves a pairing open', async () => {
    const silent = await setup({ silentPairing: true, env: { CAST_PAIRING_STEP_TIMEOUT_MS: '300' } });
    let res = await call(silent.s, silent.token, 'POST', '/media-services/endpoints/cast/pair/start', { endpointId: silent.endpointId, port: silent.tv.pairingPort });
    expect(res.status).toBe(504);
    expect(res.body.error?.code).toBe('CAST_PAIRING_TIMEOUT');
    res = await call(silent.s, silent.token, 'POST', '/media-services/endpoints/cast/pair/start', { endpointId: silent.endpointId, port: 9 });
    expect(res.status).toBe(502);
    expect(res.body.error?.code).toBe('CAST_PAIRING_FAILED');
    res = await call(silent.s, silent.token, 'POST', '/media-services/endpoints/cast/pair/finish', { code: 'ABCDEF' });
    expect(res.status).toBe(409);
  });

  it('the pairing survives a restart: the TV is controlled again without pairing', async () => {
    const dataDir = tempDataDir();
    closers.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const tv = await startAndroidTvEmulator();
    closers.push(() => tv.close());
    const first = await setup({ dataDir, tv });
    await pair(first);
    await waitForPlayer(first.s, first.token, first.endpointId, (p) => p.online);
    await first.stop();

    const second = await startServer({ dataDir, env: { MEDIA_DISCOVERY_TIMEOUT_MS: '100' } });
    closers.push(() => second.close());
    const token = await second.login();
    const player = await waitForPlayer(second, token, first.endpointId, (p) => p.online);
    const res = await call(second, token, 'POST', `/media/players/${player.id}/command`, { command: 'mute' });
    expect(res.status).toBe(200);
    for (let i = 0; i < 100 && !tv.keys.includes(164); i++) await new Promise((r) => setTimeout(r, 20));
    expect(tv.keys).toContain(164);
    expect(tv.pairedClients).toHaveLength(1);
  });
});
