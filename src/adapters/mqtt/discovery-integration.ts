import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import { messageOf, NetworkFailureError } from '../../platform/network-failures.js';
import { runBuiltInAction, type BuiltInDriver, type BuiltInDriverContext, type IntegrationStatus } from '../../domain/drivers/builtin.js';
import type { ServerToDriverMessage } from '../../domain/drivers/messages.js';
import type { ButtonPress } from '../../domain/devices/capabilities.js';
import { expandDiscoveryConfig } from './abbreviations.js';
import type { MqttConnection } from './connection.js';
import { DiscoveryError, MAX_TOPIC_CHARS, parseConfigTopic, planDiscovery, type EntityPlan, type MqttDeviceInfo, type Observation, type TriggerPlan } from './entities.js';

export const MQTT_DRIVER_KEY = 'mqtt';

export interface MqttImportOptions {
  connection: MqttConnection;
  /** MQTT_DISCOVERY_PREFIX (default `homeassistant`). */
  prefix: string;
  /** The node id this hub publishes its own devices under (MQTT_EXPOSE): those configs are not imported back. */
  ownNodeId?: string;
  /** A config larger than this is rejected; a state payload larger than this is dropped. */
  maxConfigBytes: number;
  maxStateBytes: number;
  /** The bound of one command, publications included (ms). */
  actionTimeoutMs: number;
  /** How many rejected configs `GET /mqtt/status` keeps (the newest). */
  maxRejected?: number;
  clock: Clock;
  timers: Timers;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export interface RejectedConfig {
  topic: string;
  reason: string;
  at: number;
}

export interface MqttImportStatus {
  /** Hub devices it brought: entities and buttons. */
  devices: number;
  entities: number;
  buttons: number;
  /** Entities their integration leaves disabled (`enabled_by_default: false`). */
  disabled: number;
  /** The physical devices (`device` blocks) the entities belong to. */
  physicalDevices: Array<MqttDeviceInfo & { entities: string[] }>;
  messages: number;
  /** Payloads or topics over the bounds, dropped. */
  dropped: number;
  /** Payloads a template failed on. */
  unreadable: number;
  rejected: RejectedConfig[];
}

interface EntityRecord {
  plan: EntityPlan;
  configTopic: string;
  /** The latest value of each availability topic. */
  availability: Map<string, boolean | undefined>;
  latestAvailability: boolean | undefined;
  online: boolean | undefined;
  state: Record<string, unknown>;
}

interface ButtonRecord {
  id: string;
  name: string;
  device?: MqttDeviceInfo;
  triggers: Map<string, TriggerPlan>;
}

type Route = { owner: string; read(payload: string): void };

/**
 * After connecting, and after a device's config arrives: how long without another new config
 * before the birth message asks for state (configs come in bursts; the state topics they name
 * must be subscribed before the state is asked for). Never later than BIRTH_MAX_WAIT_MS after the
 * first of a burst.
 */
const BIRTH_DELAY_MS = 500;
const BIRTH_MAX_WAIT_MS = 5000;

/**
 * After connecting: how long a command to a device the hub knows from before waits for the
 * device's retained config to arrive, instead of failing at once. A hub that just started, or an
 * instance that just took the link over, gets its configs within moments; an automation firing in
 * those moments should not fail. Never more than half of a command's bound.
 */
const ANNOUNCEMENT_GRACE_MS = 2000;

const DISCOVERY_FILTERS = (prefix: string) => [`${prefix}/+/+/config`, `${prefix}/+/+/+/config`];

/**
 * Home Assistant MQTT discovery as a built-in integration (driver key `mqtt`): every config under
 * the discovery prefix becomes a hub device through its plan (entities.ts), its state topics feed
 * the state authority, its availability its presence, and the class's standard commands publish
 * to its command topics with QoS 1. A config or payload the hub cannot read is logged once, left
 * out and listed (`status().rejected`); nothing a device sends can stop the others.
 */
export class MqttImport implements BuiltInDriver {
  readonly driverKey = MQTT_DRIVER_KEY;
  readonly name = 'MQTT (Home Assistant discovery)';
  private context: BuiltInDriverContext | null = null;
  private readonly entities = new Map<string, EntityRecord>();
  private readonly buttons = new Map<string, ButtonRecord>();
  /** Which device each config topic made, and the payload it was made from (a replay of the same is ignored). */
  private readonly configs = new Map<string, { kind: 'entity' | 'trigger' | 'disabled'; id: string; payload: string }>();
  private readonly routes = new Map<string, Set<Route>>();
  /**
   * The last payload seen on each routed topic: a device that subscribes to a topic another one
   * already listens on reads it at once, as it would have from the broker's retained copy.
   */
  private readonly lastPayload = new Map<string, string>();
  private readonly subscribedQos = new Map<string, 0 | 1 | 2>();
  /** The topics each device listens on, so that forgetting one touches its topics only. */
  private readonly topicsOf = new Map<string, Set<string>>();
  private readonly rejected = new Map<string, RejectedConfig>();
  private readonly pendingState = new Map<string, Record<string, unknown>>();
  private flushScheduled = false;
  private counters = { messages: 0, dropped: 0, unreadable: 0 };
  /** Topics already logged as dropped or unreadable: one line each, not one per message. */
  private readonly warned = new Set<string>();
  private readonly unhook: Array<() => void> = [];
  private birth: TimerHandle | null = null;
  /** When the pending birth message was first asked for (a burst of configs postpones it, within a bound). */
  private birthAskedAt: number | null = null;
  /** When the link last connected (null while it is down): the start of the announcement grace. */
  private connectedAt: number | null = null;
  /** Commands that arrived in the grace for devices not announced yet, by device id. */
  private readonly awaitingAnnouncement = new Map<string, Array<{ message: ServerToDriverMessage; timer: TimerHandle }>>();

