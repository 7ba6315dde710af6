import net from 'node:net';
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BrokerPortInUseError, startEmbeddedBroker, type EmbeddedBroker, type EmbeddedBrokerOptions } from '../src/adapters/mqtt/embedded-broker.js';
import { systemTimers } from '../src/platform/clock.js';
import { mosquittoPath, startMosquitto } from './support/mosquitto.js';

const MAX_PAYLOAD = 1024;
const MAX_TOPIC = 64;

interface LogEntry {
  level: 'info' | 'warn';
  obj: Record<string, unknown>;
  msg: string;
}

function testOptions(overrides: Partial<EmbeddedBrokerOptions> = {}) {
  const entries: LogEntry[] = [];
  const options: EmbeddedBrokerOptions = {
    host: '127.0.0.1',
    port: 0,
    authenticate: async (username, password) => username === 'alice' && password === 'secret',
    maxPayloadBytes: MAX_PAYLOAD,
    maxTopicChars: MAX_TOPIC,
    log: {
      info: (obj, msg) => entries.push({ level: 'info', obj: obj as Record<string, unknown>, msg }),
      warn: (obj, msg) => entries.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
    },
    timers: systemTimers,
    ...overrides,
  };
  return { options, entries };
}

const clients: MqttClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
});

async function connect(url: string, options: IClientOptions = {}): Promise<MqttClient> {
  const client = await connectAsync(url, { reconnectPeriod: 0, connectTimeout: 3000, protocolVersion: 4, ...options });
  // A refused publisher sees its socket reset; that is the expected outcome, not a test failure.
  client.on('error', () => {});
  clients.push(client);
  return client;
}

const closed = (client: MqttClient) => new Promise<void>((resolve) => (client.connected ? client.once('close', () => resolve()) : resolve()));

/** Collects the messages a client receives. */
function inbox(client: MqttClient) {
  const messages: { topic: string; payload: string; qos: number; retain: boolean }[] = [];
  client.on('message', (topic, payload, packet) => messages.push({ topic, payload: payload.toString(), qos: packet.qos, retain: packet.retain }));
  return messages;
}

