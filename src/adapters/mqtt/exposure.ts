import { createHash } from 'node:crypto';
import { homeAssistantBinarySensorClass, homeAssistantSensorClass } from '../../domain/devices/capabilities.js';
import { DeviceFeed } from '../../domain/devices/device-feed.js';
import type { DeviceView } from '../../domain/devices/device-service.js';
import type { DomainEventBus } from '../../domain/events.js';
import type { TimerHandle, Timers } from '../../platform/clock.js';
import { messageOf } from '../../platform/network-failures.js';
import type { MqttConnection } from './connection.js';
import { MQTT_DRIVER_KEY } from './discovery-integration.js';

export interface MqttExposureOptions {
  connection: MqttConnection;
  /** The discovery prefix the configs go under (MQTT_DISCOVERY_PREFIX). */
  prefix: string;
  /** Where this hub's state, command and availability topics live: `hcs/<node>`. */
  baseTopic: string;
  /** This hub's node id in discovery topics and unique ids (several hubs may share a broker). */
  nodeId: string;
  devices(): readonly DeviceView[];
  device(id: string): DeviceView | undefined;
  events: DomainEventBus;
  /** Runs a standard command as the `mqtt` caller (checked, audited, answered by the driver). */
  command(deviceId: string, command: string, params: Record<string, unknown>): Promise<unknown>;
  timers: Timers;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * After connecting: how long the broker's retained copies of this hub's configs get to arrive
 * before those of devices the hub no longer has are cleared.
 */
const STALE_SWEEP_MS = 2000;

/** Topics a hub command may arrive on, and the longest payload taken there. */
const MAX_COMMAND_BYTES = 4096;

type Exposed = { component: string; objectId: string; config: Record<string, unknown> };

/**
 * A device id as one MQTT topic level and object id: letters, digits, `_` and `-` only. An id
 * that had to change (or be cut) gets a hash of the whole, so two ids never share topics.
 */
export function objectIdOf(deviceId: string): string {
  const plain = deviceId.replace(/[^A-Za-z0-9_-]/g, '_');
  if (plain === deviceId && plain.length <= 100) return plain;
  return `${plain.slice(0, 80)}_${createHash('sha256').update(deviceId).digest('hex').slice(0, 12)}`;
}

const has = (d: DeviceView, command: string) => d.commands.length === 0 || d.commands.some((c) => c.name === command);

/**
 * The hub's own devices on MQTT (MQTT_EXPOSE=on): a retained Home Assistant discovery config per
 * device, its state as retained JSON, its availability, and command topics whose messages become
 * the class's standard commands, run as the `mqtt` caller. Home Assistant, Node-RED or any MQTT
 * dashboard then sees and commands them. Devices that came from MQTT are not sent back.
 */
export class MqttExposure {
  private readonly published = new Map<string, { configTopic: string; config: string; state: string; online: boolean }>();
  private feed: DeviceFeed | undefined;
  private readonly unhook: Array<() => void> = [];
  private readonly warned = new Set<string>();
  /** Which device each topic level names, for commands coming in. */
  private readonly byObjectId = new Map<string, string>();
  /** This hub's configs the broker holds, collected after connecting (null when not collecting). */
  private retainedConfigs: Set<string> | null = null;
  private sweep: TimerHandle | null = null;

  constructor(private readonly o: MqttExposureOptions) {}

  get statusTopic(): string {
    return `${this.o.baseTopic}/status`;
  }

  start(): void {
    const { connection, events } = this.o;
    this.unhook.push(
      connection.onConnect(() => this.republishAll()),
      connection.onMessage((topic, payload) => this.onMessage(topic, payload)),
    );
    // Changes are published once per event-loop turn and device: a burst of state is one message.
    const feed = new DeviceFeed(events, setImmediate, ({ deviceIds, presses }) => {
      if (!this.o.connection.connected) return;
      for (const id of deviceIds) this.publishDevice(id);
      for (const { deviceId, press } of presses) this.pressed(deviceId, press);
    });
    this.feed = feed;
    this.unhook.push(() => feed.close());
    connection.subscribe(this.ownConfigs(), 1);
    connection.subscribe(`${this.o.baseTopic}/+/set`, 1);
    connection.subscribe(`${this.o.baseTopic}/+/+/set`, 1);
    if (connection.connected) this.republishAll();
  }

