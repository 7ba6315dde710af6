import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RokuEcpClient, type RokuEcpClientOptions } from '../src/adapters/roku/ecp-client.js';
import { RokuEcpError } from '../src/adapters/roku/ecp-errors.js';
import { ecpKeySegment } from '../src/adapters/roku/ecp-keys.js';
import { DEFAULT_ICON_PNG, startRokuEcpEmulator, startRokuEcpEmulators, type RokuEcpEmulator, type RokuEmulatorOptions } from './support/roku-ecp-emulator.js';

const closers: (() => unknown)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function setup(emu: RokuEmulatorOptions = {}, opts: Partial<RokuEcpClientOptions> = {}) {
  const emulator = await startRokuEcpEmulator(emu);
  closers.push(() => emulator.close());
  const client = new RokuEcpClient({ host: emulator.host, port: emulator.port, timeoutMs: 1000, ...opts });
  closers.push(() => client.close());
  return { emulator, client };
}

async function failure(p: Promise<unknown>): Promise<RokuEcpError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(RokuEcpError);
    return err as RokuEcpError;
  }
  throw new Error('expected a failure');
}

/** A peer that answers every request with the given status, content type and body. */
async function startRawPeer(status: number, contentType: string, body: string): Promise<{ port: number; server: Server }> {
  const server = createHttpServer((_req, res) => {
    res.writeHead(status, { 'Content-Type': contentType });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, server };
}

describe('Roku ECP client against the emulator', () => {
  it('reads device-info, sending Host as the device address and port', async () => {
    const { emulator, client } = await setup({ serialNumber: 'X0TEST000001', userDeviceName: 'Living & Room' });
    const info = await client.deviceInfo();
    expect(info).toMatchObject({
      serialNumber: 'X0TEST000001',
      modelName: 'Roku TV',
      friendlyDeviceName: 'Living & Room',
      userDeviceName: 'Living & Room',
      vendorName: 'Roku',
      powerMode: 'PowerOn',
      isTv: true,
      isStick: false,
      supportsSuspend: true,
    });
    expect(info.udn).toMatch(/^[0-9a-f-]{36}$/);
    expect(info.fields['supports-airplay']).toBe('true');
    expect(emulator.requests.at(-1)).toEqual({ method: 'GET', url: '/query/device-info', host: `127.0.0.1:${emulator.port}`, status: 200 });
  });

  it('lists the apps and reads an icon with its content type', async () => {
    const { client } = await setup();
    const apps = await client.apps();
    expect(apps).toContainEqual({ id: '12', type: 'appl', version: '5.2.1', name: 'Netflix' });
    expect(apps).toContainEqual({ id: '74519', type: 'appl', version: '5.31.0', name: "Pluto TV - It's Free TV" });
    expect(apps.map((app) => app.id)).toEqual(['12', '837', '2285', '74519', 'tvinput.hdmi1']);
    expect(await client.icon('12')).toEqual({ contentType: 'image/png', bytes: DEFAULT_ICON_PNG });
    const jpeg = await client.icon('2285');
    expect(jpeg.contentType).toBe('image/jpeg');
    expect(jpeg.bytes[0]).toBe(0xff);
    expect(await failure(client.icon('999'))).toMatchObject({ failure: 'http_status', status: 404, kind: 'upstream_failed' });
  });

  it('a single installed app is still a list', async () => {
    const { client } = await setup({ apps: [{ id: 'dev', type: 'appl', version: '1.0.0', name: 'Dev' }] });
    expect(await client.apps()).toEqual([{ id: 'dev', type: 'appl', version: '1.0.0', name: 'Dev' }]);
  });

  it('launch changes the active app and the media player; Home closes them', async () => {
    const { emulator, client } = await setup();
    expect(await client.activeApp()).toEqual({});
    expect(await client.mediaPlayer()).toEqual({ state: 'close', error: false, isLive: false });

    await client.launch('12', { contentId: 'tt 42', mediaType: 'movie' });
    expect(emulator.requests.at(-1)).toMatchObject({ method: 'POST', url: '/launch/12?contentId=tt+42&mediaType=movie', status: 200 });
    expect(emulator.state.launchParams).toEqual({ contentId: 'tt 42', mediaType: 'movie' });
    expect(await client.activeApp()).toEqual({ app: { id: '12', type: 'appl', version: '5.2.1', name: 'Netflix' } });
    emulator.advance(12_345);
    expect(await client.mediaPlayer()).toEqual({
      state: 'play',
      error: false,
      plugin: { id: '12', name: 'Netflix', bandwidth: '10000000 bps' },
      positionMs: 12_345,
      durationMs: 3_600_000,
      isLive: false,
    });

    await client.keypress('Play');
    expect(await client.mediaPlayer()).toMatchObject({ state: 'pause', positionMs: 12_345 });
    await client.keypress('fwd');
    expect(await client.mediaPlayer()).toMatchObject({ state: 'pause', positionMs: 22_345 });

    await client.keypress('Home');
    expect(await client.activeApp()).toEqual({});
    expect((await client.mediaPlayer()).state).toBe('close');
  });

  it('an unknown app is 404 and changes nothing', async () => {
    const { emulator, client } = await setup();
    const err = await failure(client.launch('424242'));
    expect(err).toMatchObject({ failure: 'http_status', status: 404, request: { method: 'POST', path: '/launch/424242' } });
    expect(err.message).toContain('answered 404');
    expect(emulator.state.activeAppId).toBeUndefined();
  });

  it('keypress Power toggles the power mode; PowerOff and PowerOn set it', async () => {
    const { emulator, client } = await setup();
    await client.keypress('Power');
    expect((await client.deviceInfo()).powerMode).toBe('DisplayOff');
    await client.keypress('Power');
    expect((await client.deviceInfo()).powerMode).toBe('PowerOn');
    await client.keypress('PowerOff');
    await client.keypress('PowerOff');
    expect(emulator.state.powerMode).toBe('DisplayOff');
    await client.keypress('PowerOn');
    expect(emulator.state.powerMode).toBe('PowerOn');
  });

  it('volume keys move volume and mute; keydown acts, keyup does not', async () => {
    const { emulator, client } = await setup();
    await client.keypress('VolumeUp');
    await client.keypress('volumeup');
    expect(emulator.state.volume).toBe(22);
    await client.keypress('VolumeMute');
    expect(emulator.state.muted).toBe(true);
    await client.keydown('VolumeDown');
    await client.keyup('VolumeDown');
    expect(emulator.state).toMatchObject({ volume: 21, muted: false });
    expect(emulator.requests.slice(-2).map((r) => r.url)).toEqual(['/keydown/VolumeDown', '/keyup/VolumeDown']);
  });

  it('sends text one Lit_ key at a time, URL-encoded', async () => {
    const { emulator, client } = await setup();
    for (const char of ['a', ' ', '€']) await client.keypress(`Lit_${char}`);
    expect(emulator.requests.map((r) => r.url)).toEqual(['/keypress/Lit_a', '/keypress/Lit_%20', '/keypress/Lit_%E2%82%AC']);
    expect(emulator.state.keys).toEqual(['Lit_a', 'Lit_ ', 'Lit_€']);
  });

  it('refuses unknown keys and app ids before sending anything', async () => {
    const { emulator, client } = await setup();
    for (const key of ['Sparkle', 'Lit_', 'Lit_ab', '../query/apps']) {
      expect(await failure(client.keypress(key))).toMatchObject({ failure: 'invalid_request', kind: 'invalid' });
    }
    expect(await failure(client.launch('../keypress/Home'))).toMatchObject({ failure: 'invalid_request' });
    expect(await failure(client.icon(''))).toMatchObject({ failure: 'invalid_request' });
    expect(emulator.requests).toEqual([]);
    expect(ecpKeySegment('instantreplay')).toBe('InstantReplay');
  });

  it('the emulator answers an unknown key 400 and a GET on a command 405, as the firmware does', async () => {
    const { emulator } = await setup();
    const base = `http://127.0.0.1:${emulator.port}`;
    expect((await fetch(`${base}/keypress/Sparkle`, { method: 'POST' })).status).toBe(400);
    expect((await fetch(`${base}/keypress/Home`)).status).toBe(405);
    expect((await fetch(`${base}/query/nothing`)).status).toBe(404);
    expect((await fetch(`${base}/launch/%E0%A4`, { method: 'POST' })).status).toBe(404);
  });

  it('a Host header that is not the device address gets 403, typed', async () => {
    const { emulator, client } = await setup({ acceptedHost: '192.0.2.10' });
    const err = await failure(client.deviceInfo());
    expect(err).toMatchObject({ failure: 'http_status', status: 403, kind: 'upstream_failed' });
    expect(err.message).toContain('403: Forbidden');
    expect(emulator.requests[0]).toMatchObject({ host: `127.0.0.1:${emulator.port}`, status: 403 });
  });

  it('times out against a device that never answers, within its bound', async () => {
    const { client } = await setup({ mode: 'dead' }, { timeoutMs: 150 });
    const started = performance.now();
    const err = await failure(client.mediaPlayer());
    const elapsed = performance.now() - started;
    expect(err).toMatchObject({ failure: 'timeout', kind: 'timeout' });
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(1000);
  });

  it('a slow device inside the time-out answers; one beyond it times out', async () => {
    const { emulator, client } = await setup({ latencyMs: 30 }, { timeoutMs: 200 });
    expect((await client.activeApp()).app).toBeUndefined();
    emulator.setLatency(400);
    expect(await failure(client.keypress('Select'))).toMatchObject({ failure: 'timeout' });
  });

  it('a closed port is unreachable', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const address = probe.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    await new Promise<void>((r) => probe.close(() => r()));
    const client = new RokuEcpClient({ host: '127.0.0.1', port: address.port, timeoutMs: 1000 });
    closers.push(() => client.close());
    const err = await failure(client.deviceInfo());
    expect(err).toMatchObject({ failure: 'unreachable', kind: 'upstream_failed' });
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('malformed XML, a missing root and an icon that is no image are malformed', async () => {
    const { emulator, client } = await setup({ mode: 'malformed' });
    expect(await failure(client.deviceInfo())).toMatchObject({ failure: 'malformed' });
    emulator.setMode('ok');
    expect((await client.apps()).length).toBeGreaterThan(0);

    const wrongRoot = await startRawPeer(200, 'text/xml', '<?xml version="1.0"?><html><body>hi</body></html>');
    const peer = new RokuEcpClient({ host: '127.0.0.1', port: wrongRoot.port, timeoutMs: 1000 });
    closers.push(() => peer.close());
    expect((await failure(peer.apps())).message).toContain('no <apps> element');
    expect((await failure(peer.icon('12'))).message).toContain('not an image');
  });

  it('refuses a document that declares entities (no expansion bombs)', async () => {
    const bomb = '<?xml version="1.0"?><!DOCTYPE apps [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><apps><app id="1">&b;</app></apps>';
    const { port } = await startRawPeer(200, 'text/xml', bomb);
    const client = new RokuEcpClient({ host: '127.0.0.1', port, timeoutMs: 1000 });
    closers.push(() => client.close());
    const err = await failure(client.apps());
    expect(err).toMatchObject({ failure: 'malformed' });
    expect(err.message).toMatch(/Entity/);
  });

  it('reuses one kept-alive connection for consecutive requests', async () => {
    const { emulator, client } = await setup();
    for (let i = 0; i < 5; i++) await client.keypress('Down');
    expect(emulator.requests).toHaveLength(5);
    expect(emulator.connections).toBe(1);
  });

  it('starts many emulators for a benchmark, each its own device', async () => {
    const emulators: RokuEcpEmulator[] = await startRokuEcpEmulators(5, { latencyMs: 1 });
    closers.push(() => Promise.all(emulators.map((e) => e.close())));
    const serials = await Promise.all(
      emulators.map(async (e) => {
        const client = new RokuEcpClient({ host: e.host, port: e.port, timeoutMs: 1000 });
        try {
          return (await client.deviceInfo()).serialNumber;
        } finally {
          client.close();
        }
      }),
    );
    expect(new Set(serials).size).toBe(5);
    expect(new Set(emulators.map((e) => e.port)).size).toBe(5);
  });
});
