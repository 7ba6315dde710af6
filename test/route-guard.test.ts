import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_API_BASES } from '../src/surfaces/http/app-api/index.js';
import { OS_API_BASES } from '../src/surfaces/http/os-api/index.js';
import { REMOTE_BASES } from '../src/surfaces/http/remote/index.js';
import { startServer, type TestServer } from './support/server.js';

/**
 * Walks every registered OS API, App API, Remote API and admin route — including those that later features add — and
 * holds each to the rules every route must keep: documented, guarded, and never a 5xx on bad input.
 */
let server: TestServer;
let token: string;
let streamToken: string;
let openapiPaths: Record<string, Record<string, unknown>>;
/** A household member's App API token (scope `app`) and a paired remote's token (scope `remote`). */
let appToken: string;
let remoteToken: string;

type Json = Record<string, unknown>;
const json = async (res: Response) => (await res.json()) as Json;

/** A remote paired the way a household pairs one: it asks, an admin confirms, it collects its token. */
async function pairRemote(): Promise<string> {
  const { requestId } = await json(await server.request('POST', '/remote/pair/start', { body: { name: 'Guard walker' } }));
  expect((await server.request('POST', `/app/os/remotes/pairing/${String(requestId)}/confirm`, { token, body: {} })).status).toBe(200);
  const collected = await json(await server.request('GET', `/remote/pair/${String(requestId)}`));
  expect(collected.status).toBe('paired');
  return collected.token as string;
}

beforeAll(async () => {
  server = await startServer({ env: { BODY_LIMIT_BYTES: '4096' } });
  token = await server.login();
  streamToken = ((await (await server.request('POST', '/app/os/auth/stream-token', { token })).json()) as { accessToken: string }).accessToken;
  openapiPaths = ((await (await server.request('GET', '/openapi.json')).json()) as { paths: typeof openapiPaths }).paths;
  expect((await server.request('POST', '/admin/users', { token, body: { username: 'guard-user', password: 'guard-password', role: 'user' } })).status).toBe(201);
  appToken = ((await json(await server.request('POST', '/app/auth/login', { body: { username: 'guard-user', password: 'guard-password' } }))).data as Json).token as string;
  remoteToken = await pairRemote();
});
afterAll(async () => server?.close());

const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const concrete = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, 'guard-$1');

function osRoutes() {
  return server.app.http.routes.filter((r) => OS_API_BASES.some((base) => r.url.startsWith(`${base}/`)));
}

/** The legacy App API under `/app` and `/api`, without the OS API mounted beneath them. */
function appApiRoutes() {
  const underOs = (url: string) => OS_API_BASES.some((base) => url.startsWith(`${base}/`));
  return server.app.http.routes.filter((r) => APP_API_BASES.some((base) => r.url.startsWith(`${base}/`)) && !underOs(r.url));
}

function adminRoutes() {
  return server.app.http.routes.filter((r) => r.url.startsWith('/admin/'));
}

function remoteRoutes() {
  return server.app.http.routes.filter((r) => REMOTE_BASES.some((base) => r.url.startsWith(`${base}/`)));
}

/** What the App API's public routes may be: signing in and registering. */
const APP_API_PUBLIC = ['/auth/login', '/auth/register'];

const BAD_BODIES: Array<{ label: string; body?: string; type?: string }> = [
  { label: 'empty' },
  { label: 'empty json', body: '', type: 'application/json' },
  { label: 'malformed json', body: '{"a":', type: 'application/json' },
  { label: 'wrong types', body: JSON.stringify({ username: 1, password: [], id: {}, command: 5 }), type: 'application/json' },
  { label: 'array', body: '[1,2,3]', type: 'application/json' },
  { label: 'oversized', body: JSON.stringify({ blob: 'x'.repeat(8192) }), type: 'application/json' },
  { label: 'wrong type', body: 'hello', type: 'text/plain' },
];

