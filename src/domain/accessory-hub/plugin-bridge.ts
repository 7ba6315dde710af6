import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Clock } from '../../platform/clock.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import type { FileStore } from '../../platform/files.js';
import type { Principal } from '../../platform/operations.js';
import type { AuthService } from '../auth/auth-service.js';
import type { UserView } from '../auth/model.js';
import type { CapabilityName, DeviceAttributes, DeviceClass } from '../devices/capabilities.js';
import type { DeviceService } from '../devices/device-service.js';
import type { LogicalDevice } from '../devices/model.js';
import { deviceErrors } from '../devices/errors.js';
import type { DeviceReading } from '../devices/readings.js';
import { accessoryHubErrors } from './errors.js';
import { BRIDGE_PLUGIN, type HomebridgeSupervisor } from './homebridge.js';
import { HOMEKIT_BRIDGE_LIMIT, type HomeKitExposure } from './homekit.js';

/** The platform our plugin registers, and its package name in Homebridge's plugin folder. */
export const BRIDGE_PLATFORM = 'HomeControlBridge';
const TOKEN_TTL_SECONDS = 365 * 86_400;

/** A command the hub queues for the plugin, delivered at least once: until acknowledged, every pull answers it again. */
export interface ImportCommand {
  id: string;
  action: 'import' | 'remove';
  accessoryId: string;
  createdAt: number;
  updatedAt: number;
}

export interface ExternalAccessory {
  uuid: string;
  displayName: string;
  plugin?: string;
  services?: string[];
}

/**
 * The HAP service a hub device is in Apple Home, by its class (docs/devices.md): a sensor by what
 * it measures, a binary sensor by what it detects; a media player, remote or generic device that
 * switches is a Switch. Anything else is left out.
 */
export const BRIDGED_SERVICES = [
  'Lightbulb',
  'Switch',
  'Outlet',
  'WindowCovering',
  'Thermostat',
  'Fanv2',
  'LockMechanism',
  'TemperatureSensor',
  'HumiditySensor',
  'LightSensor',
  'CarbonDioxideSensor',
  'Battery',
  'MotionSensor',
  'OccupancySensor',
  'ContactSensor',
  'LeakSensor',
  'SmokeSensor',
  'StatelessProgrammableSwitch',
] as const;
export type BridgedService = (typeof BRIDGED_SERVICES)[number];

const SENSOR_SERVICES: Partial<Record<string, BridgedService>> = {
  temperature: 'TemperatureSensor',
  humidity: 'HumiditySensor',
  illuminance: 'LightSensor',
  co2: 'CarbonDioxideSensor',
  battery: 'Battery',
};
const BINARY_SENSOR_SERVICES: Partial<Record<string, BridgedService>> = {
  motion: 'MotionSensor',
  occupancy: 'OccupancySensor',
  contact: 'ContactSensor',
  leak: 'LeakSensor',
  smoke: 'SmokeSensor',
};

/** The class's standard commands a HomeKit write to each service may become (nothing else passes the plugin's route). */
export const BRIDGED_COMMANDS: Record<BridgedService, readonly string[]> = {
  Lightbulb: ['turn_on', 'turn_off', 'set_brightness', 'set_color_temp', 'set_hs_color'],
  Switch: ['turn_on', 'turn_off'],
  Outlet: ['turn_on', 'turn_off'],
  WindowCovering: ['set_position', 'set_tilt_position', 'open', 'close', 'stop'],
  Thermostat: ['set_target_temperature', 'set_hvac_mode', 'turn_on', 'turn_off'],
  Fanv2: ['turn_on', 'turn_off', 'set_percentage', 'oscillate', 'set_direction'],
  LockMechanism: ['lock', 'unlock'],
  TemperatureSensor: [],
  HumiditySensor: [],
  LightSensor: [],
  CarbonDioxideSensor: [],
  Battery: [],
  MotionSensor: [],
  OccupancySensor: [],
  ContactSensor: [],
  LeakSensor: [],
  SmokeSensor: [],
  StatelessProgrammableSwitch: [],
};

