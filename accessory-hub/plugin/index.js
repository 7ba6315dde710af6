/* global module, require, fetch, TextDecoder, AbortController, AbortSignal */
'use strict';

// A CommonJS plugin, as Homebridge 1.x loads them.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { specOf, signatureOf, PRESSES } = require('./services.js');

/**
 * The Home Control hub's devices as HomeKit accessories. The hub installs this platform into the
 * Homebridge it manages and configures it with its URL and a token of scope `plugin-bridge`:
 *   - bootstrap: the devices to expose, each with its HAP service, class, attributes and reading
 *     (GET /accessory-hub/plugin/bootstrap);
 *   - live: an SSE stream (GET /accessory-hub/plugin/state/stream), reconnected when it drops:
 *     `ready` (every device: accessories added, rebuilt or removed to match), `device` (one added or
 *     changed), `state` (its reading and online), `removed`, `button` (a press);
 *   - HomeKit writes: the class's standard commands, POST /accessory-hub/plugin/devices/:id/command;
 *   - the other plugins' accessories, read from this bridge over HAP, reported with
 *     POST /accessory-hub/plugin/external-accessories/sync;
 *   - the hub's import commands, pulled and acknowledged (at least once).
 * Which characteristics each service has and how they read and write is in services.js.
 */
const PLUGIN = 'homebridge-home-control-bridge';
const PLATFORM = 'HomeControlBridge';
const RETRY_MS = 2000;
const PULL_MS = 2000;
/** Writes of one HomeKit request that make one command (hue and saturation) are gathered this long. */
const MERGE_MS = 30;
/** What `refresh` last pushed for a device that is offline ("No Response"). */
const OFFLINE = Symbol('offline');

module.exports = (api) => {
  api.registerPlatform(PLUGIN, PLATFORM, HomeControlPlatform);
};

class HomeControlPlatform {
  constructor(log, config, api) {
    this.log = log;
    this.config = config || {};
    this.api = api;
    /** Our accessories by UUID: restored from Homebridge's cache, or registered since. */
    this.cached = new Map();
    /** Hub devices by id: {device, spec, local}. */
    this.devices = new Map();
    /** Accessories whose handlers this process has set. */
    this.bound = new Set();
    this.batches = new Map();
    this.stopped = false;
    this.timers = new Set();
    api.on('didFinishLaunching', () => this.start());
    api.on('shutdown', () => {
      this.stopped = true;
      if (this.stream) this.stream.abort();
      for (const t of this.timers) clearTimeout(t);
    });
  }

  configureAccessory(accessory) {
    this.cached.set(accessory.UUID, accessory);
  }