/**
 * Sends every bad body to every route of the list (GET routes only without one) with the admin's
 * token, and hands each failure's parsed body to `checkFailure`.
 */
async function walkBadBodies(
  routes: Array<{ method: string; url: string }>,
  checkFailure: (body: unknown, label: string) => void,
  credential = token,
): Promise<void> {
  for (const route of routes) {
    if (route.url.endsWith('/auth/logout') || route.url === '/admin/logout') continue; // would revoke the token the rest of the walk needs
    for (const { label, body, type } of BAD_BODIES) {
      if (route.method === 'GET' && body !== undefined) continue;
      const res = await server.request(route.method, concrete(route.url), {
        token: credential,
        ...(body === undefined ? {} : { body }),
        headers: type ? { 'content-type': type } : {},
      });
      const what = `${route.method} ${route.url} with ${label} body`;
      // 503 is no bug: the input may be fine and what it needs is off (the accessory hub in tests, a driver offline).
      if (res.status !== 503) expect(res.status, what).toBeLessThan(500);
      if (res.status >= 400) checkFailure(await res.json(), what);
      else await res.body?.cancel();
      if (label === 'oversized' && route.method !== 'GET') expect(res.status, what).toBe(413);
    }
  }
}

describe('route-table guard', () => {
  it('finds the OS API under all three bases, with the same routes under each', () => {
    const routes = osRoutes();
    expect(routes.length).toBeGreaterThan(0);
    const per = OS_API_BASES.map((base) =>
      routes.filter((r) => r.url.startsWith(`${base}/`)).map((r) => `${r.method} ${r.url.slice(base.length)}`).sort(),
    );
    expect(per[1]).toEqual(per[0]);
    expect(per[2]).toEqual(per[0]);
  });

  it('documents every OS API route in /openapi.json', () => {
    for (const route of osRoutes()) {
      const entry = openapiPaths[toOpenApiPath(route.url)];
      expect(entry, `${route.method} ${route.url} missing from /openapi.json`).toBeDefined();
      expect(entry?.[route.method.toLowerCase()], `${route.method} ${route.url} missing from /openapi.json`).toBeDefined();
    }
  });

  it('answers 401 without a token and with a stream token as bearer, except public routes', async () => {
    for (const route of osRoutes()) {
      if (route.access === 'public') {
        expect(route.url.endsWith('/auth/login'), `${route.url} is public but only /auth/login may be`).toBe(true);
        continue;
      }
      const bare = await server.request(route.method, concrete(route.url));
      expect(bare.status, `${route.method} ${route.url} without a token`).toBe(401);
      expect(((await bare.json()) as { error: { code: string } }).error.code).toBeTruthy();
      if (route.access === 'stream') continue;
      const withStream = await server.request(route.method, concrete(route.url), { token: streamToken });
      expect(withStream.status, `${route.method} ${route.url} with a stream token`).toBe(401);
    }
  });

  it('answers a 10,000-character path parameter 414 in the surface error body, on every route that has one', async () => {
    const withParams = server.app.http.routes.filter((r) => /:[A-Za-z0-9_]+/.test(r.url));
    expect(withParams.length).toBeGreaterThan(0);
    const huge = 'p'.repeat(10_000);
    for (const route of withParams) {
      const label = `${route.method} ${route.url}`;
      const res = await fetch(server.url + route.url.replace(/:([A-Za-z0-9_]+)/g, huge), {
        method: route.method,
        headers: { authorization: `Bearer ${token}`, ...(route.method === 'GET' ? {} : { 'content-type': 'application/json' }) },
        ...(route.method === 'GET' ? {} : { body: '{}' }),
        signal: AbortSignal.timeout(5000),
      });
      expect(res.status, label).toBe(414);
      const body = (await res.json()) as { error?: { code?: string }; status?: boolean; code?: string };
      const appApi = /^\/(app|api)\//.test(route.url) && !/^\/(app|api)\/os\//.test(route.url);
      expect(appApi ? body : body.error, label).toMatchObject(appApi ? { status: false, code: 'URI_TOO_LONG' } : { code: 'URI_TOO_LONG' });
    }
  });

  // Every route under three bases, five bodies each: it takes its time on a shared 2-core box.
  it('never answers 5xx to an empty, malformed or oversized body', { timeout: 90_000 }, async () => {
    await walkBadBodies(osRoutes(), (body, what) => {
      expect((body as { error?: { code?: string } }).error?.code, `${what} has an error code`).toMatch(/^[A-Z][A-Z0-9_]+$/);
    });
  });

  it('never answers 5xx to a webhook call with an empty, malformed or oversized body, without a token', async () => {
    const webhooks = server.app.http.routes.filter((r) => r.url.startsWith('/webhooks/'));
    expect(webhooks.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /webhooks/:webhookId']);
    await walkBadBodies(webhooks, (body, what) => {
      expect((body as { error?: { code?: string } }).error?.code, `${what} has an error code`).toMatch(/^[A-Z][A-Z0-9_]+$/);
    }, undefined);
  });
});

describe('route-table guard: App API', () => {
  it('finds the App API under /app and /api, with the same routes under each', () => {
    const routes = appApiRoutes();
    const per = APP_API_BASES.map((base) =>
      routes.filter((r) => r.url.startsWith(`${base}/`)).map((r) => `${r.method} ${r.url.slice(base.length)}`).sort(),
    );
    expect(per[0]!.length).toBeGreaterThan(APP_API_PUBLIC.length);
    expect(per[1]).toEqual(per[0]);
  });

  it('documents every App API route in /openapi.json under the app-api tag', () => {
    for (const route of appApiRoutes()) {
      const entry = openapiPaths[toOpenApiPath(route.url)]?.[route.method.toLowerCase()] as { tags?: string[] } | undefined;
      expect(entry, `${route.method} ${route.url} missing from /openapi.json`).toBeDefined();
      expect(entry?.tags, `${route.method} ${route.url} tags`).toContain('app-api');
    }
  });

  it('answers 401 in the envelope without a credential, except signing in and registering', async () => {
    for (const route of appApiRoutes()) {
      const label = `${route.method} ${route.url}`;
      if (route.access === 'public') {
        expect(APP_API_PUBLIC.some((path) => route.url.endsWith(path)), `${label} is public but only ${APP_API_PUBLIC.join(' and ')} may be`).toBe(true);
        continue;
      }
      const bare = await server.request(route.method, concrete(route.url));
      expect(bare.status, `${label} without a credential`).toBe(401);
      expect(await bare.json(), label).toMatchObject({ status: false, data: null, code: expect.stringMatching(/^[A-Z][A-Z0-9_]+$/) });
      const withStream = await server.request(route.method, concrete(route.url), { token: streamToken });
      expect(withStream.status, `${label} with a stream token`).toBe(401);
    }
  });

  it('never answers 5xx to an empty, malformed or oversized body, and fails in the envelope', async () => {
    await walkBadBodies(appApiRoutes(), (body, what) => {
      expect(body, what).toMatchObject({ status: false, data: null, message: expect.any(String), code: expect.stringMatching(/^[A-Z][A-Z0-9_]+$/) });
    });
  });
});

/** What the Remote API's public routes may be: its description and the pairing a remote does before it holds a token. */
const REMOTE_PUBLIC = ['/info', '/pair/start', '/pair/:requestId', '/pair/:requestId/code'];

describe('route-table guard: Remote API', () => {
  it('finds the Remote API under /remote and /v1/remote, with the same routes under each', () => {
    const per = REMOTE_BASES.map((base) =>
      remoteRoutes()
        .filter((r) => r.url.startsWith(`${base}/`))
        .map((r) => `${r.method} ${r.url.slice(base.length)}`)
        .sort(),
    );
    expect(per[0]!.length).toBeGreaterThan(REMOTE_PUBLIC.length);
    expect(per[1]).toEqual(per[0]);
  });

  it('documents every Remote API route in /openapi.json under the remote tag', () => {
    for (const route of remoteRoutes()) {
      const entry = openapiPaths[toOpenApiPath(route.url)]?.[route.method.toLowerCase()] as { tags?: string[] } | undefined;
      expect(entry, `${route.method} ${route.url} missing from /openapi.json`).toBeDefined();
      expect(entry?.tags, `${route.method} ${route.url} tags`).toEqual(['remote']);
    }
  });

  it('answers 401 without a remote token or with a stream token, and 403 to account tokens, except the pairing routes', async () => {
    for (const route of remoteRoutes()) {
      const label = `${route.method} ${route.url}`;
      if (route.access === 'public') {
        expect(REMOTE_PUBLIC.some((path) => REMOTE_BASES.some((base) => route.url === `${base}${path}`)), `${label} is public`).toBe(true);
        continue;
      }
      const bare = await server.request(route.method, concrete(route.url));
      expect(bare.status, `${label} without a token`).toBe(401);
      expect(((await json(bare)).error as Json).code, label).toBe('AUTH_REQUIRED');
      expect((await server.request(route.method, concrete(route.url), { token: streamToken })).status, `${label} with a stream token`).toBe(401);
      for (const [who, accountToken] of [['admin', token], ['app user', appToken]] as const) {
        const refused = await server.request(route.method, concrete(route.url), { token: accountToken });
        expect(refused.status, `${label} with an ${who} token`).toBe(403);
        expect(((await json(refused)).error as Json).code, label).toBe('INSUFFICIENT_SCOPE');
      }
    }
  });

  it('never answers 5xx to an empty, malformed or oversized body from a paired remote', async () => {
    await walkBadBodies(
      remoteRoutes(),
      (body, what) => expect((body as { error?: { code?: string } }).error?.code, what).toMatch(/^[A-Z][A-Z0-9_]+$/),
      remoteToken,
    );
  });
});

/** The admin panel's public routes: its sign-in page and form, and the scripts its pages load. */
const ADMIN_PUBLIC = ['GET /admin/login', 'POST /admin/login', 'GET /admin/assets/socket.io.min.js'];

describe('route-table guard: admin API', () => {
  it('documents every /admin route in /openapi.json under the admin tag', () => {
    const routes = adminRoutes();
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const entry = openapiPaths[toOpenApiPath(route.url)]?.[route.method.toLowerCase()] as { tags?: string[] } | undefined;
      expect(entry, `${route.method} ${route.url} missing from /openapi.json`).toBeDefined();
      expect(entry?.tags, `${route.method} ${route.url} tags`).toEqual(['admin']);
    }
  });

  it('answers 401 without a credential and 403 to app and remote tokens, on every route', async () => {
    for (const route of adminRoutes()) {
      const label = `${route.method} ${route.url}`;
      if (ADMIN_PUBLIC.includes(label)) {
        expect(route.access, label).toBe('public');
        continue;
      }
      expect(route.access, `${label} must not be public`).not.toBe('public');
      const bare = await server.request(route.method, concrete(route.url));
      expect(bare.status, `${label} without a token`).toBe(401);
      expect(((await json(bare)).error as Json).code, label).toMatch(/^[A-Z][A-Z0-9_]+$/);
      for (const [who, other] of [['app user', appToken], ['remote', remoteToken]] as const) {
        const refused = await server.request(route.method, concrete(route.url), { token: other });
        expect(refused.status, `${label} with a ${who} token`).toBe(403);
      }
    }
  });

  it('never answers 5xx to an empty, malformed or oversized body', async () => {
    await walkBadBodies(adminRoutes(), (body, what) => expect((body as { error?: { code?: string } }).error?.code, what).toMatch(/^[A-Z][A-Z0-9_]+$/));
  });
});
