import type { TimerHandle, Timers } from '../../platform/clock.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import type { BuiltInDriver, BuiltInDriverContext } from '../drivers/builtin.js';
import type { ServerToDriverMessage } from '../drivers/messages.js';
import type { DomainEventBus } from '../events.js';
import { accessoryHubErrors } from './errors.js';
import type { HomebridgeSupervisor } from './homebridge.js';
import { DESCRIPTIVE_SERVICES, HAP_CHARACTERISTIC, HAP_SERVICES, NAME_CHARACTERISTICS, describeService, pressOf, serviceContext, serviceName, serviceState, serviceWrites, shortType, type HapServiceName, type ServiceCharacteristic } from './hap-services.js';
import type { HapAccessory, HapCharacteristic, HapClient } from './ports.js';

/** One characteristic of an imported accessory, by the state key it has as a generic one (its HAP description in snake case). */
export interface ImportedCharacteristic extends ServiceCharacteristic {
  key: string;
  /** It sends HAP events (perm `ev`); absent in imports made before services: assumed. */
  events?: boolean;
}

/**
 * One device of an imported accessory: a service the mapping (hap-services.ts) knows, or the
 * accessory's other services together as one generic device, as every accessory was before.
 */
export interface ImportedService {
  /** Its driver device id: `hb-<aid>` for the first, `hb-<aid>-<iid>` for each other (kept across restarts). */
  id: string;
  /** The service's iid (the generic one: its first service's). */
  iid: number;
  /** The mapping's name of the service (`Lightbulb`), or `generic`. */
  service: HapServiceName | 'generic';
  name: string;
  characteristics: ImportedCharacteristic[];
}

/** An accessory imported as hub devices (driver `accessory-hub`): one per service. */
export interface ImportedAccessory {
  /** `hb-<aid>`: Homebridge keeps an accessory's aid across restarts. */
  id: string;
  aid: number;
  name: string;
  /** Its devices; absent in an import made before services (made at its next read). */
  services?: ImportedService[];
  /** An import made before services: the characteristics of its one generic device. */
  characteristics?: ImportedCharacteristic[];
  createdAt: number;
  updatedAt: number;
}

export interface ImportableAccessory {
  accessoryId: string;
  aid: number;
  name: string;
  imported: boolean;
  characteristics: Array<{ key: string; format?: string; writable: boolean; value?: unknown }>;
}

/** The logical devices the imports become: the device registry, and the events it announces them with. */
export interface ImportedDevices {
  findByDriver(driverKey: string, driverDeviceId: string): { id: string; removed: boolean } | undefined;
  events: DomainEventBus;
}

/** How long an import waits for the registry to take its devices (a local write: milliseconds). */
const REGISTER_TIMEOUT_MS = 5000;

const keyOf = (c: HapCharacteristic) => (c.description ?? `c_${c.type}`).toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '') || `c_${c.iid}`;
const valueOf = (c: { format?: string }, value: unknown) => (c.format === 'bool' ? value === true || value === 1 : value);
const stringOf = (c: HapCharacteristic | undefined) => (typeof c?.value === 'string' && c.value.trim() ? c.value.trim() : undefined);
const findChar = (chars: HapCharacteristic[], type: string) => chars.find((c) => shortType(c.type) === type);
const nameOf = (a: HapAccessory) => stringOf(findChar(a.services.flatMap((s) => s.characteristics), HAP_CHARACTERISTIC.Name)) ?? `Accessory ${a.aid}`;
const usable = (c: HapCharacteristic) => (c.perms ?? []).some((p) => p === 'pr' || p === 'pw');

/** What an accessory does: the characteristics of its services other than its information, by generic key. */
function characteristicsOf(a: HapAccessory): Array<HapCharacteristic & { key: string }> {
  return genericCharacteristics(a.services.filter((s) => !DESCRIPTIVE_SERVICES.has(shortType(s.type))));
}

function genericCharacteristics(services: HapAccessory['services']): Array<HapCharacteristic & { key: string }> {
  const out: Array<HapCharacteristic & { key: string }> = [];
  const seen = new Set<string>();
  for (const service of services) {
    for (const c of service.characteristics) {
      const key = keyOf(c);
      if (key === 'name' || seen.has(key) || !usable(c)) continue;
      seen.add(key);
      out.push({ ...c, key });
    }
  }
  return out;
}