  later(fn, ms) {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  async call(method, path, body) {
    const res = await fetch(`${this.config.hubUrl}/v1/os/accessory-hub/plugin${path}`, {
      method,
      headers: { authorization: `Bearer ${this.config.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10000),
    });
    const answer = await res.json().catch(() => ({}));
    if (!res.ok) {
      const err = new Error(`${method} ${path}: ${res.status} ${answer.error ? answer.error.code : ''}`);
      err.status = res.status;
      throw err;
    }
    return answer;
  }

  async start() {
    if (!this.config.hubUrl || !this.config.token) return this.log.warn('no hub URL or token configured; nothing to bridge');
    try {
      const { devices } = await this.call('GET', '/bootstrap');
      this.sync(devices);
    } catch (err) {
      this.log.warn(`bootstrap failed (${err.message}); retrying`);
      return this.later(() => this.start(), RETRY_MS);
    }
    this.follow();
    this.pull();
    this.later(() => this.reportExternal(), 1000);
  }

  uuidOf(deviceId) {
    return this.api.hap.uuid.generate(`home-control:${deviceId}`);
  }

  /** Accessories for exactly these devices: added, rebuilt or updated, and the others (cached ones the hub no longer has) unregistered. */
  sync(devices) {
    const wanted = new Set();
    for (const device of devices) {
      try {
        this.upsert(device);
        wanted.add(this.uuidOf(device.id));
      } catch (err) {
        this.log.warn(`${device.name}: not bridged (${err.message})`);
      }
    }
    this.unregister([...this.cached.values()].filter((a) => !wanted.has(a.UUID)));
    for (const id of [...this.devices.keys()]) if (!wanted.has(this.uuidOf(id))) this.devices.delete(id);
    this.log.info(`bridging ${wanted.size} hub device(s)`);
  }

  /**
   * One device, added or changed: a new accessory, one built anew when its service changed (its
   * class did), reconfigured in place when its characteristics, ranges or name did; then its values.
   */
  upsert(device) {
    const spec = specOf(this.api.hap, device);
    if (!spec) return this.remove(device.id);
    const entry = this.devices.get(device.id) || { local: {} };
    entry.device = { ...device, reading: device.reading || {} };
    entry.spec = spec;
    // Targets HomeKit asked for hold until the device reaches them.
    for (const [key, target] of Object.entries(entry.local)) if (target.until(entry.device.reading)) delete entry.local[key];
    this.devices.set(device.id, entry);
    const uuid = this.uuidOf(device.id);
    const signature = signatureOf(device, spec);
    let accessory = this.cached.get(uuid);
    if (accessory && accessory.context.service !== device.service) {
      this.log.info(`${device.name}: now a ${device.service}; its accessory is built anew`);
      this.unregister([accessory]);
      accessory = undefined;
    }
    if (!accessory) {
      accessory = new this.api.platformAccessory(device.name, uuid);
      this.configure(accessory, entry.device, spec, signature);
      this.cached.set(uuid, accessory);
      this.api.registerPlatformAccessories(PLUGIN, PLATFORM, [accessory]);
      this.log.info(`${device.name}: bridged as a ${device.service}`);
    } else if (!this.bound.has(uuid) || accessory.context.signature !== signature) {
      this.configure(accessory, entry.device, spec, signature);
      this.api.updatePlatformAccessories([accessory]);
    }
    this.refresh(device.id);
  }

  /** The accessory's service and characteristics as the spec says; handlers look the device up when called, so they never go stale. */
  configure(accessory, device, spec, signature) {
    const { Service: S, Characteristic: C } = this.api.hap;
    accessory.context.deviceId = device.id;
    accessory.context.service = device.service;
    accessory.context.signature = signature;
    if (accessory.displayName !== device.name) accessory.updateDisplayName(device.name);
    const info = accessory.getService(S.AccessoryInformation);
    if (info) {
      info
        .setCharacteristic(C.Name, device.name)
        .setCharacteristic(C.Manufacturer, 'Home Control')
        .setCharacteristic(C.Model, device.deviceClass || 'device')
        .setCharacteristic(C.SerialNumber, String(device.id).slice(0, 64));
    }
    for (const other of [...accessory.services]) {
      if (other.UUID !== S.AccessoryInformation.UUID && other.UUID !== spec.service.UUID) accessory.removeService(other);
    }
    const service = accessory.getService(spec.service) || accessory.addService(spec.service, device.name);
    service.getCharacteristic(C.Name).updateValue(device.name);
    const wanted = new Set(spec.chars.map((c) => c.type.UUID));
    for (const characteristic of [...service.characteristics]) {
      if (characteristic.UUID === C.Name.UUID || wanted.has(characteristic.UUID)) continue;
      if (service.optionalCharacteristics.some((o) => o.UUID === characteristic.UUID)) service.removeCharacteristic(characteristic);
    }
    for (const ch of spec.chars) {
      const characteristic = service.getCharacteristic(ch.type);
      if (ch.props) {
        // Its value within the new range first, so the new props never meet an old default outside it.
        if (ch.get) characteristic.value = ch.get(device.reading, this.devices.get(device.id)?.local || {});
        characteristic.setProps(ch.props);
      }
      if (ch.get) characteristic.onGet(() => this.read(device.id, ch.type));
      if (ch.set) characteristic.onSet((value) => this.write(device.id, ch.type, value));
    }
    this.bound.add(accessory.UUID);
    // Characteristics were set up anew: every value is pushed again.
    const entry = this.devices.get(device.id);
    if (entry) entry.pushed = undefined;
  }

  charOf(deviceId, type) {
    const entry = this.devices.get(deviceId);
    const ch = entry && entry.spec.chars.find((c) => c.type.UUID === type.UUID);
    return ch ? { entry, ch } : undefined;
  }

  unavailable() {
    return new this.api.hap.HapStatusError(this.api.hap.HAPStatus.SERVICE_COMMUNICATION_FAILURE);
  }

  /** A HAP read: the value from the device's last reading (an offline device answers "No Response"). */
  read(deviceId, type) {
    const found = this.charOf(deviceId, type);
    if (!found || !found.ch.get || !found.entry.device.online) throw this.unavailable();
    return found.ch.get(found.entry.device.reading, found.entry.local);
  }

  /** A HAP write: the class's standard command to the hub (its reading assumed until the hub tells the truth). */
  async write(deviceId, type, value) {
    const { HapStatusError, HAPStatus } = this.api.hap;
    const found = this.charOf(deviceId, type);
    if (!found || !found.ch.set) throw this.unavailable();
    const { entry, ch } = found;
    const out = ch.set(value, entry.device.reading);
    if (!out) return;
    if (out.local) entry.local[out.local.key] = out.local;
    const before = entry.device;
    const assumed = out.reading ? { ...before.reading, ...out.reading } : undefined;
    if (assumed) entry.device = { ...before, reading: assumed };
    try {
      await (out.merge ? this.batched(deviceId, out) : this.send(deviceId, out.command, out.params));
    } catch (err) {
      if (out.local && entry.local[out.local.key] === out.local) delete entry.local[out.local.key];
      // What was assumed goes, unless the hub has said something since.
      if (assumed && entry.device.reading === assumed) entry.device = { ...entry.device, reading: before.reading };
      this.log.warn(`${before.name}: ${out.command} failed (${err.message})`);
      throw new HapStatusError(err.status === 400 ? HAPStatus.INVALID_VALUE_IN_REQUEST : err.status === 403 ? HAPStatus.INSUFFICIENT_PRIVILEGES : HAPStatus.SERVICE_COMMUNICATION_FAILURE);
    }
  }

  send(deviceId, command, params) {
    return this.call('POST', `/devices/${encodeURIComponent(deviceId)}/command`, { command, ...(params ? { params } : {}) });
  }

  /** Writes of one request that make one command (hue and saturation) go as one. */
  batched(deviceId, out) {
    const key = `${deviceId}:${out.merge}`;
    const open = this.batches.get(key);
    if (open && open.command === out.command) {
      Object.assign(open.params, out.own || {});
      return open.done;
    }
    const batch = { command: out.command, params: { ...(out.params || {}) } };
    batch.done = new Promise((resolve) => setTimeout(resolve, MERGE_MS)).then(() => {
      if (this.batches.get(key) === batch) this.batches.delete(key);
      return this.send(deviceId, batch.command, batch.params);
    });
    this.batches.set(key, batch);
    return batch.done;
  }

  /**
   * Pushes the device's values to HomeKit (events to subscribed controllers): only those that
   * changed since the last push, since each update costs HAP-NodeJS an event to every controller.
   */
  refresh(deviceId) {
    const entry = this.devices.get(deviceId);
    const accessory = this.cached.get(this.uuidOf(deviceId));
    const service = entry && accessory && accessory.getService(entry.spec.service);
    if (!service) return;
    const pushed = entry.pushed || (entry.pushed = new Map());
    for (const ch of entry.spec.chars) {
      if (!ch.get) continue;
      const value = entry.device.online ? ch.get(entry.device.reading, entry.local) : OFFLINE;
      if (pushed.has(ch.type.UUID) && pushed.get(ch.type.UUID) === value) continue;
      pushed.set(ch.type.UUID, value);
      service.getCharacteristic(ch.type).updateValue(value === OFFLINE ? this.unavailable() : value);
    }
  }

  /** A new reading (or presence) of a device the plugin shows: its values, not its accessory's shape. */
  updateState(data) {
    const entry = this.devices.get(data.deviceId);
    if (!entry) return;
    const next = { ...entry.device };
    for (const key of ['reading', 'on', 'online']) if (data[key] !== undefined) next[key] = data[key];
    next.reading = next.reading || {};
    entry.device = next;
    for (const [key, target] of Object.entries(entry.local)) if (target.until(next.reading)) delete entry.local[key];
    this.refresh(data.deviceId);
  }

  remove(deviceId) {
    const accessory = this.cached.get(this.uuidOf(deviceId));
    const entry = this.devices.get(deviceId);
    this.devices.delete(deviceId);
    if (accessory) {
      this.unregister([accessory]);
      this.log.info(`${entry ? entry.device.name : deviceId}: no longer bridged`);
    }
  }

  unregister(accessories) {
    if (accessories.length === 0) return;
    this.api.unregisterPlatformAccessories(PLUGIN, PLATFORM, accessories);
    for (const a of accessories) {
      this.cached.delete(a.UUID);
      this.bound.delete(a.UUID);
    }
  }

  /** A hub button press: a ProgrammableSwitchEvent (0 single, 1 double, 2 long). */
  press({ deviceId, press }) {
    const entry = this.devices.get(deviceId);
    const accessory = this.cached.get(this.uuidOf(deviceId));
    if (!entry || !accessory || entry.device.service !== 'StatelessProgrammableSwitch' || PRESSES[press] === undefined) return;
    const service = accessory.getService(this.api.hap.Service.StatelessProgrammableSwitch);
    if (!service) return;
    const characteristic = service.getCharacteristic(this.api.hap.Characteristic.ProgrammableSwitchEvent);
    if (typeof characteristic.sendEventNotification === 'function') characteristic.sendEventNotification(PRESSES[press]);
    else characteristic.updateValue(PRESSES[press]);
  }

  /** A stream event: the devices as a whole, one device, its state, its leaving, a press. */
  handle(event, data) {
    switch (event) {
      case 'ready':
        return this.sync(data.devices || []);
      case 'device':
        return this.upsert(data);
      case 'state':
        return this.updateState(data);
      case 'removed':
        return this.remove(data.deviceId);
      case 'button':
        return this.press(data);
      default:
        return undefined;
    }
  }

  /** The live stream: every (re)connection starts with `ready`, which brings the accessories back in line with the hub. */
  async follow() {
    if (this.stopped) return;
    this.stream = new AbortController();
    try {
      const res = await fetch(`${this.config.hubUrl}/v1/os/accessory-hub/plugin/state/stream`, { headers: { authorization: `Bearer ${this.config.token}`, accept: 'text/event-stream' }, signal: this.stream.signal });
      if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block);
          const data = /^data: (.*)$/m.exec(block);
          if (!event || !data) continue;
          try {
            this.handle(event[1], JSON.parse(data[1]));
          } catch (err) {
            this.log.warn(`stream event ${event[1]}: ${err.message}`);
          }
        }
      }
    } catch (err) {
      if (!this.stopped) this.log.warn(`state stream ended (${err.message}); reconnecting`);
    }
    this.later(() => this.follow(), RETRY_MS);
  }

  /** The hub's import commands: acknowledged once taken in (until then every pull answers them again). */
  async pull() {
    try {
      const { commands } = await this.call('GET', '/import-commands');
      for (const command of commands) {
        this.log.info(`hub asks to ${command.action} accessory ${command.accessoryId}`);
        await this.call('POST', `/import-commands/${encodeURIComponent(command.id)}/ack`, {});
      }
    } catch (err) {
      this.log.warn(`import commands: ${err.message}`);
    }
    this.later(() => this.pull(), PULL_MS);
  }

  /** The accessories of the other plugins on this bridge, read over HAP (insecure mode on loopback). */
  async reportExternal() {
    if (!this.config.hapPort || !this.config.hapPin) return;
    try {
      const res = await fetch(`http://127.0.0.1:${this.config.hapPort}/accessories`, { headers: { authorization: this.config.hapPin }, signal: AbortSignal.timeout(5000) });
      const { accessories } = await res.json();
      const ours = new Set([...this.devices.values()].map((d) => d.device.name));
      const external = accessories
        .filter((a) => a.aid !== 1)
        .map((a) => {
          const name = a.services.flatMap((s) => s.characteristics).find((c) => c.type === '23');
          return { uuid: `aid-${a.aid}`, displayName: name ? String(name.value) : `Accessory ${a.aid}`, services: a.services.map((s) => s.type) };
        })
        .filter((a) => !ours.has(a.displayName));
      await this.call('POST', '/external-accessories/sync', { accessories: external });
    } catch (err) {
      this.log.warn(`external accessories: ${err.message}`);
    }
    this.later(() => this.reportExternal(), 30000);
  }
}
