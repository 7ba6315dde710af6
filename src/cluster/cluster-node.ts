import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { AuthService } from '../domain/auth/auth-service.js';
import type { DeviceRegistry } from '../domain/devices/device-registry.js';
import type { DriverManager, RemoteDrivers } from '../domain/drivers/driver-manager.js';
import type { DriverPlacement } from '../domain/drivers/local/supervisor.js';
import type { DomainEventBus } from '../domain/events.js';
import type { StateAuthority } from '../domain/state/state-authority.js';
import type { Clock, Timers } from '../platform/clock.js';
import type { Database } from '../storage/schema.js';
import { PgChannel, type ChannelLogger, type Envelope } from './channel.js';
import { CommandForwarding } from './forwarding.js';
import { ClusterMembership, PeerTable } from './membership.js';
import type { ClusterMessage } from './messages.js';
import { Replication, type ClusterWrites, type DocumentWatcher } from './replication.js';

export interface ClusterSettings {
  /** How long a lease or an instance's heartbeat holds; renewed every third of it. */
  leaseMs: number;
  /** The time-out of a command whose driver link sets none (ACTION_TIMEOUT_MS). */
  actionTimeoutMs: number;
  /** Added to a forwarded command's time-out before the forwarding instance gives up on the answer. */
  forwardMarginMs: number;
  version: string;
}

export interface ClusterNodeDeps {
  db: Kysely<Database>;
  /**
   * The replicated writes, built before the node (the repositories of `replicated.ts` hold them,
   * and storage needs those before the devices exist): the node takes their instance id, and
   * applies the other instances' document changes to their caches.
   */
  writes: ClusterWrites;
  /** Whether this instance imported a restored backup at its start: the others then restart into it. */
  restoredAtStart: () => boolean;
  /** Restarts this instance in its process (main.ts); absent, a restore elsewhere is only logged. */
  restart?: (reason: string) => void;
  pool: pg.Pool;
  url: string;
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  log: ChannelLogger;
  settings: ClusterSettings;
  // The parts of the domain the cluster keeps in step: the node is built once they exist.
  state: StateAuthority;
  registry: DeviceRegistry;
  drivers: DriverManager;
  auth: AuthService;
}

/**
 * This instance in a cluster of instances sharing one PostgreSQL database, composed of three
 * parts over one channel and one peer table: its membership (membership.ts: the heartbeat row,
 * instances coming and going, leases: one instance runs each local driver, one fires each timer
 * slot through the fire store's claim), replication (replication.ts: its domain events relayed to
 * the others and theirs applied here, tokens and documents told in the writing transaction) and
 * command forwarding (forwarding.ts: to the instance holding the driver's link, and back). It
 * dispatches each incoming message to the part that owns its type.
 */
export class ClusterNode {
  readonly id: string;
  /** Which instance runs each local driver (the supervisor's placement): a lease per driver. */
  readonly placement: DriverPlacement;
  /** Commands for drivers linked to other instances (the driver manager's remote route). */
  readonly remoteDrivers: RemoteDrivers;
  private readonly channel: PgChannel<ClusterMessage>;
  private readonly peers = new PeerTable();
  private readonly writes: ClusterWrites;
  private readonly membership: ClusterMembership;
  private readonly replication: Replication;
  private readonly forwarding: CommandForwarding;

  constructor(private readonly deps: ClusterNodeDeps) {
    const { writes, events, clock, timers, log, settings, state, registry, drivers, auth } = deps;
    this.id = writes.instanceId;
    this.writes = writes;
    this.channel = new PgChannel<ClusterMessage>(deps.url, this.id, deps.pool, (e) => this.receive(e), log, timers, () => {
      this.replication.resync().catch((err: unknown) => log.error({ err }, 'cluster: resynchronising after a reconnect failed'));
    });
    const channel = this.channel;
    const peers = this.peers;
    const forwarding = new CommandForwarding({ channel, peers, registry, drivers, timers, settings });
    const membership = new ClusterMembership({
      id: this.id,
      db: deps.db,
      channel,
      peers,
      events,
      registry,
      drivers,
      state,
      clock,
      timers,
      log,
      settings,
      restoredAtStart: deps.restoredAtStart,
      ...(deps.restart ? { restart: deps.restart } : {}),
      peerGone: (id) => forwarding.peerGone(id),
    });
    this.forwarding = forwarding;
    this.membership = membership;
    this.replication = new Replication({ channel, peers, writes, events, state, registry, drivers, auth, clock, placementChanged: () => membership.notifyPlacement() });
    this.placement = membership.placement;
    this.remoteDrivers = forwarding.remoteDrivers;
    // The one route set on an object built before: the driver manager hands this node the commands
    // for drivers linked elsewhere, and the node runs forwarded commands through the driver
    // manager, so one of the two must be given the other after it exists (docs/architecture.md).
    drivers.routeRemote(this.remoteDrivers);
  }

