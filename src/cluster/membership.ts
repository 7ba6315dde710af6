import os from 'node:os';
import { sql, type Kysely } from 'kysely';
import type { DeviceRegistry } from '../domain/devices/device-registry.js';
import type { DriverManager } from '../domain/drivers/driver-manager.js';
import type { DriverPlacement } from '../domain/drivers/local/supervisor.js';
import type { DomainEventBus } from '../domain/events.js';
import type { StateAuthority } from '../domain/state/state-authority.js';
import type { Clock, TimerHandle, Timers } from '../platform/clock.js';
import type { Database } from '../storage/schema.js';
import { outboxStamp, type ChannelLogger } from './channel.js';
import type { ClusterSender, LinkAnnouncement } from './messages.js';

/** The database's clock in milliseconds: every instance measures leases and heartbeats on it. */
const NOW = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/** How long an outbox row is kept: its message was read within milliseconds of being written. */
const OUTBOX_KEEP_MS = 60_000;

/** A driver link held by another instance. */
export interface RemoteLink {
  driverKey: string;
  /** The link's own action time-out, when it has one. */
  actionTimeoutMs?: number;
  transport?: string;
  remoteAddress?: string;
}

/**
 * The other live instances and the driver links each holds, as this instance knows them. One
 * table shared by the parts of the node: membership drops the instances that left, replication
 * keeps their links as they announce them, forwarding finds the instance holding a driver.
 */
export class PeerTable {
  /** Per instance, the driver links held there, by driver instance id. */
  private readonly peers = new Map<string, Map<string, RemoteLink>>();

  ids(): string[] {
    return [...this.peers.keys()];
  }

  get size(): number {
    return this.peers.size;
  }

  /** An instance heard from: known from now on (with no links until it announces them). */
  seen(id: string): void {
    this.linksOf(id);
  }

  linkUp(id: string, link: LinkAnnouncement): void {
    this.linksOf(id).set(link.instanceId, {
      driverKey: link.driverKey,
      ...(link.actionTimeoutMs !== undefined ? { actionTimeoutMs: link.actionTimeoutMs } : {}),
      ...(link.transport !== undefined ? { transport: link.transport } : {}),
      ...(link.remoteAddress !== undefined ? { remoteAddress: link.remoteAddress } : {}),
    });
  }

  linkDown(id: string, instanceId: string): void {
    this.linksOf(id).delete(instanceId);
  }

  /** What the instance holds now, in place of what this one knew (it may have missed changes). */
  replaceLinks(id: string, links: readonly LinkAnnouncement[]): void {
    this.linksOf(id).clear();
    for (const link of links) this.linkUp(id, link);
  }

  /** The instance holding a link of the driver, and that link. */
  holding(driverKey: string): { id: string; link: RemoteLink } | undefined {
    for (const [id, links] of this.peers) for (const link of links.values()) if (link.driverKey === driverKey) return { id, link };
    return undefined;
  }

  /** Every link of the driver that other instances hold (DRIVER_AUTH=open's takeover check is cluster-wide). */
  linksOfDriver(driverKey: string): RemoteLink[] {
    const found: RemoteLink[] = [];
    for (const links of this.peers.values()) for (const link of links.values()) if (link.driverKey === driverKey) found.push(link);
    return found;
  }

  /** Forgets the instance; the links it held, when it was known. */
  remove(id: string): ReadonlyMap<string, RemoteLink> | undefined {
    const links = this.peers.get(id);
    this.peers.delete(id);
    return links;
  }

  private linksOf(id: string): Map<string, RemoteLink> {
    let links = this.peers.get(id);
    if (!links) this.peers.set(id, (links = new Map()));
    return links;
  }
}

export interface MembershipDeps {
  /** This instance's id (its row in `cluster_instances`, the holder of its leases). */
  id: string;
  db: Kysely<Database>;
  channel: ClusterSender;
  peers: PeerTable;
  events: DomainEventBus;
  /** Read back when an instance leaves; the devices only it reached go offline. */
  registry: Pick<DeviceRegistry, 'load' | 'list'>;
  drivers: Pick<DriverManager, 'linkOf'>;
  state: Pick<StateAuthority, 'applyReplicaOnline'>;
  clock: Clock;
  timers: Timers;
  log: ChannelLogger;
  settings: { leaseMs: number; version: string };
  /** Whether this instance imported a restored backup at its start: the others then restart into it. */
  restoredAtStart: () => boolean;
  /** Restarts this instance in its process (main.ts); absent, a restore elsewhere is only logged. */
  restart?: (reason: string) => void;
  /**
   * An instance left: called once its driver links were dropped and its devices marked, before the
   * lease listeners hear of it (forwarding fails the commands waiting on that instance).
   */
  peerGone: (id: string) => void;
}

