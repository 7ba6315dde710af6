/**
 * The triggers that listen to the home as it changes: device fields (state, numeric,
 * availability), button presses, hub events and MQTT messages. Automations register their
 * triggers here while enabled; a `wait_for_trigger` step registers its own for as long as it
 * waits.
 *
 * Matching goes through an index by device and field: a state update looks only at the
 * registrations of that device, and reads the model once for them, never every automation.
 *
 * A `for` counts on the injected timers. For automations (durable registrations) each count is
 * also written down (`PendingForRepository`) when it starts and removed when it ends, so after a
 * restart (or on the instance that takes the automations over in a cluster) the count goes on:
 * it fires at its moment, or at once if that moment passed while the value still held.
 */
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import type { Trigger, TriggerData } from '../programs/automation-model.js';
import { inRange, matches, ONLINE_FIELD, type FieldTracker } from './fields.js';

/** A `for` being counted, as stored. */
export interface PendingFor {
  /** `<owner>#<trigger key>#<deviceId>`. */
  id: string;
  owner: string;
  deviceId: string;
  field: string;
  /** When the value that must hold was taken. */
  since: number;
  dueAt: number;
  data: TriggerData;
}

export type PendingForRepository = DocumentRepository<PendingFor>;

/** The MQTT link's messages, for MQTT triggers (absent when MQTT is not configured). */
export interface MqttMessages {
  subscribe(filter: string, listener: (topic: string, payload: string) => void): () => void;
}

type DeviceTrigger = Extract<Trigger, { type: 'state' | 'numeric' | 'availability' }>;

interface Registration {
  owner: string;
  /** The trigger's key within its owner: its id, else its index. */
  key: string;
  index: number;
  trigger: Trigger;
  durable: boolean;
  onFire: (data: TriggerData) => void;
  /** Counting `for`s, by device. */
  counting: Map<string, { handle: TimerHandle; since: number }>;
  closed: boolean;
  /** Only keeps the tracker informed (a condition's field). */
  watchOnly?: boolean;
}

export interface TriggerListener {
  close(): void;
}

const fieldOf = (t: DeviceTrigger): string => (t.type === 'availability' ? ONLINE_FIELD : t.field);
const show = (v: unknown) => (v === undefined ? 'unknown' : JSON.stringify(v));

export function triggerKey(trigger: Trigger, index: number): string {
  return trigger.id ?? String(index);
}