  constructor(private readonly o: MqttImportOptions) {}

  connect(context: BuiltInDriverContext): void {
    this.context = context;
    const c = this.o.connection;
    this.unhook.push(
      c.onMessage((topic, payload) => this.onMessage(topic, payload)),
      c.onConnect(() => this.onConnected()),
      c.onDisconnect(() => this.onDisconnected()),
    );
    for (const filter of DISCOVERY_FILTERS(this.o.prefix)) c.subscribe(filter, 1);
    if (c.connected) this.onConnected();
  }

  disconnect(): void {
    this.connectedAt = null;
    this.releaseAwaiting();
    this.o.timers.clearTimeout(this.birth ?? undefined);
    this.birth = null;
    this.birthAskedAt = null;
    for (const off of this.unhook.splice(0)) off();
    for (const filter of DISCOVERY_FILTERS(this.o.prefix)) this.o.connection.unsubscribe(filter);
    for (const topic of this.routes.keys()) this.o.connection.unsubscribe(topic);
    this.routes.clear();
    this.topicsOf.clear();
    this.subscribedQos.clear();
    this.context = null;
  }

  status(): IntegrationStatus {
    if (!this.context) return { status: 'off', devices: this.entities.size + this.buttons.size };
    const link = this.o.connection.status();
    if (!link.connected) return { status: 'failed', devices: this.entities.size + this.buttons.size, lastError: `not connected to the MQTT broker ${link.broker}${link.lastError ? `: ${link.lastError}` : ''}` };
    const offline = [...this.entities.values()].filter((e) => e.online === false).length;
    return offline > 0 ? { status: 'degraded', devices: this.entities.size + this.buttons.size, unreachable: offline, lastError: 'their availability topics say offline' } : { status: 'running', devices: this.entities.size + this.buttons.size };
  }

  importStatus(): MqttImportStatus {
    const groups = new Map<string, MqttDeviceInfo & { entities: string[] }>();
    const group = (device: MqttDeviceInfo | undefined, id: string) => {
      if (!device) return;
      const g = groups.get(device.key) ?? { ...device, entities: [] };
      g.entities.push(id);
      groups.set(device.key, g);
    };
    for (const e of this.entities.values()) group(e.plan.device, e.plan.id);
    for (const b of this.buttons.values()) group(b.device, b.id);
    return {
      devices: this.entities.size + this.buttons.size,
      entities: this.entities.size,
      buttons: this.buttons.size,
      disabled: [...this.configs.values()].filter((c) => c.kind === 'disabled').length,
      physicalDevices: [...groups.values()],
      ...this.counters,
      rejected: [...this.rejected.values()].sort((a, b) => b.at - a.at),
    };
  }

