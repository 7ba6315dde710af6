import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { DomainEventBus } from '../events.js';
import { deviceErrors } from './errors.js';
import { declaredAttributesOf } from './capability-schemas.js';
import { isDeviceClass } from './capabilities.js';
import type { DeviceCommandSpec, DeviceMetadata, DeviceRepository, LogicalDevice } from './model.js';

export interface DiscoveredFields {
  name?: string;
  category?: string;
  commands?: unknown[];
  properties?: Record<string, unknown>;
  capabilities?: string[];
  /** The class the driver declared: a known one is kept, any other word ignored. */
  deviceClass?: string;
  attributes?: Record<string, unknown>;
}

/** What a driver declared of the model, as the record keeps it. */
function declared(fields: DiscoveredFields): Pick<LogicalDevice, 'declaredClass' | 'declaredAttributes'> {
  return {
    ...(fields.deviceClass !== undefined && isDeviceClass(fields.deviceClass) ? { declaredClass: fields.deviceClass } : {}),
    ...(fields.attributes !== undefined ? { declaredAttributes: declaredAttributesOf(fields.attributes) } : {}),
  };
}

/**
 * Command lists are shared between devices that declare the same (a driver's 500 lights): one
 * frozen copy of each, ~350 bytes a device less at 10,000 devices. Bounded: a hub whose devices
 * all declare different lists starts over rather than growing.
 */
const sharedCommandLists = new Map<string, DeviceCommandSpec[]>();
const MAX_SHARED_COMMAND_LISTS = 2000;