/** A characteristic as an import keeps it: HAP's metadata without the value. */
function imported(c: HapCharacteristic & { key?: string }): ImportedCharacteristic {
  const perms = c.perms ?? [];
  const validValues = c['valid-values'];
  return {
    key: c.key ?? keyOf(c),
    type: shortType(c.type),
    iid: c.iid,
    writable: perms.includes('pw'),
    events: perms.includes('ev'),
    ...(c.format ? { format: c.format } : {}),
    ...(c.minValue !== undefined ? { minValue: c.minValue } : {}),
    ...(c.maxValue !== undefined ? { maxValue: c.maxValue } : {}),
    ...(c.minStep !== undefined ? { minStep: c.minStep } : {}),
    ...(Array.isArray(validValues) ? { validValues } : {}),
  };
}

/** JSON with object keys sorted: a stored record compares equal whatever order its store keeps keys in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));
}

const humanize = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1 $2');

/**
 * The accessory's devices: one per service the mapping knows, and one generic device for the
 * others together (services that only describe are none). The primary service comes first. Ids
 * stay those of `previous` for the same service iid; the first new one takes `hb-<aid>` while no
 * device holds it (so an accessory imported before services keeps its device), else `hb-<aid>-<iid>`.
 */
function servicesOf(a: HapAccessory, previous: readonly ImportedService[]): ImportedService[] {
  const accessoryName = nameOf(a);
  const ordered = [...a.services].sort((x, y) => Number(y.primary === true) - Number(x.primary === true));
  const units: Array<Omit<ImportedService, 'id'>> = [];
  const others: HapAccessory['services'] = [];
  let genericAt = -1;
  for (const service of ordered) {
    const type = shortType(service.type);
    if (DESCRIPTIVE_SERVICES.has(type)) continue;
    const chars = service.characteristics.filter((c) => usable(c) && !NAME_CHARACTERISTICS.has(shortType(c.type)));
    if (chars.length === 0) continue;
    const name = serviceName(type);
    if (!name) {
      if (genericAt < 0) genericAt = units.length;
      others.push(service);
      continue;
    }
    const own = stringOf(findChar(service.characteristics, HAP_CHARACTERISTIC.ConfiguredName)) ?? stringOf(findChar(service.characteristics, HAP_CHARACTERISTIC.Name));
    units.push({ iid: service.iid, service: name, name: own ?? accessoryName, characteristics: chars.map((c) => imported(c)) });
  }
  const generic = genericCharacteristics(others);
  if (generic.length > 0) units.splice(genericAt, 0, { iid: others[0]!.iid, service: 'generic', name: accessoryName, characteristics: generic.map((c) => imported(c)) });
  // One device alone is the accessory; several are named apart.
  if (units.length === 1) units[0]!.name = accessoryName;
  const names = new Set<string>();
  for (const unit of units) {
    if (names.has(unit.name)) unit.name = `${unit.name} ${unit.service === 'generic' ? 'other' : humanize(unit.service)}`;
    names.add(unit.name);
  }
  const byIid = new Map(previous.filter((p) => p.iid > 0).map((p) => [p.iid, p.id]));
  const kept = new Set(units.map((u) => byIid.get(u.iid)).filter((id): id is string => id !== undefined));
  const base = `hb-${a.aid}`;
  return units.map((unit) => {
    let id = byIid.get(unit.iid);
    if (!id) {
      id = kept.has(base) ? `${base}-${unit.iid}` : base;
      kept.add(id);
    }
    return { id, ...unit };
  });
}

/** The accessory's devices as stored; an import made before services is its one generic device. */
function unitsOf(record: ImportedAccessory): ImportedService[] {
  return record.services ?? [{ id: record.id, iid: 0, service: 'generic', name: record.name, characteristics: record.characteristics ?? [] }];
}