  receive(message: ServerToDriverMessage): void {
    if ((message.type === 'ACTION' || message.type === 'COMMAND_EXECUTE') && this.awaitAnnouncement(message, message.deviceId)) return;
    this.run(message);
  }

  private run(message: ServerToDriverMessage): void {
    runBuiltInAction<EntityRecord>(
      {
        context: () => this.context,
        timers: this.o.timers,
        timeoutMs: this.o.actionTimeoutMs,
        target: (deviceId) => {
          const entity = this.entities.get(deviceId);
          if (entity) return entity;
          if (this.buttons.has(deviceId)) throw new NetworkFailureError('unsupported', `${deviceId} is a button: it reports presses and takes no commands`);
          // Known to the hub from before (a restart, an outage) but not announced on this connection yet.
          throw new NetworkFailureError('unreachable', this.o.connection.connected ? `${deviceId} has not announced itself on MQTT since the hub connected` : `not connected to the MQTT broker ${this.o.connection.status().broker}`);
        },
        handler: (command, entity) => {
          if (!entity.plan.commands.includes(command)) return undefined;
          return async (target, params) => {
            const publications = target.plan.command(command, params, target.state);
            for (const p of publications) await this.o.connection.publish(p.topic, p.payload, { qos: 1, retain: p.retain ?? false });
            if (target.plan.optimistic) {
              const assumed = target.plan.assumed?.(command, params);
              if (assumed) this.queueState(target.plan.id, assumed);
            }
            return { published: publications.map((p) => p.topic) };
          };
        },
      },
      message,
    );
  }

  /** Holds a command for a device not announced yet while the grace after connecting lasts; true if held. */
  private awaitAnnouncement(message: ServerToDriverMessage, deviceId: string): boolean {
    if (this.entities.has(deviceId) || this.buttons.has(deviceId) || this.connectedAt === null || !this.o.connection.connected) return false;
    const left = Math.min(ANNOUNCEMENT_GRACE_MS, this.o.actionTimeoutMs / 2) - (this.o.clock.now() - this.connectedAt);
    if (left <= 0) return false;
    const waiting = this.awaitingAnnouncement.get(deviceId) ?? [];
    const held = {
      message,
      timer: this.o.timers.setTimeout(() => {
        const list = this.awaitingAnnouncement.get(deviceId);
        list?.splice(list.indexOf(held), 1);
        if (list?.length === 0) this.awaitingAnnouncement.delete(deviceId);
        // Held once: a second grace would outlast the command's bound.
        this.run(message);
      }, left),
    };
    waiting.push(held);
    this.awaitingAnnouncement.set(deviceId, waiting);
    return true;
  }

  /** Runs the held commands now: of one device once it is announced, of all when the link goes. */
  private releaseAwaiting(deviceId?: string): void {
    const ids = deviceId === undefined ? [...this.awaitingAnnouncement.keys()] : [deviceId];
    for (const id of ids) {
      const held = this.awaitingAnnouncement.get(id);
      if (!held) continue;
      this.awaitingAnnouncement.delete(id);
      for (const h of held) {
        this.o.timers.clearTimeout(h.timer);
        this.run(h.message);
      }
    }
  }

  // ---- messages ---------------------------------------------------------------------------------

  private onMessage(topic: string, payload: Buffer): void {
    this.counters.messages++;
    if (topic.length > MAX_TOPIC_CHARS) return this.drop(topic.slice(0, 100), `topic longer than ${MAX_TOPIC_CHARS} characters`);
    const at = parseConfigTopic(this.o.prefix, topic);
    if (at && at.nodeId !== undefined && at.nodeId === this.o.ownNodeId) return;
    if (at) {
      if (payload.length > this.o.maxConfigBytes) return this.reject(topic, `config larger than ${this.o.maxConfigBytes} bytes (${payload.length})`);
      return this.onConfig(topic, at, payload.toString('utf8'));
    }
    const routes = this.routes.get(topic);
    if (!routes) return;
    if (payload.length > this.o.maxStateBytes) return this.drop(topic, `payload larger than ${this.o.maxStateBytes} bytes (${payload.length})`);
    const text = payload.toString('utf8');
    this.lastPayload.set(topic, text);
    for (const route of routes) this.deliver(topic, route, text);
  }

