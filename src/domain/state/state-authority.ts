import type { Clock, Timers } from '../../platform/clock.js';
import { WriteBehind } from '../../platform/write-behind.js';
import type { EventOrigin } from '../../platform/event-bus.js';
import type { StateRepository, StoredState } from './model.js';
import type { DomainEventBus } from '../events.js';
import { TelemetryStore, type TelemetryLimits } from './telemetry.js';

export interface DeviceStateView {
  state: Record<string, unknown>;
  online: boolean;
  /** False for state restored from storage that no driver has confirmed since the start. */
  confirmed: boolean;
  updatedAt: number | null;
}

interface Entry {
  state: Record<string, unknown>;
  online: boolean;
  confirmed: boolean;
  updatedAt: number | null;
  /** The frozen view of this entry, made on demand and dropped when the entry changes. */
  view?: Readonly<DeviceStateView>;
}

const UNKNOWN_STATE: Readonly<DeviceStateView> = Object.freeze({ state: Object.freeze({}), online: false, confirmed: false, updatedAt: null });

export interface StateAuthorityLogger {
  error(obj: unknown, msg: string): void;
}

/**
 * The one source of device state: an in-memory map fed only by drivers. Partial updates merge.
 * Changes are persisted write-behind in batches, so that after a restart the last known state is
 * served (marked unconfirmed) until the driver reports again. Every change is an event.
 */
export class StateAuthority {
  private readonly entries = new Map<string, Entry>();
  private changes = 0;
  /** Changed states, written behind in batches. */
  private readonly writes: WriteBehind<string, StoredState>;
  readonly telemetry: TelemetryStore;

  constructor(
    private readonly repo: StateRepository,
    private readonly clock: Clock,
    private readonly events: DomainEventBus,
    private readonly log: StateAuthorityLogger,
    telemetry: TelemetryLimits,
    private readonly timers: Timers,
    private readonly flushIntervalMs = 250,
  ) {
    this.telemetry = new TelemetryStore(telemetry);
    this.writes = new WriteBehind({
      save: (batch) => repo.saveMany(batch),
      read: (deviceId) => {
        const entry = this.entries.get(deviceId);
        return entry ? { deviceId, state: entry.state, updatedAt: entry.updatedAt ?? this.clock.now() } : undefined;
      },
      keyOf: (s) => s.deviceId,
      timers,
      intervalMs: flushIntervalMs,
      onError: (err, devices) => this.log.error({ err, devices }, 'state flush failed'),
    });
  }

  async load(): Promise<void> {
    for (const stored of await this.repo.loadAll()) {
      // A driver that registered while the hub was starting has reported already: what it said stands.
      if (this.entries.has(stored.deviceId)) continue;
      this.entries.set(stored.deviceId, { state: stored.state, online: false, confirmed: false, updatedAt: stored.updatedAt });
    }
    this.changes++;
  }

  get(deviceId: string): DeviceStateView {
    const entry = this.entries.get(deviceId);
    return entry ? { state: entry.state, online: entry.online, confirmed: entry.confirmed, updatedAt: entry.updatedAt } : { state: {}, online: false, confirmed: false, updatedAt: null };
  }

  /**
   * The same as `get`, frozen and shared until the device's state or connectivity changes
   * (state objects are replaced on change, never mutated), so snapshots can reuse it.
   */
  view(deviceId: string): Readonly<DeviceStateView> {
    const entry = this.entries.get(deviceId);
    if (!entry) return UNKNOWN_STATE;
    entry.view ??= Object.freeze(this.get(deviceId));
    return entry.view;
  }

  /** Counts every change of any device's state or connectivity. */
  get revision(): number {
    return this.changes;
  }

  peek(deviceId: string): Readonly<Entry> | undefined {
    return this.entries.get(deviceId);
  }

  /** Merges a partial state a driver reported and emits the full merged state. */
  update(deviceId: string, partial: Record<string, unknown>): Record<string, unknown> {
    const now = this.clock.now();
    let entry = this.entries.get(deviceId);
    if (!entry) {
      entry = { state: {}, online: false, confirmed: true, updatedAt: now };
      this.entries.set(deviceId, entry);
    }
    // A new object per change: subscribers may keep the previous one.
    entry.state = { ...entry.state, ...partial };
    entry.view = undefined;
    this.changes++;
    entry.confirmed = true;
    entry.updatedAt = now;
    const becameOnline = !entry.online;
    entry.online = true;
    this.markDirty(deviceId);
    this.telemetry.record(deviceId, { at: now, kind: 'state', data: partial });
    this.events.emit('device.state_changed', { deviceId, state: entry.state, changed: partial, at: now });
    if (becameOnline) this.events.emit('device.online_changed', { deviceId, online: true, at: now });
    return entry.state;
  }

  /**
   * A device's state as another instance of the cluster (the one its driver is connected to)
   * reported it: taken over as it is, not persisted again (that instance writes it), emitted as a
   * replica so that this instance's streams follow.
   */
  applyReplicaState(deviceId: string, state: Record<string, unknown>, changed: Record<string, unknown>, at: number): void {
    let entry = this.entries.get(deviceId);
    if (!entry) {
      entry = { state: {}, online: false, confirmed: true, updatedAt: at };
      this.entries.set(deviceId, entry);
    }
    entry.state = state;
    entry.view = undefined;
    entry.confirmed = true;
    entry.updatedAt = at;
    this.changes++;
    this.telemetry.record(deviceId, { at, kind: 'state', data: changed });
    this.events.emit('device.state_changed', { deviceId, state, changed, at }, 'replica');
  }

  /** A device went online or offline on another instance (see `applyReplicaState`). */
  applyReplicaOnline(deviceId: string, online: boolean, at: number): void {
    this.changeOnline(deviceId, online, at, 'replica');
  }

  /** Metrics a device reported on another instance. */
  applyReplicaMetrics(deviceId: string, metrics: Record<string, unknown>, at: number): void {
    this.telemetry.record(deviceId, { at, kind: 'metric', data: metrics });
    this.events.emit('device.metrics', { deviceId, metrics, at }, 'replica');
  }

  recordMetrics(deviceId: string, metrics: Record<string, unknown>): void {
    const at = this.clock.now();
    this.telemetry.record(deviceId, { at, kind: 'metric', data: metrics });
    this.events.emit('device.metrics', { deviceId, metrics, at });
  }

  setOnline(deviceId: string, online: boolean): void {
    this.changeOnline(deviceId, online, this.clock.now(), 'local');
  }

  private changeOnline(deviceId: string, online: boolean, at: number, origin: EventOrigin): void {
    let entry = this.entries.get(deviceId);
    if (!entry) {
      entry = { state: {}, online: false, confirmed: false, updatedAt: null };
      this.entries.set(deviceId, entry);
    }
    if (entry.online === online) return;
    entry.online = online;
    entry.view = undefined;
    this.changes++;
    this.events.emit('device.online_changed', { deviceId, online, at }, origin);
  }


  /** From now on, a change is written at most `flushIntervalMs` later. */
  start(): void {
    this.writes.start();
  }

  /** Writes every changed state; safe to call at any time, runs one write at a time. */
  flush(): Promise<void> {
    return this.writes.flush();
  }

  async stop(): Promise<void> {
    await this.writes.stop();
  }

  private markDirty(deviceId: string): void {
    this.writes.mark(deviceId);
  }
}