export function sharedCommands(commands: DeviceCommandSpec[]): DeviceCommandSpec[] {
  if (Object.isFrozen(commands)) return commands;
  const key = JSON.stringify(commands);
  const known = sharedCommandLists.get(key);
  if (known) return known;
  if (sharedCommandLists.size >= MAX_SHARED_COMMAND_LISTS) sharedCommandLists.clear();
  const shared = deepFreeze(commands);
  sharedCommandLists.set(key, shared);
  return shared;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

/** Accepts a driver's command list in the forms drivers send: names, or objects with a name. */
export function normalizeCommands(commands: unknown[] | undefined): DeviceCommandSpec[] {
  const out: DeviceCommandSpec[] = [];
  for (const c of commands ?? []) {
    if (typeof c === 'string' && c) out.push({ name: c });
    else if (c && typeof c === 'object') {
      const o = c as Record<string, unknown>;
      const name = typeof o.name === 'string' ? o.name : typeof o.id === 'string' ? o.id : typeof o.command === 'string' ? o.command : undefined;
      if (!name) continue;
      out.push({
        name,
        ...(typeof o.label === 'string' ? { label: o.label } : {}),
        ...(o.params && typeof o.params === 'object' ? { params: o.params as Record<string, unknown> } : {}),
      });
    }
  }
  return sharedCommands(out);
}

/**
 * The logical devices: held in memory (a hub has thousands at most), written through to the
 * repository before a change is acknowledged. Devices from drivers are identified by
 * (driverKey, driverDeviceId), so rediscovery after a reconnect or restart never duplicates.
 */
export class DeviceRegistry {
  private readonly byId = new Map<string, LogicalDevice>();
  private readonly byDriverIdentity = new Map<string, string>();
  // Changes to one driver identity run one after another, so two quick discoveries of the same
  // device cannot both decide it is new.
  private readonly queues = new Map<string, Promise<unknown>>();
  private changes = 0;

  constructor(
    private readonly repo: DeviceRepository,
    private readonly clock: Clock,
    private readonly events: DomainEventBus,
  ) {}

  async load(): Promise<void> {
    for (const device of await this.repo.loadAll()) this.index(device);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Counts every change to any device: equal revisions mean an unchanged registry. */
  get revision(): number {
    return this.changes;
  }

  list(options: { includeRemoved?: boolean } = {}): LogicalDevice[] {
    const all = [...this.byId.values()];
    return options.includeRemoved ? all : all.filter((d) => !d.removed);
  }

  find(id: string): LogicalDevice | undefined {
    return this.byId.get(id);
  }

  /** The device, or a 404-kind failure naming it. Removed devices count as missing. */
  get(id: string): LogicalDevice {
    const device = this.byId.get(id);
    if (!device || device.removed) throw deviceErrors.DEVICE_NOT_FOUND({ id }, { details: { deviceId: id } });
    return device;
  }

  /** Refuses (404 DEVICE_NOT_FOUND naming every one) unless each id names a device not removed. */
  requireAll(ids: Iterable<string>): void {
    const missing = [...new Set(ids)].filter((id) => !this.byId.get(id) || this.byId.get(id)!.removed);
    if (missing.length > 0) throw deviceErrors.DEVICE_NOT_FOUND({ id: missing.join(', ') }, { details: { deviceIds: missing } });
  }

  findByDriver(driverKey: string, driverDeviceId: string): LogicalDevice | undefined {
    const id = this.byDriverIdentity.get(identity(driverKey, driverDeviceId));
    return id === undefined ? undefined : this.byId.get(id);
  }

  /** Creates or refreshes a device a driver discovered; a removed device comes back. */
  upsertDiscovered(driverKey: string, driverDeviceId: string, fields: DiscoveredFields & { name: string }): Promise<{ device: LogicalDevice; created: boolean }> {
    return this.serialized(identity(driverKey, driverDeviceId), () => this.upsertNow(driverKey, driverDeviceId, fields));
  }

  private async upsertNow(driverKey: string, driverDeviceId: string, fields: DiscoveredFields & { name: string }): Promise<{ device: LogicalDevice; created: boolean }> {
    const existing = this.findByDriver(driverKey, driverDeviceId);
    const now = this.clock.now();
    if (existing) {
      const device = this.merge(existing, fields, now);
      device.removed = false;
      await this.persist(device);
      this.events.emit('device.updated', { device, at: now });
      return { device, created: false };
    }
    const device: LogicalDevice = {
      id: randomUUID(),
      name: fields.name,
      driverKey,
      driverDeviceId,
      category: fields.category ?? 'generic',
      room: null,
      tags: [],
      capabilities: fields.capabilities ?? [],
      properties: fields.properties ?? {},
      commands: normalizeCommands(fields.commands),
      remoteSources: [],
      ...declared(fields),
      removed: false,
      createdAt: now,
      updatedAt: now,
    };
    await this.persist(device);
    this.events.emit('device.discovered', { device, at: now });
    return { device, created: true };
  }

  updateFromDriver(driverKey: string, driverDeviceId: string, fields: DiscoveredFields): Promise<LogicalDevice | undefined> {
    return this.serialized(identity(driverKey, driverDeviceId), () => this.updateNow(driverKey, driverDeviceId, fields));
  }

  private async updateNow(driverKey: string, driverDeviceId: string, fields: DiscoveredFields): Promise<LogicalDevice | undefined> {
    const existing = this.findByDriver(driverKey, driverDeviceId);
    if (!existing) return undefined;
    const now = this.clock.now();
    const device = this.merge(existing, fields, now);
    await this.persist(device);
    this.events.emit('device.updated', { device, at: now });
    return device;
  }

  /**
   * A device record another instance of the cluster wrote (it persisted it): indexed here so that
   * this instance lists and commands it too. The caller emits the replicated event.
   */
  applyReplica(device: LogicalDevice): void {
    this.index(device);
  }

  /** Marks removed: kept with its history, hidden from lists unless asked for. */
  async markRemoved(id: string): Promise<LogicalDevice | undefined> {
    const existing = this.byId.get(id);
    if (!existing || existing.removed) return undefined;
    const now = this.clock.now();
    const device = { ...existing, removed: true, updatedAt: now };
    await this.persist(device);
    this.events.emit('device.removed', { deviceId: id, at: now });
    return device;
  }

  /** Creates a device that no driver reports (GENERIC_IR and other hub-managed devices). */
  async create(fields: Omit<LogicalDevice, 'id' | 'createdAt' | 'updatedAt' | 'removed'>): Promise<LogicalDevice> {
    const now = this.clock.now();
    const device: LogicalDevice = { ...fields, id: randomUUID(), removed: false, createdAt: now, updatedAt: now };
    await this.persist(device);
    this.events.emit('device.discovered', { device, at: now });
    return device;
  }

  /** Changes a device's record; removed devices can be changed too (their history stays consistent). */
  async replace(id: string, changes: Partial<Omit<LogicalDevice, 'id' | 'createdAt' | 'driverKey' | 'driverDeviceId'>>): Promise<LogicalDevice> {
    const existing = this.byId.get(id);
    if (!existing) throw deviceErrors.DEVICE_NOT_FOUND({ id }, { details: { deviceId: id } });
    const now = this.clock.now();
    const device: LogicalDevice = { ...existing, ...changes, updatedAt: now };
    await this.persist(device);
    this.events.emit('device.updated', { device, at: now });
    return device;
  }

  async updateMetadata(id: string, meta: DeviceMetadata): Promise<LogicalDevice> {
    const changes: Partial<LogicalDevice> = {};
    if (meta.tags !== undefined) changes.tags = [...new Set(meta.tags)];
    if (meta.category !== undefined) changes.category = meta.category;
    if (meta.room !== undefined) changes.room = meta.room;
    if (meta.remoteSources !== undefined) changes.remoteSources = meta.remoteSources;
    return this.replace(id, changes);
  }

  private merge(existing: LogicalDevice, fields: DiscoveredFields, now: number): LogicalDevice {
    return {
      ...existing,
      ...(fields.name !== undefined ? { name: fields.name } : {}),
      ...(fields.category !== undefined ? { category: fields.category } : {}),
      ...(fields.capabilities !== undefined ? { capabilities: fields.capabilities } : {}),
      ...(fields.commands !== undefined ? { commands: normalizeCommands(fields.commands) } : {}),
      ...(fields.properties !== undefined ? { properties: { ...existing.properties, ...fields.properties } } : {}),
      ...declared(fields),
      updatedAt: now,
    };
  }

  private serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return next;
  }

  private async persist(device: LogicalDevice): Promise<void> {
    await this.repo.save(device);
    this.index(device);
  }

  private index(device: LogicalDevice): void {
    this.changes++;
    if (!Object.isFrozen(device)) device.commands = sharedCommands(device.commands);
    this.byId.set(device.id, device);
    if (device.driverDeviceId !== null) this.byDriverIdentity.set(identity(device.driverKey, device.driverDeviceId), device.id);
  }
}

function identity(driverKey: string, driverDeviceId: string): string {
  return `${driverKey}\u0000${driverDeviceId}`;
}