async function until(check: () => boolean, what = 'condition', timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('embedded MQTT broker', () => {
  let broker: EmbeddedBroker;
  let entries: LogEntry[];
  let url: string;
  const alice = { username: 'alice', password: 'secret' };

  beforeAll(async () => {
    const setup = testOptions();
    entries = setup.entries;
    broker = await startEmbeddedBroker(setup.options);
    url = `mqtt://127.0.0.1:${broker.port}`;
  });
  afterAll(() => broker.close());

  it('refuses anonymous clients and wrong passwords, logging a refused client once', async () => {
    await expect(connect(url)).rejects.toMatchObject({ code: 5 }); // not authorized
    for (let i = 0; i < 3; i++) {
      await expect(connect(url, { clientId: 'mallory', username: 'alice', password: 'wrong' })).rejects.toMatchObject({ code: 4 }); // bad username or password
    }
    const refusals = entries.filter((e) => e.msg === 'MQTT client refused' && e.obj.client === 'mallory');
    expect(refusals).toEqual([{ level: 'warn', msg: 'MQTT client refused', obj: expect.objectContaining({ reason: 'bad username or password' }) }]);
    expect(broker.clients()).toBe(0);
  });

  it('lets alice subscribe and publish with QoS 1', async () => {
    const sub = await connect(url, alice);
    const messages = inbox(sub);
    expect(await sub.subscribeAsync('home/#', { qos: 1 })).toEqual([{ topic: 'home/#', qos: 1 }]);
    const pub = await connect(url, alice);
    // publishAsync resolves on the broker's PUBACK for QoS 1.
    await pub.publishAsync('home/lamp', 'on', { qos: 1 });
    await until(() => messages.length === 1);
    expect(messages).toEqual([{ topic: 'home/lamp', payload: 'on', qos: 1, retain: false }]);
    expect(broker.clients()).toBe(2);
  });

  it('replays a retained message to a later subscriber', async () => {
    const pub = await connect(url, alice);
    await pub.publishAsync('home/state', 'ready', { qos: 1, retain: true });
    const sub = await connect(url, alice);
    const messages = inbox(sub);
    await sub.subscribeAsync('home/state', { qos: 1 });
    await until(() => messages.length === 1);
    expect(messages).toEqual([{ topic: 'home/state', payload: 'ready', qos: 1, retain: true }]);
  });

  /** Publishes what the broker must refuse; checks the publisher is dropped and nothing arrives. */
  async function expectRefused(topic: string, payload: Buffer | string) {
    const sub = await connect(url, alice);
    const messages = inbox(sub);
    await sub.subscribeAsync('#', { qos: 1 });
    const pub = await connect(url, alice);
    pub.publish(topic, payload, { qos: 1 });
    await until(() => !pub.connected, 'publisher disconnected by the broker');
    // A message published after it arrives; broker order means the refused one would be there.
    const other = await connect(url, alice);
    await other.publishAsync('marker', 'after', { qos: 1 });
    await until(() => messages.some((m) => m.topic === 'marker'));
    expect(messages.map((m) => m.topic).filter((t) => t !== 'home/state')).toEqual(['marker']);
  }

  it('refuses a payload larger than maxPayloadBytes and disconnects the publisher', async () => {
    await expectRefused('home/big', Buffer.alloc(MAX_PAYLOAD + 1));
    expect(entries.some((e) => e.obj.reason === `payload larger than ${MAX_PAYLOAD} bytes`)).toBe(true);
  });

  it('cuts a huge packet on the wire, before it is buffered whole', async () => {
    await expectRefused('home/huge', Buffer.alloc(4 * 1024 * 1024));
    expect(entries.some((e) => String(e.obj.reason).startsWith('packet larger than'))).toBe(true);
  });

  it('refuses a topic longer than maxTopicChars and disconnects the publisher', async () => {
    await expectRefused(`home/${'x'.repeat(MAX_TOPIC)}`, 'hi');
    expect(entries.some((e) => e.obj.reason === `topic longer than ${MAX_TOPIC} characters`)).toBe(true);
  });

  it('refuses publishing to $SYS topics', async () => {
    await expectRefused('$SYS/fake', 'hi');
  });

  it('rejects a second broker on the same port with BrokerPortInUseError', async () => {
    const second = startEmbeddedBroker({ ...testOptions().options, port: broker.port });
    await expect(second).rejects.toBeInstanceOf(BrokerPortInUseError);
    await expect(second).rejects.toThrow(String(broker.port));
  });
});

describe('embedded MQTT broker limits and shutdown', () => {
  it('refuses clients beyond maxClients at CONNECT', async () => {
    const broker = await startEmbeddedBroker(testOptions({ maxClients: 1 }).options);
    try {
      const url = `mqtt://127.0.0.1:${broker.port}`;
      await connect(url, { username: 'alice', password: 'secret' });
      await expect(connect(url, { username: 'alice', password: 'secret' })).rejects.toMatchObject({ code: 3 }); // server unavailable
    } finally {
      await broker.close();
    }
  });

  it('close() ends connected clients, and silent connections, in bounded time', async () => {
    const broker = await startEmbeddedBroker(testOptions().options);
    const client = await connect(`mqtt://127.0.0.1:${broker.port}`, { username: 'alice', password: 'secret' });
    // A TCP connection that never sends CONNECT: aedes does not know it, the listener waits for it.
    const silent = net.connect(broker.port, '127.0.0.1');
    await new Promise((resolve) => silent.once('connect', resolve));
    const silentClosed = new Promise((resolve) => silent.once('close', resolve));

    const started = Date.now();
    await broker.close();
    expect(Date.now() - started).toBeLessThan(2500);
    await closed(client);
    await silentClosed;
    expect(client.connected).toBe(false);
    await broker.close(); // again: no-op
  });
});

describe.skipIf(!mosquittoPath())('mosquitto test helper', () => {
  it('runs mosquitto with a user, for a retained publish/subscribe round trip', async () => {
    const mosquitto = await startMosquitto({ users: { bob: 'hunter2' } });
    try {
      await expect(connect(mosquitto.url)).rejects.toMatchObject({ code: 5 });
      const pub = await connect(mosquitto.url, { username: 'bob', password: 'hunter2' });
      await pub.publishAsync('home/state', 'ready', { qos: 1, retain: true });
      const sub = await connect(mosquitto.url, { username: 'bob', password: 'hunter2' });
      const messages = inbox(sub);
      await sub.subscribeAsync('home/state', { qos: 1 });
      await until(() => messages.length === 1);
      expect(messages).toEqual([{ topic: 'home/state', payload: 'ready', qos: 1, retain: true }]);
    } finally {
      await mosquitto.stop();
    }
  });
});
