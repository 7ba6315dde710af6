import { createHash, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type tls from 'node:tls';
import { io as connectSocket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCa } from '../src/adapters/https/local-ca.js';
import { ManualClock } from '../src/platform/clock.js';
import { launchBrowser, newPage, screenshot, seriousViolations, signInWithForm } from './support/browser.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';

/**
 * HTTPS beside HTTP, against clients the hub did not write: Node's TLS client given the CA (and
 * not), Socket.IO over wss, and Chromium trusting the CA by its key and resolving a LAN-style
 * name to 127.0.0.2, where the household app's service worker must register.
 */
type Status = { alwaysHttps: boolean; state: string; port: number | null; lastError?: string; certificate?: { source: string; names: string[]; fingerprint256: string; notAfter: number }; caFingerprint256?: string };

const statusOf = async (s: TestServer, token: string) => (await (await s.request('GET', '/v1/os/https/status', { token })).json()) as Status;
/** HTTPS starts after the hub is ready: its status, once it is `state`. */
const once = (s: TestServer, token: string, state: 'serving' | 'failed') =>
  eventually(async () => {
    const current = await statusOf(s, token);
    return current.state === state ? current : undefined;
  }, 10_000, `HTTPS ${state}`);

/** GET over TLS: the status, the body and the certificate the server showed. */
function tlsGet(port: number, pathname: string, options: { ca?: string; servername?: string; host?: string; headers?: Record<string, string>; anyCertificate?: boolean } = {}) {
  return new Promise<{ status: number; body: string; peer: X509Certificate }>((resolve, reject) => {
    const req = https.get({ host: options.host ?? '127.0.0.1', port, path: pathname, ...(options.ca ? { ca: options.ca } : {}), servername: options.servername ?? 'localhost', headers: options.headers ?? {}, agent: false, ...(options.anyCertificate ? { rejectUnauthorized: false } : {}) }, (res) => {
      const peer = new X509Certificate((res.socket as tls.TLSSocket).getPeerCertificate(false).raw);
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, peer }));
    });
    req.on('error', reject);
  });
}

