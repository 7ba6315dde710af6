import { io as connect, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HUB_COMMANDS, type HubCommandName } from '../src/domain/protocol/command-table.js';
import { startServer, type TestServer } from './support/server.js';
import { TestDriver, eventually } from './support/ws-driver.js';

/**
 * Every hub protocol command, once with a valid payload against a small real home and once
 * with an invalid one, over a real Socket.IO connection.
 */
let server: TestServer;
let client: Socket;
let driver: TestDriver;
const ids: Record<string, string> = {};
/** Commands the test driver fails, as a relay that is stuck would. */
const failing = new Set<string>();

type Response = { command: string; ok: boolean; data: unknown; requestId?: string };
const send = (command: string, payload: unknown): Promise<Response> => client.emitWithAck('hub:command', { command, payload, requestId: `${command}-${Math.random()}` });

beforeAll(async () => {
  server = await startServer();
  const token = await server.login();
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.hp');
  driver.serveActions((a) => {
    if (failing.has(String(a.command))) throw new Error('relay stuck');
    return a.command === 'scenes.list' ? { scenes: [{ id: 'movie', name: 'Movie' }] } : { done: a.command };
  });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Hall Lamp', category: 'light', commands: ['turn_on', 'turn_off', 'set_brightness'], state: { on: false, brightness: 10 } } });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'tv', name: 'Hall TV', capabilities: ['scenes'], commands: ['power_on', 'power_off', 'volume_set', 'scenes.list', 'scenes.run'], state: { volume: 5 } } });
  const { devices } = await eventually(async () => {
    const list = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Array<{ id: string; driverDeviceId: string }> };
    return list.devices.length === 2 ? list : undefined;
  });
  ids.lamp = devices.find((d) => d.driverDeviceId === 'lamp')!.id;
  ids.tv = devices.find((d) => d.driverDeviceId === 'tv')!.id;
  const post = async (path: string, body: unknown) => (await (await server.request('POST', `/v1/os${path}`, { token, body })).json()) as { id: string };
  ids.space = (await post('/spaces/save', { name: 'Hall' })).id;
  await post(`/spaces/${ids.space}/devices/assign`, { deviceIds: [ids.lamp, ids.tv] });
  ids.program = (await post('/programs/save', { name: 'Hall lights', semantics: ['welcome'], steps: [{ type: 'command', deviceId: ids.lamp, command: 'turn_on' }], timer: { kind: 'interval', everyMs: 86_400_000, enabled: true } })).id;
  ids.zone = (await post('/zones/save', { name: 'Hall audio', deviceIds: [ids.tv], programId: ids.program })).id;
  ids.actionMap = (await post('/action-maps/save', { name: 'Red button', controlKey: 'red', deviceId: ids.lamp, command: 'turn_off' })).id;

  client = connect(`${server.url}/socket/hub-protocol`, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true });
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('connect_error', reject);
  });
});

afterAll(async () => {
  client?.disconnect();
  driver?.close();
  await server?.close();
});