  /** Says the hub is going (offline, retained) before the connection closes. */
  async stop(): Promise<void> {
    for (const off of this.unhook.splice(0)) off();
    this.o.timers.clearTimeout(this.sweep ?? undefined);
    await this.o.connection.publish(this.statusTopic, 'offline', { qos: 1, retain: true }).catch(() => undefined);
  }

  exposedCount(): number {
    return this.published.size;
  }

  private ownConfigs(): string {
    return `${this.o.prefix}/+/${this.o.nodeId}/+/config`;
  }

  private republishAll(): void {
    this.published.clear();
    // Devices removed while the hub was away keep their retained configs on the broker: cleared
    // once the broker had time to send what it holds.
    this.retainedConfigs = new Set();
    this.o.timers.clearTimeout(this.sweep ?? undefined);
    this.sweep = this.o.timers.setTimeout(() => this.clearStaleConfigs(), STALE_SWEEP_MS);
    void this.o.connection.publish(this.statusTopic, 'online', { qos: 1, retain: true }).catch(() => undefined);
    for (const d of this.o.devices()) this.feed?.mark(d.id);
  }

  private clearStaleConfigs(): void {
    this.sweep = null;
    const held = this.retainedConfigs ?? new Set<string>();
    this.retainedConfigs = null;
    const current = new Set([...this.published.values()].map((p) => p.configTopic));
    for (const topic of held) {
      if (current.has(topic)) continue;
      void this.o.connection.publish(topic, '', { qos: 1, retain: true }).catch(() => undefined);
    }
  }

  private publishDevice(id: string): void {
    const device = this.o.device(id);
    const before = this.published.get(id);
    const exposed = device && !device.removed && device.driverKey !== MQTT_DRIVER_KEY ? this.exposedOf(device) : undefined;
    const send = (topic: string, payload: string, retain = true) => void this.o.connection.publish(topic, payload, { qos: 1, retain }).catch(() => undefined);
    if (!exposed || !device) {
      if (before) {
        // Config, state and availability all go: nothing of the device stays retained.
        const objectId = objectIdOf(id);
        send(before.configTopic, '');
        send(this.topic(objectId, 'state'), '');
        send(this.topic(objectId, 'availability'), '');
        this.published.delete(id);
        this.byObjectId.delete(objectId);
      }
      return;
    }
    const configTopic = `${this.o.prefix}/${exposed.component}/${this.o.nodeId}/${exposed.objectId}/config`;
    const config = JSON.stringify(exposed.config);
    const state = JSON.stringify(stateOf(device));
    if (before && before.configTopic !== configTopic) send(before.configTopic, '');
    if (before?.config !== config) send(configTopic, config);
    if (before?.online !== device.online) send(this.topic(exposed.objectId, 'availability'), device.online ? 'online' : 'offline');
    if (exposed.component !== 'event' && before?.state !== state) send(this.topic(exposed.objectId, 'state'), state);
    this.published.set(id, { configTopic, config, state, online: device.online });
    this.byObjectId.set(exposed.objectId, id);
  }

  private pressed(deviceId: string, press: string): void {
    if (!this.published.has(deviceId)) return;
    void this.o.connection.publish(this.topic(objectIdOf(deviceId), 'event'), JSON.stringify({ event_type: press }), { qos: 1, retain: false }).catch(() => undefined);
  }

  private topic(objectId: string, leaf: string): string {
    return `${this.o.baseTopic}/${objectId}/${leaf}`;
  }

