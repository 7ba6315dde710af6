import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { brokerLabel } from './broker-label.js';
import { Backoff, type BackoffPolicy } from '../../platform/backoff.js';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import { messageOf, NetworkFailureError } from '../../platform/network-failures.js';

export interface MqttConnectionOptions {
  /** `mqtt://user:pass@host:1883`, `mqtts://…`. */
  url: string;
  /** Overrides the URL's credentials (the embedded broker's own client). */
  username?: string;
  password?: string;
  clientId: string;
  /** The last will: published by the broker when the hub drops off without saying goodbye. */
  will?: { topic: string; payload: string; retain: boolean; qos: 0 | 1 };
  /** Between tries after the broker went away or refused us (platform/backoff.ts). */
  backoff: BackoffPolicy;
  /** Bound of one CONNECT (ms). */
  connectTimeoutMs: number;
  clock: Clock;
  timers: Timers;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export interface MqttConnectionStatus {
  connected: boolean;
  /** The broker, without credentials. */
  broker: string;
  /** When the current connection (or outage) began, epoch ms. */
  since: number | null;
  /** Connections made after the first one. */
  reconnects: number;
  lastError?: string;
  /** When the next try is due, while disconnected. */
  nextAttemptAt?: number;
}

type MessageHandler = (topic: string, payload: Buffer, retained: boolean) => void;

/**
 * The hub's one MQTT connection (MQTT.js). It reconnects itself, waiting the hub's back-off on
 * the injected timers (MQTT.js's own fixed period is off), restores every subscription after a
 * reconnect (so the broker replays the retained messages), and fails a publish at once while
 * disconnected rather than queueing it: a command is answered now, not when the broker returns.
 */
export class MqttConnection {
  private client: MqttClient | null = null;
  private readonly subscriptions = new Map<string, 0 | 1 | 2>();
  private readonly pendingSubscriptions = new Map<string, 0 | 1 | 2>();
  private readonly handlers = new Set<MessageHandler>();
  private readonly connectListeners = new Set<() => void>();
  private readonly disconnectListeners = new Set<() => void>();
  private readonly backoff: Backoff;
  private retry: TimerHandle | null = null;
  private closed = false;
  private connectedOnce = false;
  private state: MqttConnectionStatus;

  constructor(private readonly o: MqttConnectionOptions) {
    this.backoff = new Backoff(o.backoff);
    this.state = { connected: false, broker: brokerLabel(o.url), since: null, reconnects: 0 };
  }