/** A valid payload for every command, with what the answer must contain. */
const valid: Record<HubCommandName, () => { payload: unknown; check?: (data: unknown) => void }> = {
  GET_PROTOCOL_CAPABILITIES: () => ({ payload: {}, check: (d) => expect((d as { commands: unknown[] }).commands).toHaveLength(Object.keys(HUB_COMMANDS).length) }),
  LIST_EVENTS: () => ({ payload: {}, check: (d) => expect(JSON.stringify(d)).toContain('program.run_finished') }),
  SYSTEM_SNAPSHOT: () => ({ payload: {}, check: (d) => expect(d).toMatchObject({ ready: true }) }),
  GET_CONTEXT_SNAPSHOT: () => ({ payload: { spaceId: ids.space } }),
  GET_HOME_GRAPH: () => ({ payload: {}, check: (d) => expect((d as { spaces: Array<{ deviceIds: string[] }> }).spaces[0]!.deviceIds).toHaveLength(2) }),
  LIST_CAPABILITY_MODEL: () => ({ payload: {} }),
  LIST_INTEGRATIONS: () => ({ payload: {}, check: (d) => expect(JSON.stringify(d)).toContain('acme.hp') }),
  LIST_CONNECTIONS: () => ({
    payload: {},
    // One driver socket, besides the links of the integrations built into the hub.
    check: (d) => expect((d as { connections: Array<{ transport: string }> }).connections.filter((c) => c.transport !== 'builtin')).toHaveLength(1),
  }),
  LIST_SCENES: () => ({ payload: { refresh: true }, check: (d) => expect(JSON.stringify(d)).toContain('Movie') }),
  SCENE_RUN: () => ({ payload: { sceneId: `${ids.tv}:movie` } }),
  LIST_ENTITY_DOMAINS: () => ({ payload: {} }),
  LIST_ENTITIES: () => ({ payload: { domain: 'light' }, check: (d) => expect(JSON.stringify(d)).toContain('light.hall_lamp') }),
  GET_ENTITY: () => ({ payload: { entityId: 'light.hall_lamp' } }),
  ENTITY_ACTION: () => ({ payload: { entityId: 'light.hall_lamp', service: 'turn_on', data: { brightness: 40 } } }),
  LIST_SENSORS: () => ({ payload: {} }),
  LIST_STATES: () => ({ payload: {} }),
  GET_DEVICE_STATE: () => ({ payload: { deviceId: ids.lamp } }),
  LIST_PROGRAMS: () => ({ payload: {}, check: (d) => expect((d as { programs: unknown[] }).programs).toHaveLength(1) }),
  LIST_AUTOMATIONS: () => ({ payload: {}, check: (d) => expect((d as { automations: unknown[] }).automations).toHaveLength(1) }),
  LIST_ACTION_MAPS: () => ({ payload: {} }),
  LIST_ZONES: () => ({ payload: {}, check: (d) => expect(JSON.stringify(d)).toContain('Hall audio') }),
  PROGRAM_RUN: () => ({ payload: { id: ids.program, wait: true }, check: (d) => expect(d).toMatchObject({ status: 'succeeded' }) }),
  AUTOMATION_RUN: () => ({ payload: { id: ids.program, wait: true }, check: (d) => expect(d).toMatchObject({ trigger: 'timer' }) }),
  ACTION_MAP_TRIGGER: () => ({ payload: { id: 'red' }, check: (d) => expect(d).toMatchObject({ ok: true, command: 'turn_off' }) }),
  LIST_PROGRAM_SEMANTICS: () => ({ payload: {}, check: (d) => expect(JSON.stringify(d)).toContain('welcome') }),
  UPSERT_PROGRAM_SEMANTIC: () => ({ payload: { programId: ids.program, semantic: 'Arrival' }, check: (d) => expect(d).toMatchObject({ semantics: ['welcome', 'arrival'] }) }),
  DELETE_PROGRAM_SEMANTIC: () => ({ payload: { programId: ids.program, semantic: 'arrival' }, check: (d) => expect(d).toMatchObject({ semantics: ['welcome'] }) }),
  LIST_DRIVERS: () => ({ payload: {} }),
  LIST_DEVICES: () => ({ payload: {}, check: (d) => expect((d as { devices: unknown[] }).devices).toHaveLength(2) }),
  LIST_DEVICE_COMMANDS: () => ({ payload: { deviceId: ids.lamp } }),
  GET_DEVICE_COMMAND: () => ({ payload: { deviceId: ids.lamp, command: 'set_brightness' } }),
  EXECUTE_DEVICE_COMMAND: () => ({ payload: { id: ids.lamp, command: 'turn_on' }, check: (d) => expect(d).toEqual({ ok: true, result: { done: 'turn_on' } }) }),
  DEVICE_ACTION: () => ({ payload: { deviceId: ids.lamp, action: 'set_brightness', value: 60 } }),
  DRIVER_MESSAGE: () => ({ payload: { driverKey: 'acme.hp', payload: { hello: 1 } }, check: (d) => expect(d).toEqual({ driverKey: 'acme.hp', delivered: 1 }) }),
  INTENT_PARSE: () => ({ payload: { text: 'turn on the hall lamp' }, check: (d) => expect(d).toMatchObject({ matched: true, intent: 'HassTurnOn' }) }),
  INTENT_EXECUTE: () => ({ payload: { text: 'turn off the hall lamp' }, check: (d) => expect(d).toMatchObject({ ok: true }) }),
};

