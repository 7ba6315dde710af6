/* global module, fetch, TextDecoder, AbortController, AbortSignal */
'use strict';

/**
 * The Home Control hub's devices as HomeKit accessories. The hub installs this platform into the
 * Homebridge it manages and configures it with its URL and a token of scope `plugin-bridge`:
 *   - bootstrap: the devices to expose (GET /accessory-hub/plugin/bootstrap);
 *   - live state: an SSE stream (GET /accessory-hub/plugin/state/stream), reconnected when it drops;
 *   - HomeKit writes: POST /accessory-hub/plugin/devices/:id/command;
 *   - the other plugins' accessories, read from this bridge over HAP, reported with
 *     POST /accessory-hub/plugin/external-accessories/sync;
 *   - the hub's import commands, pulled and acknowledged (at least once).
 */
const PLUGIN = 'homebridge-home-control-bridge';
const PLATFORM = 'HomeControlBridge';
const RETRY_MS = 2000;
const PULL_MS = 2000;

module.exports = (api) => {
  api.registerPlatform(PLUGIN, PLATFORM, HomeControlPlatform);
};

class HomeControlPlatform {
  constructor(log, config, api) {
    this.log = log;
    this.config = config || {};
    this.api = api;
    this.cached = new Map();
    this.devices = new Map();
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
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${answer.error ? answer.error.code : ''}`);
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

  /** Accessories for the hub's devices; cached ones the hub no longer has are unregistered. */
  sync(devices) {
    const { Service, Characteristic, uuid } = this.api.hap;
    const wanted = new Set();
    const fresh = [];
    for (const device of devices) {
      const id = uuid.generate(`home-control:${device.id}`);
      wanted.add(id);
      this.devices.set(device.id, device);
      let accessory = this.cached.get(id);
      if (!accessory) {
        accessory = new this.api.platformAccessory(device.name, id);
        accessory.context.deviceId = device.id;
        fresh.push(accessory);
        this.cached.set(id, accessory);
      }
      const service = accessory.getService(Service.Switch) || accessory.addService(Service.Switch, device.name);
      service
        .getCharacteristic(Characteristic.On)
        .onGet(() => Boolean((this.devices.get(device.id) || {}).on))
        .onSet(async (value) => {
          await this.call('POST', `/devices/${encodeURIComponent(device.id)}/command`, { on: Boolean(value) });
          this.devices.set(device.id, { ...this.devices.get(device.id), on: Boolean(value) });
        });
    }
    if (fresh.length > 0) this.api.registerPlatformAccessories(PLUGIN, PLATFORM, fresh);
    const gone = [...this.cached.values()].filter((a) => !wanted.has(a.UUID));
    if (gone.length > 0) this.api.unregisterPlatformAccessories(PLUGIN, PLATFORM, gone);
    for (const a of gone) this.cached.delete(a.UUID);
    this.log.info(`bridging ${devices.length} hub device(s)`);
  }

  /** The live state stream: each `state` event updates the accessory's On. */
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
          if (event && data && event[1] === 'state') this.update(JSON.parse(data[1]));
        }
      }
    } catch (err) {
      if (!this.stopped) this.log.warn(`state stream ended (${err.message}); reconnecting`);
    }
    this.later(() => this.follow(), RETRY_MS);
  }

  update(change) {
    const device = this.devices.get(change.deviceId);
    if (!device) return;
    this.devices.set(change.deviceId, { ...device, on: change.on });
    const accessory = this.cached.get(this.api.hap.uuid.generate(`home-control:${change.deviceId}`));
    const service = accessory && accessory.getService(this.api.hap.Service.Switch);
    if (service) service.updateCharacteristic(this.api.hap.Characteristic.On, Boolean(change.on));
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
      const ours = new Set([...this.devices.values()].map((d) => d.name));
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