  /** The discovery config of a device, or undefined when its class has no MQTT counterpart. */
  private exposedOf(d: DeviceView): Exposed | undefined {
    const objectId = objectIdOf(d.id);
    const t = (leaf: string) => this.topic(objectId, leaf);
    const base: Record<string, unknown> = {
      name: null,
      unique_id: `${this.o.nodeId}_${objectId}`,
      object_id: objectId,
      availability: [{ topic: this.statusTopic }, { topic: t('availability') }],
      availability_mode: 'all',
      device: { identifiers: [`${this.o.nodeId}_${objectId}`], name: d.name, manufacturer: 'Home Control Service', model: d.deviceClass },
      origin: { name: 'Home Control Service' },
    };
    const state = t('state');
    const a = d.attributes;
    switch (d.deviceClass) {
      case 'light': {
        const modes = a.colorModes ?? ['onoff'];
        const colour = [...(modes.includes('color_temp') ? ['color_temp'] : []), ...(modes.includes('hs') ? ['hs'] : [])];
        const supported = colour.length ? colour : modes.includes('brightness') ? ['brightness'] : ['onoff'];
        return {
          component: 'light',
          objectId,
          config: {
            ...base,
            schema: 'json',
            command_topic: t('set'),
            state_topic: state,
            brightness: supported[0] !== 'onoff',
            brightness_scale: 100,
            supported_color_modes: supported,
            ...(modes.includes('color_temp') ? { min_mireds: Math.round(1_000_000 / (a.maxKelvin ?? 6500)), max_mireds: Math.round(1_000_000 / (a.minKelvin ?? 2000)) } : {}),
          },
        };
      }
      case 'switch':
      case 'outlet':
        return { component: 'switch', objectId, config: { ...base, command_topic: t('set'), state_topic: state, value_template: '{{ value_json.state }}', ...(d.deviceClass === 'outlet' ? { device_class: 'outlet' } : {}) } };
      case 'cover':
        return {
          component: 'cover',
          objectId,
          config: {
            ...base,
            command_topic: t('set'),
            state_topic: state,
            value_template: '{{ value_json.state }}',
            position_topic: state,
            position_template: '{{ value_json.position }}',
            ...(has(d, 'set_position') || d.reading.position !== undefined ? { set_position_topic: t('position/set') } : {}),
            ...(a.tilt ? { tilt_command_topic: t('tilt/set'), tilt_status_topic: state, tilt_status_template: '{{ value_json.tilt }}' } : {}),
          },
        };
      case 'climate':
        return {
          component: 'climate',
          objectId,
          config: {
            ...base,
            temperature_command_topic: t('temperature/set'),
            temperature_state_topic: state,
            temperature_state_template: '{{ value_json.target_temperature }}',
            current_temperature_topic: state,
            current_temperature_template: '{{ value_json.current_temperature }}',
            mode_command_topic: t('mode/set'),
            mode_state_topic: state,
            mode_state_template: '{{ value_json.mode }}',
            action_topic: state,
            action_template: '{{ value_json.action }}',
            current_humidity_topic: state,
            current_humidity_template: '{{ value_json.humidity }}',
            ...(has(d, 'turn_on') && d.commands.length > 0 ? { power_command_topic: t('set') } : {}),
            modes: a.hvacModes ?? ['off', 'heat', 'cool', 'auto'],
            min_temp: a.minTemperature ?? 5,
            max_temp: a.maxTemperature ?? 35,
            temp_step: a.temperatureStep ?? 0.5,
            temperature_unit: a.temperatureUnit === '°F' ? 'F' : 'C',
          },
        };
      case 'fan':
        return {
          component: 'fan',
          objectId,
          config: {
            ...base,
            command_topic: t('set'),
            state_topic: state,
            state_value_template: '{{ value_json.state }}',
            percentage_command_topic: t('percentage/set'),
            percentage_state_topic: state,
            percentage_value_template: '{{ value_json.percentage }}',
            ...(a.oscillate ? { oscillation_command_topic: t('oscillation/set'), oscillation_state_topic: state, oscillation_value_template: '{{ value_json.oscillation }}' } : {}),
            ...(a.direction ? { direction_command_topic: t('direction/set'), direction_state_topic: state, direction_value_template: '{{ value_json.direction }}' } : {}),
          },
        };
      case 'lock':
        return { component: 'lock', objectId, config: { ...base, command_topic: t('set'), state_topic: state, value_template: '{{ value_json.lock }}' } };
      case 'sensor': {
        const sensorClass = homeAssistantSensorClass(a.sensorClass);
        return {
          component: 'sensor',
          objectId,
          config: { ...base, state_topic: state, value_template: '{{ value_json.value }}', ...(a.unit ? { unit_of_measurement: a.unit } : {}), ...(sensorClass ? { device_class: sensorClass, state_class: 'measurement' } : {}) },
        };
      }
      case 'binary_sensor': {
        const sensorClass = homeAssistantBinarySensorClass(a.sensorClass);
        return { component: 'binary_sensor', objectId, config: { ...base, state_topic: state, value_template: '{{ value_json.detected }}', ...(sensorClass ? { device_class: sensorClass } : {}) } };
      }
      case 'button':
        return { component: 'event', objectId, config: { ...base, state_topic: t('event'), event_types: a.presses ?? ['single', 'double', 'long'] } };
      default:
        // A media player, remote or generic device that switches shows up as a switch.
        if (d.capabilities.includes('power') || ['turn_on', 'turn_off'].every((c) => has(d, c))) {
          return { component: 'switch', objectId, config: { ...base, command_topic: t('set'), state_topic: state, value_template: '{{ value_json.state }}' } };
        }
        return undefined;
    }
  }

