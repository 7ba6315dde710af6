/**
 * The App API's two open doors, closed without locking its clients out: a change signed in by the
 * session cookie alone is refused when the browser marks it as another site's (Go's
 * CrossOriginProtection: Sec-Fetch-Site, else Origin against Host), and admitted from a native
 * client that sends neither header; open registration is limited per client address (injected
 * clock, no sleeping).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { ManualClock } from '../src/platform/clock.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  headers: Headers;
  body: Json;
}

async function answer(res: Promise<Response>): Promise<Answer> {
  const r = await res;
  return { status: r.status, headers: r.headers, body: (await r.json()) as Json };
}

describe('CSRF on App API changes signed in by the session cookie', () => {
  let server: TestServer;
  let session: { cookie: string; token: string; csrfToken: string };
  /** The hub's own origin as a browser names it: scheme, host and port of the address it was reached at. */
  let ownOrigin: string;
  let saved = 0;

  beforeAll(async () => {
    server = await startServer();
    ownOrigin = server.url;
    const res = await server.request('POST', '/app/auth/login', { body: ADMIN });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    session = { cookie: res.headers.get('set-cookie')!.split(';')[0]!, token: body.data.token, csrfToken: body.data.csrfToken };
  });
  afterAll(async () => server?.close());

  /** Saves a program (a change) signed in by the cookie, with whatever headers a browser or a forger would add. */
  const save = (name: string, headers: Record<string, string> = {}) =>
    answer(server.request('POST', '/app/programs', { headers: { cookie: session.cookie, ...headers }, body: { name, steps: [{ type: 'delay', ms: 10 }] } }));
  const programNames = async () => ((await answer(server.request('GET', '/app/programs', { headers: { cookie: session.cookie } }))).body.data as Json[]).map((p) => p.name as string);

  function expectRefused(refused: Answer, label: string): void {
    expect(refused.status, label).toBe(403);
    expect(refused.body, label).toMatchObject({ status: false, data: null, code: 'CSRF_TOKEN_INVALID' });
  }

  it('answers the CSRF token with the sign-in, and on GET /auth/me signed in by the cookie only', async () => {
    expect(session.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const viaCookie = await answer(server.request('GET', '/app/auth/me', { headers: { cookie: session.cookie } }));
    expect(viaCookie.body.data).toMatchObject({ username: 'admin', csrfToken: session.csrfToken });
    const viaBearer = await answer(server.request('GET', '/api/auth/me', { token: session.token }));
    expect(viaBearer.status).toBe(200);
    expect(viaBearer.body.data).not.toHaveProperty('csrfToken');
  });

  it('admits what a legacy mobile client sends, the cookie and nothing else: 200, as the spec serves it', async () => {
    // The spec's roster call, as the earlier mobile clients send it: no Origin, no Sec-Fetch-Site, no token.
    const roster = await answer(server.request('POST', '/app/integration/player/device/added-devices', { headers: { cookie: session.cookie } }));
    expect(roster.status, JSON.stringify(roster.body)).toBe(200);
    expect(roster.body).toMatchObject({ status: true, data: [] });
    const saved = await save('from the mobile app');
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(await programNames()).toContain('from the mobile app');
  });

  it('refuses a browser-shaped cross-site POST of the same call: 403, and nothing changes', async () => {
    const before = await programNames();
    // A page elsewhere calling fetch(…, {credentials: 'include'}): the browser adds these itself.
    const browserHeaders = { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' };
    expectRefused(await answer(server.request('POST', '/app/integration/player/device/added-devices', { headers: { cookie: session.cookie, ...browserHeaders } })), 'roster');
    expectRefused(await save('forged by a page', browserHeaders), 'save');
    expectRefused(await answer(server.request('DELETE', `/app/programs/anything`, { headers: { cookie: session.cookie, ...browserHeaders } })), 'DELETE');
    expect(await programNames()).toEqual(before);
  });

  it('refuses another origin, a cross-site or same-site Sec-Fetch-Site, and a wrong token', async () => {
    const port = new URL(server.url).port;
    const otherSession = ((await answer(server.request('POST', '/app/auth/login', { body: ADMIN }))).body.data as { csrfToken: string }).csrfToken;
    expect(otherSession).not.toBe(session.csrfToken);
    const forgeries: Array<[string, Record<string, string>]> = [
      ['cross-site Origin', { origin: 'https://evil.example' }],
      ['Origin null', { origin: 'null' }],
      ['another port', { origin: `http://127.0.0.1:${Number(port) + 1}` }],
      ['a longer name', { origin: `${ownOrigin}.evil.example` }],
      ['not a URL', { origin: 'evil' }],
      ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
      ['Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }],
      // The browser's Sec-Fetch-Site decides over an Origin that a proxy may make look like ours.
      ['same Origin but cross-site fetch', { origin: ownOrigin, 'sec-fetch-site': 'cross-site' }],
      ['a wrong token', { 'x-csrf-token': 'not-the-token' }],
      ['a wrong token from the same origin', { 'x-csrf-token': 'not-the-token', origin: ownOrigin }],
      ['a wrong token with no browser headers', { 'x-csrf-token': 'x' }],
      ['the session token itself', { 'x-csrf-token': session.token }],
      ['the token of another session', { 'x-csrf-token': otherSession }],
    ];
    for (const [label, headers] of forgeries) expectRefused(await save(`forged: ${label}`, headers), label);
    expect((await programNames()).filter((name) => name.startsWith('forged'))).toEqual([]);
  });

  it('admits the session token in x-csrf-token, even cross-site', async () => {
    expect((await save('with token', { 'x-csrf-token': session.csrfToken })).status).toBe(200);
    expect((await save('with token cross-site', { 'x-csrf-token': session.csrfToken, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).status).toBe(200);
    expect(await programNames()).toEqual(expect.arrayContaining(['with token', 'with token cross-site']));
  });

  it('admits an Origin whose host is the request\'s own, whatever its scheme, and Sec-Fetch-Site same-origin or none', async () => {
    const port = new URL(server.url).port;
    const sameOrigin = await save('same origin', { origin: ownOrigin });
    expect(sameOrigin.status, JSON.stringify(sameOrigin.body)).toBe(200);
    // Behind a proxy that terminates TLS the browser's scheme is not the hub's; Go compares hosts.
    expect((await save('https in front', { origin: `https://127.0.0.1:${port}` })).status).toBe(200);
    expect((await save('same-origin fetch', { 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect((await save('typed by the user', { 'sec-fetch-site': 'none' })).status).toBe(200);
    expect((await save('both', { origin: ownOrigin, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    saved = (await programNames()).length;
    expect(await programNames()).toEqual(expect.arrayContaining(['same origin', 'https in front', 'same-origin fetch', 'typed by the user', 'both']));
  });

  it('asks nothing of a bearer call, even with a cookie and a cross-site Origin beside it', async () => {
    const bearer = await answer(server.request('POST', '/app/programs', { token: session.token, body: { name: 'bearer', steps: [{ type: 'delay', ms: 10 }] } }));
    expect(bearer.status, JSON.stringify(bearer.body)).toBe(200);
    const mixed = await answer(
      server.request('POST', '/api/programs', { token: session.token, headers: { cookie: session.cookie, origin: 'https://evil.example' }, body: { name: 'bearer and cookie', steps: [{ type: 'delay', ms: 10 }] } }),
    );
    expect(mixed.status).toBe(200);
    expect((await programNames()).length).toBe(saved + 2);
  });

  it('leaves the public routes alone: signing in with a stale cookie from another origin', async () => {
    const login = await server.request('POST', '/app/auth/login', { headers: { cookie: session.cookie, origin: 'https://evil.example' }, body: ADMIN });
    expect(login.status).toBe(200);
  });

  it('guards logout too, which ends the session only when the request is not forged', async () => {
    const res = await server.request('POST', '/app/auth/login', { body: ADMIN });
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const { csrfToken } = ((await res.json()) as Json).data as { csrfToken: string };
    expect((await server.request('POST', '/app/auth/logout', { headers: { cookie, origin: 'https://evil.example' } })).status).toBe(403);
    expect((await server.request('GET', '/app/auth/me', { headers: { cookie } })).status).toBe(200);
    expect((await server.request('POST', '/app/auth/logout', { headers: { cookie, 'x-csrf-token': csrfToken } })).status).toBe(200);
    expect((await server.request('GET', '/app/auth/me', { headers: { cookie } })).status).toBe(401);
  });

  it('documents csrfToken in the OpenAPI answers of sign-in, registration and /auth/me', async () => {
    const doc = (await (await server.request('GET', '/openapi.json')).json()) as Json;
    const dataOf = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].content['application/json'].schema.properties.data;
    for (const base of ['/app', '/api']) {
      const login = dataOf(`${base}/auth/login`, 'post', '200');
      expect(login.required).toContain('csrfToken');
      expect(login.properties.csrfToken.description).toContain('x-csrf-token');
      expect(dataOf(`${base}/auth/register`, 'post', '201').properties).toHaveProperty('csrfToken');
      const me = dataOf(`${base}/auth/me`, 'get', '200');
      expect(me.properties).toHaveProperty('csrfToken');
      expect(me.required ?? []).not.toContain('csrfToken');
    }
  });
});

describe('the open registration limit', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('is configured by APP_REGISTRATION_LIMIT and APP_REGISTRATION_WINDOW_SECONDS, validated', () => {
    const base = { DATA_DIR: '/tmp/hcs-config-check' };
    expect(loadConfig(base)).toMatchObject({ appRegistrationLimit: 5, appRegistrationWindowSeconds: 3600 });
    expect(loadConfig({ ...base, APP_REGISTRATION_LIMIT: '2', APP_REGISTRATION_WINDOW_SECONDS: '60' })).toMatchObject({ appRegistrationLimit: 2, appRegistrationWindowSeconds: 60 });
    for (const [name, value] of [['APP_REGISTRATION_LIMIT', '0'], ['APP_REGISTRATION_LIMIT', 'many'], ['APP_REGISTRATION_WINDOW_SECONDS', '0']] as const) {
      expect(() => loadConfig({ ...base, [name]: value }), `${name}=${value}`).toThrow(ConfigError);
    }
  });

  it('counts every attempt per client address: the one past the limit is 429 with Retry-After and creates nothing, until the window moves on', async () => {
    const clock = new ManualClock(Date.now());
    server = await startServer({ clock, env: { APP_REGISTRATION: 'open', APP_REGISTRATION_LIMIT: '3', APP_REGISTRATION_WINDOW_SECONDS: '600' } });
    const register = (username: string) => answer(server!.request('POST', '/app/auth/register', { body: { username, password: 'newbie-password' } }));

    expect((await register('first')).status).toBe(201);
    clock.advance(60_000);
    // A refused attempt (a taken name) counts too.
    expect((await register('FIRST')).status).toBe(409);
    clock.advance(60_000);
    expect((await register('second')).status).toBe(201);
    clock.advance(60_000);

    const limited = await register('third');
    expect(limited.status).toBe(429);
    // The oldest attempt, 180 s ago, leaves the 600 s window in 420 s.
    expect(limited.headers.get('retry-after')).toBe('420');
    expect(limited.body).toMatchObject({ status: false, data: null, code: 'TOO_MANY_REGISTRATIONS', details: { retryAfterSeconds: 420 } });
    expect(limited.headers.get('set-cookie')).toBeNull();
    // The refused attempt is not counted: waiting as told is enough. Logins are not limited by it.
    expect((await register('third')).headers.get('retry-after')).toBe('420');
    const adminToken = await server.login();
    const usernames = async () => ((await answer(server!.request('GET', '/admin/users', { token: adminToken }))).body.users as Json[]).map((u) => u.username as string);
    expect(await usernames()).toEqual(['admin', 'first', 'second']);

    clock.advance(419_000);
    expect((await register('third')).status).toBe(429);
    clock.advance(1000);
    expect((await register('third')).status).toBe(201);
    // Full again: the attempts at 60 s, 120 s and 600 s; the one at 60 s leaves in 60 s.
    const again = await register('fourth');
    expect(again.status).toBe(429);
    expect(again.headers.get('retry-after')).toBe('60');
    expect(await usernames()).toEqual(['admin', 'first', 'second', 'third']);
  });

  it('does not apply to invite registration', async () => {
    server = await startServer({ env: { APP_REGISTRATION: 'invite', APP_REGISTRATION_LIMIT: '1' } });
    const adminToken = await server.login();
    for (const username of ['one', 'two']) {
      const invite = (await answer(server.request('POST', '/admin/invites', { token: adminToken, body: {} }))).body as { code: string };
      const joined = await answer(server.request('POST', '/app/auth/register', { body: { username, password: 'newbie-password', inviteCode: invite.code } }));
      expect(joined.status, JSON.stringify(joined.body)).toBe(201);
    }
  });
});