/** An invalid payload per command with required fields (every command also refuses a non-object). */
const invalidFields: Partial<Record<HubCommandName, unknown>> = {
  SCENE_RUN: { sceneId: 5 },
  GET_ENTITY: {},
  ENTITY_ACTION: { entityId: 'light.hall_lamp' },
  GET_DEVICE_STATE: { deviceId: [] },
  PROGRAM_RUN: { id: 42 },
  AUTOMATION_RUN: {},
  ACTION_MAP_TRIGGER: {},
  UPSERT_PROGRAM_SEMANTIC: { programId: 'x', semantic: '' },
  DELETE_PROGRAM_SEMANTIC: { programId: 'x' },
  LIST_DEVICE_COMMANDS: {},
  GET_DEVICE_COMMAND: { deviceId: 'x' },
  EXECUTE_DEVICE_COMMAND: { id: 'x' },
  DEVICE_ACTION: { deviceId: 'x', action: 7 },
  DRIVER_MESSAGE: {},
  INTENT_PARSE: { text: '' },
  INTENT_EXECUTE: {},
  LIST_SCENES: { refresh: 'yes' },
  LIST_ENTITIES: { domain: 3 },
  GET_CONTEXT_SNAPSHOT: { spaceId: 1 },
};

describe('hub protocol, every command', () => {
  for (const command of Object.keys(HUB_COMMANDS) as HubCommandName[]) {
    it(command, async () => {
      const { payload, check } = valid[command]();
      const ok = await send(command, payload);
      expect(ok.ok, `${command}: ${JSON.stringify(ok.data).slice(0, 300)}`).toBe(true);
      expect(ok.command).toBe(command);
      check?.(ok.data);

      const notAnObject = await send(command, 42);
      expect(notAnObject).toMatchObject({ ok: false, data: { error: { code: 'INVALID_PAYLOAD' } } });
      if (command in invalidFields) {
        const bad = await send(command, invalidFields[command]);
        expect(bad, command).toMatchObject({ ok: false, data: { error: { code: 'INVALID_PAYLOAD' } } });
      }
    });
  }

  it('echoes requestId so concurrent answers can be matched', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => client.emitWithAck('hub:command', { command: 'LIST_DEVICES', payload: {}, requestId: `c${i}` }) as Promise<Response>));
    expect(answers.map((a) => a.requestId)).toEqual(Array.from({ length: 20 }, (_, i) => `c${i}`));
  });

  it('answers domain failures with the operation\'s own code', async () => {
    expect(await send('GET_ENTITY', { entityId: 'light.nowhere' })).toMatchObject({ ok: false, data: { error: { code: 'ENTITY_NOT_FOUND' } } });
    expect(await send('EXECUTE_DEVICE_COMMAND', { id: 'nope', command: 'x' })).toMatchObject({ ok: false, data: { error: { code: 'DEVICE_NOT_FOUND' } } });
  });

  it('answers ok: false with data.error whenever a command did not do what it was asked', async () => {
    const failed = (code: string) => ({ ok: false, data: { error: { code, message: expect.any(String) } } });
    expect(await send('DEVICE_ACTION', { deviceId: ids.lamp, action: 'play' })).toMatchObject(failed('ACTION_NOT_SUPPORTED'));
    expect(await send('INTENT_EXECUTE', { text: 'order a pizza' })).toMatchObject(failed('INTENT_NOT_UNDERSTOOD'));
    failing.add('turn_off');
    try {
      const stuck = failed('DRIVER_ERROR');
      expect(await send('DEVICE_ACTION', { deviceId: ids.lamp, action: 'turn_off' })).toMatchObject(stuck);
      expect(await send('ENTITY_ACTION', { entityId: 'light.hall_lamp', service: 'turn_off' })).toMatchObject(stuck);
      const trigger = await send('ACTION_MAP_TRIGGER', { id: 'red' });
      expect(trigger).toMatchObject(stuck);
      // What was tried is still there to see.
      expect(trigger.data).toMatchObject({ error: { details: { actionMapId: ids.actionMap, ok: false, command: 'turn_off' } } });
      const intent = await send('INTENT_EXECUTE', { text: 'turn off the hall lamp' });
      expect(intent).toMatchObject(failed('INTENT_NOT_CARRIED_OUT'));
      expect(intent.data).toMatchObject({ error: { details: { results: [{ ok: false, error: { code: 'DRIVER_ERROR' } }] } } });
    } finally {
      failing.clear();
    }
    expect(await send('ACTION_MAP_TRIGGER', { id: 'red' })).toMatchObject({ ok: true, data: { ok: true } });
  });
});