/**
 * This instance's membership of the cluster: its heartbeat row, the instances coming and going
 * (the peer table's entries), and the leases it holds (one instance runs each local driver: the
 * supervisor's `placement`; one fires each timer slot through the fire store's claim).
 */
export class ClusterMembership {
  private readonly held = new Set<string>();
  private readonly placementListeners = new Set<() => void>();
  private readonly folderListeners = new Set<() => void>();
  private heartbeat: TimerHandle | undefined;
  private running = false;
  private claimFailed = false;

  constructor(private readonly deps: MembershipDeps) {}

  /** Which instance runs each local driver (the supervisor's placement): a lease per driver. */
  readonly placement: DriverPlacement = {
    claim: (driverKey) =>
      this.claim(`driver:${driverKey}`).catch((err: unknown) => {
        // The database did not answer: the driver stands by, and tries again at the next heartbeat.
        this.claimFailed = true;
        throw err;
      }),
    holds: (driverKey) => this.held.has(`driver:${driverKey}`),
    release: (driverKey) => this.release(`driver:${driverKey}`),
    watch: (listener) => {
      this.placementListeners.add(listener);
      return () => this.placementListeners.delete(listener);
    },
    announceFolderChange: () => this.deps.channel.send(undefined, { t: 'drivers-changed' }),
    watchFolder: (listener) => {
      this.folderListeners.add(listener);
      return () => this.folderListeners.delete(listener);
    },
  };

  get leasesHeld(): number {
    return this.held.size;
  }

  /** Announces this instance: its row in `cluster_instances`. */
  async join(): Promise<void> {
    const { db, id, settings } = this.deps;
    await db
      .insertInto('cluster_instances')
      .values({ id, started_at: NOW, heartbeat_at: NOW, info: JSON.stringify({ version: settings.version, host: os.hostname(), pid: process.pid }) })
      .execute();
  }

  /** Starts the heartbeat, every third of the lease. */
  startHeartbeat(): void {
    this.running = true;
    this.beat();
  }

  stopHeartbeat(): void {
    this.running = false;
    this.deps.timers.clearTimeout(this.heartbeat);
  }

  /** Tells the others this instance stops: they drop its links at once rather than when its heartbeat lapses. */
  sayGoodbye(): void {
    this.deps.channel.send(undefined, { t: 'bye' });
  }

  /** Gives up this instance's leases and its row (the channel is closed by then). */
  async leave(): Promise<void> {
    const { db, id } = this.deps;
    await db.deleteFrom('cluster_leases').where('holder', '=', id).execute().catch(() => undefined);
    await db.deleteFrom('cluster_instances').where('id', '=', id).execute().catch(() => undefined);
  }

  /** This instance started into a restored backup: every table was replaced under the others' feet, and they restart into it, as this one did. */
  announceRestore(): void {
    if (this.deps.restoredAtStart()) this.deps.channel.send(undefined, { t: 'restored' });
  }

  /** Another instance restored a backup. */
  restoredElsewhere(from: string): void {
    this.deps.log.warn({ instance: from }, 'cluster: another instance restored a backup; restarting into it');
    this.deps.restart?.(`a backup was restored on instance ${from}`);
  }

  /** Another instance changed the shared drivers folder. */
  folderChanged(): void {
    for (const listener of this.folderListeners) listener();
  }

