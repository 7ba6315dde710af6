import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './support/server.js';
import { eventually, TestDriver } from './support/ws-driver.js';

let server: TestServer;
let token: string;
let driver: TestDriver;

/** The value of one sample line of the exposition text (labels as written), or undefined. */
const sample = (text: string, name: string, labels = '') => {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `) || (labels === '' && l.startsWith(`${name} `)));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
};

beforeAll(async () => {
  server = await startServer({ env: { ACTION_TIMEOUT_MS: '150' }, timers: undefined });
  token = await server.login();
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.metrics');
  // Answers turn_on; lets `slow` go unanswered (the hub times it out).
  driver.ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as { type: string; actionId: string; command: string };
    if ((msg.type === 'ACTION' || msg.type === 'COMMAND_EXECUTE') && msg.command !== 'slow') driver.send({ type: 'ACTION_RESULT', actionId: msg.actionId, ok: true });
  });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Metric Lamp', commands: ['turn_on', 'slow'] } });
  await eventually(async () => ((await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: unknown[] }).devices.length === 1);
});
afterAll(async () => {
  driver?.close();
  await server?.close();
});

describe('GET /metrics', () => {
  it('takes a bearer of its own scope only', async () => {
    expect((await server.request('GET', '/metrics')).status).toBe(401);
    expect((await server.request('GET', '/metrics', { token })).status).toBe(403);
    const issued = await server.request('POST', '/admin/metrics/token', { token, body: {} });
    expect(issued.status).toBe(201);
    const scraper = ((await issued.json()) as { token: string }).token;
    expect((await server.request('GET', '/v1/os/devices', { token: scraper })).status).toBe(403);
    const res = await server.request('GET', '/metrics', { token: scraper });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('counts requests by route and status, commands, time-outs, state updates, drivers, clients and the process', async () => {
    const scraper = ((await (await server.request('POST', '/admin/metrics/token', { token, body: {} })).json()) as { token: string }).token;
    const { devices } = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Array<{ id: string }> };
    const id = devices[0]!.id;
    expect((await server.request('POST', `/v1/os/devices/${id}/command`, { token, body: { command: 'turn_on' } })).status).toBe(200);
    expect((await server.request('POST', `/v1/os/devices/${id}/command`, { token, body: { command: 'slow' } })).status).toBe(504);
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { on: true } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { on: false } });
    const text = await eventually(async () => {
      const body = await (await server.request('GET', '/metrics', { token: scraper })).text();
      return (sample(body, 'hcs_state_updates_total') ?? 0) >= 2 ? body : undefined;
    }, 5000, 'state updates counted');
    expect(sample(text, 'hcs_http_requests_total', 'route="/v1/os/devices/:id/command",method="POST",status="200"')).toBe(1);
    expect(sample(text, 'hcs_http_requests_total', 'route="/v1/os/devices/:id/command",method="POST",status="504"')).toBe(1);
    const listed = sample(text, 'hcs_http_request_duration_seconds_count', 'route="/v1/os/devices",method="GET"')!;
    expect(listed).toBeGreaterThanOrEqual(2);
    // Cumulative buckets, the last one (+Inf) equal to the count; the 504 waited 150 ms, so it sits above the 0.1 s bound.
    expect(sample(text, 'hcs_http_request_duration_seconds_bucket', 'route="/v1/os/devices",method="GET",le="+Inf"')).toBe(listed);
    expect(sample(text, 'hcs_http_request_duration_seconds_bucket', 'route="/v1/os/devices",method="GET",le="10"')).toBe(listed);
    expect(sample(text, 'hcs_http_request_duration_seconds_bucket', 'route="/v1/os/devices/:id/command",method="POST",le="0.1"')).toBeLessThan(2);
    expect(sample(text, 'hcs_http_request_duration_seconds_count', 'route="/v1/os/devices/:id/command",method="POST"')).toBe(2);
    expect(sample(text, 'hcs_http_request_duration_seconds_sum', 'route="/v1/os/devices/:id/command",method="POST"')).toBeGreaterThan(0.1);
    expect(sample(text, 'hcs_command_duration_seconds_count', 'ok="true"')).toBe(1);
    expect(sample(text, 'hcs_command_timeouts_total')).toBe(1);
    expect(sample(text, 'hcs_drivers_connected', 'transport="websocket"')).toBe(1);
    expect(text).toMatch(/^hcs_clients\{surface="sse"\} 0$/m);
    expect(text).toMatch(/^hcs_nodejs_eventloop_lag_seconds /m);
    expect(text).toMatch(/^hcs_nodejs_heap_size_used_bytes /m);
    expect(text).toMatch(/^hcs_process_resident_memory_bytes /m);
  });
});

describe('METRICS_ACCESS', () => {
  it('loopback: served to callers on this machine without a token; off: not served', async () => {
    const loopback = await startServer({ env: { METRICS_ACCESS: 'loopback' } });
    try {
      expect((await loopback.request('GET', '/metrics')).status).toBe(200);
    } finally {
      await loopback.close();
    }
    const off = await startServer({ env: { METRICS_ACCESS: 'off' } });
    try {
      expect((await off.request('GET', '/metrics')).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