/** The commands of a generic device: `set_<key> {value}` for each writable characteristic, and turn_on/turn_off for `on`. */
function genericCommands(unit: ImportedService) {
  return unit.characteristics
    .filter((c) => c.writable)
    .flatMap((c) => [
      { name: `set_${c.key}`, label: `Set ${c.key.replace(/_/g, ' ')}`, params: { type: 'object', properties: { value: c.format === 'bool' ? { type: 'boolean' } : { type: 'number', ...(c.minValue !== undefined ? { minimum: c.minValue } : {}), ...(c.maxValue !== undefined ? { maximum: c.maxValue } : {}) } }, required: ['value'] } },
      ...(c.key === 'on' ? [{ name: 'turn_on', label: 'On' }, { name: 'turn_off', label: 'Off' }] : []),
    ]);
}

/**
 * Homebridge's accessories as hub devices: each service of an imported accessory that the mapping
 * (hap-services.ts) knows is a logical device of the built-in driver `accessory-hub` with its
 * class, attributes, state in the model's keys and the class's standard commands, carried out as
 * HAP writes; the accessory's other services are one generic device (its characteristics its
 * state, `set_<key>` commands). State is read over HAP at each event and every poll; a
 * programmable switch's events are button presses. While Homebridge is down the devices are offline.
 */
export class AccessoryImports implements BuiltInDriver {
  readonly driverKey = 'accessory-hub';
  private context: BuiltInDriverContext | undefined;
  private timer: TimerHandle | undefined;
  /** The state last reported, by driver device id. */
  private last = new Map<string, Record<string, unknown>>();
  /** Characteristic values last read over HAP (or written), by `aid.iid`. */
  private values = new Map<string, unknown>();
  private reading: Promise<void> | undefined;
  private readAgain = false;
  private known: HapAccessory[] = [];
  private subscription: { close(): void } | undefined;
  private resubscribeTimer: TimerHandle | undefined;

  constructor(
    private readonly store: DocumentCollection<ImportedAccessory>,
    private readonly homebridge: HomebridgeSupervisor,
    private readonly hap: HapClient,
    private readonly timers: Timers,
    private readonly pollMs: number,
    private readonly devices: ImportedDevices,
  ) {}

  async load(): Promise<void> {
    await this.store.load();
  }

  connect(context: BuiltInDriverContext): void {
    this.context = context;
    for (const record of this.store.list()) for (const unit of unitsOf(record)) this.discover(record, unit, {});
    this.schedule(0);
  }

  disconnect(): void {
    this.context = undefined;
    if (this.timer) this.timers.clearTimeout(this.timer);
    if (this.resubscribeTimer) this.timers.clearTimeout(this.resubscribeTimer);
    this.timer = undefined;
    this.resubscribeTimer = undefined;
    this.subscription?.close();
    this.subscription = undefined;
  }

  /**
   * HAP events for every imported characteristic, on one connection: a change made in Homebridge
   * (Apple Home, the plugin itself) reaches the state authority as it happens, and a programmable
   * switch's event is a button press. When the connection ends (Homebridge restarted) it is made
   * again; the poll stays as the safety net.
   */
  private subscribing = 0;