/** The HAP service of a device of this class, attributes and capabilities; undefined when HomeKit has none for it. */
export function bridgedServiceOf(deviceClass: DeviceClass, attributes: DeviceAttributes, capabilities: readonly CapabilityName[]): BridgedService | undefined {
  switch (deviceClass) {
    case 'light':
      return 'Lightbulb';
    case 'switch':
      return 'Switch';
    case 'outlet':
      return 'Outlet';
    case 'cover':
      return 'WindowCovering';
    case 'climate':
      return 'Thermostat';
    case 'fan':
      return 'Fanv2';
    case 'lock':
      return 'LockMechanism';
    case 'sensor':
      return attributes.sensorClass ? SENSOR_SERVICES[attributes.sensorClass] : undefined;
    case 'binary_sensor':
      return attributes.sensorClass ? BINARY_SENSOR_SERVICES[attributes.sensorClass] : undefined;
    case 'button':
      return 'StatelessProgrammableSwitch';
    case 'media_player':
    case 'remote':
    case 'generic':
      return capabilities.includes('power') ? 'Switch' : undefined;
  }
}

/**
 * What the plugin exposes of a hub device in Apple Home: the HAP service, and the model's class,
 * attributes, derived capabilities and canonical reading it renders the characteristics from.
 */
export interface BridgedDevice {
  id: string;
  name: string;
  service: BridgedService;
  deviceClass: DeviceClass;
  attributes: DeviceAttributes;
  capabilities: CapabilityName[];
  reading: DeviceReading;
  /** The reading's on/off (false when unknown), as the plugin's first version read it. */
  on: boolean;
  online: boolean;
}

/** The bridged view of one hub device, or undefined when the plugin does not expose it (removed, imported from Homebridge, or no HAP service for its class). */
export function bridgedDevice(devices: DeviceService, id: string): BridgedDevice | undefined {
  const device = devices.registry.find(id);
  return device ? bridgedOf(devices, device) : undefined;
}

function bridgedOf(devices: DeviceService, device: LogicalDevice): BridgedDevice | undefined {
  if (device.removed || device.driverKey === 'accessory-hub') return undefined;
  // The model read once: its class, attributes, capabilities and reading.
  const { deviceClass, attributes, capabilities, reading } = devices.model(device);
  const service = bridgedServiceOf(deviceClass, attributes, capabilities);
  if (!service) return undefined;
  return { id: device.id, name: device.name, service, deviceClass, attributes, capabilities, reading, on: reading.on === true, online: devices.isOnline(device) };
}

/**
 * What makes the plugin build an accessory anew rather than update its values: its service, name,
 * attributes and capabilities (which decide the characteristics and their ranges).
 */
export function bridgedShape(device: BridgedDevice): string {
  return JSON.stringify([device.service, device.name, device.attributes, device.capabilities]);
}

/** One message of the plugin's stream: its event name and data. */
export type BridgeStreamMessage =
  | { event: 'device'; data: BridgedDevice }
  | { event: 'state'; data: ReturnType<typeof bridgedState> }
  | { event: 'removed'; data: { deviceId: string } }
  | { event: 'button'; data: { deviceId: string; press: 'single' | 'double' | 'long' } };

/**
 * What one plugin connection was told of each device it shows, and what a change of a device
 * means for it: a change of shape rebuilds the accessory (`device`), a change of what HomeKit
 * renders updates its values (`state`; nothing when only other fields changed), a device no
 * longer shown leaves (`removed`). A bridge shows at most HOMEKIT_BRIDGE_LIMIT devices.
 */
export class BridgeStreamFollower {
  private readonly shown: Map<string, { shape: string; state: string }>;

  constructor(
    private readonly lookup: (deviceId: string) => BridgedDevice | undefined,
    initial: readonly BridgedDevice[],
  ) {
    this.shown = new Map(initial.map((d) => [d.id, { shape: bridgedShape(d), state: JSON.stringify(bridgedState(d)) }]));
  }

  /** The message a change of the device calls for, if any. */
  changed(deviceId: string): BridgeStreamMessage | undefined {
    const before = this.shown.get(deviceId);
    // A full bridge takes no new device: asked before the device's model is read (a flood over
    // 1,000 lights would read the 851 left out at every flush).
    if (!before && this.shown.size >= HOMEKIT_BRIDGE_LIMIT) return undefined;
    const device = this.lookup(deviceId);
    if (!device) return this.shown.delete(deviceId) ? { event: 'removed', data: { deviceId } } : undefined;
    const shape = bridgedShape(device);
    const state = bridgedState(device);
    const stateText = JSON.stringify(state);
    this.shown.set(deviceId, { shape, state: stateText });
    if (before?.shape !== shape) return { event: 'device', data: device };
    return before.state === stateText ? undefined : { event: 'state', data: state };
  }

