import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import type { AuthService } from '../domain/auth/auth-service.js';
import type { DeviceRegistry } from '../domain/devices/device-registry.js';
import type { LogicalDevice } from '../domain/devices/model.js';
import type { DriverManager, RemoteDrivers } from '../domain/drivers/driver-manager.js';
import { driverErrors } from '../domain/drivers/errors.js';
import type { DriverPlacement } from '../domain/drivers/local/supervisor.js';
import type { DomainEventBus, DomainEvents } from '../domain/events.js';
import type { StateAuthority } from '../domain/state/state-authority.js';
import type { TimerHandle, Timers } from '../platform/clock.js';
import { DomainError, wireFailure, type WireFailure } from '../platform/errors.js';
import type { Database } from '../storage/schema.js';
import { PgChannel, type ChannelLogger, type Envelope } from './channel.js';

/** Events every instance keeps to itself: per-instance measurements. */
const NOT_REPLICATED = new Set<keyof DomainEvents>(['device.command_executed', 'device.command_timed_out']);


/** What instances tell each other. */
type ClusterMessage =
  | { t: 'ev'; e: keyof DomainEvents; p: unknown }
  | { t: 'hello' }
  | { t: 'welcome'; links: Array<{ instanceId: string; driverKey: string; actionTimeoutMs?: number }>; online: Array<{ deviceId: string; state: Record<string, unknown>; updatedAt: number }> }
  | { t: 'bye' }
  | { t: 'released' }
  | { t: 'restored' }
  | { t: 'drivers-changed' }
  | { t: 'cmd'; id: string; deviceId: string; command: string; params: Record<string, unknown>; timeoutMs?: number; kind?: 'ACTION' | 'COMMAND_EXECUTE' }
  | { t: 'res'; id: string; ok: true; result: unknown }
  | { t: 'res'; id: string; ok: false; error: WireFailure }
  | { t: 'tok'; hash: string; op: 'add' | 'del' }
  | { t: 'tok'; userId: string; op: 'user' }
  | { t: 'doc'; kind: string; id: string; body?: unknown };

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
  /** Whether this instance imported a restored backup at its start: the others then restart into it. */
  restoredAtStart: () => boolean;
  /** Restarts this instance in its process (main.ts); absent, a restore elsewhere is only logged. */
  restart?: (reason: string) => void;
  pool: pg.Pool;
  url: string;
  events: DomainEventBus;
  timers: Timers;
  log: ChannelLogger;
  settings: ClusterSettings;
}

/** The parts of the domain a cluster keeps in step; bound once the modules exist. */
export interface ClusterBindings {
  state: StateAuthority;
  registry: DeviceRegistry;
  drivers: DriverManager;
  auth: AuthService;
}

/** A cache of one document kind kept in step: a change, or everything read again. */
interface DocumentWatcher {
  changed(id: string, doc: unknown): void;
  resync(): Promise<void>;
}

interface RemoteLink {
  driverKey: string;
  /** The link's own action time-out, when it has one. */
  actionTimeoutMs?: number;
}

interface Peer {
  /** Driver links held there, by driver instance id. */
  links: Map<string, RemoteLink>;
}

interface Forwarded {
  peer: string;
  driverKey: string;
  resolve(result: unknown): void;
  reject(err: DomainError): void;
  timer: TimerHandle;
}

/** The database's clock in milliseconds: every instance measures leases and heartbeats on it. */
const NOW = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * This instance in a cluster of instances sharing one PostgreSQL database: it announces itself
 * (a heartbeat row), relays its domain events to the others and applies theirs (state, devices,
 * driver links, tokens, documents), forwards device commands to the instance holding the
 * driver's link, and hands out leases (one instance runs each local driver; one fires each timer
 * slot through the fire store's claim).
 */
export class ClusterNode {
  readonly id = randomBytes(8).toString('hex');
  private readonly channel: PgChannel<ClusterMessage>;
  private readonly peers = new Map<string, Peer>();
  private readonly forwarded = new Map<string, Forwarded>();
  private readonly held = new Set<string>();
  private readonly placementListeners = new Set<() => void>();
  private readonly folderListeners = new Set<() => void>();
  private readonly docWatchers = new Map<string, Set<DocumentWatcher>>();
  private bound: ClusterBindings | undefined;
  private heartbeat: TimerHandle | undefined;
  private readonly owner = {};
  private running = false;
  private readonly pendingStates = new Map<string, DomainEvents['device.state_changed']>();
  private statesFlush: NodeJS.Immediate | undefined;
  private forwardedTotal = 0;
  private claimFailed = false;
  private ranTotal = 0;

