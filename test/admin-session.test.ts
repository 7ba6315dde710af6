import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startServer, type TestServer } from './support/server.js';

let server: TestServer;
let token: string;

type Json = Record<string, unknown>;

async function signIn(username: string, password: string, headers: Record<string, string> = {}) {
  return fetch(`${server.url}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ username, password }) });
}

const sessionOf = (res: Response) => /hcs_admin=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];

beforeAll(async () => {
  server = await startServer({ env: { LOGIN_MAX_FAILURES_PER_USER: '3' } });
  token = await server.login();
});
afterAll(async () => server?.close());

describe('admin session', () => {
  it('signs in with JSON too, answering the CSRF token that cookie-signed changes must carry', async () => {
    const res = await signIn(ADMIN.username, ADMIN.password);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { csrfToken: string; expiresIn: number };
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/hcs_admin=[^;]+; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Strict/);
    const session = `hcs_admin=${sessionOf(res)}`;

    expect((await server.request('GET', '/admin/system', { headers: { cookie: session } })).status).toBe(200);
    const without = await server.request('POST', '/admin/invites', { headers: { cookie: session }, body: {} });
    expect(without.status).toBe(403);
    expect(((await without.json()) as { error: Json }).error.code).toBe('CSRF_TOKEN_INVALID');
    const withToken = await server.request('POST', '/admin/invites', { headers: { cookie: session, 'x-csrf-token': body.csrfToken }, body: {} });
    expect(withToken.status).toBe(201);
    // A bearer header is no ambient credential: it needs no CSRF token.
    expect((await server.request('POST', '/admin/invites', { token, body: {} })).status).toBe(201);
  });

  it('refuses a household account (403) and issues it no session', async () => {
    expect((await server.request('POST', '/admin/users', { token, body: { username: 'bob', password: 'bob-password-1' } })).status).toBe(201);
    const res = await signIn('bob', 'bob-password-1');
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: Json }).error.code).toBe('ROLE_REQUIRED');
    expect(sessionOf(res)).toBeUndefined();
    // Bob's own App API session is no way in either.
    const app = (await (await server.request('POST', '/app/auth/login', { body: { username: 'bob', password: 'bob-password-1' } })).json()) as { data: { token: string } };
    expect((await server.request('GET', '/admin/system', { token: app.data.token })).status).toBe(403);
  });

  it('ends the session when the admin account is disabled, like every other token', async () => {
    expect((await server.request('POST', '/admin/users', { token, body: { username: 'second-admin', password: 'second-password', role: 'admin' } })).status).toBe(201);
    const res = await signIn('second-admin', 'second-password');
    const session = `hcs_admin=${sessionOf(res)}`;
    expect((await server.request('GET', '/admin/system', { headers: { cookie: session } })).status).toBe(200);
    const users = (await (await server.request('GET', '/admin/users', { token })).json()) as { users: Array<{ id: string; username: string }> };
    const id = users.users.find((u) => u.username === 'second-admin')!.id;
    expect((await server.request('POST', `/admin/users/${id}`, { token, body: { disabled: true } })).status).toBe(200);
    expect((await server.request('GET', '/admin/system', { headers: { cookie: session } })).status).toBe(401);
  });

  it('counts failed sign-ins against the same limiter as every other login', async () => {
    for (let i = 0; i < 3; i++) expect((await signIn('admin', 'wrong-password')).status).toBe(401);
    const limited = await signIn('admin', 'wrong-password');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    // The OS API's login is limited too: one limiter.
    expect((await server.request('POST', '/app/os/auth/login', { body: { username: 'admin', password: 'wrong-again' } })).status).toBe(429);
    // The browser form answers the same in a page.
    const page = await fetch(`${server.url}/admin/login`, { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=admin&password=x' });
    expect(page.status).toBe(429);
    expect(await page.text()).toMatch(/<p class="flash error" role="alert">/);
  });

  it('records failed sign-ins and admin changes in the audit trail, with secrets masked', async () => {
    const audit = (await (await server.request('GET', '/admin/audit?limit=50', { token })).json()) as { entries: Array<Json> };
    expect(audit.entries.find((e) => e.action === 'auth.login_failed')).toMatchObject({ actor: null, ok: false, target: { username: 'admin' } });
    expect(audit.entries.find((e) => e.action === 'users.create' && (e.input as Json).username === 'bob')).toMatchObject({ actor: 'admin', ok: true, input: { username: 'bob', password: '********' } });
    expect(audit.entries.find((e) => e.action === 'users.update')).toMatchObject({ actor: 'admin', ok: true, target: { id: expect.any(String) }, input: { disabled: true } });
    expect(audit.entries.some((e) => e.action === 'users.list')).toBe(false);
  });

  it('reports the system: uptime, data folder usage, drivers and clients', async () => {
    const system = (await (await server.request('GET', '/admin/system', { token })).json()) as Json;
    expect(system).toMatchObject({
      version: expect.any(String),
      uptimeSeconds: expect.any(Number),
      dataDirUsage: { bytes: expect.any(Number), files: expect.any(Number), complete: true },
      drivers: { connected: expect.any(Number), local: 0, localRunning: 0 },
      clients: { 'socket.io': 0, sse: 0 },
    });
    expect((system.dataDirUsage as { bytes: number }).bytes).toBeGreaterThan(0);
  });
});