  /** Every device again (the choice of devices changed): the messages that bring the plugin in line. */
  all(ids: Iterable<string>): BridgeStreamMessage[] {
    return [...new Set([...this.shown.keys(), ...ids])].flatMap((id) => this.changed(id) ?? []);
  }

  /** A button press, when the device is one the plugin shows. */
  pressed(deviceId: string, press: 'single' | 'double' | 'long'): BridgeStreamMessage | undefined {
    return this.shown.has(deviceId) ? { event: 'button', data: { deviceId, press } } : undefined;
  }
}

/**
 * A device's state as the plugin's stream carries it: what its values are rendered from (its
 * service, class and attributes come with `device`, and change only with its shape).
 */
export function bridgedState(device: BridgedDevice): { deviceId: string; reading: DeviceReading; on: boolean; online: boolean } {
  return { deviceId: device.id, reading: device.reading, on: device.on, online: device.online };
}

export interface PluginBridgeDeps {
  dir: string;
  /** Where our plugin's source is (copied into Homebridge's plugin folder). */
  pluginSource: string;
  /** Copies the plugin's source in. */
  files: FileStore;
  homebridge: HomebridgeSupervisor;
  devices: DeviceService;
  /** Which devices Apple Home shows (none while it is off). Absent: every bridgeable device (tests of the bridge alone). */
  homekit?: HomeKitExposure;
  auth: AuthService;
  accounts: { list(): Promise<UserView[]> };
  queue: DocumentCollection<ImportCommand>;
  clock: Clock;
  /** The hub's own URL as the plugin reaches it (loopback), once the HTTP port is known. */
  hubUrl: () => string | undefined;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * The plugin bridge: a Homebridge platform plugin of ours (`accessory-hub/plugin/`), installed into
 * the managed Homebridge, that exposes the hub's devices as HomeKit accessories. It signs in with a
 * token of scope `plugin-bridge` the hub issues it (accepted only on /accessory-hub/plugin/*),
 * reads the devices, follows them on a stream (their readings, and devices added, changed and
 * removed), carries HomeKit writes back as the class's standard commands, reports other plugins'
 * accessories, and pulls the import commands the hub queues.
 */
export class PluginBridge {
  private external: ExternalAccessory[] = [];
  private tokenId: string | undefined;

  constructor(private readonly deps: PluginBridgeDeps) {}

  /** Before Homebridge starts: our plugin in its folder, its platform block with the hub's URL and a fresh token (the previous one revoked). */
  async prepare(): Promise<void> {
    await this.deps.queue.load();
    const url = this.deps.hubUrl();
    const admin = (await this.deps.accounts.list()).find((u) => u.role === 'admin' && !u.disabled);
    if (!url || !admin) {
      this.deps.log.warn({}, 'plugin bridge not set up: no hub URL or no admin account yet');
      return;
    }
    // Its source is kept beside the plugin folder and is a `file:` dependency of it: npm, installing
    // other plugins, links it instead of pruning it; until then a copy sits in the plugin folder.
    const source = path.join(this.deps.homebridge.builtinPluginsDir, BRIDGE_PLUGIN);
    await this.deps.files.remove(source);
    await this.deps.files.copyTree(this.deps.pluginSource, source);
    const linked = path.join(this.deps.homebridge.pluginsDir, BRIDGE_PLUGIN);
    await this.deps.files.remove(linked);
    await this.deps.files.copyTree(this.deps.pluginSource, linked);
    await this.deps.homebridge.addDependency(BRIDGE_PLUGIN, `file:./builtin-plugins/${BRIDGE_PLUGIN}`);
    if (this.tokenId) await this.deps.auth.revoke(this.tokenId, 'plugin-bridge');
    const principal: Principal = { userId: admin.id, username: admin.username, role: 'admin', scope: 'plugin-bridge', tokenHash: '' };
    const issued = await this.deps.auth.issueScoped(principal, 'plugin-bridge', TOKEN_TTL_SECONDS);
    this.tokenId = issued.id;
    const { port, pin } = await this.deps.homebridge.settings();
    await this.deps.homebridge.editConfig((config) => {
      const platforms = ((config.platforms as Array<Record<string, unknown>> | undefined) ?? []).filter((p) => p.platform !== BRIDGE_PLATFORM);
      // The bridge's HAP port and code let the plugin read the other plugins' accessories (insecure mode, loopback).
      config.platforms = [...platforms, { platform: BRIDGE_PLATFORM, name: 'Home Control', hubUrl: url, token: issued.accessToken, hapPort: port, hapPin: pin }];
    });
  }

  /**
   * The hub devices the plugin exposes: those chosen for Apple Home that HomeKit has a service for
   * (not the accessory hub's own, which came from Homebridge), at most HOMEKIT_BRIDGE_LIMIT.
   */
  devices(): BridgedDevice[] {
    const shown: BridgedDevice[] = [];
    for (const device of this.deps.devices.registry.list()) {
      if (shown.length >= HOMEKIT_BRIDGE_LIMIT) break;
      if (!this.chosen(device.id)) continue;
      const bridged = bridgedOf(this.deps.devices, device);
      if (bridged) shown.push(bridged);
    }
    return shown;
  }

  /** Every device HomeKit has a service for, chosen or not: what the admin chooses from. */
  candidates(): Array<{ id: string; name: string; service: BridgedService }> {
    return this.deps.devices.registry.list().flatMap((device) => {
      const bridged = bridgedOf(this.deps.devices, device);
      return bridged ? [{ id: bridged.id, name: bridged.name, service: bridged.service }] : [];
    });
  }

  /** How many devices could be shown (chosen, with a HAP service), before the bridge's limit. */
  bridgeableCount(): number {
    return this.deps.devices.registry.list().filter((device) => this.chosen(device.id) && bridgedOf(this.deps.devices, device) !== undefined).length;
  }

  device(deviceId: string): BridgedDevice | undefined {
    return this.chosen(deviceId) ? bridgedDevice(this.deps.devices, deviceId) : undefined;
  }

  /** What one stream connection follows, starting from the devices it was sent. */
  follower(initial: readonly BridgedDevice[]): BridgeStreamFollower {
    return new BridgeStreamFollower((id) => this.device(id), initial);
  }

  private chosen(deviceId: string): boolean {
    return this.deps.homekit ? this.deps.homekit.includes(deviceId) : true;
  }

  isBridged(deviceId: string): boolean {
    return this.device(deviceId) !== undefined;
  }

  /**
   * A HomeKit write to a hub device, as one of its class's standard commands (`set_brightness
   * {brightness}`, `lock`, `set_position {position}`…; `on` true or false is turn_on or turn_off):
   * only the commands its HAP service writes pass, and the device service checks and translates
   * them to the device's own as for any caller.
   */
  async command(deviceId: string, command: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const device = this.device(deviceId);
    if (!device) throw accessoryHubErrors.ACCESSORY_NOT_FOUND({ accessoryId: deviceId });
    if (!BRIDGED_COMMANDS[device.service].includes(command)) {
      throw deviceErrors.COMMAND_NOT_IN_CLASS(
        { command, device: device.name, deviceClass: device.deviceClass },
        { details: { deviceId, command, service: device.service, commands: BRIDGED_COMMANDS[device.service] } },
      );
    }
    return this.deps.devices.command(deviceId, command, params);
  }

  syncExternal(accessories: ExternalAccessory[]): { accessories: number } {
    this.external = accessories;
    return { accessories: accessories.length };
  }

  externalAccessories(): ExternalAccessory[] {
    return this.external;
  }

  async enqueue(action: ImportCommand['action'], accessoryId: string): Promise<ImportCommand> {
    return (await this.deps.queue.save({ id: randomUUID(), action, accessoryId })).item;
  }

  pending(): ImportCommand[] {
    return this.deps.queue.list();
  }

  async ack(id: string): Promise<{ id: string; acknowledged: true }> {
    if (!this.deps.queue.find(id)) throw accessoryHubErrors.IMPORT_COMMAND_NOT_FOUND({ id });
    await this.deps.queue.remove(id);
    return { id, acknowledged: true };
  }
}
