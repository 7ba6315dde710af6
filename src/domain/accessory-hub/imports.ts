import type { TimerHandle, Timers } from '../../platform/clock.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import type { BuiltInDriver, BuiltInDriverContext } from '../drivers/builtin.js';
import type { ServerToDriverMessage } from '../drivers/messages.js';
import type { DomainEventBus } from '../events.js';
import { accessoryHubErrors } from './errors.js';
import type { HomebridgeSupervisor } from './homebridge.js';
import type { HapAccessory, HapCharacteristic, HapClient } from './ports.js';

/** HAP's Accessory Information and Protocol Information services: what an accessory is, not what it does. */
const INFORMATION_SERVICE = new Set(['3E', '0000003E-0000-1000-8000-0026BB765291', 'A2', '000000A2-0000-1000-8000-0026BB765291']);

/** One characteristic of an imported accessory, by the state key it became. */
export interface ImportedCharacteristic {
  key: string;
  iid: number;
  format?: string;
  writable: boolean;
  minValue?: number;
  maxValue?: number;
}

/** An accessory made a logical device of the hub (driver `accessory-hub`, device id = the accessory id). */
export interface ImportedAccessory {
  /** `hb-<aid>`: Homebridge keeps an accessory's aid across restarts. */
  id: string;
  aid: number;
  name: string;
  characteristics: ImportedCharacteristic[];
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

/** How long an import waits for the registry to take its device (a local write: milliseconds). */
const REGISTER_TIMEOUT_MS = 5000;

const keyOf = (c: HapCharacteristic) => (c.description ?? `c_${c.type}`).toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '') || `c_${c.iid}`;
const valueOf = (c: { format?: string }, value: unknown) => (c.format === 'bool' ? value === true || value === 1 : value);
const nameOf = (a: HapAccessory) => {
  const name = a.services.flatMap((s) => s.characteristics).find((c) => c.type === '23' || c.type.startsWith('00000023-'));
  return typeof name?.value === 'string' ? name.value : `Accessory ${a.aid}`;
};

/** What an accessory does: the characteristics of its services other than its information. */
function characteristicsOf(a: HapAccessory): Array<HapCharacteristic & { key: string }> {
  const out: Array<HapCharacteristic & { key: string }> = [];
  const seen = new Set<string>();
  for (const service of a.services) {
    if (INFORMATION_SERVICE.has(service.type)) continue;
    for (const c of service.characteristics) {
      const key = keyOf(c);
      if (key === 'name' || seen.has(key) || !(c.perms ?? []).some((p) => p === 'pr' || p === 'pw')) continue;
      seen.add(key);
      out.push({ ...c, key });
    }
  }
  return out;
}

/**
 * Homebridge's accessories as hub devices: an imported accessory is a logical device of the
 * built-in driver `accessory-hub`; its characteristics are its state (read over HAP every poll),
 * its writable ones its commands (`set_<key>` with `{value}`, and `turn_on`/`turn_off` for `on`),
 * written back over HAP. While Homebridge is down the devices are offline.
 */
export class AccessoryImports implements BuiltInDriver {
  readonly driverKey = 'accessory-hub';
  private context: BuiltInDriverContext | undefined;
  private timer: TimerHandle | undefined;
  private last = new Map<string, Record<string, unknown>>();
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
    for (const imported of this.store.list()) this.discover(imported, {});
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
   * (Apple Home, the plugin itself) reaches the state authority as it happens. When the
   * connection ends (Homebridge restarted) it is made again; the poll stays as the safety net.
   */
  private subscribing = 0;

