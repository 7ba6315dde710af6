import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startServer, type TestServer } from './support/server.js';
import { SseClient } from './support/sse-client.js';
import { eventually, TestDriver } from './support/ws-driver.js';

/**
 * The household's home page with 200 devices of mixed classes, in ten rooms: what it weighs on
 * the wire (compressed for a browser that asks, whole for one that does not), and that the live
 * stream is not held back by the compression.
 */

let server: TestServer;
let token: string;
let driver: TestDriver;
let cookie: string;

type Json = Record<string, unknown>;

const DEVICE_COUNT = 200;
const ROOMS = ['Kitchen', 'Living room', 'Hall', 'Bedroom', 'Bathroom', 'Office', 'Garage', 'Garden', 'Attic', 'Basement'];

/** One of each class the tiles draw, as a driver reports them (the same shapes as web-ui-tiles.test.ts). */
const KINDS = [
  (n: number) => ({ name: `Ceiling light ${n}`, deviceClass: 'light', attributes: { colorModes: ['onoff', 'brightness', 'color_temp', 'hs'], minKelvin: 2200, maxKelvin: 6500 }, state: { on: n % 2 === 0, brightness: n % 100, color_temp_kelvin: 3000, hue: 30, saturation: 40 } }),
  (n: number) => ({ name: `Dimmer ${n}`, deviceClass: 'light', attributes: { colorModes: ['onoff', 'brightness'] }, state: { on: true, brightness: 50 } }),
  (n: number) => ({ name: `Wall plug ${n}`, deviceClass: 'outlet', state: { on: true, power_w: n } }),
  (n: number) => ({ name: `Switch ${n}`, deviceClass: 'switch', state: { on: false } }),
  (n: number) => ({ name: `Blind ${n}`, deviceClass: 'cover', state: { position: n % 100 } }),
  (n: number) => ({ name: `Thermostat ${n}`, deviceClass: 'climate', attributes: { hvacModes: ['off', 'heat', 'cool'], temperatureStep: 0.5 }, state: { current_temperature: 19.5, target_temperature: 21, hvac_mode: 'heat' } }),
  (n: number) => ({ name: `Fan ${n}`, deviceClass: 'fan', state: { on: false, percentage: 0 } }),
  (n: number) => ({ name: `Door lock ${n}`, deviceClass: 'lock', state: { locked: true } }),
  (n: number) => ({ name: `Temperature ${n}`, deviceClass: 'sensor', attributes: { sensorClass: 'temperature', unit: '°C' }, state: { temperature: 20 + (n % 5) } }),
  (n: number) => ({ name: `Contact ${n}`, deviceClass: 'binary_sensor', attributes: { sensorClass: 'contact' }, state: { contact: n % 2 === 0 } }),
  (n: number) => ({ name: `Speaker ${n}`, deviceClass: 'media_player', commands: ['turn_on', 'turn_off', 'play', 'pause', 'next', 'previous', 'volume_set'], state: { on: true, playback: 'paused', volume: 20, title: 'Blue in Green', artist: 'Miles Davis' } }),
  (n: number) => ({ name: `IR remote ${n}`, deviceClass: 'remote', commands: ['power', 'input_cd', 'volume_up', 'volume_down'], state: {} }),
];

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The bytes as they came over the wire, before any decoding. */
  body: Buffer;
}