  // ---- commands in -------------------------------------------------------------------------------

  private onMessage(topic: string, payload: Buffer): void {
    if (this.retainedConfigs && payload.length > 0 && topic.startsWith(`${this.o.prefix}/`) && topic.endsWith('/config') && topic.split('/').at(-3) === this.o.nodeId) {
      this.retainedConfigs.add(topic);
      return;
    }
    const prefix = `${this.o.baseTopic}/`;
    if (!topic.startsWith(prefix) || !topic.endsWith('/set')) return;
    const parts = topic.slice(prefix.length, -'/set'.length).split('/');
    if (parts.length < 1 || parts.length > 2) return;
    const [objectId, field = ''] = parts as [string, string?];
    if (payload.length > MAX_COMMAND_BYTES) return this.warnOnce(topic, `command payload larger than ${MAX_COMMAND_BYTES} bytes`);
    const id = this.byObjectId.get(objectId);
    const device = id ? this.o.device(id) : undefined;
    if (!device) return this.warnOnce(topic, 'no exposed device has this topic');
    let commands: Array<[string, Record<string, unknown>]>;
    try {
      commands = commandsOf(device, field, payload.toString('utf8').trim());
    } catch (err) {
      return this.warnOnce(topic, messageOf(err));
    }
    void (async () => {
      for (const [command, params] of commands) {
        try {
          await this.o.command(device.id, command, params);
        } catch (err) {
          this.o.log.warn({ topic, deviceId: device.id, command, err: messageOf(err) }, 'MQTT: a command from MQTT failed');
          return;
        }
      }
    })();
  }