  constructor(private readonly deps: ClusterNodeDeps) {
    this.channel = new PgChannel<ClusterMessage>(deps.url, this.id, deps.pool, (e) => this.receive(e), deps.log, deps.timers, () => {
      this.resync().catch((err: unknown) => deps.log.error({ err }, 'cluster: resynchronising after a reconnect failed'));
    });
  }

  bind(bindings: ClusterBindings): void {
    this.bound = bindings;
    bindings.drivers.routeRemote(this.remoteDrivers);
  }

  /** Registers this instance and listens; messages wait until `open` (the hub has loaded). */
  async start(): Promise<void> {
    const { db } = this.deps;
    await db
      .insertInto('cluster_instances')
      .values({ id: this.id, started_at: NOW, heartbeat_at: NOW, info: JSON.stringify({ version: this.deps.settings.version, host: os.hostname(), pid: process.pid }) })
      .execute();
    await this.channel.start();
    this.running = true;
    this.deps.events.onAny(this.owner, (event, payload, origin) => {
      if (origin !== 'local' || NOT_REPLICATED.has(event)) return;
      if (event === 'device.state_changed') return this.coalesceState(payload as DomainEvents['device.state_changed']);
      this.flushStates();
      this.channel.send(undefined, { t: 'ev', e: event, p: payload });
    });
    this.beat();
    this.deps.log.info({ instance: this.id }, 'cluster: this instance joined');
  }

  /** The hub has loaded: apply what arrived meanwhile, then ask the others what they hold. */
  open(): void {
    this.channel.open();
    this.channel.send(undefined, { t: 'hello' });
    // Every table was replaced under the others' feet: they restart into it, as this one did.
    if (this.deps.restoredAtStart()) this.channel.send(undefined, { t: 'restored' });
  }

  async stop(): Promise<void> {
    this.running = false;
    this.deps.timers.clearTimeout(this.heartbeat);
    this.deps.events.removeOwner(this.owner);
    this.flushStates();
    this.channel.send(undefined, { t: 'bye' });
    for (const [id, f] of this.forwarded) {
      this.deps.timers.clearTimeout(f.timer);
      f.reject(driverErrors.DRIVER_DISCONNECTED({ driverKey: f.driverKey }, { details: { driverKey: f.driverKey } }));
      this.forwarded.delete(id);
    }
    await this.channel.stop();
    const { db } = this.deps;
    await db.deleteFrom('cluster_leases').where('holder', '=', this.id).execute().catch(() => undefined);
    await db.deleteFrom('cluster_instances').where('id', '=', this.id).execute().catch(() => undefined);
  }

  /** The other live instances, as this one knows them. */
  peerIds(): string[] {
    return [...this.peers.keys()];
  }

  /** Figures for the metrics: instances seen, leases held, commands forwarded and run for others. */
  stats(): { peers: number; leasesHeld: number; forwarded: number; forwardedPending: number; ranForOthers: number } {
    return { peers: this.peers.size, leasesHeld: this.held.size, forwarded: this.forwardedTotal, forwardedPending: this.forwarded.size, ranForOthers: this.ranTotal };
  }

