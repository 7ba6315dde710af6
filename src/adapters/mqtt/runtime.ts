import { randomBytes } from 'node:crypto';
import type { MqttConfig } from '../../config.js';
import type { Clock, Timers } from '../../platform/clock.js';
import { messageOf } from '../../platform/network-failures.js';
import { LeasedRuntime } from '../../platform/leased-runtime.js';
import { attachBuiltInDriver, type BuiltInIntegrations } from '../../domain/drivers/builtin.js';
import type { DriverManager, DriverManagerLogger } from '../../domain/drivers/driver-manager.js';
import type { DriverPlacement } from '../../domain/drivers/local/driver-process.js';
import type { DeviceService } from '../../domain/devices/device-service.js';
import type { DomainEventBus } from '../../domain/events.js';
import type { MqttRuntime, MqttRuntimeStatus } from '../../domain/mqtt/ports.js';
import { topicMatches, type MqttMessages } from '../../domain/automations/device-triggers.js';
import { brokerLabel } from './broker-label.js';
import type { MqttConnection } from './connection.js';
import type { MqttImport } from './discovery-integration.js';
import type { EmbeddedBroker } from './embedded-broker.js';
import type { MqttExposure } from './exposure.js';

/**
 * MQTT.js, aedes and nunjucks (discovery templates) load when the link first becomes active, not
 * with the hub: most hubs never set MQTT_URL, and loading them cost every start ~110 ms of CPU.
 */
const loadMqttParts = () => Promise.all([import('./connection.js'), import('./discovery-integration.js'), import('./exposure.js'), import('./entities.js')]);

/** The lease a cluster's instances compete for: one of them holds the MQTT link. */
export const MQTT_LEASE = 'builtin:mqtt';