  private warnOnce(topic: string, reason: string): void {
    const key = `${topic}\u0000${reason}`;
    if (this.warned.has(key)) return;
    if (this.warned.size > 1000) this.warned.clear();
    this.warned.add(key);
    this.o.log.warn({ topic, reason }, 'MQTT: command message ignored');
  }
}

/** The state JSON the exposed configs' templates read. */
export function stateOf(d: DeviceView): Record<string, unknown> {
  const r = d.reading;
  const out: Record<string, unknown> = {};
  if (r.on !== undefined) out.state = r.on ? 'ON' : 'OFF';
  switch (d.deviceClass) {
    case 'light':
      if (r.brightness !== undefined) out.brightness = r.brightness;
      if (r.colorTempKelvin !== undefined) out.color_temp = Math.round(1_000_000 / r.colorTempKelvin);
      if (r.hue !== undefined && r.saturation !== undefined) {
        out.color = { h: r.hue, s: r.saturation };
        out.color_mode = 'hs';
      } else if (r.colorTempKelvin !== undefined) out.color_mode = 'color_temp';
      else if (r.brightness !== undefined) out.color_mode = 'brightness';
      break;
    case 'cover':
      if (r.coverState) out.state = r.coverState;
      if (r.position !== undefined) out.position = r.position;
      if (r.tilt !== undefined) out.tilt = r.tilt;
      break;
    case 'climate':
      Object.assign(out, { current_temperature: r.currentTemperature, target_temperature: r.targetTemperature, mode: r.hvacMode, action: r.hvacAction, humidity: r.humidity });
      break;
    case 'fan':
      Object.assign(out, { percentage: r.percentage, oscillation: r.oscillating === undefined ? undefined : r.oscillating ? 'oscillate_on' : 'oscillate_off', direction: r.direction });
      break;
    case 'lock':
      if (r.locked !== undefined) out.lock = r.jammed ? 'JAMMED' : r.locked ? 'LOCKED' : 'UNLOCKED';
      break;
    case 'sensor':
      out.value = r.value ?? null;
      break;
    case 'binary_sensor':
      if (r.detected !== undefined) out.detected = r.detected ? 'ON' : 'OFF';
      break;
  }
  return JSON.parse(JSON.stringify(out)) as Record<string, unknown>;
}

/** What a message on a device's command topic asks, as the class's standard commands (docs/devices.md). */
export function commandsOf(d: DeviceView, field: string, text: string): Array<[string, Record<string, unknown>]> {
  const number = (): number => {
    const n = Number(text);
    if (text === '' || !Number.isFinite(n)) throw new Error(`expected a number, got ${JSON.stringify(text.slice(0, 40))}`);
    return n;
  };
  switch (field) {
    case 'position':
      return [['set_position', { position: number() }]];
    case 'tilt':
      return [['set_tilt_position', { tilt: number() }]];
    case 'temperature':
      return [['set_target_temperature', { temperature: number() }]];
    case 'mode':
      return [['set_hvac_mode', { mode: text }]];
    case 'percentage':
      return [['set_percentage', { percentage: number() }]];
    case 'oscillation':
      return [['oscillate', { oscillating: text === 'oscillate_on' }]];
    case 'direction':
      return [['set_direction', { direction: text }]];
    case '':
      break;
    default:
      throw new Error(`unknown command topic ${field}`);
  }
  const word = text.toUpperCase();
  if (d.deviceClass === 'light' && text.startsWith('{')) {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new Error('the light command is not JSON');
    }
    if (!body || typeof body !== 'object') throw new Error('the light command is not a JSON object');
    if (body.state === 'OFF') return [['turn_off', {}]];
    const out: Array<[string, Record<string, unknown>]> = [];
    if (typeof body.brightness === 'number') out.push(['set_brightness', { brightness: body.brightness }]);
    if (typeof body.color_temp === 'number' && body.color_temp > 0) out.push(['set_color_temp', { kelvin: Math.round(1_000_000 / body.color_temp) }]);
    const color = body.color as Record<string, unknown> | undefined;
    if (color && typeof color.h === 'number' && typeof color.s === 'number') out.push(['set_hs_color', { hue: color.h, saturation: color.s }]);
    if (out.length === 0) out.push(['turn_on', {}]);
    return out;
  }
  if (d.deviceClass === 'cover') {
    if (word === 'OPEN') return [['open', {}]];
    if (word === 'CLOSE') return [['close', {}]];
    if (word === 'STOP') return [['stop', {}]];
  }
  if (d.deviceClass === 'lock') {
    if (word === 'LOCK') return [['lock', {}]];
    if (word === 'UNLOCK') return [['unlock', {}]];
  }
  if (word === 'ON') return [['turn_on', {}]];
  if (word === 'OFF') return [['turn_off', {}]];
  throw new Error(`${JSON.stringify(text.slice(0, 40))} is not a command of a ${d.deviceClass}`);
}