  onMessage(handler: MessageHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  onConnect(listener: () => void): () => void {
    this.connectListeners.add(listener);
    return () => this.connectListeners.delete(listener);
  }

  onDisconnect(listener: () => void): () => void {
    this.disconnectListeners.add(listener);
    return () => this.disconnectListeners.delete(listener);
  }

  get connected(): boolean {
    return this.state.connected;
  }

  status(): MqttConnectionStatus {
    return { ...this.state };
  }

  start(): void {
    if (this.client || this.closed) return;
    const { o } = this;
    const options: IClientOptions = {
      clientId: o.clientId,
      // Reconnects are ours (back-off on the injected timers), so are re-subscriptions.
      reconnectPeriod: 0,
      resubscribe: false,
      connectTimeout: o.connectTimeoutMs,
      keepalive: 30,
      clean: true,
      // A publish while disconnected fails at once (see publish); nothing waits in a queue.
      queueQoSZero: false,
      ...(o.username !== undefined ? { username: o.username } : {}),
      ...(o.password !== undefined ? { password: o.password } : {}),
      ...(o.will ? { will: { topic: o.will.topic, payload: Buffer.from(o.will.payload), retain: o.will.retain, qos: o.will.qos } } : {}),
    };
    let client: MqttClient;
    try {
      client = mqtt.connect(o.url, options);
    } catch (err) {
      this.state.lastError = messageOf(err);
      o.log.warn({ broker: this.state.broker, err: this.state.lastError }, 'MQTT: cannot connect');
      return;
    }
    this.client = client;
    client.on('connect', () => {
      // Commands and their acknowledgements are small and wait on each other: no Nagle delay on our side.
      (client.stream as { setNoDelay?: (on: boolean) => void } | undefined)?.setNoDelay?.(true);
      this.connectedNow();
    });
    client.on('close', () => this.lost());
    client.on('error', (err) => {
      this.state.lastError = messageOf(err);
    });
    client.on('message', (topic, payload, packet) => {
      for (const handler of this.handlers) {
        try {
          handler(topic, payload, packet.retain);
        } catch (err) {
          o.log.warn({ topic, err: messageOf(err) }, 'MQTT: a message handler threw');
        }
      }
    });
  }

  private connectedNow(): void {
    if (this.closed) return;
    if (this.connectedOnce) this.state.reconnects++;
    this.connectedOnce = true;
    this.backoff.succeed();
    this.state = { ...this.state, connected: true, since: this.o.clock.now() };
    delete this.state.nextAttemptAt;
    this.o.log.info({ broker: this.state.broker }, 'MQTT: connected');
    if (this.subscriptions.size > 0) this.subscribeNow([...this.subscriptions]);
    for (const listener of this.connectListeners) listener();
  }

  private lost(): void {
    if (this.closed) return;
    const wasConnected = this.state.connected;
    if (wasConnected) {
      this.state = { ...this.state, connected: false, since: this.o.clock.now() };
      this.o.log.warn({ broker: this.state.broker, err: this.state.lastError }, 'MQTT: connection lost');
      for (const listener of this.disconnectListeners) listener();
    } else if (this.state.since === null) {
      this.state.since = this.o.clock.now();
    }
    if (this.retry) return;
    const wait = this.backoff.fail();
    this.state.nextAttemptAt = this.o.clock.now() + wait;
    this.retry = this.o.timers.setTimeout(() => {
      this.retry = null;
      if (!this.closed) this.client?.reconnect();
    }, wait);
  }

  /** Kept across reconnects; subscribed now when connected. */
  subscribe(filter: string, qos: 0 | 1 | 2 = 0): void {
    const had = this.subscriptions.get(filter);
    if (had !== undefined && had >= qos) return;
    this.subscriptions.set(filter, qos);
    if (!this.state.connected) return;
    // Those of one event-loop turn go in one SUBSCRIBE (a thousand configs read at once make one, not two thousand).
    this.pendingSubscriptions.set(filter, qos);
    if (this.pendingSubscriptions.size > 1) return;
    setImmediate(() => {
      const batch = [...this.pendingSubscriptions];
      this.pendingSubscriptions.clear();
      if (this.state.connected && batch.length > 0) this.subscribeNow(batch);
    });
  }

  unsubscribe(filter: string): void {
    this.pendingSubscriptions.delete(filter);
    if (!this.subscriptions.delete(filter)) return;
    if (this.state.connected) this.client?.unsubscribe(filter);
  }

  private subscribeNow(entries: Array<[string, 0 | 1 | 2]>): void {
    const map = Object.fromEntries(entries.map(([filter, qos]) => [filter, { qos }]));
    this.client?.subscribe(map, (err) => {
      if (err) this.o.log.warn({ err: messageOf(err) }, 'MQTT: a subscription was refused');
    });
  }

  /** Resolves once the broker has it (QoS 1: its PUBACK); rejects at once while disconnected. */
  publish(topic: string, payload: string, options: { qos?: 0 | 1 | 2; retain?: boolean } = {}): Promise<void> {
    const client = this.client;
    if (!client || !this.state.connected) return Promise.reject(new NetworkFailureError('unreachable', `not connected to the MQTT broker ${this.state.broker}`));
    return new Promise((resolve, reject) => {
      client.publish(topic, payload, { qos: options.qos ?? 1, retain: options.retain ?? false }, (err) => {
        if (err) reject(new NetworkFailureError('unreachable', `the MQTT broker did not take the message: ${messageOf(err)}`));
        else resolve();
      });
    });
  }

  /** Disconnects (the broker is told, so no last will is sent) and stops reconnecting. */
  async close(): Promise<void> {
    this.closed = true;
    this.o.timers.clearTimeout(this.retry ?? undefined);
    this.retry = null;
    const client = this.client;
    this.client = null;
    this.state.connected = false;
    if (!client) return;
    await new Promise<void>((resolve) => {
      // Bounded: a broker that does not answer the DISCONNECT does not hold the hub's stop.
      const forced = this.o.timers.setTimeout(() => {
        client.end(true);
        resolve();
      }, 1000);
      client.end(false, {}, () => {
        this.o.timers.clearTimeout(forced);
        resolve();
      });
    });
  }
}
