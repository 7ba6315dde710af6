import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/app.js';
import { LogRing } from '../src/logger.js';
import { loadConfig } from '../src/config.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';
import { ManualClock } from '../src/platform/clock.js';
import { TestDriver, eventually, type Message } from './support/ws-driver.js';

let server: TestServer;
afterEach(async () => server?.close());

type ErrorBody = { error: { code: string; message: string; details?: unknown; requestId?: string } };

describe('errors per CONTRACT', () => {
  it('answers unknown routes 404 in JSON', async () => {
    server = await startServer();
    const token = await server.login();
    for (const path of ['/nowhere', '/app/os/nowhere', '/v1/os/devices/x/y/z']) {
      const res = await server.request('GET', path, { token });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect(((await res.json()) as ErrorBody).error.code).toBe('ROUTE_NOT_FOUND');
    }
  });

  it('names the offending field on validation failures', async () => {
    server = await startServer();
    const res = await server.request('POST', '/api/os/auth/login', { body: { username: 'admin' } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.code).toBe('VALIDATION_FAILED');
    expect(body.error.details).toEqual([expect.objectContaining({ field: 'body.password' })]);
    const wrongType = (await (await server.request('POST', '/api/os/auth/login', { body: { username: 7, password: 'x' } })).json()) as ErrorBody;
    expect(JSON.stringify(wrongType.error.details)).toContain('body.username');
  });

  it('answers 413 past the body limit and 415 for a wrong content type', async () => {
    server = await startServer({ env: { BODY_LIMIT_BYTES: '2048' } });
    const big = await server.request('POST', '/v1/os/auth/login', { body: { username: 'a', password: 'x'.repeat(4096) } });
    expect(big.status).toBe(413);
    expect(((await big.json()) as ErrorBody).error.code).toBe('BODY_TOO_LARGE');
    const text = await server.request('POST', '/v1/os/auth/login', { body: 'username=a', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    const form = await server.request('POST', '/v1/os/auth/login', { body: 'username=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
  });

  it('answers an unexpected failure with 500, a request id and no stack trace', async () => {
    server = await startServer({
      beforeStart: (app) =>
        app.http.app.get('/boom', { config: { access: 'public' } }, async () => {
          throw new Error('secret internals at /src/whatever.ts:12');
        }),
    });
    const res = await server.request('GET', '/boom', { headers: { 'x-request-id': 'trace-me-1' } });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('secret internals');
    expect(text).not.toContain('.ts:');
    const body = JSON.parse(text) as ErrorBody;
    expect(body.error).toMatchObject({ code: 'INTERNAL_ERROR', requestId: 'trace-me-1' });
    expect(res.headers.get('x-request-id')).toBe('trace-me-1');
  });

  it('answers 403 to a valid token without the os_api_admin scope', async () => {
    server = await startServer();
    // A non-admin account, created through the domain as a future registration route would.
    const { hashPassword } = await import('../src/domain/auth/passwords.js');
    const { KyselyUserRepository } = await import('../src/storage/repositories/auth.js');
    await new KyselyUserRepository(server.app.hub.storage.db).insert({
      id: 'u-1',
      username: 'guest',
      passwordHash: await hashPassword('guest-password'),
      role: 'user',
      disabled: false,
      mustChangePassword: false,
      createdAt: 0,
      updatedAt: 0,
    });
    const login = await server.request('POST', '/app/auth/login', { body: { username: 'guest', password: 'guest-password' } });
    const token = ((await login.json()) as { data: { token: string; scope: string } }).data.token;
    const res = await server.request('GET', '/app/os/auth/me', { token });
    expect(res.status).toBe(403);
    expect(((await res.json()) as ErrorBody).error.code).toBe('INSUFFICIENT_SCOPE');
    expect((await server.request('GET', '/app/auth/me', { token })).status).toBe(200);
  });
});

describe('health and readiness', () => {
  it('serves /healthz while starting, /readyz 503, and holds other requests until the hub is ready', async () => {
    const clock = new ManualClock(Date.now());
    server = await startServer({ clock, timers: clock });
    expect((await server.request('GET', '/healthz')).status).toBe(200);
    expect(await (await server.request('GET', '/readyz')).json()).toEqual({ status: 'ready' });
    server.app.hub.readiness.markNotReady('drivers');
    const starting = await server.request('GET', '/readyz');
    expect(starting.status).toBe(503);
    expect(await starting.json()).toMatchObject({ status: 'starting', waitingFor: ['drivers'] });
    expect((await server.request('GET', '/healthz')).status).toBe(200);

    // A sign-in while the hub starts waits for it, and gets its answer once the hub is ready.
    const held = server.request('POST', '/app/os/auth/login', { body: ADMIN });
    await until(() => server.app.hub.readiness.waiting === 1);
    clock.advance(9_999);
    server.app.hub.readiness.markReady('drivers');
    expect((await held).status).toBe(200);

    // One the hub does not get ready for within STARTUP_HOLD_MS (10 s) is answered 503, with Retry-After.
    server.app.hub.readiness.markNotReady('drivers');
    const late = server.request('POST', '/app/os/auth/login', { body: ADMIN });
    await until(() => server.app.hub.readiness.waiting === 1);
    clock.advance(10_000);
    const api = await late;
    expect(api.status).toBe(503);
    expect(((await api.json()) as ErrorBody).error.code).toBe('NOT_READY');
    expect(api.headers.get('retry-after')).toBe('1');
    server.app.hub.readiness.markReady('drivers');
  });

  it('answers 503 NOT_READY at once while starting with STARTUP_HOLD_MS=0', async () => {
    server = await startServer({ env: { STARTUP_HOLD_MS: '0' } });
    server.app.hub.readiness.markNotReady('drivers');
    const api = await server.request('POST', '/app/os/auth/login', { body: ADMIN });
    expect(api.status).toBe(503);
    expect(api.headers.get('retry-after')).toBe('1');
    server.app.hub.readiness.markReady('drivers');
  });
});

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('OpenAPI', () => {
  it('serves an OpenAPI 3 document and the browsable UI', async () => {
    server = await startServer();
    const doc = (await (await server.request('GET', '/openapi.json')).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/app/os/auth/login', '/api/os/auth/me', '/v1/os/auth/stream-token', '/app/auth/login', '/healthz']));
    const ui = await server.request('GET', '/docs/');
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/swagger/i);
  });
});

describe('App API session', () => {
  it('logs in with the envelope, sets the session cookie, and logout ends it', async () => {
    server = await startServer();
    const res = await server.request('POST', '/api/auth/login', { body: ADMIN });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: boolean; message: string; data: { token: string; csrfToken: string } };
    expect(body.status).toBe(true);
    expect(typeof body.data.token).toBe('string');
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/hcs_session=.+HttpOnly/i);
    const session = cookie.split(';')[0]!;

    const me = await server.request('GET', '/api/auth/me', { headers: { cookie: session } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ status: true, data: { username: 'admin' } });
    expect((await server.request('GET', '/app/auth/me', { token: body.data.token })).status).toBe(200);
    // The admin panel signs in on its own (a SameSite=Strict cookie scoped to /admin): the App API session is no admin session.
    expect((await server.request('GET', '/admin/users', { headers: { cookie: session } })).status).toBe(401);

    // Signed in by the cookie alone, a change carries its CSRF token (docs/app-api.md).
    const out = await server.request('POST', '/app/auth/logout', { headers: { cookie: session, 'x-csrf-token': body.data.csrfToken } });
    expect(out.status).toBe(200);
    const after = await server.request('GET', '/api/auth/me', { headers: { cookie: session } });
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ status: false, data: null, code: 'INVALID_TOKEN' });
  });

  it('answers App API failures in the envelope with the HTTP status', async () => {
    server = await startServer();
    const bad = await server.request('POST', '/app/auth/login', { body: { username: 'admin', password: 'wrong-one' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ status: false, data: null, message: expect.any(String) });
    const missing = await server.request('GET', '/app/no-such-thing', { token: await server.login() });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ status: false, data: null });
  });
});

