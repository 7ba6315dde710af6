import { afterEach, describe, expect, it } from 'vitest';
import { startCastEmulator } from './support/cast-emulator.js';
import { startMdnsResponder } from './support/mdns-responder.js';
import { startServer } from './support/server.js';

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('Google Cast receivers, built in', () => {
  it('a discovered cast receiver plays a URL through the Default Media Receiver and takes playback, volume and mute commands', async () => {
    const receiver = await startCastEmulator({ host: '127.0.0.2' });
    closers.push(() => receiver.close());
    const mdns = await startMdnsResponder({ services: [{ type: '_googlecast._tcp', instanceName: 'Nest-Mini-1', host: 'nest.local', port: receiver.port, addresses: ['127.0.0.2'], txt: { id: 'nest1', fn: 'Kitchen speaker', md: 'Google Nest Mini' } }] });
    closers.push(() => mdns.close());
    const s = await startServer({ env: { MEDIA_MDNS_ADDRESS: `127.0.0.1:${mdns.port}`, CAST_PAIRING_STEP_TIMEOUT_MS: '2000' } });
    closers.push(() => s.close());
    const token = await s.login();
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await s.request(method, `/app/os${path}`, { token, ...(body === undefined ? {} : { body }) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> & { error?: { code: string } } };
    };
    const found = await call('POST', '/media-services/endpoints/discover', { timeoutMs: 300 });
    expect((found.body.found as Array<{ id: string }>).map((f) => f.id)).toEqual(['cast:nest1']);

    // The receiver's own status is read as soon as it is found: online, its volume known (so volume steps work).
    let player: { id: string; kind: string; online: boolean; capabilities: string[]; playsItems: boolean } | undefined;
    for (let i = 0; i < 100 && !player?.capabilities.includes('volume_step'); i++) {
      player = ((await call('GET', '/media-services/players')).body.players as Array<typeof player & object>).find((p) => p.kind === 'cast');
      if (!player?.capabilities.includes('volume_step')) await new Promise((r) => setTimeout(r, 20));
    }
    expect(player).toMatchObject({ kind: 'cast', playsItems: true, online: true });
    expect(player!.capabilities).toEqual(['play', 'pause', 'toggle', 'stop', 'seek', 'volume_set', 'volume_step', 'mute']);

    const played = await call('POST', '/media-services/play', { targetId: player!.id, uri: 'http://127.0.0.1:8000/morning.mp3' });
    expect(played.status).toBe(200);
    expect(receiver.loads).toEqual([{ contentId: 'http://127.0.0.1:8000/morning.mp3', contentType: 'audio/mpeg' }]);
    expect(receiver.state.running).toBe(true);

    const command = (c: string, params?: Record<string, unknown>) => call('POST', `/media/players/${player!.id}/command`, { command: c, ...(params ? { params } : {}) });
    expect((await command('pause')).status).toBe(200);
    expect((await command('toggle')).status).toBe(200);
    expect((await command('seek', { position: 12 })).status).toBe(200);
    expect(receiver.mediaCommands).toEqual(['PAUSE', 'PLAY', 'SEEK']);
    expect((await command('volume_step', { delta: -10 })).status).toBe(200);
    expect(receiver.state.level).toBeCloseTo(0.4);
    expect((await command('volume_set', { volume: 30 })).status).toBe(200);
    expect(receiver.state.level).toBeCloseTo(0.3);
    expect((await command('mute', { muted: true })).status).toBe(200);
    expect(receiver.state.muted).toBe(true);
    const roster = ((await call('GET', '/media/players')).body.players as Array<{ id: string; online: boolean; volume: number; nowPlaying: { playback: string } }>).find((p) => p.id === player!.id);
    expect(roster).toMatchObject({ online: true, volume: 30, nowPlaying: { playback: 'playing' } });

    expect((await call('POST', '/media-services/play', { targetId: player!.id, uri: 'album:Anything' })).status).toBe(422);
    await receiver.close();
    const gone = await command('pause');
    expect([502, 504]).toContain(gone.status);
  });
});