  /** Registers this instance and listens; messages wait until `open` (the hub has loaded). */
  async start(): Promise<void> {
    await this.membership.join();
    await this.channel.start();
    this.replication.start();
    this.membership.startHeartbeat();
    this.deps.log.info({ instance: this.id }, 'cluster: this instance joined');
  }

  /** The hub has loaded: apply what arrived meanwhile, then ask the others what they hold. */
  open(): void {
    this.channel.open();
    this.replication.askPeers();
    this.membership.announceRestore();
  }

  async stop(): Promise<void> {
    this.membership.stopHeartbeat();
    this.replication.stop();
    this.membership.sayGoodbye();
    this.forwarding.stop();
    await this.channel.stop();
    await this.membership.leave();
  }

  /** The links of a driver that the other instances hold: where it is connected, and how. */
  linksElsewhere(driverKey: string): Array<{ transport?: string; remoteAddress?: string }> {
    return this.peers.linksOfDriver(driverKey);
  }

  /** The other live instances, as this one knows them. */
  peerIds(): string[] {
    return this.peers.ids();
  }

  /** Figures for the metrics: instances seen, leases held, commands forwarded and run for others. */
  stats(): { peers: number; leasesHeld: number; forwarded: number; forwardedPending: number; ranForOthers: number } {
    return { peers: this.peers.size, leasesHeld: this.membership.leasesHeld, ...this.forwarding.stats() };
  }

  /** Takes or keeps the named lease: free, lapsed, or already this instance's. */
  claim(name: string): Promise<{ held: true } | { held: false; holder: string }> {
    return this.membership.claim(name);
  }

  release(name: string): Promise<void> {
    return this.membership.release(name);
  }

  /** Runs a write and notifies the others in the same transaction (`ClusterWrites.writeAndTell`). */
  writeAndTell(work: (db: Kysely<Database>) => Promise<void>, message: ClusterMessage): Promise<void> {
    return this.writes.writeAndTell(work, message);
  }

  /** A token issued or revoked, and the others told: they adopt or forget it. */
  tokenChanged(work: (db: Kysely<Database>) => Promise<void>, change: { hash: string; op: 'add' | 'del' } | { userId: string; op: 'user' }): Promise<void> {
    return this.writes.tokenChanged(work, change);
  }

  /** A document written (body) or removed (no body), and the others told. */
  documentChanged(work: (db: Kysely<Database>) => Promise<void>, kind: string, id: string, body?: unknown): Promise<void> {
    return this.writes.documentChanged(work, kind, id, body);
  }

  watchDocuments(kind: string, watcher: DocumentWatcher): () => void {
    return this.writes.watchDocuments(kind, watcher);
  }

  /** Hands each message to the part that owns its type. */
  private receive({ from, m }: Envelope<ClusterMessage>): void | Promise<void> {
    switch (m.t) {
      case 'bye':
        return this.membership.peerGone(from, 'it stopped');
      case 'released':
        return this.membership.notifyPlacement();
      case 'drivers-changed':
        return this.membership.folderChanged();
      case 'restored':
        return this.membership.restoredElsewhere(from);
      case 'ev':
        return this.replication.applyEvent(from, m.e, m.p);
      case 'hello':
        return this.replication.hello(from);
      case 'welcome':
        return this.replication.welcome(from, m);
      case 'tok':
        return this.replication.token(m);
      case 'doc':
        return this.replication.document(m);
      case 'cmd':
        return this.forwarding.run(from, m);
      case 'res':
        return this.forwarding.settle(m);
    }
  }
}