  private async resubscribe(): Promise<void> {
    const attempt = ++this.subscribing;
    this.subscription?.close();
    this.subscription = undefined;
    const imported = this.store.list();
    if (!this.context || imported.length === 0) return;
    const { port, pin } = await this.homebridge.settings();
    const byId = new Map<string, { deviceId: string; press: boolean }>();
    for (const record of imported) {
      for (const unit of unitsOf(record)) {
        const presses = unit.service === 'generic' ? undefined : HAP_SERVICES[unit.service].presses;
        for (const c of unit.characteristics) if (c.events !== false) byId.set(`${record.aid}.${c.iid}`, { deviceId: unit.id, press: c.type !== undefined && c.type === presses });
      }
    }
    if (byId.size === 0) return;
    const ids = [...byId.keys()].map((k) => ({ aid: Number(k.split('.')[0]), iid: Number(k.split('.')[1]) }));
    // Filled once subscribed: the end of a connection that never subscribed is no one's concern.
    const held: { subscription?: { close(): void } } = {};
    held.subscription = await this.hap.subscribe(
      port,
      pin,
      ids,
      (changes) => {
        // HAP batches events and their order within a batch is not the order of the changes: an
        // event says what changed, and the values are read again, as they are now. A press is
        // the event itself (a programmable switch has no value to read).
        let changed = false;
        for (const change of changes) {
          const hit = byId.get(`${change.aid}.${change.iid}`);
          if (!hit) continue;
          if (!hit.press) changed = true;
          else {
            const press = pressOf(change.value);
            if (press) this.context?.emit({ type: 'BUTTON_PRESSED', deviceId: hit.deviceId, press });
          }
        }
        if (changed) void this.poll();
      },
      () => {
        if (!held.subscription || this.subscription !== held.subscription || !this.context) return;
        this.subscription = undefined;
        this.resubscribeTimer = this.timers.setTimeout(() => {
          this.resubscribeTimer = undefined;
          void this.resubscribe().catch(() => undefined);
        }, 1000);
      },
    );
    // A later attempt (an import while this one connected) supersedes this one.
    if (attempt !== this.subscribing || !this.context) return held.subscription.close();
    this.subscription = held.subscription;
  }

  /** Accessories Homebridge serves that could be imported and are not yet (the bridge's own is not one), read again over HAP. */
  async importable(refresh: boolean): Promise<ImportableAccessory[]> {
    if (refresh || this.known.length === 0) this.known = await this.homebridge.accessories();
    return this.known
      .map((a) => ({ a, chars: characteristicsOf(a) }))
      .filter(({ a, chars }) => chars.length > 0 && this.store.find(`hb-${a.aid}`) === undefined)
      .map(({ a, chars }) => ({
        accessoryId: `hb-${a.aid}`,
        aid: a.aid,
        name: nameOf(a),
        imported: this.store.find(`hb-${a.aid}`) !== undefined,
        characteristics: chars.map((c) => ({ key: c.key, ...(c.format ? { format: c.format } : {}), writable: (c.perms ?? []).includes('pw'), ...(c.value !== undefined ? { value: valueOf(c, c.value) } : {}) })),
      }));
  }

  /**
   * Imports the accessory: one device per service (see `servicesOf`). Answers the id of the
   * logical device its first service became (driver device id `hb-<aid>`), once the registry has
   * taken every one of them.
   */
  async import(accessoryId: string): Promise<{ item: ImportedAccessory; deviceId: string; deviceIds: string[] }> {
    const accessory = (await this.homebridge.accessories()).find((a) => `hb-${a.aid}` === accessoryId);
    // Imported again (the same accessory): its devices keep their ids.
    const before = this.store.find(accessoryId);
    const units = accessory ? servicesOf(accessory, before ? unitsOf(before) : []) : [];
    if (!accessory || units.length === 0) throw accessoryHubErrors.ACCESSORY_NOT_FOUND({ accessoryId });
    const { item } = await this.store.save({ id: accessoryId, aid: accessory.aid, name: nameOf(accessory), services: units });
    this.remember(accessory);
    // Watched before the discoveries go out, so a registration cannot pass unseen.
    const registered = units.map((unit) => this.registered(unit.id));
    for (const unit of units) {
      const state = this.stateOf(item, unit);
      this.last.set(unit.id, state);
      this.discover(item, unit, state);
    }
    // From the answer on, its changes in Homebridge arrive as events.
    await this.resubscribe().catch(() => undefined);
    const deviceIds = await Promise.all(registered);
    if (deviceIds.some((id) => id === undefined)) throw accessoryHubErrors.IMPORTED_DEVICE_NOT_REGISTERED({ accessoryId });
    return { item, deviceId: deviceIds[0]!, deviceIds: deviceIds as string[] };
  }

