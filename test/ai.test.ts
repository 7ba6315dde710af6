import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseClient } from './support/sse-client.js';
import { startServer, type TestServer } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';

let server: TestServer;
let token: string;
let driver: TestDriver;
const actions: Message[] = [];

type Json = Record<string, unknown>;
const call = async (method: string, p: string, body?: unknown) => {
  const res = await server.request(method, `/v1/os${p}`, { token, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: (await res.json()) as Json };
};

beforeAll(async () => {
  server = await startServer();
  token = await server.login();
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.ai');
  driver.serveActions((action) => {
    actions.push(action);
    return {};
  });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Desk Lamp', category: 'light', commands: ['turn_on', 'turn_off'], state: { on: false } } });
  await eventually(async () => ((await call('GET', '/devices')).body.devices as unknown[]).length > 0);
});
afterAll(async () => {
  driver?.close();
  await server?.close();
});

describe('assistant over the local intent engine', () => {
  it('reports its status and health, and lists its one model', async () => {
    expect((await call('GET', '/ai/status')).body).toEqual({ installed: true, running: true, modelReady: true, backend: 'intents', model: 'intents' });
    expect((await call('GET', '/ai/health')).body).toMatchObject({ reachable: true, backend: 'intents' });
    expect((await call('GET', '/ai/models')).body).toMatchObject({ models: [{ name: 'intents', installed: true, recommended: true }] });
    expect((await call('POST', '/ai/install', { model: 'intents' })).status).toBe(202);
    expect((await call('POST', '/ai/install', { model: 'llama-nowhere' })).status).toBe(404);
  });

  it('makes suggestions from the live home', async () => {
    const { suggestions } = (await call('GET', '/ai/suggestions')).body as { suggestions: Array<{ prompt: string }> };
    expect(suggestions.map((s) => s.prompt)).toContain('Turn on the Desk Lamp');
  });

  it('answers a prompt at once (sync) with the actions taken, which reached the driver', async () => {
    const res = await server.request('POST', '/v1/os/ai/prompt?sync=true', { token, body: { prompt: 'turn on the desk lamp' } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ status: 'answered', requestId: expect.any(String), conversationId: expect.any(String), answer: expect.any(String), actions: [{ ok: true, status: 'done' }] });
    expect(actions.at(-1)).toMatchObject({ command: 'turn_on', deviceId: 'lamp' });
  });

  it('answers in the background (202) with token, action and answer events on /ai/events', async () => {
    const events = await SseClient.open(`${server.url}/v1/os/ai/events?accessToken=${token}`);
    await events.next((e) => e.event === 'ready');
    const res = await server.request('POST', '/v1/os/ai/prompt', { token, body: { prompt: 'turn off the desk lamp' } });
    expect(res.status).toBe(202);
    const { requestId } = (await res.json()) as { requestId: string };
    const answer = await events.next((e) => e.event === 'answer' && (e.data as Json).requestId === requestId);
    expect(answer.data).toMatchObject({ requestId, answer: expect.any(String) });
    expect(events.events.some((e) => e.event === 'token' && (e.data as Json).requestId === requestId)).toBe(true);
    expect(events.events.some((e) => e.event === 'action' && (e.data as Json).requestId === requestId)).toBe(true);
    events.close();
  });

  it('refuses prompts over 4,000 characters (413) and prompts while stopped (409)', async () => {
    const long = await call('POST', '/ai/prompt', { prompt: 'x'.repeat(4001) });
    expect(long.status).toBe(413);
    expect((long.body.error as Json).code).toBe('PROMPT_TOO_LONG');
    expect((await call('POST', '/ai/stop', {})).body).toMatchObject({ running: false });
    expect((await call('POST', '/ai/prompt', { prompt: 'turn on the desk lamp' })).status).toBe(409);
    expect((await call('POST', '/ai/start', {})).body).toMatchObject({ running: true, modelReady: true });
  });

  it('answers "turn on the kitchen light" and "which lights are on?" from the real graph', async () => {
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'kitchen', name: 'Kitchen Light', category: 'light', commands: ['turn_on', 'turn_off'], state: { on: false } } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { on: false } });
    await eventually(async () => ((await call('GET', '/devices')).body.devices as unknown[]).length === 2);
    const on = await server.request('POST', '/v1/os/ai/prompt?sync=true', { token, body: { prompt: 'turn on the kitchen light' } }).then(async (r) => (await r.json()) as Json);
    expect(on).toMatchObject({ actions: [{ target: 'Kitchen Light', status: 'done' }] });
    expect(actions.at(-1)).toMatchObject({ command: 'turn_on', deviceId: 'kitchen' });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'kitchen', state: { on: true } });
    await eventually(async () => {
      const answer = (await server.request('POST', '/v1/os/ai/prompt?sync=true', { token, body: { prompt: 'which lights are on?' } }).then((r) => r.json())) as { answer: string };
      return answer.answer === 'The Kitchen Light is on.';
    }, 5000, 'the kitchen light named');
    const off = (await server.request('POST', '/v1/os/ai/prompt?sync=true', { token, body: { prompt: 'which lights are off?' } }).then((r) => r.json())) as { answer: string };
    expect(off.answer).toBe('The Desk Lamp is off.');
  });

  it("keeps a conversation's context per user", async () => {
    const first = (await server.request('POST', '/v1/os/ai/prompt?sync=true', { token, body: { prompt: 'turn on the desk lamp' } }).then((r) => r.json())) as { conversationId: string };
    const second = (await server.request('POST', '/v1/os/ai/prompt?sync=true', { token, body: { prompt: 'turn off the desk lamp', conversationId: first.conversationId } }).then((r) => r.json())) as { conversationId: string };
    expect(second.conversationId).toBe(first.conversationId);
  });
});
