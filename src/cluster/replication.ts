import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuthService } from '../domain/auth/auth-service.js';
import type { DeviceRegistry } from '../domain/devices/device-registry.js';
import type { DriverManager } from '../domain/drivers/driver-manager.js';
import type { DomainEventBus, DomainEvents } from '../domain/events.js';
import type { StateAuthority } from '../domain/state/state-authority.js';
import type { Clock } from '../platform/clock.js';
import type { Database } from '../storage/schema.js';
import { sendWithin } from './channel.js';
import type { PeerTable } from './membership.js';
import type { ClusterMessage, ClusterSender, MessageOf } from './messages.js';

/** Events every instance keeps to itself: per-instance measurements. */
export const NOT_REPLICATED: ReadonlySet<keyof DomainEvents> = new Set<keyof DomainEvents>(['device.command_executed', 'device.command_timed_out']);

/** A cache of one document kind kept in step: a change, or everything read again. */
export interface DocumentWatcher {
  changed(id: string, doc: unknown): void;
  resync(): Promise<void>;
}

/**
 * The writes the other instances hear of, and the document caches that hear of theirs. Built
 * before the rest of the node (the repositories of `replicated.ts` hold it, and they exist
 * before the devices do); it needs no connection of its own: a write's notification goes out in
 * the writing transaction (`sendWithin`). It names this instance in the cluster: the node built
 * around it later (`ClusterNode`) takes its `instanceId`.
 */
export class ClusterWrites {
  readonly instanceId = randomBytes(8).toString('hex');
  private readonly watchers = new Map<string, Set<DocumentWatcher>>();

  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Runs a write and notifies the others in the same transaction: PostgreSQL delivers the
   * notification when, and only when, the write commits, so an acknowledged write is never
   * missing from another instance's cache, even if this instance dies right after answering.
   */
  async writeAndTell(work: (db: Kysely<Database>) => Promise<void>, message: ClusterMessage): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await work(trx);
      await sendWithin(trx, this.instanceId, message);
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
    let set = this.watchers.get(kind);
    if (!set) this.watchers.set(kind, (set = new Set()));
    set.add(watcher);
    return () => set.delete(watcher);
  }

  /** Another instance wrote (body) or removed (no body) a document: the caches of its kind follow. */
  changedElsewhere(kind: string, id: string, body: unknown): void {
    for (const watcher of this.watchers.get(kind) ?? []) watcher.changed(id, body);
  }

  /** Every document cache read again. */
  async resync(): Promise<void> {
    for (const watchers of this.watchers.values()) for (const w of watchers) await w.resync();
  }
}

export interface ReplicationDeps {
  channel: ClusterSender;
  peers: PeerTable;
  writes: ClusterWrites;
  events: DomainEventBus;
  state: Pick<StateAuthority, 'applyReplicaState' | 'applyReplicaOnline' | 'applyReplicaMetrics' | 'view'>;
  registry: Pick<DeviceRegistry, 'applyReplica' | 'find' | 'list' | 'load'>;
  drivers: Pick<DriverManager, 'list' | 'linkOf'>;
  auth: Pick<AuthService, 'adoptToken' | 'forgetTokens' | 'resyncTokens'>;
  clock: Clock;
  /** A driver link elsewhere went down: leases may change hands (membership's placement listeners). */
  placementChanged: () => void;
}

/**
 * The caches every instance keeps in step: this instance's domain events relayed to the others
 * (device state coalesced per device per event-loop turn), theirs applied here (state, devices,
 * driver links, tokens, documents), and everything read again and asked for after a loss.
 */
export class Replication {
  private readonly owner = {};
  private readonly pendingStates = new Map<string, DomainEvents['device.state_changed']>();
  private statesFlush: NodeJS.Immediate | undefined;

  constructor(private readonly deps: ReplicationDeps) {}

  /** Relays this instance's events from now on. */
  start(): void {
    const { events, channel } = this.deps;
    events.onAny(this.owner, (event, payload, origin) => {
      if (origin !== 'local' || NOT_REPLICATED.has(event)) return;
      if (event === 'device.state_changed') return this.coalesceState(payload as DomainEvents['device.state_changed']);
      this.flushStates();
      channel.send(undefined, { t: 'ev', e: event, p: payload });
    });
  }

  /** Relays nothing more; what was coalesced goes out now. */
  stop(): void {
    this.deps.events.removeOwner(this.owner);
    this.flushStates();
  }