describe('other route families', () => {
  it('mounts remote, admin and the web UI; /dev only in development', async () => {
    server = await startServer();
    const token = await server.login();
    for (const base of ['/remote', '/v1/remote']) expect((await server.request('GET', `${base}/info`)).status).toBe(200);
    expect((await server.request('GET', '/admin/users')).status).toBe(401);
    const users = (await (await server.request('GET', '/admin/users', { token })).json()) as { users: Array<Record<string, unknown>> };
    expect(users.users.map((u) => u.username)).toEqual(['admin']);
    expect(JSON.stringify(users)).not.toMatch(/scrypt|password/i);
    expect((await server.request('GET', '/admin/system', { token })).status).toBe(200);
    // A browser without a session is sent to the sign-in page; an API client gets 401.
    const ui = await server.request('GET', '/os/', { headers: { accept: 'text/html' } });
    expect(ui.url).toMatch(/\/os\/login\?next=%2Fos%2F$/);
    expect(ui.headers.get('content-type')).toMatch(/text\/html/);
    expect(await ui.text()).toContain('Sign in');
    expect((await server.request('GET', '/os/')).status).toBe(401);
    const signedIn = await server.request('GET', '/os/', { headers: { cookie: `hcs_session=${token}` } });
    expect(await signedIn.text()).toContain('Signed in as');
    expect((await server.request('GET', '/dev/routes')).status).toBe(404);
    await server.close();

    server = await startServer({ env: { NODE_ENV: 'development' } });
    const routes = (await (await server.request('GET', '/dev/routes')).json()) as { routes: Array<{ url: string }> };
    expect(routes.routes.some((r) => r.url === '/v1/os/auth/me')).toBe(true);
    const config = JSON.stringify(await (await server.request('GET', '/dev/config')).json());
    expect(config).not.toContain(ADMIN.password);
  });
});