  /** Commands for drivers linked to other instances (the driver manager's remote route). */
  readonly remoteDrivers: RemoteDrivers = {
    holds: (driverKey) => this.peerHolding(driverKey) !== undefined,
    execute: (device, command, params, options) => this.forward(device, command, params, options),
  };

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
    announceFolderChange: () => this.channel.send(undefined, { t: 'drivers-changed' }),
    watchFolder: (listener) => {
      this.folderListeners.add(listener);
      return () => this.folderListeners.delete(listener);
    },
  };

  private forward(device: LogicalDevice, command: string, params: Record<string, unknown>, options: { timeoutMs?: number; kind?: 'ACTION' | 'COMMAND_EXECUTE' }): Promise<unknown> {
    const holding = this.peerHolding(device.driverKey);
    if (!holding) return Promise.reject(driverErrors.DRIVER_OFFLINE({ driverKey: device.driverKey }, { details: { deviceId: device.id, driverKey: device.driverKey }, retryAfterSeconds: 5 }));
    const peer = holding.id;
    const id = randomUUID();
    this.forwardedTotal++;
    // The holder times the command out as it would its own; this instance waits that long and a margin.
    const waitMs = (options.timeoutMs ?? holding.link.actionTimeoutMs ?? this.deps.settings.actionTimeoutMs) + this.deps.settings.forwardMarginMs;
    return new Promise((resolve, reject) => {
      const timer = this.deps.timers.setTimeout(() => {
        this.forwarded.delete(id);
        reject(driverErrors.DRIVER_TIMEOUT({ driverKey: device.driverKey, command, timeoutMs: waitMs }, { details: { deviceId: device.id, command, timeoutMs: waitMs, instance: peer } }));
      }, waitMs);
      this.forwarded.set(id, { peer, driverKey: device.driverKey, resolve, reject, timer });
      this.channel.send(peer, { t: 'cmd', id, deviceId: device.id, command, params, ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}), ...(options.kind ? { kind: options.kind } : {}) });
    });
  }

  /** Takes or keeps the named lease: free, lapsed, or already this instance's. */
  async claim(name: string): Promise<{ held: true } | { held: false; holder: string }> {
    const lease = this.deps.settings.leaseMs;
    const row = await this.deps.db
      .insertInto('cluster_leases')
      .values({ name, holder: this.id, expires_at: sql<number>`${NOW} + ${lease}` })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder: this.id, expires_at: sql<number>`${NOW} + ${lease}` })
          .where((eb) => eb.or([eb('cluster_leases.holder', '=', this.id), eb('cluster_leases.expires_at', '<', NOW)])),
      )
      .returning('holder')
      .executeTakeFirst();
    if (row) {
      this.held.add(name);
      return { held: true };
    }
    this.held.delete(name);
    const other = await this.deps.db.selectFrom('cluster_leases').select('holder').where('name', '=', name).executeTakeFirst();
    return { held: false, holder: other?.holder ?? 'another instance' };
  }

  async release(name: string): Promise<void> {
    this.held.delete(name);
    await this.deps.db.deleteFrom('cluster_leases').where('name', '=', name).where('holder', '=', this.id).execute();
    // Another instance standing by may take it now rather than at its next heartbeat.
    this.channel.send(undefined, { t: 'released' });
  }

  // --- replication of caches -----------------------------------------------------------------

  /**
   * Runs a write and notifies the others in the same transaction: PostgreSQL delivers the
   * notification when, and only when, the write commits, so an acknowledged write is never
   * missing from another instance's cache, even if this instance dies right after answering.
   */
  async writeAndTell(work: (db: Kysely<Database>) => Promise<void>, message: ClusterMessage): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      await work(trx);
      await this.channel.sendWithin(trx, message);
    });
  }

  /** A token issued or revoked, and the others told: they adopt or forget it. */
  tokenChanged(work: (db: Kysely<Database>) => Promise<void>, change: { hash: string; op: 'add' | 'del' } | { userId: string; op: 'user' }): Promise<void> {
    return this.writeAndTell(work, { t: 'tok', ...change } as ClusterMessage);
  }

  /** A document written (body) or removed (no body), and the others told. */
  documentChanged(work: (db: Kysely<Database>) => Promise<void>, kind: string, id: string, body?: unknown): Promise<void> {
    return this.writeAndTell(work, { t: 'doc', kind, id, ...(body === undefined ? {} : { body }) });
  }

  watchDocuments(kind: string, watcher: DocumentWatcher): () => void {
    let set = this.docWatchers.get(kind);
    if (!set) this.docWatchers.set(kind, (set = new Set()));
    set.add(watcher);
    return () => set.delete(watcher);
  }

  /**
   * After the listening connection was lost for a while, what was said meanwhile is gone: the
   * devices, tokens and documents are read again, and the others asked what they hold.
   */
  private async resync(): Promise<void> {
    const bound = this.bound;
    if (bound) {
      await bound.registry.load();
      await bound.auth.resyncTokens();
    }
    for (const watchers of this.docWatchers.values()) for (const w of watchers) await w.resync();
    this.channel.send(undefined, { t: 'hello' });
  }

  // --- internals -----------------------------------------------------------------------------

  /**
   * A device's state changes within one turn of the event loop travel as one: its last full
   * state with the partial changes merged (a driver flooding updates costs the others one
   * message per device per turn, not one per update). Any other event sends them first, so the
   * order of what a device went through is kept.
   */
  private coalesceState(e: DomainEvents['device.state_changed']): void {
    const pending = this.pendingStates.get(e.deviceId);
    this.pendingStates.set(e.deviceId, pending ? { ...e, changed: { ...pending.changed, ...e.changed } } : e);
    this.statesFlush ??= setImmediate(() => this.flushStates());
  }

  private flushStates(): void {
    if (this.statesFlush) clearImmediate(this.statesFlush);
    this.statesFlush = undefined;
    for (const e of this.pendingStates.values()) this.channel.send(undefined, { t: 'ev', e: 'device.state_changed', p: e });
    this.pendingStates.clear();
  }

  private peerHolding(driverKey: string): { id: string; link: RemoteLink } | undefined {
    for (const [id, peer] of this.peers) for (const link of peer.links.values()) if (link.driverKey === driverKey) return { id, link };
    return undefined;
  }

  private peer(id: string): Peer {
    let peer = this.peers.get(id);
    if (!peer) this.peers.set(id, (peer = { links: new Map() }));
    return peer;
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
    const { db, settings } = this.deps;
    const updated = await db.updateTable('cluster_instances').set({ heartbeat_at: NOW }).where('id', '=', this.id).executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0 && this.running) {
      await db.insertInto('cluster_instances').values({ id: this.id, started_at: NOW, heartbeat_at: NOW, info: '{}' }).execute();
    }
    const live = new Set((await db.selectFrom('cluster_instances').select('id').where('heartbeat_at', '>', sql<number>`${NOW} - ${settings.leaseMs}`).execute()).map((r) => r.id));
    for (const id of [...this.peers.keys()]) if (!live.has(id)) this.peerGone(id, 'its heartbeat stopped');

    const renewed = await db
      .updateTable('cluster_leases')
      .set({ expires_at: sql<number>`${NOW} + ${settings.leaseMs}` })
      .where('holder', '=', this.id)
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

    await db.deleteFrom('cluster_outbox').where('created_at', '<', Date.now() - 60_000).execute();
    await db.deleteFrom('cluster_instances').where('heartbeat_at', '<', sql<number>`${NOW} - ${Math.max(settings.leaseMs * 10, 3_600_000)}`).execute();
  }

  private notifyPlacement(): void {
    for (const listener of this.placementListeners) {
      try {
        listener();
      } catch (err) {
        this.deps.log.error({ err }, 'cluster: a lease listener failed');
      }
    }
  }

  /** An instance stopped or died: its driver links are gone, with the devices only it reached. */
  private peerGone(id: string, reason: string): void {
    const peer = this.peers.get(id);
    this.peers.delete(id);
    if (!peer) return;
    this.deps.log.warn({ instance: id, reason }, 'cluster: an instance left');
    const bound = this.bound;
    // A device it wrote just before dying may not have been told: read them back.
    bound?.registry.load().catch((err: unknown) => this.deps.log.error({ err }, 'cluster: reloading devices failed'));
    const at = Date.now();
    for (const [instanceId, { driverKey }] of peer.links) {
      this.deps.events.emit('driver.disconnected', { driverKey, instanceId, reason: `instance ${id} left: ${reason}`, at }, 'replica');
      if (!bound || bound.drivers.linkOf(driverKey) || this.peerHolding(driverKey)) continue;
      for (const device of bound.registry.list()) if (device.driverKey === driverKey) bound.state.applyReplicaOnline(device.id, false, at);
    }
    for (const [requestId, f] of this.forwarded) {
      if (f.peer !== id) continue;
      this.deps.timers.clearTimeout(f.timer);
      this.forwarded.delete(requestId);
      f.reject(driverErrors.DRIVER_DISCONNECTED({ driverKey: f.driverKey }, { details: { driverKey: f.driverKey, instance: id } }));
    }
    this.notifyPlacement();
  }

  private async receive({ from, m }: Envelope<ClusterMessage>): Promise<void> {
    const bound = this.bound;
    if (!bound) return;
    switch (m.t) {
      case 'released':
        return this.notifyPlacement();
      case 'drivers-changed':
        for (const listener of this.folderListeners) listener();
        return;
      case 'restored':
        this.deps.log.warn({ instance: from }, 'cluster: another instance restored a backup; restarting into it');
        return this.deps.restart?.(`a backup was restored on instance ${from}`);
      case 'ev':
        this.peer(from);
        return this.applyEvent(from, m.e, m.p, bound);
      case 'hello': {
        this.peer(from);
        const links = bound.drivers.list().map((d) => {
          const timeout = bound.drivers.linkOf(d.driverKey, d.instanceId)?.actionTimeoutMs;
          return { instanceId: d.instanceId, driverKey: d.driverKey, ...(timeout !== undefined ? { actionTimeoutMs: timeout } : {}) };
        });
        const local = new Set(links.map((l) => l.driverKey));
        const online = bound.registry
          .list()
          .filter((d) => local.has(d.driverKey) && bound.state.view(d.id).online)
          .map((d) => ({ deviceId: d.id, state: bound.state.view(d.id).state, updatedAt: bound.state.view(d.id).updatedAt ?? Date.now() }));
        this.channel.send(from, { t: 'welcome', links, online });
        return;
      }
      case 'welcome': {
        // What it holds now, in place of what this instance knew (it may have missed changes).
        const peer = this.peer(from);
        peer.links.clear();
        for (const link of m.links) peer.links.set(link.instanceId, { driverKey: link.driverKey, ...(link.actionTimeoutMs !== undefined ? { actionTimeoutMs: link.actionTimeoutMs } : {}) });
        for (const d of m.online) {
          bound.state.applyReplicaState(d.deviceId, d.state, {}, d.updatedAt);
          bound.state.applyReplicaOnline(d.deviceId, true, d.updatedAt);
        }
        return;
      }
      case 'bye':
        return this.peerGone(from, 'it stopped');
      case 'cmd':
        return this.runForwarded(from, m, bound);
      case 'res': {
        const f = this.forwarded.get(m.id);
        if (!f) return;
        this.forwarded.delete(m.id);
        this.deps.timers.clearTimeout(f.timer);
        if (m.ok) f.resolve(m.result);
        else f.reject(wireFailure.revive(m.error));
        return;
      }
      case 'tok':
        if (m.op === 'add') await bound.auth.adoptToken(m.hash);
        else if (m.op === 'del') bound.auth.forgetTokens({ tokenHash: m.hash });
        else if ('userId' in m) bound.auth.forgetTokens({ userId: m.userId });
        return;
      case 'doc':
        for (const watcher of this.docWatchers.get(m.kind) ?? []) watcher.changed(m.id, m.body);
        return;
    }
  }

  private applyEvent(from: string, event: keyof DomainEvents, payload: unknown, { state, registry }: ClusterBindings): void {
    const at = (payload as { at?: number }).at ?? Date.now();
    switch (event) {
      case 'device.state_changed': {
        const p = payload as DomainEvents['device.state_changed'];
        return state.applyReplicaState(p.deviceId, p.state, p.changed, p.at);
      }
      case 'device.online_changed': {
        const p = payload as DomainEvents['device.online_changed'];
        return state.applyReplicaOnline(p.deviceId, p.online, p.at);
      }
      case 'device.metrics': {
        const p = payload as DomainEvents['device.metrics'];
        return state.applyReplicaMetrics(p.deviceId, p.metrics, p.at);
      }
      case 'device.discovered':
      case 'device.updated':
        registry.applyReplica((payload as DomainEvents['device.updated']).device);
        break;
      case 'device.removed': {
        const existing = registry.find((payload as DomainEvents['device.removed']).deviceId);
        if (existing) registry.applyReplica({ ...existing, removed: true, updatedAt: at });
        break;
      }
      case 'driver.connected': {
        const p = payload as DomainEvents['driver.connected'];
        this.peer(from).links.set(p.instanceId, { driverKey: p.driverKey, ...(p.actionTimeoutMs !== undefined ? { actionTimeoutMs: p.actionTimeoutMs } : {}) });
        break;
      }
      case 'driver.disconnected': {
        const p = payload as DomainEvents['driver.disconnected'];
        this.peer(from).links.delete(p.instanceId);
        this.notifyPlacement();
        break;
      }
    }
    this.deps.events.emit(event, payload as never, 'replica');
  }

  private async runForwarded(from: string, m: Extract<ClusterMessage, { t: 'cmd' }>, { registry, drivers }: ClusterBindings): Promise<void> {
    const reply = (answer: { ok: true; result: unknown } | { ok: false; error: WireFailure }) => this.channel.send(from, { t: 'res', id: m.id, ...answer } as ClusterMessage);
    const device = registry.find(m.deviceId);
    // Only a driver linked here: a command never bounces between instances.
    if (!device || !drivers.linkOf(device.driverKey)) {
      const key = device?.driverKey ?? 'unknown';
      const err = driverErrors.DRIVER_OFFLINE({ driverKey: key }, { details: { deviceId: m.deviceId, driverKey: key }, retryAfterSeconds: 5 });
      return reply({ ok: false, error: wireFailure.from(err) });
    }
    this.ranTotal++;
    // Not awaited: the next message (another command, a state change) is handled meanwhile.
    drivers.execute(device, m.command, m.params, { ...(m.timeoutMs !== undefined ? { timeoutMs: m.timeoutMs } : {}), ...(m.kind ? { kind: m.kind } : {}) }).then(
      (result) => reply({ ok: true, result: result ?? null }),
      (err: unknown) => {
        const e = err instanceof DomainError ? err : driverErrors.DRIVER_ERROR({ driverMessage: (err as Error)?.message ?? String(err) });
        reply({ ok: false, error: wireFailure.from(e) });
      },
    );
  }
}