  private deliver(topic: string, route: Route, text: string): void {
    try {
      route.read(text);
    } catch (err) {
      this.counters.unreadable++;
      this.warnOnce(topic, { topic, device: route.owner, err: messageOf(err) }, 'MQTT: a payload could not be read; ignored');
    }
  }

  private drop(topic: string, reason: string): void {
    this.counters.dropped++;
    this.warnOnce(topic, { topic, reason }, 'MQTT: message dropped');
  }

  private warnOnce(key: string, obj: object, msg: string): void {
    if (this.warned.has(key)) return;
    if (this.warned.size > 1000) this.warned.clear();
    this.warned.add(key);
    this.o.log.warn(obj, msg);
  }

  private reject(topic: string, reason: string): void {
    const known = this.rejected.get(topic);
    if (!known || known.reason !== reason) this.o.log.warn({ topic, reason }, 'MQTT: discovery config rejected');
    this.rejected.delete(topic);
    this.rejected.set(topic, { topic, reason, at: this.o.clock.now() });
    const max = this.o.maxRejected ?? 200;
    // The oldest go first: a flood of bad configs cannot grow the list without bound.
    while (this.rejected.size > max) this.rejected.delete(this.rejected.keys().next().value!);
  }

  private onConfig(topic: string, at: NonNullable<ReturnType<typeof parseConfigTopic>>, text: string): void {
    const previous = this.configs.get(topic);
    if (text.trim() === '') {
      this.rejected.delete(topic);
      if (previous) this.forgetConfig(topic, previous);
      return;
    }
    if (previous?.payload === text) return;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      return this.reject(topic, `not JSON: ${messageOf(err)}`);
    }
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return this.reject(topic, 'not a JSON object');
    let plan: EntityPlan | TriggerPlan | null;
    try {
      plan = planDiscovery(at, expandDiscoveryConfig(raw as Record<string, unknown>));
    } catch (err) {
      return this.reject(topic, err instanceof DiscoveryError ? err.message : `cannot be read: ${messageOf(err)}`);
    }
    this.rejected.delete(topic);
    const nextId = plan === null ? '' : plan.kind === 'entity' ? plan.id : plan.buttonId;
    if (previous && (previous.id !== nextId || previous.kind !== (plan?.kind ?? 'disabled'))) this.forgetConfig(topic, previous);
    if (plan === null) {
      this.configs.set(topic, { kind: 'disabled', id: '', payload: text });
      return;
    }
    if (plan.kind === 'entity') this.addEntity(topic, plan, text);
    else this.addTrigger(topic, plan, text);
  }