/** Matches an MQTT topic against a filter with `+` and `#`. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

export interface DeviceTriggerDeps {
  devices: DeviceService;
  events: DomainEventBus;
  tracker: FieldTracker;
  pending: PendingForRepository;
  mqtt?: MqttMessages;
  clock: Clock;
  timers: Timers;
  log: { error(obj: unknown, msg: string): void };
}

export class DeviceTriggers {
  /** deviceId → field → registrations. */
  private readonly byField = new Map<string, Map<string, Set<Registration>>>();
  private readonly buttons = new Map<string, Set<Registration>>();
  private readonly hubEvents = new Set<Registration>();
  private readonly mqttCloses = new Map<Registration, () => void>();
  private stored = new Map<string, PendingFor>();

  constructor(private readonly deps: DeviceTriggerDeps) {}

  /** Loads the `for`s that were counting; listens to the home. */
  async start(): Promise<void> {
    await this.reload();
    const { events } = this.deps;
    events.on(this, 'device.state_changed', ({ deviceId, at }) => this.deviceChanged(deviceId, at));
    events.on(this, 'device.online_changed', ({ deviceId, at }) => this.deviceChanged(deviceId, at));
    events.on(this, 'device.button_pressed', ({ deviceId, press, at }) => this.buttonPressed(deviceId, press, at));
    events.on(this, 'alert.submitted', ({ alert, at }) =>
      this.hubEvent((t) => t.event === 'alert_submitted' && (!t.severities || t.severities.includes(alert.severity)), {
        event: 'alert_submitted', alertId: alert.id, payload: { message: alert.message, severity: alert.severity, type: alert.type, deviceId: alert.deviceId ?? null }, at,
        description: `alert "${alert.message}" (${alert.severity})`,
      }));
    events.on(this, 'program.run_finished', ({ run, at }) => {
      if (run.status !== 'succeeded' && run.status !== 'failed') return;
      const event = run.status === 'succeeded' ? 'program_finished' : 'program_failed';
      // A program's own end never triggers it: that would run it for ever.
      this.hubEvent((t, owner) => t.event === event && (t.programId ? t.programId === run.programId : owner !== run.programId), {
        event, programId: run.programId, payload: { runId: run.id, status: run.status }, at, description: `program ${run.programId} ${run.status}`,
      });
    });
  }

  stop(): void {
    this.deps.events.removeOwner(this);
  }

  /**
   * Reads again the `for`s written down: at start, and when this instance takes the automations
   * over from another one of the cluster (which wrote down what it was counting).
   */
  async reload(): Promise<void> {
    this.stored = new Map((await this.deps.pending.list()).map((p) => [p.id, p]));
  }

  /**
   * Registers triggers for `owner` (a program id, or a waiting run). `durable`: the `for`s are
   * written down and resumed from what was written (automations). Time, sun and webhook
   * triggers are not this class's: they are ignored here.
   */
  listen(owner: string, triggers: readonly Trigger[], onFire: (data: TriggerData) => void, options: { durable: boolean; offset?: number } = { durable: false }): TriggerListener {
    const registrations: Registration[] = [];
    triggers.forEach((trigger, i) => {
      const index = i + (options.offset ?? 0);
      const reg: Registration = { owner, key: triggerKey(trigger, index), index, trigger, durable: options.durable, onFire, counting: new Map(), closed: false };
      switch (trigger.type) {
        case 'state':
        case 'numeric':
        case 'availability':
          for (const deviceId of trigger.deviceIds) {
            const field = fieldOf(trigger);
            this.index(deviceId, field, reg);
            if (options.durable) this.resumeCount(reg, trigger, deviceId);
          }
          break;
        case 'button':
          for (const deviceId of trigger.deviceIds) {
            let set = this.buttons.get(deviceId);
            if (!set) this.buttons.set(deviceId, (set = new Set()));
            set.add(reg);
          }
          break;
        case 'hub':
          this.hubEvents.add(reg);
          break;
        case 'mqtt':
          if (this.deps.mqtt) {
            this.mqttCloses.set(
              reg,
              this.deps.mqtt.subscribe(trigger.topic, (topic, payload) => {
                if (trigger.payload !== undefined && payload !== trigger.payload) return;
                this.fire(reg, { type: 'mqtt', topic, payload: parsePayload(payload), at: this.deps.clock.now(), description: `MQTT message on ${topic}` });
              }),
            );
          }
          break;
        default:
          return;
      }
      registrations.push(reg);
    });
    return { close: () => registrations.forEach((r) => this.unregister(r)) };
  }

  /**
   * Keeps the tracker's record of fields that conditions read with a `for` up to date, though no
   * trigger listens to them.
   */
  observe(owner: string, fields: ReadonlyArray<{ deviceId: string; field: string }>): TriggerListener {
    const watcher: Trigger = { type: 'state', deviceIds: ['-'], field: '-' };
    const regs = fields.map(({ deviceId, field }) => {
      const reg: Registration = { owner, key: `watch:${field}`, index: -1, trigger: watcher, durable: false, onFire: () => undefined, counting: new Map(), closed: false, watchOnly: true };
      this.index(deviceId, field, reg);
      return { reg, deviceId, field };
    });
    return { close: () => regs.forEach(({ reg, deviceId, field }) => this.unindex(deviceId, field, reg)) };
  }

  /**
   * Crosses out the counts written down for `owner` whose trigger is not in `keep` (all of them
   * when `keep` is empty): a removed or disabled automation, a trigger changed or removed. A count
   * from before must not fire when the automation is enabled again days later.
   */
  forgetCounts(owner: string, keep: ReadonlySet<string> = new Set()): void {
    for (const [id, record] of this.stored) {
      if (record.owner !== owner || keep.has(id.slice(owner.length + 1, id.lastIndexOf('#')))) continue;
      this.stored.delete(id);
      this.deps.pending.remove(id).catch((err: unknown) => this.deps.log.error({ err, id }, 'a count of before was not crossed out'));
    }
  }

  /** Whether MQTT triggers can hear anything. */
  get mqttAvailable(): boolean {
    return this.deps.mqtt !== undefined;
  }

  /** Numeric triggers with `alsoWhenAlreadyPast`: fire now for devices already in the range. */
  fireAlreadyPast(owner: string, triggers: readonly Trigger[], onFire: (data: TriggerData) => void): void {
    triggers.forEach((trigger, index) => {
      if (trigger.type !== 'numeric' || !trigger.alsoWhenAlreadyPast) return;
      for (const deviceId of trigger.deviceIds) {
        const value = this.deps.tracker.last(deviceId, trigger.field)?.value;
        if (!inRange(value, trigger)) continue;
        const reg = this.find(owner, deviceId, trigger.field, index);
        const data = this.dataOf(trigger, index, deviceId, trigger.field, undefined, value, this.deps.clock.now(), `${this.nameOf(deviceId)} ${trigger.field} is already ${show(value)}`);
        if (trigger.forMs && reg) this.startCount(reg, deviceId, trigger.field, this.deps.clock.now(), data);
        else onFire(data);
      }
    });
  }

  /** How many registrations listen to device fields (for the status and tests). */
  get indexedFields(): number {
    let n = 0;
    for (const fields of this.byField.values()) n += fields.size;
    return n;
  }

  // ---------------------------------------------------------------------------------------------

  /** Into the index by device and field (and the tracker follows the field). */
  private index(deviceId: string, field: string, reg: Registration): void {
    this.deps.tracker.watch(deviceId, field);
    let fields = this.byField.get(deviceId);
    if (!fields) this.byField.set(deviceId, (fields = new Map()));
    let set = fields.get(field);
    if (!set) fields.set(field, (set = new Set()));
    set.add(reg);
  }

  private unindex(deviceId: string, field: string, reg: Registration): void {
    const fields = this.byField.get(deviceId);
    const set = fields?.get(field);
    set?.delete(reg);
    if (set?.size === 0) fields?.delete(field);
    if (fields?.size === 0) this.byField.delete(deviceId);
  }

  private find(owner: string, deviceId: string, field: string, index: number): Registration | undefined {
    for (const reg of this.byField.get(deviceId)?.get(field) ?? []) if (reg.owner === owner && reg.index === index) return reg;
    return undefined;
  }

  private unregister(reg: Registration): void {
    reg.closed = true;
    for (const { handle } of reg.counting.values()) this.deps.timers.clearTimeout(handle);
    reg.counting.clear();
    const t = reg.trigger;
    if (t.type === 'state' || t.type === 'numeric' || t.type === 'availability') {
      for (const deviceId of t.deviceIds) this.unindex(deviceId, fieldOf(t), reg);
    } else if (t.type === 'button') {
      for (const deviceId of t.deviceIds) {
        const set = this.buttons.get(deviceId);
        set?.delete(reg);
        if (set?.size === 0) this.buttons.delete(deviceId);
      }
    } else if (t.type === 'hub') this.hubEvents.delete(reg);
    else if (t.type === 'mqtt') {
      this.mqttCloses.get(reg)?.();
      this.mqttCloses.delete(reg);
    }
  }

  private deviceChanged(deviceId: string, at: number): void {
    const fields = this.byField.get(deviceId);
    if (!fields) return;
    const device = this.deps.devices.registry.find(deviceId);
    if (!device) return;
    // The model is read once for every field and registration of this device.
    const { reading } = this.deps.devices.model(device);
    const state = this.deps.devices.state.get(deviceId).state;
    const online = this.deps.devices.isOnline(device);
    for (const [field, regs] of fields) {
      const value = field === ONLINE_FIELD ? online : Object.hasOwn(reading, field) ? (reading as Record<string, unknown>)[field] : state[field];
      const { previous, changed } = this.deps.tracker.observe(deviceId, field, value, at);
      if (!changed) continue;
      // A snapshot: a run's wait_for_trigger may register here while this very change is handled.
      for (const reg of [...regs]) if (!reg.watchOnly) this.fieldChanged(reg, reg.trigger as DeviceTrigger, deviceId, field, previous, value, at);
    }
  }

  private fieldChanged(reg: Registration, trigger: DeviceTrigger, deviceId: string, field: string, previous: unknown, value: unknown, at: number): void {
    // A change that still meets what a count waits for (a numeric value still in its range, a value
    // still among `to`) keeps it going; any other change ends it: the value it waited on did not hold.
    if (reg.counting.has(deviceId)) {
      const stillMet = trigger.type === 'numeric' ? inRange(value, trigger) : trigger.type === 'availability' ? value === (trigger.to === 'online') : trigger.to !== undefined && matches(value, trigger.to);
      if (stillMet) return;
    }
    this.cancelCount(reg, deviceId);
    let fires: boolean;
    if (trigger.type === 'numeric') fires = previous !== undefined && !inRange(previous, trigger) && inRange(value, trigger);
    else if (trigger.type === 'availability') fires = value === (trigger.to === 'online');
    else fires = matches(previous, trigger.from) && matches(value, trigger.to);
    if (!fires) return;
    const name = this.nameOf(deviceId);
    const description = trigger.type === 'availability' ? `${name} went ${trigger.to}` : `${name} ${field} changed from ${show(previous)} to ${show(value)}`;
    const data = this.dataOf(trigger, reg.index, deviceId, field, previous, value, at, description);
    if (trigger.forMs) this.startCount(reg, deviceId, field, at, data);
    else this.fire(reg, data);
  }

  /** Traces read like "Front door detected changed from false to true": the device's name, its id in `deviceId`. */
  private nameOf(deviceId: string): string {
    return this.deps.devices.registry.find(deviceId)?.name ?? deviceId;
  }

  private dataOf(trigger: Trigger, index: number, deviceId: string, field: string, from: unknown, to: unknown, at: number, description: string): TriggerData {
    return { id: triggerKey(trigger, index), index, type: trigger.type, deviceId, field, from, to, at, description };
  }

  private startCount(reg: Registration, deviceId: string, field: string, since: number, data: TriggerData): void {
    const forMs = (reg.trigger as DeviceTrigger).forMs ?? 0;
    const dueAt = since + forMs;
    const described = { ...data, description: `${data.description}, and held ${Math.round(forMs / 1000)} s` };
    if (reg.durable) {
      const record: PendingFor = { id: `${reg.owner}#${reg.key}#${deviceId}`, owner: reg.owner, deviceId, field, since, dueAt, data: described };
      this.stored.set(record.id, record);
      this.deps.pending.save(record, this.deps.clock.now()).catch((err: unknown) => this.deps.log.error({ err, id: record.id }, 'a counting `for` was not written down'));
      // The field's change goes down with it (not a second later with the rest): a restart must
      // find the value the count waits on, and since when it holds.
      this.deps.tracker.flush().catch(() => undefined);
    }
    this.arm(reg, deviceId, since, dueAt, described);
  }

  private arm(reg: Registration, deviceId: string, since: number, dueAt: number, data: TriggerData): void {
    // One count per device and registration: a count armed again replaces the one before.
    this.deps.timers.clearTimeout(reg.counting.get(deviceId)?.handle);
    const handle = this.deps.timers.setTimeout(() => {
      reg.counting.delete(deviceId);
      this.forget(reg, deviceId);
      this.fire(reg, { ...data, at: dueAt });
    }, Math.max(0, dueAt - this.deps.clock.now()));
    reg.counting.set(deviceId, { handle, since });
  }

  private cancelCount(reg: Registration, deviceId: string): void {
    const counting = reg.counting.get(deviceId);
    if (!counting) return;
    this.deps.timers.clearTimeout(counting.handle);
    reg.counting.delete(deviceId);
    this.forget(reg, deviceId);
  }

  private forget(reg: Registration, deviceId: string): void {
    if (!reg.durable) return;
    const id = `${reg.owner}#${reg.key}#${deviceId}`;
    if (!this.stored.delete(id)) return;
    this.deps.pending.remove(id).catch((err: unknown) => this.deps.log.error({ err, id }, 'a finished `for` was not crossed out'));
  }

  /** A count written down before a restart goes on if the value it waits on still holds. */
  private resumeCount(reg: Registration, trigger: DeviceTrigger, deviceId: string): void {
    const id = `${reg.owner}#${reg.key}#${deviceId}`;
    const record = this.stored.get(id);
    if (!record) return;
    const tracked = this.deps.tracker.last(deviceId, fieldOf(trigger));
    const holdsValue =
      trigger.type === 'numeric' ? inRange(tracked?.value, trigger) : trigger.type === 'availability' ? tracked?.value === (trigger.to === 'online') : matches(tracked?.value, trigger.to);
    const stillHolds = tracked !== undefined && tracked.since <= record.since && holdsValue;
    if (!stillHolds || !trigger.forMs || record.dueAt !== record.since + trigger.forMs) {
      this.forget({ ...reg, durable: true }, deviceId);
      return;
    }
    this.arm(reg, deviceId, record.since, record.dueAt, record.data);
  }

  private buttonPressed(deviceId: string, press: 'single' | 'double' | 'long', at: number): void {
    for (const reg of [...(this.buttons.get(deviceId) ?? [])]) {
      const t = reg.trigger as Extract<Trigger, { type: 'button' }>;
      if (t.press && t.press !== press) continue;
      this.fire(reg, { id: reg.key, index: reg.index, type: 'button', deviceId, press, at, description: `${this.nameOf(deviceId)} pressed (${press})` });
    }
  }

  private hubEvent(match: (t: Extract<Trigger, { type: 'hub' }>, owner: string) => boolean, data: Omit<TriggerData, 'id' | 'type' | 'index'>): void {
    for (const reg of [...this.hubEvents]) {
      if (match(reg.trigger as Extract<Trigger, { type: 'hub' }>, reg.owner)) this.fire(reg, { ...data, id: reg.key, index: reg.index, type: 'hub' });
    }
  }

  private fire(reg: Registration, data: Omit<TriggerData, 'id' | 'index'> & Partial<Pick<TriggerData, 'id' | 'index'>>): void {
    if (reg.closed) return;
    try {
      reg.onFire({ ...data, id: reg.key, index: reg.index } as TriggerData);
    } catch (err) {
      this.deps.log.error({ err, owner: reg.owner }, 'a trigger handler failed');
    }
  }
}

function parsePayload(payload: string): unknown {
  const text = payload.trim();
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return payload;
    }
  }
  return payload;
}
