import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { LazySchemas } from '../src/surfaces/http/lazy-compile.js';
import { HttpListener } from '../src/surfaces/http/listener.js';
import { startServer, type TestServer } from './support/server.js';

let server: TestServer | undefined;
let listener: HttpListener | undefined;
afterEach(async () => {
  await server?.close();
  await listener?.close();
  server = undefined;
  listener = undefined;
});

/** Waits, a bounded number of event-loop turns, until `condition` holds. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
  if (!condition()) throw new Error(`timed out waiting until ${what}`);
}

async function listening(): Promise<{ listener: HttpListener; url: string; port: number }> {
  listener = new HttpListener();
  const { port } = await listener.listen(0, '127.0.0.1');
  return { listener, url: `http://127.0.0.1:${port}`, port };
}

describe('HTTP listener before the service has loaded', () => {
  it('answers /healthz at once, with the request id, and GET and HEAD alike', async () => {
    const { url } = await listening();
    const res = await fetch(`${url}/healthz?probe=1`, { headers: { 'x-request-id': 'probe-7' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-request-id')).toBe('probe-7');
    expect(await res.json()).toEqual({ status: 'ok' });
    const head = await fetch(`${url}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await head.text()).toBe('');
  });

  it('holds every other request until the service opens, then hands it over', async () => {
    const { listener: l, url } = await listening();
    l.serverFactory((request, response) => response.end(`service answers ${request.method} ${request.url}`));
    const early = fetch(`${url}/readyz`).then(async (res) => ({ status: res.status, body: await res.text() }));
    await until(() => l.held === 1, 'the request is held');
    expect(l.open()).toBe(1);
    expect(await early).toEqual({ status: 200, body: 'service answers GET /readyz' });
    // From now on the service answers everything, /healthz included.
    expect(await (await fetch(`${url}/healthz`)).text()).toBe('service answers GET /healthz');
  });

  it('holds an upgrade nothing listens for yet and replays it once the service opens', async () => {
    const { listener: l, port } = await listening();
    l.serverFactory((_request, response) => response.end());
    const client = new WebSocket(`ws://127.0.0.1:${port}/driver`);
    const opened = new Promise<void>((resolve, reject) => {
      client.once('open', () => resolve());
      client.once('error', reject);
    });
    await until(() => l.held === 1, 'the upgrade is held');
    const wss = new WebSocketServer({ noServer: true });
    l.server.on('upgrade', (request, socket, head) => wss.handleUpgrade(request, socket, head, (ws) => ws.send('welcome')));
    const greeting = new Promise<string>((resolve) => client.once('message', (data) => resolve(String(data))));
    l.open();
    await opened;
    expect(await greeting).toBe('welcome');
    client.close();
    wss.close();
  });

  it('closes held requests when the service stops before it opened', async () => {
    const { listener: l, url } = await listening();
    const early = fetch(`${url}/app/os/devices`).then(
      () => 'answered',
      () => 'connection closed',
    );
    await until(() => l.held === 1, 'the request is held');
    await l.close();
    expect(await early).toBe('connection closed');
    expect(l.listening).toBe(false);
  });

  it('is the server the service answers on, with /healthz unchanged once it has started', async () => {
    server = await startServer();
    const { port } = server.app.http.app.server.address() as AddressInfo;
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/healthz' }, (r) => {
        let body = '';
        r.on('data', (chunk) => (body += chunk));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
      }).on('error', reject);
    });
    expect(res).toEqual({ status: 200, body: JSON.stringify({ status: 'ok' }) });
  });
});

describe('route schemas compiled on first use', () => {
  it('compiles every route schema of the service without error', async () => {
    server = await startServer();
    expect(() => server!.app.http.compileAllSchemas()).not.toThrow();
    expect(() => server!.app.hub.operations.compileAll()).not.toThrow();
    // Validation behaves as it did when schemas were compiled at start: coerced, then checked.
    const res = await server.request('GET', '/app/os/devices?includeRemoved=maybe', { token: await server.login() });
    expect(res.status).toBe(400);
  });

  it('reports a response schema that does not compile when asked, not when the route is added', () => {
    const lazy = new LazySchemas();
    const compile = lazy.serializers()({}, {} as never);
    const serialize = compile({ schema: { type: 'object', properties: { a: { $ref: '#/nowhere' } } }, method: 'GET', url: '/x', httpStatus: '200' } as never);
    expect(typeof serialize).toBe('function');
    expect(() => lazy.compileAll()).toThrow();
  });
});
