import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { mdnsBrowse } from '../src/adapters/discovery/mdns.js';
import { ssdpSearch } from '../src/adapters/discovery/ssdp.js';
import { systemClock, systemTimers } from '../src/platform/clock.js';
import { startMdnsResponder, type MdnsTestService } from './support/mdns-responder.js';
import { startRokuEcpEmulator } from './support/roku-ecp-emulator.js';
import { startSsdpResponder } from './support/ssdp-responder.js';
import { startServer } from './support/server.js';

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const ROKU = { st: 'roku:ecp', usn: 'uuid:roku:ecp:X0TEST000001', location: 'http://127.0.0.1:8060/' };
const RENDERER = { st: 'urn:schemas-upnp-org:device:MediaRenderer:1', usn: 'uuid:4d696e69-444c-164e-9d41-b827eb54e5b1::urn:schemas-upnp-org:device:MediaRenderer:1', location: 'http://127.0.0.1:49152/desc.xml' };
const PRINTER = { st: 'urn:schemas-upnp-org:device:Printer:1', usn: 'uuid:printer::urn:schemas-upnp-org:device:Printer:1', location: 'http://127.0.0.1:631/' };
const TV: MdnsTestService = { type: '_androidtvremote2._tcp', instanceName: 'Living Room TV', host: 'tv-1.local', port: 6466, addresses: ['127.0.0.1'], txt: { bt: 'AA:BB:CC:DD:EE:FF' } };
const TV_CAST: MdnsTestService = { type: '_googlecast._tcp', instanceName: 'Google-TV-abc', host: 'tv-1.local', port: 8009, addresses: ['127.0.0.1'], txt: { id: 'abc123', fn: 'Living Room TV', md: 'Chromecast HD' } };
const SPEAKER: MdnsTestService = { type: '_googlecast._tcp', instanceName: 'Kitchen-speaker', host: 'speaker.local', port: 8009, addresses: ['127.0.0.2'], txt: { id: 'spk9', fn: 'Kitchen speaker', md: 'Google Nest Mini' } };

async function ssdpResponder(devices = [ROKU, RENDERER, PRINTER]) {
  const r = await startSsdpResponder({ devices });
  closers.push(() => r.close());
  return r;
}

async function mdnsResponder(services: MdnsTestService[], options: { withholdAdditionals?: boolean; silent?: boolean } = {}) {
  const r = await startMdnsResponder({ services, ...options });
  closers.push(() => r.close());
  return r;
}