  private async resubscribe(): Promise<void> {
    const attempt = ++this.subscribing;
    this.subscription?.close();
    this.subscription = undefined;
    const imported = this.store.list();
    if (!this.context || imported.length === 0) return;
    const { port, pin } = await this.homebridge.settings();
    const byId = new Map<string, { deviceId: string; characteristic: ImportedCharacteristic }>();
    for (const i of imported) for (const c of i.characteristics) byId.set(`${i.aid}.${c.iid}`, { deviceId: i.id, characteristic: c });
    const ids = [...byId.keys()].map((k) => ({ aid: Number(k.split('.')[0]), iid: Number(k.split('.')[1]) }));
    // Filled once subscribed: the end of a connection that never subscribed is no one's concern.
    const held: { subscription?: { close(): void } } = {};
    held.subscription = await this.hap.subscribe(
      port,
      pin,
      ids,
      (changes) => {
        // HAP batches events and their order within a batch is not the order of the changes: an
        // event says what changed, and the values are read again, as they are now.
        if (changes.some((c) => byId.has(`${c.aid}.${c.iid}`))) void this.poll();
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

  /** Imports the accessory; answers it with the id of the logical device it became (the driver device id is the accessory id). */
  async import(accessoryId: string): Promise<{ item: ImportedAccessory; deviceId: string }> {
    const accessory = (await this.homebridge.accessories()).find((a) => `hb-${a.aid}` === accessoryId);
    const chars = accessory ? characteristicsOf(accessory) : [];
    if (!accessory || chars.length === 0) throw accessoryHubErrors.ACCESSORY_NOT_FOUND({ accessoryId });
    const { item } = await this.store.save({
      id: accessoryId,
      aid: accessory.aid,
      name: nameOf(accessory),
      characteristics: chars.map((c) => ({
        key: c.key,
        iid: c.iid,
        writable: (c.perms ?? []).includes('pw'),
        ...(c.format ? { format: c.format } : {}),
        ...(c.minValue !== undefined ? { minValue: c.minValue } : {}),
        ...(c.maxValue !== undefined ? { maxValue: c.maxValue } : {}),
      })),
    });
    const state: Record<string, unknown> = {};
    for (const c of chars) if (c.value !== undefined) state[c.key] = valueOf(c, c.value);
    // Watched before the discovery goes out, so its registration cannot pass unseen.
    const registered = this.registered(accessoryId);
    this.discover(item, state);
    // From the answer on, its changes in Homebridge arrive as events.
    await this.resubscribe().catch(() => undefined);
    const deviceId = await registered;
    if (!deviceId) throw accessoryHubErrors.IMPORTED_DEVICE_NOT_REGISTERED({ accessoryId });
    return { item, deviceId };
  }

  /** Undoes an import; answers the logical device it was, when the registry has it. */
  async remove(accessoryId: string): Promise<{ item: ImportedAccessory; deviceId?: string }> {
    if (!this.store.find(accessoryId)) throw accessoryHubErrors.ACCESSORY_NOT_FOUND({ accessoryId });
    const deviceId = this.devices.findByDriver(this.driverKey, accessoryId)?.id;
    const removed = await this.store.remove(accessoryId);
    this.last.delete(accessoryId);
    this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: accessoryId });
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

  private async act(actionId: string, deviceId: string, command: string, params: Record<string, unknown>): Promise<void> {
    const imported = this.store.find(deviceId);
    const key = command === 'turn_on' || command === 'turn_off' ? 'on' : command.startsWith('set_') ? command.slice(4) : undefined;
    const characteristic = imported?.characteristics.find((c) => c.key === key && c.writable);
    if (!imported || !characteristic) return this.context?.fail(actionId, 'rejected', `${command} is not a command of this accessory`);
    const value = command === 'turn_on' ? true : command === 'turn_off' ? false : params.value;
    if (value === undefined) return this.context?.fail(actionId, 'rejected', `${command} needs params.value`);
    const settings = await this.homebridge.settings();
    try {
      await this.hap.write(settings.port, settings.pin, [{ aid: imported.aid, iid: characteristic.iid, value }]);
    } catch (err) {
      return this.context?.fail(actionId, 'unreachable', (err as Error).message);
    }
    this.context?.emit({ type: 'STATE_UPDATE', deviceId, state: { [characteristic.key]: valueOf(characteristic, value) } });
    this.context?.emit({ type: 'ACTION_RESULT', actionId, ok: true, result: { [characteristic.key]: value } });
  }

  private discover(imported: ImportedAccessory, state: Record<string, unknown>): void {
    const commands = imported.characteristics
      .filter((c) => c.writable)
      .flatMap((c) => [
        { name: `set_${c.key}`, label: `Set ${c.key.replace(/_/g, ' ')}`, params: { type: 'object', properties: { value: c.format === 'bool' ? { type: 'boolean' } : { type: 'number', ...(c.minValue !== undefined ? { minimum: c.minValue } : {}), ...(c.maxValue !== undefined ? { maximum: c.maxValue } : {}) } }, required: ['value'] } },
        ...(c.key === 'on' ? [{ name: 'turn_on', label: 'On' }, { name: 'turn_off', label: 'Off' }] : []),
      ]);
    this.context?.emit({ type: 'DEVICE_DISCOVERED', device: { id: imported.id, name: imported.name, category: 'accessory', commands, state, properties: { aid: imported.aid } } });
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
      for (const i of imported) this.context?.setOnline(i.id, false);
      return;
    }
    this.known = accessories;
    if (!this.subscription && !this.resubscribeTimer) void this.resubscribe().catch(() => undefined);
    for (const i of imported) {
      const accessory = accessories.find((a) => a.aid === i.aid);
      if (!accessory) {
        this.context?.setOnline(i.id, false);
        continue;
      }
      const values: Record<string, unknown> = {};
      for (const c of characteristicsOf(accessory)) if (c.value !== undefined) values[c.key] = valueOf(c, c.value);
      const before = this.last.get(i.id) ?? {};
      const changed = Object.fromEntries(Object.entries(values).filter(([k, v]) => before[k] !== v));
      this.last.set(i.id, values);
      this.context?.setOnline(i.id, true);
      if (Object.keys(changed).length > 0) this.context?.emit({ type: 'STATE_UPDATE', deviceId: i.id, state: changed });
    }
  }
}