export interface MqttLinkOptions {
  config: MqttConfig & { url: string };
  manager: DriverManager;
  integrations: BuiltInIntegrations;
  devices: DeviceService;
  events: DomainEventBus;
  /** This hub's id (stable across restarts): its node in discovery topics and unique ids. */
  hubId(): string;
  /** Runs a command published to an exposed device, as the `mqtt` caller. */
  command(deviceId: string, command: string, params: Record<string, unknown>): Promise<unknown>;
  /** The embedded broker's admin-created users. */
  verifyUser(username: string, password: string): Promise<boolean>;
  /** In a cluster: the lease that decides which instance runs the link. */
  placement?: DriverPlacement;
  actionTimeoutMs: number;
  clock: Clock;
  timers: Timers;
  log: DriverManagerLogger & { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

interface Active {
  connection: MqttConnection;
  discovery: MqttImport;
  exposure: MqttExposure | undefined;
  detach: () => void;
  broker: EmbeddedBroker | undefined;
}

/**
 * The MQTT link (docs/mqtt.md): the embedded broker when MQTT_URL=embedded, the one connection,
 * discovery attached as the built-in integration `mqtt`, and the exposure when MQTT_EXPOSE=on.
 * In a cluster only the instance holding the lease runs it; the others stand by and take it over
 * when that instance dies or lets go. Nothing here may stop the hub: a broker port in use or a
 * broker that is down is a status, and the connection keeps trying with back-off.
 */
export class MqttLink implements MqttRuntime {
  private active: Active | undefined;
  private role: 'active' | 'standby' = 'standby';
  private embeddedError: string | undefined;
  private lastDiscovery: ReturnType<MqttImport['importStatus']> | undefined;

  /** Automations' MQTT triggers: topic filters and who listens to each, kept across link restarts. */
  private readonly listeners = new Map<string, Set<(topic: string, payload: string) => void>>();

  /** The link runs on the instance of a cluster that holds `builtin:mqtt`. */
  private readonly lease: LeasedRuntime;

  constructor(private readonly o: MqttLinkOptions) {
    this.lease = new LeasedRuntime({
      lease: MQTT_LEASE,
      ...(o.placement ? { leases: o.placement } : {}),
      label: 'MQTT link',
      log: o.log,
      running: () => this.active !== undefined,
      activate: () => this.activate(),
      deactivate: () => this.deactivate(),
    });
  }

  /**
   * The messages automations listen to (MQTT triggers): a filter is subscribed on the link while
   * it runs here (on the instance holding the MQTT lease), and again after every reconnect. A
   * filter nobody listens to any more stays subscribed until the link restarts: the broker may
   * share it with discovery, and an extra message is only ignored.
   */
  readonly messages: MqttMessages = {
    subscribe: (filter, listener) => {
      let set = this.listeners.get(filter);
      if (!set) this.listeners.set(filter, (set = new Set()));
      set.add(listener);
      this.active?.connection.subscribe(filter);
      return () => {
        set.delete(listener);
        if (set.size === 0) this.listeners.delete(filter);
      };
    },
  };

  private dispatch(topic: string, payload: Buffer): void {
    if (this.listeners.size === 0) return;
    let text: string | undefined;
    for (const [filter, set] of this.listeners) {
      if (!topicMatches(filter, topic)) continue;
      text ??= payload.toString('utf8');
      for (const listener of set) listener(topic, text);
    }
  }

  /** This hub's short node id: 8 letters or digits of its hub id. */
  private node(): string {
    return this.o.hubId().replace(/[^A-Za-z0-9]/g, '').slice(0, 8) || 'hub';
  }

  private get embedded(): boolean {
    return this.o.config.url === 'embedded';
  }

  async start(): Promise<void> {
    await this.lease.start();
  }

  async stop(): Promise<void> {
    await this.lease.stop();
  }

  private async activate(): Promise<void> {
    const { o } = this;
    const [{ MqttConnection }, { MqttImport }, { MqttExposure }, { MAX_TOPIC_CHARS }] = await loadMqttParts();
    const hubId = this.node();
    let broker: EmbeddedBroker | undefined;
    let url = o.config.url;
    let credentials: { username: string; password: string } | undefined;
    if (this.embedded) {
      // The hub's own client signs in with a secret made for this run; every other client with a user an admin created.
      const own = { username: `hcs-${randomBytes(6).toString('hex')}`, password: randomBytes(24).toString('base64url') };
      credentials = own;
      const { BrokerPortInUseError, startEmbeddedBroker } = await import('./embedded-broker.js');
      try {
        broker = await startEmbeddedBroker({
          host: o.config.bind,
          port: o.config.port,
          authenticate: (username, password) => (username === own.username ? password === own.password : o.verifyUser(username, password)),
          maxPayloadBytes: o.config.maxPayloadBytes,
          maxTopicChars: MAX_TOPIC_CHARS,
          log: o.log,
          timers: o.timers,
        });
        this.embeddedError = undefined;
        url = `mqtt://127.0.0.1:${broker.port}`;
      } catch (err) {
        this.embeddedError = err instanceof BrokerPortInUseError ? err.message : `the embedded broker did not start: ${messageOf(err)}`;
        o.log.error({ err: this.embeddedError }, 'MQTT: embedded broker not started');
        // No connection: whatever holds the port is not the hub's broker. A status, not a retry loop.
        this.role = 'active';
        return;
      }
    }
    const baseTopic = `${o.config.baseTopic}/${hubId}`;
    const connection = new MqttConnection({
      url,
      ...(credentials ?? {}),
      clientId: `hcs-${hubId}-${randomBytes(3).toString('hex')}`,
      ...(o.config.expose ? { will: { topic: `${baseTopic}/status`, payload: 'offline', retain: true, qos: 1 as const } } : {}),
      backoff: { initialMs: 1000, maxMs: 60_000 },
      connectTimeoutMs: 10_000,
      clock: o.clock,
      timers: o.timers,
      log: o.log,
    });
    const discovery = new MqttImport({
      connection,
      prefix: o.config.discoveryPrefix,
      ownNodeId: `hcs_${hubId}`,
      maxConfigBytes: o.config.maxConfigBytes,
      maxStateBytes: o.config.maxPayloadBytes,
      actionTimeoutMs: o.actionTimeoutMs,
      clock: o.clock,
      timers: o.timers,
      log: o.log,
    });
    const detach = attachBuiltInDriver(o.manager, discovery, o.log, { integrations: o.integrations });
    const exposure = o.config.expose
      ? new MqttExposure({
          connection,
          prefix: o.config.discoveryPrefix,
          baseTopic,
          nodeId: `hcs_${hubId}`,
          devices: () => o.devices.list(),
          device: (id) => {
            const device = o.devices.registry.find(id);
            return device ? o.devices.view(device) : undefined;
          },
          events: o.events,
          command: o.command,
          timers: o.timers,
          log: o.log,
        })
      : undefined;
    exposure?.start();
    for (const filter of this.listeners.keys()) connection.subscribe(filter);
    const stopDispatch = connection.onMessage((topic, payload, retained) => {
      // A retained message is an old one: a trigger fires on what happens now.
      if (!retained) this.dispatch(topic, payload);
    });
    connection.start();
    this.active = { connection, discovery, exposure, detach: () => (stopDispatch(), detach()), broker };
    this.role = 'active';
  }

  private async deactivate(): Promise<void> {
    const active = this.active;
    if (!active) return;
    this.active = undefined;
    this.lastDiscovery = active.discovery.importStatus();
    await active.exposure?.stop();
    active.detach();
    await active.connection.close();
    await active.broker?.close();
    this.role = 'standby';
  }

  status(): MqttRuntimeStatus {
    const a = this.active;
    const link = a?.connection.status();
    const discovery = a?.discovery.importStatus() ?? this.lastDiscovery;
    const broker = this.embedded ? `embedded (port ${a?.broker?.port ?? this.o.config.port})` : brokerLabel(this.o.config.url);
    return {
      mode: this.embedded ? 'embedded' : 'external',
      broker,
      role: this.role,
      ...(this.lease.holder ? { holder: this.lease.holder } : {}),
      connection: link
        ? {
            connected: link.connected,
            since: link.since,
            reconnects: link.reconnects,
            ...(link.lastError ? { lastError: link.lastError } : {}),
            ...(link.nextAttemptAt !== undefined ? { nextAttemptAt: link.nextAttemptAt } : {}),
          }
        : { connected: false, since: null, reconnects: 0 },
      ...(this.embedded ? { embedded: { port: a?.broker?.port ?? this.o.config.port, clients: a?.broker?.clients() ?? 0, ...(this.embeddedError ? { error: this.embeddedError } : {}) } } : {}),
      discovery: {
        prefix: this.o.config.discoveryPrefix,
        devices: discovery?.devices ?? 0,
        entities: discovery?.entities ?? 0,
        buttons: discovery?.buttons ?? 0,
        disabled: discovery?.disabled ?? 0,
        messages: discovery?.messages ?? 0,
        dropped: discovery?.dropped ?? 0,
        unreadable: discovery?.unreadable ?? 0,
        physicalDevices: discovery?.physicalDevices ?? [],
      },
      rejected: discovery?.rejected ?? [],
      exposure: { enabled: this.o.config.expose, baseTopic: `${this.o.config.baseTopic}/${this.node()}`, devices: a?.exposure?.exposedCount() ?? 0 },
    };
  }
}