  /** Takes or keeps the named lease: free, lapsed, or already this instance's. */
  async claim(name: string): Promise<{ held: true } | { held: false; holder: string }> {
    const { db, id, settings } = this.deps;
    const lease = settings.leaseMs;
    const row = await db
      .insertInto('cluster_leases')
      .values({ name, holder: id, expires_at: sql<number>`${NOW} + ${lease}` })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder: id, expires_at: sql<number>`${NOW} + ${lease}` })
          .where((eb) => eb.or([eb('cluster_leases.holder', '=', id), eb('cluster_leases.expires_at', '<', NOW)])),
      )
      .returning('holder')
      .executeTakeFirst();
    if (row) {
      this.held.add(name);
      return { held: true };
    }
    this.held.delete(name);
    const other = await db.selectFrom('cluster_leases').select('holder').where('name', '=', name).executeTakeFirst();
    return { held: false, holder: other?.holder ?? 'another instance' };
  }

  async release(name: string): Promise<void> {
    this.held.delete(name);
    await this.deps.db.deleteFrom('cluster_leases').where('name', '=', name).where('holder', '=', this.deps.id).execute();
    // Another instance standing by may take it now rather than at its next heartbeat.
    this.deps.channel.send(undefined, { t: 'released' });
  }

  /** Leases may have changed hands: the drivers standing by try theirs. */
  notifyPlacement(): void {
    for (const listener of this.placementListeners) {
      try {
        listener();
      } catch (err) {
        this.deps.log.error({ err }, 'cluster: a lease listener failed');
      }
    }
  }

  /** An instance stopped or died: its driver links are gone, with the devices only it reached. */
  peerGone(id: string, reason: string): void {
    const links = this.deps.peers.remove(id);
    if (!links) return;
    const { registry, drivers, state, events, log } = this.deps;
    log.warn({ instance: id, reason }, 'cluster: an instance left');
    // A device it wrote just before dying may not have been told: read them back.
    registry.load().catch((err: unknown) => log.error({ err }, 'cluster: reloading devices failed'));
    const at = this.deps.clock.now();
    for (const [instanceId, { driverKey }] of links) {
      events.emit('driver.disconnected', { driverKey, instanceId, reason: `instance ${id} left: ${reason}`, at }, 'replica');
      if (drivers.linkOf(driverKey) || this.deps.peers.holding(driverKey)) continue;
      for (const device of registry.list()) if (device.driverKey === driverKey) state.applyReplicaOnline(device.id, false, at);
    }
    this.deps.peerGone(id);
    this.notifyPlacement();
  }

  private beat(): void {
    const interval = Math.max(50, Math.floor(this.deps.settings.leaseMs / 3));
    this.heartbeat = this.deps.timers.setTimeout(() => {
      this.tick().catch((err: unknown) => this.deps.log.error({ err }, 'cluster: heartbeat failed'));
      if (this.running) this.beat();
    }, interval);
  }

  /** Heartbeat, who is alive, the leases renewed, old outbox rows dropped. */
  private async tick(): Promise<void> {
    const { db, id, settings } = this.deps;
    const updated = await db.updateTable('cluster_instances').set({ heartbeat_at: NOW }).where('id', '=', id).executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0 && this.running) {
      await db.insertInto('cluster_instances').values({ id, started_at: NOW, heartbeat_at: NOW, info: '{}' }).execute();
    }
    const live = new Set((await db.selectFrom('cluster_instances').select('id').where('heartbeat_at', '>', sql<number>`${NOW} - ${settings.leaseMs}`).execute()).map((r) => r.id));
    for (const peer of this.deps.peers.ids()) if (!live.has(peer)) this.peerGone(peer, 'its heartbeat stopped');

    const renewed = await db
      .updateTable('cluster_leases')
      .set({ expires_at: sql<number>`${NOW} + ${settings.leaseMs}` })
      .where('holder', '=', id)
      .returning('name')
      .execute();
    const still = new Set(renewed.map((r) => r.name));
    let changed = false;
    for (const name of [...this.held]) {
      if (still.has(name)) continue;
      this.held.delete(name);
      changed = true;
    }
    // Drivers standing by try their leases only when one lapsed (its holder died), this instance
    // lost one, or a claim failed: one query a heartbeat, not a claim per standing-by driver.
    const lapsed = await db.selectFrom('cluster_leases').select('name').where('expires_at', '<', NOW).limit(1).executeTakeFirst();
    if (changed || lapsed || this.claimFailed) {
      this.claimFailed = false;
      this.notifyPlacement();
    }

    // Wall time, not the injected clock, on purpose: the rows were stamped by channel.ts's
    // `outboxStamp()` (wall time) on whichever instance wrote them, and every instance prunes the
    // shared table; measured on the hub's Clock (a test's ManualClock), the prune would compare
    // two time scales and drop rows not yet read, or keep them for ever.
    await db.deleteFrom('cluster_outbox').where('created_at', '<', outboxStamp() - OUTBOX_KEEP_MS).execute();
    await db.deleteFrom('cluster_instances').where('heartbeat_at', '<', sql<number>`${NOW} - ${Math.max(settings.leaseMs * 10, 3_600_000)}`).execute();
  }
}