  /** Asks the others what they hold (they answer `welcome`). */
  askPeers(): void {
    this.deps.channel.send(undefined, { t: 'hello' });
  }

  /**
   * After the listening connection was lost for a while, what was said meanwhile is gone: the
   * devices, tokens and documents are read again, and the others asked what they hold.
   */
  async resync(): Promise<void> {
    await this.deps.registry.load();
    await this.deps.auth.resyncTokens();
    await this.deps.writes.resync();
    this.askPeers();
  }

  /** Another instance asks what this one holds: its driver links and the online state of their devices. */
  hello(from: string): void {
    const { peers, drivers, registry, state, channel, clock } = this.deps;
    peers.seen(from);
    const links = drivers.list().map((d) => {
      const link = drivers.linkOf(d.driverKey, d.instanceId);
      const timeout = link?.actionTimeoutMs;
      return {
        instanceId: d.instanceId,
        driverKey: d.driverKey,
        ...(timeout !== undefined ? { actionTimeoutMs: timeout } : {}),
        ...(link ? { transport: link.transport } : {}),
        ...(link?.remoteAddress !== undefined ? { remoteAddress: link.remoteAddress } : {}),
      };
    });
    const local = new Set(links.map((l) => l.driverKey));
    const online = registry
      .list()
      .filter((d) => local.has(d.driverKey) && state.view(d.id).online)
      .map((d) => ({ deviceId: d.id, state: state.view(d.id).state, updatedAt: state.view(d.id).updatedAt ?? clock.now() }));
    channel.send(from, { t: 'welcome', links, online });
  }

  /** What another instance holds now, in place of what this instance knew (it may have missed changes). */
  welcome(from: string, m: MessageOf<'welcome'>): void {
    this.deps.peers.replaceLinks(from, m.links);
    for (const d of m.online) {
      this.deps.state.applyReplicaState(d.deviceId, d.state, {}, d.updatedAt);
      this.deps.state.applyReplicaOnline(d.deviceId, true, d.updatedAt);
    }
  }

  /** A token another instance issued or revoked. */
  async token(m: MessageOf<'tok'>): Promise<void> {
    const { auth } = this.deps;
    if (m.op === 'add') await auth.adoptToken(m.hash);
    else if (m.op === 'del') auth.forgetTokens({ tokenHash: m.hash });
    else if ('userId' in m) auth.forgetTokens({ userId: m.userId });
  }

  /** A document another instance wrote or removed. */
  document(m: MessageOf<'doc'>): void {
    this.deps.writes.changedElsewhere(m.kind, m.id, m.body);
  }

  /** An event of another instance, applied here and emitted as a replica for this instance's streams. */
  applyEvent(from: string, event: keyof DomainEvents, payload: unknown): void {
    const { state, registry, peers, events } = this.deps;
    peers.seen(from);
    const at = (payload as { at?: number }).at ?? this.deps.clock.now();
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
      case 'driver.connected':
        peers.linkUp(from, payload as DomainEvents['driver.connected']);
        break;
      case 'driver.disconnected':
        peers.linkDown(from, (payload as DomainEvents['driver.disconnected']).instanceId);
        this.deps.placementChanged();
        break;
    }
    events.emit(event, payload as never, 'replica');
  }

  /**
   * A device's state changes within one turn of the event loop travel as one: its last full
   * state with the partial changes merged (a driver flooding updates costs the others one
   * message per device per turn, not one per update). Any other event sends them first, so the
   * order of what a device went through is kept.
   */
  private coalesceState(e: DomainEvents['device.state_changed']): void {
    const pending = this.pendingStates.get(e.deviceId);
    this.pendingStates.set(e.deviceId, pending ? { ...e, changed: { ...pending.changed, ...e.changed } } : e);
    // A turn of the event loop, not a time: not the injected Timers (on a test's ManualClock the
    // states would wait until time moved, and `setTimeout(0)` is a clamped timer, not a turn).
    this.statesFlush ??= setImmediate(() => this.flushStates());
  }

  private flushStates(): void {
    if (this.statesFlush) clearImmediate(this.statesFlush);
    this.statesFlush = undefined;
    for (const e of this.pendingStates.values()) this.deps.channel.send(undefined, { t: 'ev', e: 'device.state_changed', p: e });
    this.pendingStates.clear();
  }
}