describe('HTTPS with the local CA', () => {
  let server: TestServer;
  let token: string;
  let status: Status;
  let caPem: string;
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    server = await startServer({ clock, env: { HTTPS_PORT: '0', HTTPS_NAMES: 'hub.test' } });
    token = await server.login();
    status = await once(server, token, 'serving');
    caPem = (await (await server.request('GET', '/os/https/ca.crt')).text());
  }, 30_000);
  afterAll(async () => server?.close());

  it('serves the same routes over HTTPS, with a certificate for the hub\'s names that the CA signed', async () => {
    expect(status.certificate).toMatchObject({ source: 'local-ca' });
    expect(status.certificate!.names).toEqual(expect.arrayContaining(['localhost', 'hub.test', `${os.hostname().toLowerCase()}.local`, '127.0.0.1']));
    const ca = new X509Certificate(caPem);
    expect(ca.ca).toBe(true);
    expect(status.caFingerprint256).toBe(ca.fingerprint256);
    const health = await tlsGet(status.port!, '/healthz', { ca: caPem, servername: 'hub.test' });
    expect(health.status).toBe(200);
    expect(health.peer.checkIssued(ca)).toBe(true);
    const devices = await tlsGet(status.port!, '/v1/os/devices', { ca: caPem, headers: { authorization: `Bearer ${token}` } });
    expect(devices.status).toBe(200);
    expect(JSON.parse(devices.body)).toHaveProperty('devices');
    // A client that does not trust the CA is refused by its own TLS, as it should be.
    await expect(tlsGet(status.port!, '/healthz')).rejects.toThrow(/certificate/i);
    // Plain HTTP goes on as before.
    expect((await server.request('GET', '/healthz')).status).toBe(200);
  });

  it('carries Socket.IO over wss', async () => {
    const socket = connectSocket(`https://127.0.0.1:${status.port}/socket/device-state`, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true, ca: caPem, servername: 'localhost' } as never);
    try {
      await new Promise<void>((resolve, reject) => {
        socket.on('connect', () => resolve());
        socket.on('connect_error', reject);
      });
      expect(socket.connected).toBe(true);
    } finally {
      socket.close();
    }
  });

  it('hands out the CA without a session, and says on plain HTTP what HTTPS gives, with the link', async () => {
    const download = await server.request('GET', '/os/https/ca.crt');
    expect(download.headers.get('content-type')).toContain('application/x-x509-ca-cert');
    expect(download.headers.get('content-disposition')).toContain('home-control-ca.crt');
    const cookie = await signInCookie(server);
    const overHttp = await (await server.request('GET', '/os/https', { headers: { cookie, accept: 'text/html' } })).text();
    expect(overHttp).toContain('class="https-notice"');
    expect(overHttp).toContain(`https://127.0.0.1:${status.port}/os/https`);
    expect(overHttp).toContain(status.caFingerprint256!);
    for (const system of ['iPhone and iPad', 'Android', 'Mac', 'Windows']) expect(overHttp).toContain(system);
    const overHttps = await tlsGet(status.port!, '/os/https', { ca: caPem, headers: { cookie, accept: 'text/html' } });
    expect(overHttps.status).toBe(200);
    expect(overHttps.body).not.toContain('class="https-notice"');
    expect(overHttps.body).toContain('This page is on a secure connection.');
  });

  it('"always use HTTPS" sends page loads on plain HTTP to HTTPS, but not API clients, nor the CA for a new device', async () => {
    const cookie = await signInCookie(server);
    const set = async (alwaysHttps: boolean) => server.request('POST', '/v1/os/https/settings', { token, body: { alwaysHttps } });
    // Eight admins at once: every answer is whole, and the last word stands.
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => set(i % 2 === 0)));
    for (const a of answers) expect(a.status).toBe(200);
    expect((await set(true)).status).toBe(200);
    expect((await statusOf(server, token)).alwaysHttps).toBe(true);
    // Redirects are looked at, not followed.
    const plain = (p: string, headers: Record<string, string> = {}) => fetch(`${server.url}${p}`, { headers, redirect: 'manual' });
    const page = await plain('/os/rooms?x=1', { cookie, accept: 'text/html' });
    expect(page.status).toBe(307);
    expect(page.headers.get('location')).toBe(`https://127.0.0.1:${status.port}/os/rooms?x=1`);
    expect((await plain('/admin/', { accept: 'text/html' })).status).toBe(307);
    expect((await plain('/os/https/ca.crt')).status).toBe(200);
    expect((await plain('/os/https', { cookie, accept: 'text/html' })).status).toBe(200);
    expect((await server.request('GET', '/v1/os/devices', { token })).status).toBe(200);
    expect((await server.request('GET', '/app/programs', { headers: { cookie } })).status).toBe(200);
    // Over HTTPS the page is served.
    expect((await tlsGet(status.port!, '/os/rooms', { ca: caPem, headers: { cookie, accept: 'text/html' } })).status).toBe(200);
    expect((await set(false)).status).toBe(200);
    expect((await plain('/os/rooms', { cookie, accept: 'text/html' })).status).toBe(200);
  });

  it('renews the certificate before it expires, and serves the new one without a restart', async () => {
    const before = (await tlsGet(status.port!, '/healthz', { ca: caPem })).peer;
    clock.advance(Date.parse(before.validTo) - 20 * 86_400_000 - clock.now());
    await server.app.hub.https.service.check();
    // Issued at the hub's (injected) time, a month ahead of this machine's: not yet valid here, so read, not trusted.
    const after = (await tlsGet(status.port!, '/healthz', { anyCertificate: true })).peer;
    expect(after.checkIssued(new X509Certificate(caPem))).toBe(true);
    expect(after.fingerprint256).not.toBe(before.fingerprint256);
    expect(Date.parse(after.validTo)).toBeGreaterThan(Date.parse(before.validTo));
    // A year on, the session is long gone: signed in again.
    const renewed = await statusOf(server, await server.login());
    expect(renewed.certificate?.fingerprint256, JSON.stringify(renewed)).toBe(after.fingerprint256);
  });
});

