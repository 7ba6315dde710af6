import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './support/server.js';

/**
 * Failures Fastify and Node raise before any route runs (URL, method, framing, body encoding)
 * answer in the same error body as the routes: the CONTRACT body, or the envelope on the App API.
 */
let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startServer({ env: { BODY_LIMIT_BYTES: '2048' } });
  token = await server.login();
});
afterAll(async () => server?.close());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/**
 * One request with the path sent exactly as given: fetch() would resolve `..` segments and
 * refuse some targets before they left.
 */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path, headers, timeout: 5000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path.slice(0, 60)} did not answer in 5 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

const auth = () => ({ authorization: `Bearer ${token}` });

/** The CONTRACT error body with this code (and a request id matching the header). */
function expectContract(answer: Answer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  const error = answer.body.error as { code: string; message: string; requestId: string };
  expect(error).toMatchObject({ code, message: expect.any(String) });
  expect(error.requestId).toBe(answer.headers['x-request-id']);
}

/** The App API envelope with this code. */
function expectEnvelope(answer: Answer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.body).toMatchObject({ status: false, data: null, code, message: expect.any(String) });
}

describe('414 for an over-long URL or path parameter', () => {
  it('answers a 10,000-character path parameter 414 URI_TOO_LONG', async () => {
    expectContract(await raw('GET', `/v1/os/devices/${'x'.repeat(10_000)}`, auth()), 414, 'URI_TOO_LONG');
    expectContract(await raw('POST', `/app/os/devices/${'x'.repeat(10_000)}/command`, auth(), '{}'), 414, 'URI_TOO_LONG');
  });

  it('still routes the longest valid id, even fully percent-encoded', async () => {
    const longestId = 'é'.repeat(200);
    const answer = await raw('GET', `/v1/os/devices/${encodeURIComponent(longestId)}`, auth());
    expectContract(answer, 404, 'DEVICE_NOT_FOUND');
  });

  it('answers a URL past 8 KiB 414, in the envelope on the App API', async () => {
    const query = `?q=${'y'.repeat(9000)}`;
    expectContract(await raw('GET', `/v1/os/auth/me${query}`, auth()), 414, 'URI_TOO_LONG');
    expectContract(await raw('GET', `/nowhere${query}`), 414, 'URI_TOO_LONG');
    expectEnvelope(await raw('GET', `/app/auth/me${query}`, auth()), 414, 'URI_TOO_LONG');
  });

  it('answers a request line past Node\'s 16 KiB header limit 414, and huge headers 431', async () => {
    const long = await raw('GET', `/v1/os/auth/me?q=${'z'.repeat(20_000)}`, auth());
    expectContract(long, 414, 'URI_TOO_LONG');
    expect(long.headers.connection).toBe('close');
    expectEnvelope(await raw('GET', `/api/auth/me?q=${'z'.repeat(20_000)}`), 414, 'URI_TOO_LONG');
    const headers = await raw('GET', '/healthz', { 'x-padding': 'h'.repeat(20_000) });
    expectContract(headers, 431, 'HEADERS_TOO_LARGE');
  });
});

describe('400 for a URL the router cannot read', () => {
  it('answers a malformed percent-escape 400 BAD_URL', async () => {
    expectContract(await raw('GET', '/v1/os/devices/%zz', auth()), 400, 'BAD_URL');
    expectEnvelope(await raw('GET', '/app/auth/m%E0%A4%A'), 400, 'BAD_URL');
  });

  it('answers a path with . or .. segments 400 and never serves the resolved path', async () => {
    for (const path of ['/v1/os/devices/../auth/me', '/v1/os/./auth/me', '/v1/os/devices/%2e%2E', '/v1/os/devices/.%2e/auth/me', '/docs/static/../../openapi.json']) {
      expectContract(await raw('GET', path, auth()), 400, 'DOT_SEGMENT_IN_PATH');
    }
    expectEnvelope(await raw('GET', '/app/../app/auth/me', auth()), 400, 'DOT_SEGMENT_IN_PATH');
    // Dots inside a segment are ordinary characters.
    expectContract(await raw('GET', '/v1/os/devices/light.kitchen..1', auth()), 404, 'DEVICE_NOT_FOUND');
    expect((await raw('GET', '/openapi.json')).status).toBe(200);
  });
});

describe('400, 413 and 415 for bodies', () => {
  it('answers malformed JSON 400 MALFORMED_JSON', async () => {
    const json = { 'content-type': 'application/json' };
    expectContract(await raw('POST', '/v1/os/auth/login', json, '{"username":'), 400, 'MALFORMED_JSON');
    expectEnvelope(await raw('POST', '/app/auth/login', json, '{"username":'), 400, 'MALFORMED_JSON');
  });

  it('answers 413 and 415 in the envelope on the App API too', async () => {
    const big = JSON.stringify({ username: 'admin', password: 'p'.repeat(4096) });
    expectEnvelope(await raw('POST', '/api/auth/login', { 'content-type': 'application/json' }, big), 413, 'BODY_TOO_LARGE');
    expectEnvelope(await raw('POST', '/api/auth/login', { 'content-type': 'text/plain' }, 'admin'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectContract(await raw('POST', '/v1/os/auth/login', { 'content-type': 'application/xml' }, '<a/>'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('405 for a method a known path does not have', () => {
  it('answers 405 METHOD_NOT_ALLOWED with Allow', async () => {
    const del = await raw('DELETE', '/v1/os/auth/me', auth());
    expectContract(del, 405, 'METHOD_NOT_ALLOWED');
    expect(del.headers.allow).toBe('GET, HEAD');
    const put = await raw('PUT', '/app/os/auth/login', { 'content-type': 'application/json' }, '{}');
    expectContract(put, 405, 'METHOD_NOT_ALLOWED');
    expect(put.headers.allow).toBe('POST');
    const param = await raw('PATCH', '/api/os/devices/some-device/command', auth());
    expect(param.headers.allow).toBe('POST');
    expect((await raw('POST', '/healthz')).headers.allow).toBe('GET, HEAD');
    expect((await raw('POST', '/os')).headers.allow).toBe('GET, HEAD');
    expect((await raw('POST', '/os/')).headers.allow).toBe('GET, HEAD');
  });

  it('answers in the envelope on the App API', async () => {
    const answer = await raw('DELETE', '/app/auth/me', auth());
    expectEnvelope(answer, 405, 'METHOD_NOT_ALLOWED');
    expect(answer.headers.allow).toBe('GET, HEAD');
  });

  it('keeps 404 for unknown paths, and for a route that finds nothing at its path', async () => {
    expectContract(await raw('DELETE', '/v1/os/nowhere', auth()), 404, 'ROUTE_NOT_FOUND');
    expectEnvelope(await raw('GET', '/app/nowhere', auth()), 404, 'ROUTE_NOT_FOUND');
    expectContract(await raw('GET', '/docs/static/no-such-file.js'), 404, 'ROUTE_NOT_FOUND');
  });
});