describe('SSDP search', () => {
  it('finds the devices of the searched targets only, once each, and settles by the time-out', async () => {
    const responder = await ssdpResponder();
    const started = Date.now();
    const found = await ssdpSearch({ timers: systemTimers, searchTargets: ['roku:ecp', RENDERER.st], timeoutMs: 400, bindAddress: '127.0.0.1', destination: responder });
    expect(Date.now() - started).toBeLessThan(400 + 500);
    expect(found.map((f) => f.usn).sort()).toEqual([RENDERER.usn, ROKU.usn].sort());
    expect(found.find((f) => f.st === 'roku:ecp')).toMatchObject({ location: ROKU.location, headers: expect.objectContaining({ ext: '', 'cache-control': 'max-age=1800' }) });
    // Each target was searched (twice: UDP is lossy), with the UDA headers.
    expect(responder.requests.filter((r) => r.includes('ST: roku:ecp'))).toHaveLength(2);
    expect(responder.requests[0]).toMatch(/^M-SEARCH \* HTTP\/1\.1\r\nHOST: 127\.0\.0\.1:\d+\r\nMAN: "ssdp:discover"\r\nMX: 1\r\nST: /);
  });

  it('searching ssdp:all finds every device, each under its own target', async () => {
    const responder = await ssdpResponder();
    const found = await ssdpSearch({ timers: systemTimers, searchTargets: ['ssdp:all'], timeoutMs: 300, bindAddress: '127.0.0.1', destination: responder });
    expect(found.map((f) => f.st).sort()).toEqual([ROKU.st, RENDERER.st, PRINTER.st].sort());
  });

  it('answers nothing when nobody answers, within the time-out, and stops at once when aborted', async () => {
    const responder = await ssdpResponder([]);
    let started = Date.now();
    expect(await ssdpSearch({ timers: systemTimers, searchTargets: ['roku:ecp'], timeoutMs: 300, bindAddress: '127.0.0.1', destination: responder })).toEqual([]);
    expect(Date.now() - started).toBeLessThan(800);
    const controller = new AbortController();
    started = Date.now();
    const search = ssdpSearch({ timers: systemTimers, searchTargets: ['roku:ecp'], timeoutMs: 5000, bindAddress: '127.0.0.1', destination: responder, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await search).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('skips malformed answers and answers without USN or LOCATION', async () => {
    const responder = await ssdpResponder([ROKU]);
    const search = ssdpSearch({ timers: systemTimers, searchTargets: ['roku:ecp'], timeoutMs: 400, bindAddress: '127.0.0.1', destination: responder });
    await new Promise((r) => setTimeout(r, 100));
    responder.sendRaw('garbage\u0000\u0001');
    responder.sendRaw('HTTP/1.1 200 OK\r\nST: roku:ecp\r\nLOCATION: http://127.0.0.9:8060/\r\n\r\n');
    responder.sendRaw('HTTP/1.1 200 OK\r\nst: roku:ecp\r\nusn: uuid:roku:ecp:LOWERCASE1\nlocation: http://127.0.0.3:8060/\n\n');
    const found = await search;
    expect(found.map((f) => f.usn).sort()).toEqual(['uuid:roku:ecp:LOWERCASE1', ROKU.usn]);
  });

  it('a bind address that is not this machine is a clear error', async () => {
    await expect(ssdpSearch({ timers: systemTimers, searchTargets: ['roku:ecp'], timeoutMs: 100, bindAddress: '192.0.2.1', destination: { address: '127.0.0.1', port: 9 } })).rejects.toThrow(/cannot listen on 192\.0\.2\.1/);
  });
});

describe('mDNS browse', () => {
  it('finds services with SRV, TXT and addresses from the additionals', async () => {
    const responder = await mdnsResponder([TV, TV_CAST, SPEAKER]);
    const found = await mdnsBrowse({ clock: systemClock, timers: systemTimers, serviceTypes: ['_googlecast._tcp', '_androidtvremote2._tcp'], timeoutMs: 400, bindAddress: '127.0.0.1', destination: responder });
    expect(found.map((f) => f.instanceName).sort()).toEqual(['Google-TV-abc', 'Kitchen-speaker', 'Living Room TV']);
    expect(found.find((f) => f.instanceName === 'Living Room TV')).toMatchObject({
      serviceType: '_androidtvremote2._tcp',
      fqdn: 'Living Room TV._androidtvremote2._tcp.local',
      host: 'tv-1.local',
      port: 6466,
      addresses: ['127.0.0.1'],
      txt: { bt: 'AA:BB:CC:DD:EE:FF' },
    });
    expect(found.find((f) => f.instanceName === 'Kitchen-speaker')?.txt).toEqual({ id: 'spk9', fn: 'Kitchen speaker', md: 'Google Nest Mini' });
  });

  it('asks for SRV, TXT and A itself when a responder gives no additionals', async () => {
    const responder = await mdnsResponder([SPEAKER], { withholdAdditionals: true });
    const found = await mdnsBrowse({ clock: systemClock, timers: systemTimers, serviceTypes: ['_googlecast._tcp'], timeoutMs: 600, bindAddress: '127.0.0.1', destination: responder });
    expect(found).toEqual([expect.objectContaining({ instanceName: 'Kitchen-speaker', port: 8009, addresses: ['127.0.0.2'], txt: expect.objectContaining({ id: 'spk9' }) })]);
    expect(responder.questions).toEqual(expect.arrayContaining(['PTR _googlecast._tcp.local', 'SRV Kitchen-speaker._googlecast._tcp.local', 'TXT Kitchen-speaker._googlecast._tcp.local', 'A speaker.local']));
  });

  it('settles by the time-out when nobody answers', async () => {
    const responder = await mdnsResponder([SPEAKER], { silent: true });
    const started = Date.now();
    expect(await mdnsBrowse({ clock: systemClock, timers: systemTimers, serviceTypes: ['_googlecast._tcp'], timeoutMs: 300, bindAddress: '127.0.0.1', destination: responder })).toEqual([]);
    expect(Date.now() - started).toBeLessThan(800);
  });
});

/** A UPnP renderer's description document, served on 127.0.0.2 (the Roku is 127.0.0.1: another device). */
async function rendererDescription(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url !== '/desc.xml') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/xml' });
    res.end('<?xml version="1.0"?><root xmlns="urn:schemas-upnp-org:device-1-0"><device><deviceType>urn:schemas-upnp-org:device:MediaRenderer:1</deviceType><friendlyName>Attic &amp; Hall speakers</friendlyName><manufacturer>Acme</manufacturer><modelName>StreamAmp 2</modelName><UDN>uuid:amp-1</UDN></device></root>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { url: `http://127.0.0.2:${address.port}/desc.xml`, server };
}

describe('POST /media-services/endpoints/discover', () => {
  it('finds Rokus, renderers, Android TVs and cast receivers on loopback responders; new, then found again, then gone', async () => {
    const roku = await startRokuEcpEmulator({ serialNumber: 'X0DISCOVER01', userDeviceName: 'Basement Roku' });
    closers.push(() => roku.close());
    const description = await rendererDescription();
    const rokuAd = { st: 'roku:ecp', usn: `uuid:roku:ecp:${roku.serialNumber}`, location: `http://127.0.0.1:${roku.port}/` };
    const rendererAd = { ...RENDERER, usn: 'uuid:amp-1::urn:schemas-upnp-org:device:MediaRenderer:1', location: description.url };
    const ssdp = await ssdpResponder([rokuAd, rendererAd]);
    const mdns = await mdnsResponder([TV, TV_CAST, SPEAKER]);
    const s = await startServer({ env: { MEDIA_SSDP_ADDRESS: `127.0.0.1:${ssdp.port}`, MEDIA_MDNS_ADDRESS: `127.0.0.1:${mdns.port}`, ROKU_POLL_INTERVAL_MS: '200' } });
    closers.push(() => s.close());
    const token = await s.login();

    const discover = async () => {
      const res = await s.request('POST', '/app/os/media-services/endpoints/discover', { token, body: { timeoutMs: 500 } });
      expect(res.status).toBe(200);
      return (await res.json()) as { found: Array<Record<string, unknown>>; new: string[]; gone: string[]; durationMs: number };
    };
    const first = await discover();
    const ids = ['androidtv:aa:bb:cc:dd:ee:ff', 'cast:spk9', 'dlna:amp-1', `roku:${roku.serialNumber}`];
    expect(first.found.map((f) => f.id).sort()).toEqual(ids);
    expect(first.new.sort()).toEqual(ids);
    expect(first.gone).toEqual([]);
    expect(first.durationMs).toBeLessThan(500 + 2000);
    const byId = new Map(first.found.map((f) => [f.id, f]));
    expect(byId.get(`roku:${roku.serialNumber}`)).toMatchObject({ kind: 'roku', name: 'Basement Roku', host: '127.0.0.1', port: roku.port, origin: 'ssdp', model: 'Roku TV', enabled: true, present: true });
    expect(byId.get('dlna:amp-1')).toMatchObject({ kind: 'dlna', name: 'Attic & Hall speakers', model: 'StreamAmp 2', details: expect.objectContaining({ manufacturer: 'Acme' }) });
    // The Google TV answers both services: one endpoint, the Android TV, with the cast details.
    expect(byId.get('androidtv:aa:bb:cc:dd:ee:ff')).toMatchObject({ kind: 'androidtv', name: 'Living Room TV', port: 6466, model: 'Chromecast HD', paired: false, details: expect.objectContaining({ castId: 'abc123' }) });
    expect(byId.get('cast:spk9')).toMatchObject({ kind: 'cast', name: 'Kitchen speaker', host: '127.0.0.2', model: 'Google Nest Mini' });

    // The Roku and the cast receiver are controlled at once; the unpaired TV and the renderer have nothing to command yet.
    const roster = async () => ((await (await s.request('GET', '/app/os/media/players', { token })).json()) as { players: Array<{ id: string; kind: string; endpointId: string; capabilities: string[] }> }).players;
    for (let i = 0; i < 100 && !(await roster()).some((p) => p.kind === 'roku'); i++) await new Promise((r) => setTimeout(r, 30));
    const players = await roster();
    expect(players.map((p) => p.kind).sort()).toEqual(['androidtv', 'cast', 'dlna', 'roku']);
    expect(players.find((p) => p.kind === 'cast')?.capabilities).toEqual(['play', 'pause', 'toggle', 'stop', 'seek', 'volume_set', 'mute']);
    expect(players.find((p) => p.kind === 'dlna')?.capabilities).toEqual([]);
    expect(players.find((p) => p.kind === 'androidtv')?.capabilities).toEqual([]);

    // Found again: nothing new. Then the speaker and the renderer stop answering: gone, but kept.
    const second = await discover();
    expect(second.new).toEqual([]);
    expect(second.found).toHaveLength(4);
    mdns.setServices([TV, TV_CAST]);
    ssdp.setDevices([rokuAd]);
    const third = await discover();
    expect(third.gone.sort()).toEqual(['cast:spk9', 'dlna:amp-1']);
    const endpoints = ((await (await s.request('GET', '/app/os/media-services/endpoints', { token })).json()) as { endpoints: Array<{ id: string; present: boolean }> }).endpoints;
    expect(endpoints.find((e) => e.id === 'cast:spk9')).toMatchObject({ present: false });
    expect(endpoints).toHaveLength(4);
  });
});