describe('HTTPS with the admin\'s own certificate files', () => {
  it('serves them, and the next pair once the files change, with no restart; a bad pair keeps the one served', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-tls-files-'));
    const own = new LocalCa(path.join(dir, 'own-ca'), () => Date.now());
    const first = await own.serverCertificate({ hostNames: ['localhost'], addresses: ['127.0.0.1'] });
    const certFile = path.join(dir, 'cert.pem');
    const keyFile = path.join(dir, 'key.pem');
    fs.writeFileSync(certFile, first.certPem);
    fs.writeFileSync(keyFile, first.keyPem);
    const server = await startServer({ env: { HTTPS_PORT: '0', TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } });
    try {
      const token = await server.login();
      const serving = await once(server, token, 'serving');
      expect(serving.certificate?.source).toBe('files');
      const ca = await own.caCertificatePem();
      expect((await tlsGet(serving.port!, '/healthz', { ca })).peer.fingerprint256).toBe(new X509Certificate(first.certPem).fingerprint256);
      // The local CA is not in use: nothing to download.
      expect((await server.request('GET', '/os/https/ca.crt')).status).toBe(404);

      const second = await own.serverCertificate({ hostNames: ['localhost', 'renamed'], addresses: ['127.0.0.1'] });
      fs.writeFileSync(certFile, second.certPem);
      fs.writeFileSync(keyFile, second.keyPem);
      await server.app.hub.https.service.check();
      expect((await tlsGet(serving.port!, '/healthz', { ca })).peer.fingerprint256).toBe(new X509Certificate(second.certPem).fingerprint256);

      // A key that is not the certificate's: refused, the served pair stays, the status says why.
      fs.writeFileSync(keyFile, first.keyPem);
      await server.app.hub.https.service.check();
      expect((await tlsGet(serving.port!, '/healthz', { ca })).peer.fingerprint256).toBe(new X509Certificate(second.certPem).fingerprint256);
      expect((await statusOf(server, token)).lastError).toMatch(/not replaced/);
    } finally {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('an HTTPS_PORT another program holds', () => {
  it('is a failed status that names the program, and HTTP goes on', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const port = (squatter.address() as net.AddressInfo).port;
    const server = await startServer({ env: { HTTPS_PORT: String(port) } });
    try {
      const token = await server.login();
      const failed = await once(server, token, 'failed');
      expect(failed.lastError).toContain(`port ${port} is held by node (pid ${process.pid})`);
      // Not while it does not serve: every browser would be sent to an address that does not answer.
      const refused = await server.request('POST', '/v1/os/https/settings', { token, body: { alwaysHttps: true } });
      expect(refused.status).toBe(409);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('HTTPS_NOT_SERVING');
      expect((await server.request('GET', '/v1/os/devices', { token })).status).toBe(200);
    } finally {
      await server.close();
      squatter.close();
    }
  });
});

describe('the household app over HTTPS in Chromium', () => {
  it('registers its service worker at a LAN-style name that resolves to 127.0.0.2, the CA trusted', async () => {
    const server = await startServer({ env: { HTTPS_PORT: '0', HTTPS_NAMES: 'myhub.home.test', HOST: '0.0.0.0' } });
    try {
      const token = await server.login();
      const serving = await once(server, token, 'serving');
      const caPem = await (await server.request('GET', '/os/https/ca.crt')).text();
      // Past the first-run onboarding, so that the home page (which registers the worker) opens.
      expect((await server.request('POST', '/v1/os/home/settings', { token, body: { onboarded: true } })).status).toBe(200);
      // Chromium trusts the hub's certificate by its key's hash (what a device that installed the CA gets).
      const spki = createHash('sha256').update(new X509Certificate((await tlsGet(serving.port!, '/healthz', { ca: caPem, servername: 'myhub.home.test' })).peer.raw).publicKey.export({ type: 'spki', format: 'der' })).digest('base64');
      const browser = await launchBrowser([`--host-resolver-rules=MAP myhub.home.test 127.0.0.2`, `--ignore-certificate-errors-spki-list=${spki}`]);
      try {
        const page = await newPage(browser, { width: 390, height: 844 });
        const base = `https://myhub.home.test:${serving.port}`;
        await signInWithForm(page, base, ADMIN);
        await page.goto(`${base}/os/`);
        expect(await page.evaluate('window.isSecureContext')).toBe(true);
        const scope = await page.evaluate('navigator.serviceWorker.ready.then((r) => r.scope)');
        expect(scope).toBe(`${base}/os/`);
        await page.goto(`${base}/os/https`);
        expect(await page.locator('.https-notice').count()).toBe(0);
        expect(await seriousViolations(page)).toEqual([]);
        await screenshot(page, 'os-https-phone');
      } finally {
        await browser.close();
      }
    } finally {
      await server.close();
    }
  }, 60_000);
});

async function signInCookie(server: TestServer): Promise<string> {
  const res = await server.request('POST', '/app/auth/login', { body: ADMIN });
  return res.headers.get('set-cookie')!.split(';')[0]!;
}
