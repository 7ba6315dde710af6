/**
 * Device fields as automations read them, and how long each has held its value.
 *
 * A field is a reading field of the device model (`on`, `brightness`, `detected`…), `online`,
 * or, where the reading has no such field, a raw state key (a device without a class). The
 * tracker keeps, for every field an automation watches, its last value and since when it has
 * held it, written behind to storage at most once a second, so a condition's `for` ("has been
 * off for 10 minutes") survives a restart. A field first watched after the hub has run a while
 * is taken to have held its value since the device last reported: later than the truth, so a
 * `for` measured from it can come late, never early.
 */
import type { Clock, Timers } from '../../platform/clock.js';
import { WriteBehind } from '../../platform/write-behind.js';
import type { DeviceService } from '../devices/device-service.js';
import type { FieldValue } from '../programs/automation-model.js';

export const ONLINE_FIELD = 'online';

export interface TrackedField {
  deviceId: string;
  field: string;
  value: unknown;
  since: number;
}

/** Storage port of the tracked fields. */
export interface FieldHistoryRepository {
  loadAll(): Promise<TrackedField[]>;
  saveMany(fields: TrackedField[]): Promise<void>;
  removeDevice(deviceId: string): Promise<void>;
}

/** The value of a device's field now: the reading's, `online`, else the raw state key's. */
export function readField(devices: DeviceService, deviceId: string, field: string): unknown {
  const device = devices.registry.find(deviceId);
  if (!device || device.removed) return undefined;
  if (field === ONLINE_FIELD) return devices.isOnline(device);
  const { reading } = devices.model(device);
  if (Object.hasOwn(reading, field)) return (reading as Record<string, unknown>)[field];
  const state = devices.state.get(deviceId).state;
  return Object.hasOwn(state, field) ? state[field] : undefined;
}

/** The same value as a trigger or condition compares it: a number's text is the number. */
export function sameValue(actual: unknown, expected: FieldValue): boolean {
  if (actual === expected) return true;
  if (typeof expected === 'number' && typeof actual === 'string' && actual.trim() !== '') return Number(actual) === expected;
  if (typeof actual === 'number' && typeof expected === 'string' && expected.trim() !== '') return Number(expected) === actual;
  if (typeof expected === 'string' && typeof actual === 'string') return expected.toLowerCase() === actual.toLowerCase();
  if (typeof expected === 'string' && typeof actual === 'boolean') return expected.toLowerCase() === (actual ? 'true' : 'false') || expected.toLowerCase() === (actual ? 'on' : 'off');
  return false;
}

export function matches(actual: unknown, expected: FieldValue | FieldValue[] | undefined): boolean {
  if (expected === undefined) return true;
  return Array.isArray(expected) ? expected.some((e) => sameValue(actual, e)) : sameValue(actual, expected);
}

export function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

export function inRange(value: unknown, range: { above?: number; below?: number }): boolean {
  const n = asNumber(value);
  if (n === undefined) return false;
  return (range.above === undefined || n > range.above) && (range.below === undefined || n < range.below);
}

const key = (deviceId: string, field: string) => `${deviceId}\u0000${field}`;
const equalValues = (a: unknown, b: unknown) => a === b || (typeof a === 'object' && a !== null && JSON.stringify(a) === JSON.stringify(b));

export class FieldTracker {
  private readonly fields = new Map<string, TrackedField>();
  private readonly writes: WriteBehind<string, TrackedField>;

  constructor(
    private readonly repo: FieldHistoryRepository,
    private readonly devices: DeviceService,
    private readonly clock: Clock,
    timers: Timers,
    log: { error(obj: unknown, msg: string): void },
    flushIntervalMs = 1000,
  ) {
    this.writes = new WriteBehind({
      save: (batch) => repo.saveMany(batch),
      read: (k) => this.fields.get(k),
      keyOf: (f) => key(f.deviceId, f.field),
      timers,
      intervalMs: flushIntervalMs,
      onError: (err, fields) => log.error({ err, fields }, 'automation field history not saved'),
    });
  }

  async load(): Promise<void> {
    for (const f of await this.repo.loadAll()) this.fields.set(key(f.deviceId, f.field), f);
    this.writes.start();
  }

  /** Starts tracking a field (idempotent); its current value is taken to hold since the device last reported. */
  watch(deviceId: string, field: string): void {
    const k = key(deviceId, field);
    const value = readField(this.devices, deviceId, field);
    const known = this.fields.get(k);
    if (known && equalValues(known.value, value)) return;
    const since = known ? this.clock.now() : (this.devices.state.get(deviceId).updatedAt ?? this.clock.now());
    this.fields.set(k, { deviceId, field, value, since });
    this.markDirty(k);
  }

  /**
   * The field's value changed (or may have): answers the previous value and since when the
   * current one holds. `value` is what the field reads now.
   */
  observe(deviceId: string, field: string, value: unknown, at: number): { previous: unknown; changed: boolean; since: number } {
    const k = key(deviceId, field);
    const known = this.fields.get(k);
    if (known && equalValues(known.value, value)) return { previous: known.value, changed: false, since: known.since };
    this.fields.set(k, { deviceId, field, value, since: at });
    this.markDirty(k);
    return { previous: known?.value, changed: true, since: at };
  }

  /** Since when the field has held its current value, if it is tracked. */
  since(deviceId: string, field: string): number | undefined {
    return this.fields.get(key(deviceId, field))?.since;
  }

  last(deviceId: string, field: string): TrackedField | undefined {
    return this.fields.get(key(deviceId, field));
  }

  get size(): number {
    return this.fields.size;
  }

  async forgetDevice(deviceId: string): Promise<void> {
    for (const [k, f] of this.fields) if (f.deviceId === deviceId) this.fields.delete(k);
    await this.repo.removeDevice(deviceId);
  }

  flush(): Promise<void> {
    return this.writes.flush();
  }

  stop(): Promise<void> {
    return this.writes.stop();
  }

  private markDirty(k: string): void {
    this.writes.mark(k);
  }
}