describe('request log', () => {
  type Line = Record<string, unknown>;
  const LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

  /** The service's own logger at `level`, writing into memory. */
  function capturedLog(level: string) {
    const lines: Line[] = [];
    let raw = '';
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        raw += chunk.toString();
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Line);
        done();
      },
    });
    return { logger: createLogger({ logLevel: level }, sink), requests: () => lines.filter((l) => l.msg === 'request'), raw: () => raw };
  }

  /** A device of a WebSocket test driver whose commands `answer` settles. */
  async function deviceOf(s: TestServer, token: string, answer: (action: Message, driver: TestDriver) => void) {
    const driver = await TestDriver.register(`${s.url.replace('http', 'ws')}/driver`, 'acme.log');
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Lamp', commands: ['turn_on'] } });
    const listed = await eventually(async () => {
      const { devices } = (await (await s.request('GET', '/v1/os/devices', { token })).json()) as { devices: Array<{ id: string; driverDeviceId: string }> };
      return devices.find((d) => d.driverDeviceId === 'lamp');
    }, 3000, 'device listed');
    driver.ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as Message;
      if (msg.type === 'ACTION') answer(msg, driver);
    });
    return { driver, commandPath: `/v1/os/devices/${listed.id}/command` };
  }

  it('at info: writes changes, client errors and server errors, leaves quick reads out, never a secret', async () => {
    const log = capturedLog('info');
    server = await startServer({
      logger: log.logger,
      env: { SLOW_REQUEST_MS: '600000' },
      beforeStart: (app) => {
        app.http.app.delete('/forget-me', { config: { access: 'public' } }, async (_request, reply) => reply.code(204).send());
        // A 503 that is the route's ordinary answer (as /readyz's while the hub starts) is no error line.
        app.http.app.get('/not-yet', { config: { access: 'public', ordinaryStatuses: [503] } }, async (_request, reply) => reply.code(503).send({ status: 'starting' }));
      },
    });
    const token = await server.login();
    const { driver, commandPath } = await deviceOf(server, token, (action, d) => d.send({ type: 'ACTION_RESULT', actionId: action.actionId, ok: false, error: 'bulb gone' }));
    try {
      expect((await server.request('GET', '/v1/os/auth/me', { token, headers: { 'x-request-id': 'quick-read' } })).status).toBe(200);
      const stream = await fetch(`${server.url}/v1/os/state/stream?accessToken=${token}`);
      await stream.body?.cancel();
      expect((await server.request('GET', '/v1/os/devices/nope', { token })).status).toBe(404);
      expect((await server.request('POST', '/v1/os/auth/login', { body: { username: 'admin', password: 'wrong-password-9' } })).status).toBe(401);
      expect((await server.request('DELETE', '/forget-me')).status).toBe(204);
      expect((await server.request('GET', '/not-yet')).status).toBe(503);
      expect((await server.request('POST', commandPath, { token, body: { command: 'turn_on' } })).status).toBe(502);
      const last = await server.request('POST', '/v1/os/auth/logout', { token, headers: { 'x-request-id': 'last-one' } });
      expect(last.status).toBe(200);

      // Lines are written in order: once the last request's is there, every earlier one is too.
      await eventually(() => log.requests().some((l) => l.reqId === 'last-one'), 5000, 'the last request line');
      const seen = log.requests().map((l) => ({ level: l.level, method: l.method, route: l.route, status: l.status, code: l.code }));
      expect(seen).toEqual([
        { level: LEVEL.info, method: 'POST', route: '/app/os/auth/login', status: 200, code: undefined },
        { level: LEVEL.info, method: 'GET', route: '/v1/os/devices/:id', status: 404, code: 'DEVICE_NOT_FOUND' },
        { level: LEVEL.info, method: 'POST', route: '/v1/os/auth/login', status: 401, code: expect.any(String) },
        { level: LEVEL.info, method: 'DELETE', route: '/forget-me', status: 204, code: undefined },
        { level: LEVEL.info, method: 'GET', route: '/not-yet', status: 503, code: undefined },
        { level: LEVEL.error, method: 'POST', route: '/v1/os/devices/:id/command', status: 502, code: 'DRIVER_ERROR' },
        { level: LEVEL.info, method: 'POST', route: '/v1/os/auth/logout', status: 200, code: undefined },
      ]);
      expect(log.requests().find((l) => l.reqId === 'last-one')).toMatchObject({ path: '/v1/os/auth/logout', durationMs: expect.any(Number) });
      for (const secret of [token, ADMIN.password, 'wrong-password-9']) expect(log.raw()).not.toContain(secret);
    } finally {
      driver.close();
    }
  });

  it('at debug: one line per request again, the SSE stream when it ends', async () => {
    const log = capturedLog('debug');
    server = await startServer({ logger: log.logger });
    const token = await server.login();
    const me = await server.request('GET', '/v1/os/auth/me', { token, headers: { 'x-request-id': 'trace-me-1' } });
    expect(me.status).toBe(200);
    const stream = await fetch(`${server.url}/v1/os/state/stream?accessToken=${token}`);
    await stream.body?.cancel();

    await eventually(() => log.requests().some((l) => l.route === '/v1/os/state/stream'), 5000, 'the stream line');
    expect(log.requests().filter((l) => l.route === '/v1/os/auth/me')).toEqual([
      expect.objectContaining({ level: LEVEL.debug, reqId: 'trace-me-1', method: 'GET', path: '/v1/os/auth/me', status: 200, durationMs: expect.any(Number) }),
    ]);
    // A stream's duration is its lifetime, not slowness; its query string (the token) is not logged.
    expect(log.requests().filter((l) => l.route === '/v1/os/state/stream')).toEqual([expect.objectContaining({ level: LEVEL.debug, path: '/v1/os/state/stream', status: 200 })]);
    expect(log.raw()).not.toContain(token);
  });

  it('refuses a SLOW_REQUEST_MS that is not a whole number of ms from 1 to 600000', () => {
    for (const value of ['soon', '0', '-5', '600001']) expect(() => loadConfig({ SLOW_REQUEST_MS: value })).toThrow(/^SLOW_REQUEST_MS: /);
    expect(loadConfig({}).slowRequestMs).toBe(1000);
  });

  it('logs a request slower than SLOW_REQUEST_MS at warn, but not a stream that lived longer', async () => {
    const log = capturedLog('debug');
    server = await startServer({ logger: log.logger, env: { SLOW_REQUEST_MS: '20' } });
    const token = await server.login();
    // The driver answers 40 ms late, so the request cannot take less than SLOW_REQUEST_MS.
    const { driver, commandPath } = await deviceOf(server, token, (action, d) => {
      setTimeout(() => d.send({ type: 'ACTION_RESULT', actionId: action.actionId, ok: true }), 40);
    });
    try {
      expect((await server.request('POST', commandPath, { token, body: { command: 'turn_on' }, headers: { 'x-request-id': 'slow-one' } })).status).toBe(200);
      const line = await eventually(() => log.requests().find((l) => l.reqId === 'slow-one'), 5000, 'the slow request line');
      expect(line).toMatchObject({ level: LEVEL.warn, status: 200 });
      expect(line.durationMs as number).toBeGreaterThanOrEqual(20);

      const stream = await fetch(`${server.url}/v1/os/state/stream?accessToken=${token}`);
      const reader = stream.body!.getReader();
      await reader.read();
      await new Promise((resolve) => setTimeout(resolve, 40));
      await reader.cancel();
      const streamLine = await eventually(() => log.requests().find((l) => l.route === '/v1/os/state/stream'), 5000, 'the stream line');
      expect(streamLine).toMatchObject({ level: LEVEL.debug, status: 200 });
      expect(streamLine.durationMs as number).toBeGreaterThanOrEqual(20);
    } finally {
      driver.close();
    }
  });
});

describe('recent log lines (LogRing)', () => {
  it('keeps the newest lines, oldest first, across many wraps, each cut to its bound', () => {
    const ring = new LogRing(3, 5);
    expect(ring.recent()).toEqual([]);
    ring.write('a');
    ring.write('b');
    expect(ring.recent()).toEqual(['a', 'b']);
    for (let i = 0; i < 10; i++) ring.write(`line${i}`);
    expect(ring.recent()).toEqual(['line7', 'line8', 'line9']);
    ring.write('a line longer than five');
    expect(ring.recent()).toEqual(['line8', 'line9', 'a lin…']);
  });
});
