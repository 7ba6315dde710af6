import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseClient } from './support/sse-client.js';
import { startOllamaEmulator, type OllamaEmulator } from './support/ollama-emulator.js';
import { startServer, type TestServer } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';

let server: TestServer;
let token: string;
let driver: TestDriver;
let ollama: OllamaEmulator;
const actions: Message[] = [];

type Json = Record<string, unknown>;
const call = async (method: string, p: string, body?: unknown) => {
  const res = await server.request(method, `/v1/os${p}`, { token, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: (await res.json()) as Json };
};
const promptSync = async (body: Json) => {
  const res = await server.request('POST', '/v1/os/ai/prompt?sync=true', { token, body });
  return { status: res.status, body: (await res.json()) as Json };
};

beforeAll(async () => {
  ollama = await startOllamaEmulator(['llama3.2:3b']);
  server = await startServer({ env: { AI_BACKEND: 'ollama', AI_OLLAMA_URL: ollama.url, AI_MODEL: 'llama3.2:3b', AI_RECOMMENDED_MODELS: 'llama3.2:3b,qwen2.5:3b,phi3:mini' }, timers: undefined });
  token = await server.login();
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.ai');
  driver.serveActions((action) => {
    actions.push(action);
    return { done: action.command };
  });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Desk Lamp', commands: ['turn_on', 'turn_off'], state: { on: false } } });
  await eventually(async () => ((await call('GET', '/devices')).body.devices as unknown[]).length > 0);
  await eventually(async () => (await call('GET', '/ai/status')).body.modelReady === true, 5000, 'model loaded');
});
afterAll(async () => {
  driver?.close();
  await server?.close();
  await ollama?.close();
});

describe('assistant over an Ollama-API server', () => {
  it('loads the model at start, and lists installed and recommended models', async () => {
    expect(ollama.loads[0]).toEqual({ model: 'llama3.2:3b', keep_alive: '30m' });
    expect((await call('GET', '/ai/status')).body).toMatchObject({ installed: true, running: true, modelReady: true, backend: 'ollama', model: 'llama3.2:3b' });
    expect((await call('GET', '/ai/health')).body).toMatchObject({ reachable: true, backend: 'ollama' });
    const { models } = (await call('GET', '/ai/models')).body as { models: Array<Json> };
    expect(models).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'llama3.2:3b', installed: true }), expect.objectContaining({ name: 'qwen2.5:3b', installed: false, recommended: true })]));
  });

  it('pulls a model with streamed progress (409 meanwhile), and resumes a pull that was interrupted', async () => {
    const events = await SseClient.open(`${server.url}/v1/os/ai/events?accessToken=${token}`);
    await events.next((e) => e.event === 'ready');
    expect((await call('POST', '/ai/install', { model: 'qwen2.5:3b' })).status).toBe(202);
    expect((await call('POST', '/ai/install', { model: 'phi3:mini' })).status).toBe(409);
    await events.next((e) => e.event === 'progress' && (e.data as Json).state === 'success' && (e.data as Json).model === 'qwen2.5:3b', 10_000);
    const percents = events.events.filter((e) => e.event === 'progress' && (e.data as Json).model === 'qwen2.5:3b').map((e) => (e.data as Json).percent as number);
    expect(percents.at(-1)).toBe(100);
    expect(percents.some((p) => p > 0 && p < 100)).toBe(true);
    expect(ollama.installed.has('qwen2.5:3b')).toBe(true);

    ollama.interruptNextPullAfter = 2;
    expect((await call('POST', '/ai/install', { model: 'phi3:mini' })).status).toBe(202);
    await events.next((e) => e.event === 'error' && (e.data as Json).model === 'phi3:mini', 10_000);
    const before = events.events.length;
    expect((await call('POST', '/ai/install', { model: 'phi3:mini' })).status).toBe(202);
    await events.next((e) => e.event === 'progress' && (e.data as Json).state === 'success' && (e.data as Json).model === 'phi3:mini', 10_000);
    const resumed = events.events.slice(before).find((e) => e.event === 'progress' && ((e.data as Json).completedBytes as number) > 0)!;
    // The second pull starts where the first stopped: its first figure is past the first step.
    expect((resumed.data as Json).completedBytes as number).toBeGreaterThan(250);
    events.close();
  });

  it('streams a chat whose tool call turns a light on through the WebSocket driver, with the caller\'s rights', async () => {
    const events = await SseClient.open(`${server.url}/v1/os/ai/events?accessToken=${token}`);
    await events.next((e) => e.event === 'ready');
    const res = await server.request('POST', '/v1/os/ai/prompt', { token, body: { prompt: 'turn on the desk lamp' } });
    expect(res.status).toBe(202);
    const { requestId } = (await res.json()) as { requestId: string };
    const answer = await events.next((e) => e.event === 'answer' && (e.data as Json).requestId === requestId, 10_000);
    expect(answer.data).toMatchObject({ answer: 'Done, the Desk Lamp is on.', actions: [{ kind: 'device_command', target: 'Desk Lamp', status: 'done' }] });
    expect(events.events.filter((e) => e.event === 'token' && (e.data as Json).requestId === requestId).map((e) => (e.data as Json).text)).toEqual(['Done', ', the ', 'Desk Lamp', ' is on.']);
    expect(actions.at(-1)).toMatchObject({ command: 'turn_on', deviceId: 'lamp' });
    // The home's operations were offered as tools, and the tool's result fed back.
    expect(ollama.chats.at(-2)!.tools).toHaveLength(4);
    expect(ollama.chats.at(-1)!.messages.at(-1)).toMatchObject({ role: 'tool' });
    events.close();
  });

  it('asks before a destructive action, and acts with confirm: true', async () => {
    const before = actions.length;
    const asked = await promptSync({ prompt: 'unlock the desk lamp' });
    expect(asked.status).toBe(200);
    expect(asked.body.actions).toEqual([expect.objectContaining({ status: 'needs_confirmation', target: 'Desk Lamp' })]);
    expect(actions.length).toBe(before);
    const confirmed = await promptSync({ prompt: 'unlock the desk lamp', confirm: true });
    // Carried out: the lamp has no unlock command, so the driver's hub refuses it (the attempt was made).
    expect(confirmed.body.actions).toEqual([expect.objectContaining({ status: 'failed', detail: expect.objectContaining({ message: expect.stringMatching(/unlock/) }) })]);
  });

  it('answers 502 when the model server drops the stream mid-answer, with an error event', async () => {
    ollama.dropNextChat = true;
    const res = await promptSync({ prompt: 'turn on the desk lamp' });
    expect(res.status).toBe(502);
    expect((res.body.error as Json).code).toBe('AI_BACKEND_FAILED');
    // And the next prompt works again.
    expect((await promptSync({ prompt: 'turn on the desk lamp' })).status).toBe(200);
  });

  it('unloads the model when stopped', async () => {
    await call('POST', '/ai/stop', {});
    expect(ollama.loads.at(-1)).toEqual({ model: 'llama3.2:3b', keep_alive: 0 });
    expect((await call('POST', '/ai/prompt', { prompt: 'hello' })).status).toBe(409);
    await call('POST', '/ai/start', {});
  });

  it('answers 409 AI_NOTHING_INSTALLED to a prompt after the model was uninstalled, without asking the model server', async () => {
    expect((await call('DELETE', '/ai/uninstall')).status).toBe(200);
    const chats = ollama.chats.length;
    const res = await call('POST', '/ai/prompt', { prompt: 'hello' });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'AI_NOTHING_INSTALLED' });
    expect(ollama.chats.length).toBe(chats);
  });
});
