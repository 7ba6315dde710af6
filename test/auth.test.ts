import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';

let server: TestServer;
afterEach(async () => server?.close());

describe('OS API auth', () => {
  it('logs in under each base and answers the CONTRACT token shape', async () => {
    server = await startServer();
    for (const base of ['/app/os', '/api/os', '/v1/os']) {
      const res = await server.request('POST', `${base}/auth/login`, { body: ADMIN });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ tokenType: 'Bearer', expiresIn: 3600, scope: 'os_api_admin' });
      expect(typeof body.accessToken).toBe('string');
      const me = await server.request('GET', `${base}/auth/me`, { token: body.accessToken as string });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ username: 'admin', scope: 'os_api_admin' });
    }
  });

  it('refuses wrong credentials with 401 and the error body', async () => {
    server = await startServer();
    for (const body of [{ ...ADMIN, password: 'nope-nope' }, { username: 'ghost', password: 'whatever' }]) {
      const res = await server.request('POST', '/v1/os/auth/login', { body });
      expect(res.status).toBe(401);
      const err = (await res.json()) as { error: { code: string; message: string } };
      expect(err.error.code).toBe('INVALID_CREDENTIALS');
      expect(err.error.message).toMatch(/wrong/);
    }
  });

  it('expires access tokens after their lifetime (injected clock)', async () => {
    const clock = new ManualClock(Date.now());
    server = await startServer({ clock, env: { ACCESS_TOKEN_TTL_SECONDS: '600' } });
    const token = await server.login();
    clock.advance(599_000);
    expect((await server.request('GET', '/app/os/auth/me', { token })).status).toBe(200);
    clock.advance(2_000);
    const res = await server.request('GET', '/app/os/auth/me', { token });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/Bearer/);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_TOKEN');
  });

  it('issues stream tokens of at most 300 s that are refused as bearer tokens', async () => {
    const clock = new ManualClock(Date.now());
    server = await startServer({ clock });
    const token = await server.login();
    const res = await server.request('POST', '/app/os/auth/stream-token', { token });
    expect(res.status).toBe(200);
    const stream = (await res.json()) as { accessToken: string; expiresIn: number };
    expect(stream.expiresIn).toBeLessThanOrEqual(300);
    expect((await server.request('GET', '/app/os/auth/me', { token: stream.accessToken })).status).toBe(401);
    expect((await server.request('POST', '/app/os/auth/stream-token', { token: stream.accessToken })).status).toBe(401);
    // The hub-side check itself: accepted for streams until it expires.
    expect(server.app.hub.auth.authenticate(stream.accessToken, ['stream'])).toBeDefined();
    clock.advance(301_000);
    expect(server.app.hub.auth.authenticate(stream.accessToken, ['stream'])).toBeUndefined();
  });

  it('revokes the token on logout and keeps other tokens valid', async () => {
    server = await startServer();
    const a = await server.login();
    const b = await server.login();
    const out = await server.request('POST', '/v1/os/auth/logout', { token: a });
    expect(out.status).toBe(200);
    expect((await server.request('GET', '/v1/os/auth/me', { token: a })).status).toBe(401);
    expect((await server.request('GET', '/v1/os/auth/me', { token: b })).status).toBe(200);
  });

  it('rate limits repeated failures with 429 and Retry-After, and lets the window pass', async () => {
    const clock = new ManualClock(Date.now());
    server = await startServer({ clock, env: { LOGIN_MAX_FAILURES_PER_USER: '3', LOGIN_FAILURE_WINDOW_SECONDS: '60' } });
    const wrong = { ...ADMIN, password: 'wrong-password' };
    for (let i = 0; i < 3; i++) expect((await server.request('POST', '/app/os/auth/login', { body: wrong })).status).toBe(401);
    const limited = await server.request('POST', '/app/os/auth/login', { body: ADMIN });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('TOO_MANY_LOGIN_ATTEMPTS');
    clock.advance(61_000);
    expect((await server.request('POST', '/app/os/auth/login', { body: ADMIN })).status).toBe(200);
  });

  it("never lets one client's failures lock out another client", async () => {
    server = await startServer({ env: { LOGIN_MAX_FAILURES_PER_USER: '2', LOGIN_MAX_FAILURES_PER_CLIENT: '4' } });
    const hub = server.app.hub;
    const wrong = { ...ADMIN, password: 'wrong-password' };
    // The HTTP client is 127.0.0.1; lock it out completely.
    for (let i = 0; i < 4; i++) await server.request('POST', '/app/os/auth/login', { body: { ...wrong, username: `u${i % 2}` } });
    for (let i = 0; i < 2; i++) await server.request('POST', '/app/os/auth/login', { body: wrong });
    expect((await server.request('POST', '/app/os/auth/login', { body: ADMIN })).status).toBe(429);
    // Another client address logging in as the same user is unaffected.
    await expect(hub.auth.login(ADMIN.username, ADMIN.password, '192.0.2.77')).resolves.toMatchObject({ scope: 'os_api_admin' });
  });

  it('keeps tokens across a restart and resets the admin password from ADMIN_PASSWORD', async () => {
    server = await startServer();
    const token = await server.login();
    const dataDir = server.dataDir;
    await server.app.stop();
    server = await startServer({ dataDir });
    expect((await server.request('GET', '/app/os/auth/me', { token })).status).toBe(200);
    await server.app.stop();
    server = await startServer({ dataDir, env: { ADMIN_PASSWORD: 'another-password' } });
    // Changing the password revokes the old sessions.
    expect((await server.request('GET', '/app/os/auth/me', { token })).status).toBe(401);
    expect((await server.request('POST', '/app/os/auth/login', { body: ADMIN })).status).toBe(401);
    expect((await server.request('POST', '/app/os/auth/login', { body: { ...ADMIN, password: 'another-password' } })).status).toBe(200);
  });
});