/** A GET with node:http, which decodes nothing: the body is what was transferred. */
function rawGet(path: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    http
      .get(`${server.url}${path}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

const KB = 1024;
const kb = (n: number) => `${(n / KB).toFixed(1)} KB`;

beforeAll(async () => {
  server = await startServer();
  token = await server.login();
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.weight');
  driver.serveActions(() => undefined);
  for (let i = 0; i < DEVICE_COUNT; i++) driver.send({ type: 'DEVICE_DISCOVERED', device: { id: `dev-${i}`, ...KINDS[i % KINDS.length]!(i) } });
  const ids = await eventually(
    async () => {
      const list = ((await (await server.request('GET', '/app/os/devices', { token })).json()) as Json).devices as Array<{ id: string; driverDeviceId: string }>;
      return list.length >= DEVICE_COUNT ? list.map((d) => d.id) : undefined;
    },
    20_000,
    'the 200 devices',
  );
  for (const [r, name] of ROOMS.entries()) {
    const space = ((await (await server.request('POST', '/app/os/spaces/save', { token, body: { name } })).json()) as { id: string }).id;
    const inRoom = ids.filter((_id, i) => i % ROOMS.length === r);
    expect((await server.request('POST', `/app/os/spaces/${space}/devices/assign`, { token, body: { deviceIds: inRoom } })).status).toBe(200);
  }
  const login = await server.request('POST', '/app/auth/login', { body: ADMIN });
  cookie = login.headers.get('set-cookie')!.split(';')[0]!;
}, 60_000);

afterAll(async () => {
  driver?.close();
  await server?.close();
});

describe('the home page with 200 devices', () => {
  let plain: string;

  it('answers a client that asks for no encoding with the whole page, uncompressed', async () => {
    const res = await rawGet('/os/', { cookie });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.headers['content-encoding']).toBeUndefined();
    plain = res.body.toString('utf8');
    expect(plain.startsWith('<!doctype html>')).toBe(true);
    expect(plain.trimEnd().endsWith('</html>')).toBe(true);
    expect(plain.match(/<article class="tile/g)?.length).toBe(DEVICE_COUNT);
    for (const room of ROOMS) expect(plain).toContain(`>${room}</h2>`);
    // The token is in the page once for scripts; every form still carries it, for a browser without JavaScript.
    expect(plain.match(/<meta name="csrf-token"/g)?.length).toBe(1);
    const forms = plain.match(/<form method="post"/g)?.length ?? 0;
    expect(plain.match(/name="?_csrf"?/g)?.length).toBe(forms);
    console.info(`home page, 200 devices: ${kb(res.body.length)} uncompressed, ${forms} forms`);
  });

  it('sends it to a browser brotli-compressed, under 60 KB on the wire', async () => {
    const res = await rawGet('/os/', { cookie, 'accept-encoding': 'br, gzip' });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers.vary).toMatch(/accept-encoding/i);
    expect(res.body.length).toBeLessThan(60 * KB);
    // The same page, decoded (both requests share the session, so the same token).
    const decoded = brotliDecompressSync(res.body).toString('utf8');
    expect(decoded.length).toBe(plain.length);
    expect(decoded.match(/<article class="tile/g)?.length).toBe(DEVICE_COUNT);
    console.info(`home page, 200 devices: ${kb(res.body.length)} brotli (${((res.body.length / decoded.length) * 100).toFixed(1)} %)`);
  });

  it('falls back to gzip for a client without brotli', async () => {
    const res = await rawGet('/os/', { cookie, 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.body.length).toBeLessThan(60 * KB);
    expect(gunzipSync(res.body).toString('utf8').length).toBe(plain.length);
    console.info(`home page, 200 devices: ${kb(res.body.length)} gzip`);
  });

  it('compresses a JSON answer of the API whole, also from an operation that answers asynchronously', async () => {
    const res = await rawGet('/app/os/spaces/overview', { authorization: `Bearer ${token}`, 'accept-encoding': 'br, gzip' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.headers['content-encoding']).toBe('br');
    const overview = JSON.parse(brotliDecompressSync(res.body).toString('utf8')) as { spaces: Array<{ devices: unknown[] }> };
    expect(overview.spaces.flatMap((s) => s.devices)).toHaveLength(DEVICE_COUNT);
  });

  it('leaves small answers and images as they are', async () => {
    const health = await rawGet('/healthz', { 'accept-encoding': 'br, gzip' });
    expect(health.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(health.body.toString())).toEqual({ status: 'ok' });
    const icon = await rawGet('/os/assets/icon-192.png', { 'accept-encoding': 'br, gzip' });
    if (icon.status === 200) {
      expect(icon.headers['content-type']).toBe('image/png');
      expect(icon.headers['content-encoding']).toBeUndefined();
    }
  });

  it('still takes a form posted without JavaScript, with the token of its hidden field', async () => {
    const form = /<form method="post" action="(\/os\/devices\/[^"]+\/command)"[^>]*>(.*?)<\/form>/s.exec(plain.slice(plain.indexOf('data-class="switch"')))!;
    const field = (name: string) => new RegExp(`<input type="?hidden"? name="?${name.replace('.', '\\.')}"? value="?([^"> ]+)"?`).exec(form[2]!)![1]!;
    const body = new URLSearchParams({ _csrf: field('_csrf'), command: field('command') }).toString();
    const res = await fetch(`${server.url}${form[1]}`, { method: 'POST', redirect: 'manual', headers: { cookie, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toContain('done=');
    const without = await fetch(`${server.url}${form[1]}`, { method: 'POST', redirect: 'manual', headers: { cookie, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: 'command=turn_on' });
    expect(without.status).toBe(403);
  });

  it('streams the live state at once with compression on: no encoding, each event flushed', async () => {
    const sse = await SseClient.open(`${server.url}/os/events`, { cookie, 'accept-encoding': 'br, gzip' });
    try {
      expect(sse.status).toBe(200);
      expect(sse.headers?.get('content-type')).toContain('text/event-stream');
      expect(sse.headers?.get('content-encoding')).toBeNull();
      await sse.next((e) => e.event === 'ready', 1000);
      const sent = Date.now();
      driver.send({ type: 'STATE_UPDATE', deviceId: 'dev-3', state: { on: true } });
      await sse.next((e) => e.event === 'state', 1000);
      expect(Date.now() - sent).toBeLessThan(1000);
    } finally {
      sse.close();
    }
  });
});