  private forgetConfig(topic: string, previous: { kind: 'entity' | 'trigger' | 'disabled'; id: string }): void {
    this.configs.delete(topic);
    if (previous.kind === 'entity') {
      const entity = this.entities.get(previous.id);
      if (!entity || entity.configTopic !== topic) return;
      this.entities.delete(previous.id);
      this.removeRoutes(previous.id);
      this.pendingState.delete(previous.id);
      this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: previous.id });
    } else if (previous.kind === 'trigger') {
      const button = this.buttons.get(previous.id);
      if (!button) return;
      button.triggers.delete(topic);
      this.removeRoutes(`${previous.id}\u0000${topic}`);
      if (button.triggers.size === 0) {
        this.buttons.delete(previous.id);
        this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: previous.id });
      } else this.announceButton(button);
    }
  }

  /**
   * Home Assistant's birth message, once the configs of the moment have arrived. Also after a
   * device announced itself while the hub listened: its state comes right after its config, and
   * can reach the broker before the hub's subscription to the state topic the config names, so
   * it would wait for the device's next report (a door sensor: until the door moves).
   */
  private askForStateSoon(): void {
    if (this.connectedAt === null) return;
    const now = this.o.clock.now();
    this.birthAskedAt ??= now;
    this.o.timers.clearTimeout(this.birth ?? undefined);
    this.birth = this.o.timers.setTimeout(() => {
      this.birth = null;
      this.birthAskedAt = null;
      if (this.context) void this.o.connection.publish(`${this.o.prefix}/status`, 'online', { qos: 1, retain: false }).catch(() => undefined);
    }, Math.max(0, Math.min(BIRTH_DELAY_MS, this.birthAskedAt + BIRTH_MAX_WAIT_MS - now)));
  }

  private addEntity(topic: string, plan: EntityPlan, text: string): void {
    const existing = this.entities.get(plan.id);
    if (!existing) this.askForStateSoon();
    // Two configs claiming one unique_id: the newer wins, as in Home Assistant's entity registry.
    if (existing && existing.configTopic !== topic) this.configs.delete(existing.configTopic);
    this.removeRoutes(plan.id);
    const entity: EntityRecord = { plan, configTopic: topic, availability: new Map(), latestAvailability: undefined, online: undefined, state: existing?.state ?? {} };
    this.entities.set(plan.id, entity);
    this.configs.set(topic, { kind: 'entity', id: plan.id, payload: text });
    this.context?.emit({
      type: 'DEVICE_DISCOVERED',
      device: {
        id: plan.id,
        name: plan.name,
        deviceClass: plan.deviceClass,
        attributes: plan.attributes,
        commands: plan.commands,
        properties: propertiesOf(plan.device, { component: plan.component, configTopic: topic }),
        state: entity.state,
      },
    });
    for (const listener of plan.listeners) {
      this.addRoute(listener.topic, plan.qos, {
        owner: plan.id,
        read: (payload) => this.observe(plan.id, listener.read(payload)),
      });
    }
    if (plan.availability) {
      for (const a of plan.availability.topics) {
        entity.availability.set(a.topic, undefined);
        this.addRoute(a.topic, plan.qos, {
          owner: plan.id,
          read: (payload) => {
            const v = a.read(payload);
            if (v === undefined) return;
            entity.availability.set(a.topic, v);
            entity.latestAvailability = v;
            this.updateOnline(entity);
          },
        });
      }
    }
    // Home Assistant's rule: with availability topics, unavailable until one says so.
    this.updateOnline(entity, true);
    this.releaseAwaiting(plan.id);
  }

  private addTrigger(topic: string, plan: TriggerPlan, text: string): void {
    const button = this.buttons.get(plan.buttonId) ?? { id: plan.buttonId, name: plan.buttonName, triggers: new Map<string, TriggerPlan>(), ...(plan.device ? { device: plan.device } : {}) };
    button.triggers.set(topic, plan);
    this.buttons.set(plan.buttonId, button);
    this.configs.set(topic, { kind: 'trigger', id: plan.buttonId, payload: text });
    const owner = `${plan.buttonId}\u0000${topic}`;
    this.removeRoutes(owner);
    this.addRoute(plan.listener.topic, plan.qos, { owner, read: (payload) => this.observe(plan.buttonId, plan.listener.read(payload)) });
    this.announceButton(button);
    this.releaseAwaiting(plan.buttonId);
  }

  private announceButton(button: ButtonRecord): void {
    const presses = [...new Set([...button.triggers.values()].map((t) => t.press))];
    this.context?.emit({
      type: 'DEVICE_DISCOVERED',
      device: { id: button.id, name: button.name, deviceClass: 'button', attributes: { presses }, commands: [], properties: propertiesOf(button.device, { component: 'device_automation', configTopic: [...button.triggers.keys()][0]! }) },
    });
    this.context?.setOnline(button.id, this.o.connection.connected);
  }

  private addRoute(topic: string, qos: 0 | 1 | 2, route: Route): void {
    const routes = this.routes.get(topic) ?? new Set<Route>();
    routes.add(route);
    this.routes.set(topic, routes);
    const owned = this.topicsOf.get(route.owner) ?? new Set<string>();
    owned.add(topic);
    this.topicsOf.set(route.owner, owned);
    const had = this.subscribedQos.get(topic);
    if (had === undefined || had < qos) {
      this.subscribedQos.set(topic, qos);
      this.o.connection.subscribe(topic, qos);
    }
    const last = this.lastPayload.get(topic);
    if (last !== undefined) this.deliver(topic, route, last);
  }

  private removeRoutes(owner: string): void {
    const owned = this.topicsOf.get(owner);
    if (!owned) return;
    this.topicsOf.delete(owner);
    for (const topic of owned) {
      const routes = this.routes.get(topic);
      if (!routes) continue;
      for (const route of routes) if (route.owner === owner) routes.delete(route);
      if (routes.size === 0) {
        this.routes.delete(topic);
        this.lastPayload.delete(topic);
        this.subscribedQos.delete(topic);
        this.o.connection.unsubscribe(topic);
      }
    }
  }

  private observe(id: string, observation: Observation | undefined): void {
    if (!observation) return;
    if (observation.state) this.queueState(id, observation.state);
    if (observation.press) this.press(id, observation.press);
  }

  private press(id: string, press: ButtonPress): void {
    this.context?.emit({ type: 'BUTTON_PRESSED', deviceId: id, press });
  }

  /** State is merged per device and told once per event-loop turn: a burst of messages is one update with the last values. */
  private queueState(id: string, state: Record<string, unknown>): void {
    const entity = this.entities.get(id);
    if (entity) Object.assign(entity.state, state);
    const pending = this.pendingState.get(id);
    if (pending) Object.assign(pending, state);
    else this.pendingState.set(id, { ...state });
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flushState());
  }

  private flushState(): void {
    this.flushScheduled = false;
    const batch = [...this.pendingState];
    this.pendingState.clear();
    for (const [deviceId, state] of batch) this.context?.emit({ type: 'STATE_UPDATE', deviceId, state });
  }

  private updateOnline(entity: EntityRecord, force = false): void {
    let online: boolean;
    const spec = entity.plan.availability;
    if (!this.o.connection.connected) online = false;
    else if (!spec) online = true;
    else {
      const values = [...entity.availability.values()];
      if (spec.mode === 'all') online = values.every((v) => v === true);
      else if (spec.mode === 'any') online = values.some((v) => v === true);
      else online = entity.latestAvailability === true;
    }
    if (!force && entity.online === online) return;
    entity.online = online;
    this.context?.setOnline(entity.plan.id, online);
  }

  private onConnected(): void {
    this.connectedAt = this.o.clock.now();
    // Home Assistant's birth message: Zigbee2MQTT, Tasmota and ESPHome answer it by publishing
    // their state again (state that is not retained would otherwise wait for the next report).
    // Sent once the retained configs had a moment to arrive, so the state finds its devices.
    this.askForStateSoon();
    for (const entity of this.entities.values()) this.updateOnline(entity);
    for (const button of this.buttons.values()) this.context?.setOnline(button.id, true);
  }

  /** The broker went away: every device is unavailable until the replayed availability says otherwise. */
  private onDisconnected(): void {
    this.connectedAt = null;
    this.releaseAwaiting();
    this.lastPayload.clear();
    for (const entity of this.entities.values()) {
      for (const key of entity.availability.keys()) entity.availability.set(key, undefined);
      entity.latestAvailability = undefined;
      this.updateOnline(entity);
    }
    for (const button of this.buttons.values()) this.context?.setOnline(button.id, false);
  }
}

function propertiesOf(device: MqttDeviceInfo | undefined, mqtt: { component: string; configTopic: string }): Record<string, unknown> {
  return {
    mqtt,
    ...(device
      ? {
          // Entities of one physical device share this key (Home Assistant's device registry).
          physicalDevice: device.key,
          ...(device.name ? { physicalDeviceName: device.name } : {}),
          ...(device.manufacturer ? { manufacturer: device.manufacturer } : {}),
          ...(device.model ? { model: device.model } : {}),
          ...(device.swVersion ? { swVersion: device.swVersion } : {}),
          ...(device.suggestedArea ? { suggestedArea: device.suggestedArea } : {}),
        }
      : {}),
  };
}