  /** Undoes an import: each of its devices goes; answers the logical device of its first, when the registry has it. */
  async remove(accessoryId: string): Promise<{ item: ImportedAccessory; deviceId?: string }> {
    const record = this.store.find(accessoryId);
    if (!record) throw accessoryHubErrors.ACCESSORY_NOT_FOUND({ accessoryId });
    const units = unitsOf(record);
    const deviceId = this.devices.findByDriver(this.driverKey, units[0]?.id ?? accessoryId)?.id;
    const removed = await this.store.remove(accessoryId);
    for (const unit of units) {
      this.last.delete(unit.id);
      this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: unit.id });
    }
    void this.resubscribe().catch(() => undefined);
    return { item: removed, ...(deviceId ? { deviceId } : {}) };
  }

  /** The logical device id of one of its devices once the registry took its discovery (created, or brought back), or undefined after a bounded wait. */
  private registered(driverDeviceId: string): Promise<string | undefined> {
    return new Promise((resolve) => {
      const owner = {};
      const finish = (id: string | undefined) => {
        this.devices.events.removeOwner(owner);
        this.timers.clearTimeout(timer);
        resolve(id);
      };
      const seen = ({ device }: { device: { id: string; driverKey: string; driverDeviceId: string | null; removed: boolean } }) => {
        if (device.driverKey === this.driverKey && device.driverDeviceId === driverDeviceId && !device.removed) finish(device.id);
      };
      this.devices.events.on(owner, 'device.discovered', seen);
      this.devices.events.on(owner, 'device.updated', seen);
      const timer = this.timers.setTimeout(() => finish(undefined), REGISTER_TIMEOUT_MS);
    });
  }

  receive(message: ServerToDriverMessage): void {
    if (message.type !== 'ACTION' && message.type !== 'COMMAND_EXECUTE') return;
    void this.act(message.actionId, message.deviceId, message.command, message.params ?? {});
  }

  private find(deviceId: string): { record: ImportedAccessory; unit: ImportedService } | undefined {
    for (const record of this.store.list()) {
      const unit = unitsOf(record).find((u) => u.id === deviceId);
      if (unit) return { record, unit };
    }
    return undefined;
  }

  /** The HAP writes a command is: the mapping's for a known service, `set_<key> {value}` (and turn_on/turn_off) for a generic one. */
  private writesFor(record: ImportedAccessory, unit: ImportedService, command: string, params: Record<string, unknown>): { writes: Array<{ iid: number; value: unknown }> } | { problem: string } {
    if (unit.service !== 'generic') return serviceWrites(unit.service, this.serviceValues(record, unit), command, params);
    const key = command === 'turn_on' || command === 'turn_off' ? 'on' : command.startsWith('set_') ? command.slice(4) : undefined;
    const characteristic = unit.characteristics.find((c) => c.key === key && c.writable);
    if (!characteristic) return { problem: `${command} is not a command of this accessory` };
    const value = command === 'turn_on' ? true : command === 'turn_off' ? false : params.value;
    if (value === undefined) return { problem: `${command} needs params.value` };
    return { writes: [{ iid: characteristic.iid, value }] };
  }

  private async act(actionId: string, deviceId: string, command: string, params: Record<string, unknown>): Promise<void> {
    const found = this.find(deviceId);
    if (!found) return this.context?.fail(actionId, 'rejected', `${deviceId} is not an imported accessory`);
    const { record, unit } = found;
    const planned = this.writesFor(record, unit, command, params);
    if ('problem' in planned) return this.context?.fail(actionId, 'rejected', planned.problem);
    const settings = await this.homebridge.settings();
    try {
      await this.hap.write(
        settings.port,
        settings.pin,
        planned.writes.map((w) => ({ aid: record.aid, iid: w.iid, value: w.value })),
      );
    } catch (err) {
      return this.context?.fail(actionId, 'unreachable', (err as Error).message);
    }
    // What was written is the state until Homebridge says otherwise (its events, the next poll).
    for (const w of planned.writes) this.values.set(`${record.aid}.${w.iid}`, w.value);
    const changed = this.report(record, unit);
    this.context?.emit({ type: 'ACTION_RESULT', actionId, ok: true, result: changed });
  }

  /** Announces one device of an import: its class, attributes and standard commands, or as a generic device. */
  private discover(record: ImportedAccessory, unit: ImportedService, state: Record<string, unknown>): void {
    const properties = { aid: record.aid, ...(unit.iid > 0 ? { iid: unit.iid } : {}), hapService: unit.service, accessory: { aid: record.aid, name: record.name } };
    if (unit.service === 'generic') {
      this.context?.emit({ type: 'DEVICE_DISCOVERED', device: { id: unit.id, name: unit.name, category: 'accessory', commands: genericCommands(unit), state, properties } });
      return;
    }
    const { deviceClass, attributes, commands } = describeService(unit.service, unit.characteristics);
    this.context?.emit({ type: 'DEVICE_DISCOVERED', device: { id: unit.id, name: unit.name, category: 'accessory', deviceClass, attributes: { ...attributes }, commands, state, properties } });
  }

  /** The service's characteristics with the values last read. */
  private serviceValues(record: ImportedAccessory, unit: ImportedService) {
    return serviceContext(unit.characteristics, (iid) => this.values.get(`${record.aid}.${iid}`));
  }

  /** A device's state from the values last read: the model's keys for a known service, the characteristics' keys for a generic one. */
  private stateOf(record: ImportedAccessory, unit: ImportedService): Record<string, unknown> {
    if (unit.service !== 'generic') return serviceState(unit.service, this.serviceValues(record, unit));
    const state: Record<string, unknown> = {};
    for (const c of unit.characteristics) {
      const value = this.values.get(`${record.aid}.${c.iid}`);
      if (value !== undefined) state[c.key] = valueOf(c, value);
    }
    return state;
  }

  /** Reports what changed in a device's state since the last report; answers the change. */
  private report(record: ImportedAccessory, unit: ImportedService): Record<string, unknown> {
    const state = this.stateOf(record, unit);
    const before = this.last.get(unit.id) ?? {};
    const changed = Object.fromEntries(Object.entries(state).filter(([k, v]) => before[k] !== v));
    this.last.set(unit.id, state);
    if (Object.keys(changed).length > 0) this.context?.emit({ type: 'STATE_UPDATE', deviceId: unit.id, state: changed });
    return changed;
  }

  private remember(accessory: HapAccessory): void {
    for (const service of accessory.services) for (const c of service.characteristics) if (c.value !== undefined) this.values.set(`${accessory.aid}.${c.iid}`, c.value);
  }

  private schedule(delay: number): void {
    if (!this.context) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.poll().finally(() => this.schedule(this.pollMs));
    }, delay);
  }

  /** Reads the imported accessories' characteristics over HAP and reports what changed; one read at a time, and one more if asked meanwhile. */
  private poll(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = undefined;
      if (this.readAgain) {
        this.readAgain = false;
        void this.poll();
      }
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    const imported = this.store.list();
    if (imported.length === 0 || !this.context) return;
    let accessories: HapAccessory[];
    try {
      accessories = await this.homebridge.accessories();
    } catch {
      for (const record of imported) for (const unit of unitsOf(record)) this.context?.setOnline(unit.id, false);
      return;
    }
    this.known = accessories;
    let servicesChanged = false;
    for (const snapshot of imported) {
      let record = snapshot;
      const accessory = accessories.find((a) => a.aid === record.aid);
      if (!accessory) {
        for (const unit of unitsOf(record)) this.context?.setOnline(unit.id, false);
        continue;
      }
      this.remember(accessory);
      const units = servicesOf(accessory, unitsOf(record));
      // The accessory's services changed (a plugin update; an import made before services): its
      // devices follow, each keeping its id.
      if (units.length > 0 && canonical(units) !== canonical(record.services)) {
        if (!this.store.find(record.id)) continue;
        const gone = unitsOf(record).filter((old) => !units.some((u) => u.id === old.id));
        record = (await this.store.save({ id: record.id, aid: record.aid, name: nameOf(accessory), services: units })).item;
        for (const unit of gone) {
          this.last.delete(unit.id);
          this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: unit.id });
        }
        for (const unit of units) {
          const state = this.stateOf(record, unit);
          this.last.set(unit.id, state);
          this.discover(record, unit, state);
        }
        servicesChanged = true;
      }
      for (const unit of unitsOf(record)) {
        this.context?.setOnline(unit.id, true);
        this.report(record, unit);
      }
    }
    if (servicesChanged || (!this.subscription && !this.resubscribeTimer)) void this.resubscribe().catch(() => undefined);
  }
}
