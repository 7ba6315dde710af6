/**
 * The Matter bridge itself, on matter.js (docs/matter.md): a ServerNode whose aggregator has one
 * bridged endpoint per hub device, its Matter device type chosen by the device's class and
 * attributes (device-types below). Hub state goes to the endpoints' attributes as it changes; a
 * controller's command goes to the hub as the class's standard command, and a refused one answers
 * the controller with a Matter failure status. Loaded only when the bridge starts (runtime.ts
 * imports this file lazily): matter.js takes seconds and a hundred megabytes to load.
 */
import { Endpoint, Environment, Filesystem, Logger, LogLevel, ServerNode, VendorId } from '@matter/main';
import { BridgedDeviceBasicInformationServer } from '@matter/main/behaviors/bridged-device-basic-information';
import { ColorControlServer } from '@matter/main/behaviors/color-control';
import { DoorLockServer } from '@matter/main/behaviors/door-lock';
import { LevelControlServer } from '@matter/main/behaviors/level-control';
import { OccupancySensingServer } from '@matter/main/behaviors/occupancy-sensing';
import { SwitchServer } from '@matter/main/behaviors/switch';
import { WindowCoveringServer } from '@matter/main/behaviors/window-covering';
import { FanControlServer } from '@matter/main/behaviors/fan-control';
import { ThermostatServer } from '@matter/main/behaviors/thermostat';
import { ColorTemperatureLightDevice } from '@matter/main/devices/color-temperature-light';
import { ContactSensorDevice } from '@matter/main/devices/contact-sensor';
import { DimmableLightDevice } from '@matter/main/devices/dimmable-light';
import { DoorLockDevice } from '@matter/main/devices/door-lock';
import { ExtendedColorLightDevice } from '@matter/main/devices/extended-color-light';
import { FanDevice } from '@matter/main/devices/fan';
import { GenericSwitchDevice } from '@matter/main/devices/generic-switch';
import { HumiditySensorDevice } from '@matter/main/devices/humidity-sensor';
import { LightSensorDevice } from '@matter/main/devices/light-sensor';
import { OccupancySensorDevice } from '@matter/main/devices/occupancy-sensor';
import { OnOffLightDevice } from '@matter/main/devices/on-off-light';
import { OnOffPlugInUnitDevice } from '@matter/main/devices/on-off-plug-in-unit';
import { TemperatureSensorDevice } from '@matter/main/devices/temperature-sensor';
import { ThermostatDevice } from '@matter/main/devices/thermostat';
import { WindowCoveringDevice } from '@matter/main/devices/window-covering';
import { AggregatorEndpoint } from '@matter/main/endpoints/aggregator';
import { DeviceCommissioner, FabricManager } from '@matter/main/protocol';
import { FabricIndex, Status, StatusResponseError } from '@matter/main/types';
import type { WindowCovering } from '@matter/main/clusters/window-covering';
import { NodeJsFilesystem } from '@matter/nodejs';
import type { DeviceView } from '../../domain/devices/device-service.js';
import type { DomainEventBus } from '../../domain/events.js';
import type { MatterBridgedDevice, MatterFabric } from '../../domain/matter/ports.js';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import { hsToXy, xyToHs } from '../../platform/colour.js';
import { messageOf } from '../../platform/network-failures.js';
import { DeviceFeed } from '../../domain/devices/device-feed.js';

export interface MatterBridgeOptions {
  /** DATA_DIR/matter: the node's fabrics, keys and endpoint numbers. */
  storageDir: string;
  /** This hub's id: the node's unique id (each installation its own). */
  hubId: string;
  port: number;
  bind: string | undefined;
  mdnsInterface: string | undefined;
  devices(): readonly DeviceView[];
  device(id: string): DeviceView | undefined;
  events: DomainEventBus;
  /** Runs a controller's command as the hub's standard command; `from` names the controller's ecosystem. */
  command(deviceId: string, command: string, params: Record<string, unknown>, from: string): Promise<unknown>;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** The hub's, when the bridge runs in the hub's process; its own process (bridge-child.ts) passes the system's. */
  clock: Clock;
  timers: Timers;
}

export interface RunningMatterBridge {
  port: number;
  /** The bridge's own process, when it runs in one (child-bridge.ts). */
  readonly pid?: number;
  commissioned(): boolean;
  fabrics(): MatterFabric[];
  /** The codes while it can be paired, else undefined. */
  pairing(): { manualPairingCode: string; qrPairingCode: string } | undefined;
  devices(): MatterBridgedDevice[];
  unmapped(): Array<{ deviceId: string; name: string; deviceClass: string }>;
  openCommissioningWindow(): Promise<void>;
  removeFabric(fabricIndex: number): Promise<void>;
  close(): Promise<void>;
}

/** Vendor ids of the ecosystems a household pairs with (the Connectivity Standards Alliance's list). */
const ECOSYSTEMS: Record<number, string> = {
  0x1349: 'Apple Home',
  0x6006: 'Google Home',
  0x1217: 'Amazon Alexa',
  0x110a: 'SmartThings',
  0x134b: 'Home Assistant',
};

// ---- commands from controllers ------------------------------------------------------------------

/** The running bridge's way to the hub: one bridge per process, so one sink. */
let sink: ((endpointId: string, command: string, params: Record<string, unknown>, fabric: number | undefined) => Promise<void>) | undefined;

interface BehaviorLike {
  endpoint: { id: string };
  context: unknown;
}

/** A controller's command to the hub; a refusal becomes a Matter failure status for the controller. */
async function forward(behavior: BehaviorLike, command: string, params: Record<string, unknown> = {}): Promise<void> {
  const fabric = (behavior.context as { fabric?: number }).fabric;
  // Commands matter.js runs for itself (no controller behind them) do not reach the hub.
  if (fabric === undefined) return;
  if (!sink) throw new StatusResponseError('the hub is stopping its Matter bridge', Status.Failure);
  try {
    await sink(behavior.endpoint.id, command, params, fabric);
  } catch (err) {
    throw new StatusResponseError(messageOf(err).slice(0, 200), Status.Failure);
  }
}

const LEVEL_MAX = 254;
/** A commissioning window the admin opens lasts 15 minutes (Matter's usual). */
const COMMISSIONING_WINDOW_MS = 15 * 60_000;
const toLevel = (percent: number) => Math.max(1, Math.min(LEVEL_MAX, Math.round((percent / 100) * LEVEL_MAX)));
const toPercent = (level: number) => Math.max(0, Math.min(100, Math.round((level / LEVEL_MAX) * 100)));

/* eslint-disable @typescript-eslint/no-explicit-any -- a mixin's constructor takes what its base takes */
type OnOffLike = new (...args: any[]) => { state: { onOff: boolean }; endpoint: { id: string }; context: unknown; on(): unknown; off(): unknown };
/* eslint-enable @typescript-eslint/no-explicit-any */

/** An OnOff server (a light's, a plug's) whose commands the hub runs first. */
function hubOnOff<B extends OnOffLike>(Base: B) {
  return class extends Base {
    override async on() {
      await forward(this, 'turn_on');
      return super.on();
    }
    override async off() {
      await forward(this, 'turn_off');
      return super.off();
    }
    async toggle() {
      const on = !this.state.onOff;
      await forward(this, on ? 'turn_on' : 'turn_off');
      // Not the base toggle(): it switches through on() and off(), which would send the command again.
      return on ? super.on() : super.off();
    }
  };
}

const HubLightOnOff = hubOnOff(OnOffLightDevice.behaviors.onOff);
const HubPlugOnOff = hubOnOff(OnOffPlugInUnitDevice.behaviors.onOff);

class HubLevelControl extends LevelControlServer.with('OnOff', 'Lighting') {
  override async moveToLevelLogic(level: number, transitionTime: number | null, withOnOff: boolean, options?: Parameters<LevelControlServer['moveToLevelLogic']>[3]) {
    await forward(this, 'set_brightness', { brightness: toPercent(level) });
    return super.moveToLevelLogic(level, transitionTime, withOnOff, options);
  }
}

class HubColorControl extends ColorControlServer.with('HueSaturation', 'Xy', 'ColorTemperature') {
  override async moveToColorTemperatureLogic(targetMireds: number, transitionTime: number) {
    await forward(this, 'set_color_temp', { kelvin: Math.round(1_000_000 / Math.max(1, targetMireds)) });
    return super.moveToColorTemperatureLogic(targetMireds, transitionTime);
  }
  override async moveToHueAndSaturationLogic(targetHue: number, targetSaturation: number, transitionTime: number) {
    await forward(this, 'set_hs_color', { hue: Math.round((targetHue / LEVEL_MAX) * 360), saturation: toPercent(targetSaturation) });
    return super.moveToHueAndSaturationLogic(targetHue, targetSaturation, transitionTime);
  }
  override async moveToColorLogic(targetX: number, targetY: number, transitionTime: number) {
    const hs = xyToHs(targetX / 65536, targetY / 65536);
    await forward(this, 'set_hs_color', { hue: Math.round(hs.hue), saturation: Math.round(hs.saturation) });
    return super.moveToColorLogic(targetX, targetY, transitionTime);
  }
}

class HubWindowCovering extends WindowCoveringServer.with('Lift', 'PositionAwareLift') {
  override async upOrOpen() {
    await forward(this, 'open');
    return super.upOrOpen();
  }
  override async downOrClose() {
    await forward(this, 'close');
    return super.downOrClose();
  }
  override async stopMotion() {
    await forward(this, 'stop');
    return super.stopMotion();
  }
  override async goToLiftPercentage(request: WindowCovering.GoToLiftPercentageRequest) {
    // Matter counts 0 as fully open, the hub 100.
    await forward(this, 'set_position', { position: 100 - Math.round(request.liftPercent100thsValue / 100) });
    return super.goToLiftPercentage(request);
  }
  // The hub moves the cover and reports where it is: no simulated movement here.
  override handleMovement() {}
  override handleStopMovement() {}
}

class HubDoorLock extends DoorLockServer {
  override async lockDoor(request: Parameters<DoorLockServer['lockDoor']>[0]) {
    await forward(this, 'lock');
    return super.lockDoor(request);
  }
  override async unlockDoor(request: Parameters<DoorLockServer['unlockDoor']>[0]) {
    await forward(this, 'unlock');
    return super.unlockDoor(request);
  }
}

const Bridged = BridgedDeviceBasicInformationServer;

// ---- device types -------------------------------------------------------------------------------

/* eslint-disable @typescript-eslint/no-explicit-any -- matter.js's endpoint types are generic beyond use here */
type AnyEndpoint = Endpoint<any>;

interface Mapping {
  deviceType: string;
  /** The endpoint type with the hub's behaviors. */
  type: any;
  /** The Matter state of the device's reading. */
  state(d: DeviceView): Record<string, unknown>;
  /** Attribute writes from controllers that are hub commands (thermostat setpoint, fan speed). */
  watch?(endpoint: AnyEndpoint, run: (command: string, params: Record<string, unknown>, fabric: number | undefined) => void): void;
}

const onOf = (d: DeviceView) => d.reading.on === true;
const clampInt = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, Math.round(v)));

function lightMapping(d: DeviceView): Mapping {
  const modes = d.attributes.colorModes ?? [];
  const hs = modes.includes('hs');
  const ct = modes.includes('color_temp');
  const dims = hs || ct || modes.includes('brightness');
  const minMireds = Math.round(1_000_000 / (d.attributes.maxKelvin ?? 6500));
  const maxMireds = Math.round(1_000_000 / (d.attributes.minKelvin ?? 2000));
  const level = (r: DeviceView['reading']) => ({ currentLevel: r.brightness !== undefined ? toLevel(r.brightness) : LEVEL_MAX, minLevel: 1, maxLevel: LEVEL_MAX });
  const colour = (r: DeviceView['reading']) => {
    // colorMode: 0 hue and saturation, 2 colour temperature (what the light shows now).
    const mode = r.hue !== undefined && r.saturation !== undefined && (!ct || r.colorTempKelvin === undefined) ? 0 : ct ? 2 : 0;
    const out: Record<string, unknown> = { colorMode: mode, enhancedColorMode: mode, colorTempPhysicalMinMireds: minMireds, colorTempPhysicalMaxMireds: maxMireds, coupleColorTempToLevelMinMireds: minMireds, startUpColorTemperatureMireds: null };
    if (r.colorTempKelvin !== undefined) out.colorTemperatureMireds = clampInt(1_000_000 / r.colorTempKelvin, minMireds, maxMireds);
    if (r.hue !== undefined && r.saturation !== undefined) {
      out.currentHue = clampInt((r.hue / 360) * LEVEL_MAX, 0, LEVEL_MAX);
      out.currentSaturation = clampInt((r.saturation / 100) * LEVEL_MAX, 0, LEVEL_MAX);
      const xy = hsToXy({ hue: r.hue, saturation: r.saturation });
      out.currentX = clampInt(xy.x * 65536, 0, 65279);
      out.currentY = clampInt(xy.y * 65536, 0, 65279);
    }
    return out;
  };
  if (hs) {
    return {
      deviceType: 'Extended Color Light',
      type: ExtendedColorLightDevice.with(HubLightOnOff, HubLevelControl, HubColorControl, Bridged),
      state: (v) => ({ onOff: { onOff: onOf(v) }, levelControl: level(v.reading), colorControl: colour(v.reading) }),
    };
  }
  if (ct) {
    return {
      deviceType: 'Color Temperature Light',
      type: ColorTemperatureLightDevice.with(HubLightOnOff, HubLevelControl, HubColorControl.with('ColorTemperature'), Bridged),
      state: (v) => ({ onOff: { onOff: onOf(v) }, levelControl: level(v.reading), colorControl: colour(v.reading) }),
    };
  }
  if (dims) {
    return {
      deviceType: 'Dimmable Light',
      type: DimmableLightDevice.with(HubLightOnOff, HubLevelControl, Bridged),
      state: (v) => ({ onOff: { onOff: onOf(v) }, levelControl: level(v.reading) }),
    };
  }
  return { deviceType: 'On/Off Light', type: OnOffLightDevice.with(HubLightOnOff, Bridged), state: (v) => ({ onOff: { onOff: onOf(v) } }) };
}

/** The Matter device type of a hub device, or undefined when its class has none (docs/matter.md). */
function mappingOf(d: DeviceView): Mapping | undefined {
  switch (d.deviceClass) {
    case 'light':
      return lightMapping(d);
    case 'switch':
    case 'outlet':
      return { deviceType: 'On/Off Plug-in Unit', type: OnOffPlugInUnitDevice.with(HubPlugOnOff, Bridged), state: (v) => ({ onOff: { onOff: onOf(v) } }) };
    case 'cover':
      return {
        deviceType: 'Window Covering',
        type: WindowCoveringDevice.with(HubWindowCovering, Bridged),
        state: (v) => {
          const closed = v.reading.position !== undefined ? (100 - v.reading.position) * 100 : v.reading.coverState === 'closed' ? 10000 : 0;
          return { windowCovering: { currentPositionLiftPercent100ths: closed, targetPositionLiftPercent100ths: closed } };
        },
      };
    case 'lock':
      return {
        deviceType: 'Door Lock',
        type: DoorLockDevice.with(HubDoorLock, Bridged),
        // lockState: 1 locked, 2 unlocked, 0 not fully locked (jammed).
        state: (v) => ({ doorLock: { lockState: v.reading.jammed ? 0 : v.reading.locked === false ? 2 : 1, lockType: 2, actuatorEnabled: true, operatingMode: 0, wrongCodeEntryLimit: 3, userCodeTemporaryDisableTime: 10 } }),
      };
    case 'climate':
      return {
        deviceType: 'Thermostat',
        type: ThermostatDevice.with(ThermostatServer.with('Heating'), Bridged),
        state: (v) => ({
          thermostat: {
            localTemperature: v.reading.currentTemperature !== undefined ? Math.round(v.reading.currentTemperature * 100) : null,
            ...(v.reading.targetTemperature !== undefined ? { occupiedHeatingSetpoint: Math.round(v.reading.targetTemperature * 100) } : {}),
            systemMode: v.reading.hvacMode === 'off' || v.reading.on === false ? 0 : 4,
            // Heating only (the hub's climate classes all heat; cooling is not bridged yet).
            controlSequenceOfOperation: 2,
          },
        }),
        watch: (endpoint, run) => {
          (endpoint.events as any).thermostat.occupiedHeatingSetpoint$Changed.on((value: number, _old: number, context: { fabric?: number }) => {
            if (context?.fabric !== undefined) run('set_target_temperature', { temperature: value / 100 }, context.fabric);
          });
        },
      };
    case 'fan':
      return {
        deviceType: 'Fan',
        type: FanDevice.with(FanControlServer, Bridged),
        // fanModeSequence 0: off, low, medium, high; the mode follows the percentage.
        state: (v) => {
          const percent = v.reading.percentage ?? (onOf(v) ? 100 : 0);
          const fanMode = !onOf(v) || percent === 0 ? 0 : percent <= 33 ? 1 : percent <= 66 ? 2 : 3;
          return { fanControl: { percentCurrent: percent, percentSetting: percent, fanMode, fanModeSequence: 0 } };
        },
        watch: (endpoint, run) => {
          (endpoint.events as any).fanControl.percentSetting$Changed.on((value: number | null, _old: unknown, context: { fabric?: number }) => {
            if (context?.fabric !== undefined && value !== null) run('set_percentage', { percentage: value }, context.fabric);
          });
        },
      };
    case 'sensor':
      switch (d.attributes.sensorClass) {
        case 'temperature':
          return { deviceType: 'Temperature Sensor', type: TemperatureSensorDevice.with(Bridged), state: (v) => ({ temperatureMeasurement: { measuredValue: typeof v.reading.value === 'number' ? Math.round(v.reading.value * 100) : null } }) };
        case 'humidity':
          return { deviceType: 'Humidity Sensor', type: HumiditySensorDevice.with(Bridged), state: (v) => ({ relativeHumidityMeasurement: { measuredValue: typeof v.reading.value === 'number' ? clampInt(v.reading.value * 100, 0, 10000) : null } }) };
        case 'illuminance':
          return {
            deviceType: 'Light Sensor',
            type: LightSensorDevice.with(Bridged),
            // Matter's illuminance is 10,000 × log10(lux) + 1.
            state: (v) => ({ illuminanceMeasurement: { measuredValue: typeof v.reading.value === 'number' ? clampInt(10_000 * Math.log10(Math.max(1, v.reading.value)) + 1, 1, 65534) : null } }),
          };
        default:
          return undefined;
      }
    case 'binary_sensor':
      switch (d.attributes.sensorClass) {
        case 'motion':
        case 'occupancy':
          return {
            deviceType: 'Occupancy Sensor',
            type: OccupancySensorDevice.with(OccupancySensingServer.with('PassiveInfrared'), Bridged),
            state: (v) => ({ occupancySensing: { occupancy: { occupied: v.reading.detected === true }, occupancySensorType: 0, occupancySensorTypeBitmap: { pir: true } } }),
          };
        case 'contact':
          // BooleanState true: the contact is made (closed).
          return { deviceType: 'Contact Sensor', type: ContactSensorDevice.with(Bridged), state: (v) => ({ booleanState: { stateValue: v.reading.detected !== true } }) };
        default:
          return undefined;
      }
    case 'button':
      return {
        deviceType: 'Generic Switch',
        type: GenericSwitchDevice.with(SwitchServer.with('MomentarySwitch', 'MomentarySwitchRelease', 'MomentarySwitchLongPress', 'MomentarySwitchMultiPress'), Bridged),
        state: () => ({}),
      };
    default:
      return undefined;
  }
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** An endpoint id matter.js keeps its number under: the hub device id, letters, digits and dashes. */
const endpointIdOf = (deviceId: string) => `hub-${deviceId.replace(/[^A-Za-z0-9-]/g, '-')}`;
/** Matter's labels hold 32 characters. */
const label = (name: string) => (name.length <= 32 ? name : `${name.slice(0, 31)}…`);

interface Bridged {
  deviceId: string;
  endpoint: AnyEndpoint;
  mapping: Mapping;
  /** What was last set, to set only changes. */
  last: string;
  name: string;
  deviceClass: string;
}

let configured = false;

/** Process-wide matter.js settings, before its first node: the hub owns the signals, and the mDNS interface. */
function configureMatter(mdnsInterface: string | undefined): void {
  if (configured) return;
  configured = true;
  const vars = Environment.default.vars;
  vars.set('runtime.signals', false);
  vars.set('runtime.exitcode', false);
  if (mdnsInterface) vars.set('mdns.networkInterface', mdnsInterface);
  if (vars.get('log.level') === undefined) Logger.level = LogLevel.WARN;
}

export async function startMatterBridge(o: MatterBridgeOptions): Promise<RunningMatterBridge> {
  configureMatter(o.mdnsInterface);
  const environment = new Environment('hcs-matter', Environment.default);
  environment.set(Filesystem, new NodeJsFilesystem(o.storageDir));
  const server = await ServerNode.create({
    id: 'hcs-bridge',
    environment,
    network: { port: o.port, ...(o.bind ? { listeningAddressIpv4: o.bind, ...(o.bind === '127.0.0.1' ? { listeningAddressIpv6: '::1' } : {}) } : {}) },
    productDescription: { name: 'Home Control hub', deviceType: AggregatorEndpoint.deviceType },
    basicInformation: {
      vendorId: VendorId(0xfff1),
      vendorName: 'Home Control Service',
      productId: 0x8000,
      productName: 'Home Control hub',
      productLabel: 'Home Control hub',
      nodeLabel: 'Home Control',
      hardwareVersion: 1,
      softwareVersion: 1,
      serialNumber: `hcs-${o.hubId.slice(0, 28)}`,
      uniqueId: o.hubId.slice(0, 32) || 'hcs-bridge',
    },
  });
  const aggregator = new Endpoint(AggregatorEndpoint, { id: 'hub-devices' });
  await server.add(aggregator);

  /** While the hub's own commissioning window is open (epoch ms), else 0. */
  let windowUntil = 0;
  let windowTimer: TimerHandle | undefined;
  const bridged = new Map<string, Bridged>();
  const unmapped = new Map<string, { deviceId: string; name: string; deviceClass: string }>();
  const byEndpointId = new Map<string, string>();

  const fabricLabel = (fabric: number | undefined): string => {
    if (fabric === undefined) return 'matter';
    const info = (server.state.commissioning.fabrics as Record<number, { label: string; rootVendorId: number }>)[fabric];
    return `matter:${info ? (ECOSYSTEMS[info.rootVendorId] ?? info.label) || `fabric ${fabric}` : `fabric ${fabric}`}`;
  };
  sink = async (endpointId, command, params, fabric) => {
    const deviceId = byEndpointId.get(endpointId);
    if (!deviceId) throw new Error('this device is no longer on the bridge');
    await o.command(deviceId, command, params, fabricLabel(fabric));
  };

  /** Puts a device on the bridge, updates it, or takes it off when it went or its type changed. */
  const sync = async (deviceId: string): Promise<void> => {
    const d = o.device(deviceId);
    const current = bridged.get(deviceId);
    const mapping = d && !d.removed ? mappingOf(d) : undefined;
    if (!d || d.removed || !mapping) {
      if (d && !d.removed) unmapped.set(deviceId, { deviceId, name: d.name, deviceClass: d.deviceClass });
      else unmapped.delete(deviceId);
      if (current) {
        bridged.delete(deviceId);
        byEndpointId.delete(current.endpoint.id);
        await current.endpoint.delete().catch((err: unknown) => o.log.warn({ deviceId, err: messageOf(err) }, 'Matter: a bridged device could not be removed'));
      }
      return;
    }
    unmapped.delete(deviceId);
    const basic = { bridgedDeviceBasicInformation: { nodeLabel: label(d.name), reachable: d.online } };
    const wanted = { ...mapping.state(d), ...basic };
    const key = JSON.stringify(wanted);
    if (current && current.mapping.deviceType !== mapping.deviceType) {
      bridged.delete(deviceId);
      await current.endpoint.delete().catch(() => undefined);
    } else if (current) {
      // Set even when the hub's reading did not change since the last time: a controller's command
      // may have moved the endpoint's state meanwhile (matter.js reports only what changes).
      current.last = key;
      current.name = d.name;
      // Only the attributes whose value differs from the endpoint's own: matter.js validates and
      // runs its reactors for every attribute it is given, changed or not.
      const changed = changedAttributes(current.endpoint.state as unknown as Record<string, Record<string, unknown>>, wanted as unknown as Record<string, Record<string, unknown>>);
      if (changed) await current.endpoint.set(changed as never).catch((err: unknown) => o.log.warn({ deviceId, err: messageOf(err) }, 'Matter: a bridged device state could not be set'));
      return;
    }
    const id = endpointIdOf(deviceId);
    const endpoint: AnyEndpoint = new Endpoint(mapping.type, {
      id,
      ...wanted,
      bridgedDeviceBasicInformation: { ...basic.bridgedDeviceBasicInformation, productName: label(d.deviceClass), serialNumber: `sn-${deviceId.slice(0, 29)}`, uniqueId: deviceId.slice(0, 32) },
    } as never);
    byEndpointId.set(id, deviceId);
    bridged.set(deviceId, { deviceId, endpoint, mapping, last: key, name: d.name, deviceClass: d.deviceClass });
    try {
      await aggregator.add(endpoint);
      mapping.watch?.(endpoint, (command, params, fabric) => {
        void o.command(deviceId, command, params, fabricLabel(fabric)).catch((err: unknown) => o.log.warn({ deviceId, command, err: messageOf(err) }, 'Matter: a controller write failed in the hub'));
      });
    } catch (err) {
      bridged.delete(deviceId);
      byEndpointId.delete(id);
      unmapped.set(deviceId, { deviceId, name: d.name, deviceClass: d.deviceClass });
      o.log.warn({ deviceId, deviceType: mapping.deviceType, err: describeError(err) }, 'Matter: a device could not be bridged');
    }
  };

  // Changes are applied one at a time, in order, and a burst for one device once per turn.
  let running: Promise<void> = Promise.resolve();
  const feed = new DeviceFeed(o.events, setImmediate, ({ deviceIds, presses }) => {
    running = running.then(async () => {
      for (const id of deviceIds) {
        await sync(id);
        await nextTurn();
      }
    });
    for (const { deviceId, press } of presses) {
      const b = bridged.get(deviceId);
      if (!b || b.mapping.deviceType !== 'Generic Switch') continue;
      void pressSwitch(b.endpoint, press).catch((err: unknown) => o.log.warn({ deviceId, err: messageOf(err) }, 'Matter: a button press could not be reported'));
    }
  });

  try {
    for (const d of o.devices()) {
      await sync(d.id);
      await nextTurn();
    }
    await server.start();
  } catch (err) {
    // Nothing of a bridge that did not start stays behind: listeners, the command sink, the node (and its storage lock).
    feed.close();
    sink = undefined;
    await server.close().catch(() => undefined);
    throw err;
  }
  o.log.info({ port: o.port, devices: bridged.size }, 'Matter bridge running');

  // While matter.js re-initialises the node (after its last fabric left) its state cannot be read.
  const safely = <T>(read: () => T, fallback: T): T => {
    try {
      return read();
    } catch {
      return fallback;
    }
  };
  return {
    port: o.port,
    commissioned: () => safely(() => server.state.commissioning.commissioned, false),
    fabrics: () => safely(() => fabricsNow(), []),
    pairing: () => safely(() => pairingNow(), undefined),
    devices: () => [...bridged.values()].map((b) => ({ deviceId: b.deviceId, name: b.name, deviceClass: b.deviceClass, endpoint: endpointNumber(b.endpoint), deviceType: b.mapping.deviceType })),
    unmapped: () => [...unmapped.values()],
    async openCommissioningWindow() {
      if (!server.state.commissioning.commissioned) return;
      // The node's own window (the administrator commissioning command is for controllers): the
      // bridge's codes pair it until a controller joins or the window closes (15 minutes).
      const commissioner = server.env.get(DeviceCommissioner);
      windowUntil = o.clock.now() + COMMISSIONING_WINDOW_MS;
      await commissioner.allowBasicCommissioning(() => {
        windowUntil = 0;
      });
      // A window opened again runs its own 15 minutes: the earlier one's timer would close it early.
      if (windowTimer) o.timers.clearTimeout(windowTimer);
      windowTimer = o.timers.setTimeout(() => {
        windowTimer = undefined;
        windowUntil = 0;
        void commissioner.endCommissioning().catch(() => undefined);
      }, COMMISSIONING_WINDOW_MS);
    },
    async removeFabric(fabricIndex: number) {
      await server.env.get(FabricManager).for(FabricIndex(fabricIndex)).leave();
    },
    async close() {
      o.timers.clearTimeout(windowTimer);
      feed.close();
      sink = undefined;
      await running.catch(() => undefined);
      await server.close();
    },
  };

  function fabricsNow(): MatterFabric[] {
    return Object.values(server.state.commissioning.fabrics as Record<number, { fabricIndex: number; label: string; rootVendorId: number }>).map((f) => ({
        fabricIndex: Number(f.fabricIndex),
        label: f.label,
        vendorId: Number(f.rootVendorId),
        ...(ECOSYSTEMS[Number(f.rootVendorId)] ? { ecosystem: ECOSYSTEMS[Number(f.rootVendorId)] } : {}),
      }));
  }

  function pairingNow(): { manualPairingCode: string; qrPairingCode: string } | undefined {
    if (server.state.commissioning.commissioned && windowUntil <= o.clock.now()) return undefined;
    const { manualPairingCode, qrPairingCode } = server.state.commissioning.pairingCodes;
    return { manualPairingCode, qrPairingCode };
  }
}

/**
 * One event-loop turn: matter.js adds an endpoint without giving the loop a turn, so two hundred
 * in a row held the hub's HTTP for seconds (docs/benchmarks.md, "Matter").
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function endpointNumber(endpoint: AnyEndpoint): number | null {
  try {
    return Number(endpoint.number);
  } catch {
    return null;
  }
}

/** A press of a hub button as the Generic Switch's events: initial press, then its release (or a long press, or the count of presses). */
async function pressSwitch(endpoint: AnyEndpoint, press: 'single' | 'double' | 'long'): Promise<void> {
  await endpoint.act((agent) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the switch's events by feature
    const events = (agent as any).switch.events;
    events.initialPress.emit({ newPosition: 1 }, agent.context);
    if (press === 'long') {
      events.longPress.emit({ newPosition: 1 }, agent.context);
      events.longRelease.emit({ previousPosition: 1 }, agent.context);
    } else {
      events.shortRelease.emit({ previousPosition: 1 }, agent.context);
      events.multiPressComplete.emit({ previousPosition: 1, totalNumberOfPressesCounted: press === 'double' ? 2 : 1 }, agent.context);
    }
  });
}

/** matter.js's errors with what they wrap (a behaviour's own error under "Behaviors have errors"). */
function describeError(err: unknown): string {
  const parts = [messageOf(err)];
  let cause = (err as { cause?: unknown })?.cause;
  for (let depth = 0; cause !== undefined && depth < 4; depth++) {
    parts.push(messageOf(cause));
    cause = (cause as { cause?: unknown })?.cause;
  }
  const errors = (err as { errors?: unknown[] })?.errors;
  if (Array.isArray(errors)) parts.push(...errors.slice(0, 4).map((e) => messageOf(e)));
  return parts.join(': ').slice(0, 1000);
}

/** The clusters and attributes of `wanted` whose values differ from the endpoint's `state`; undefined when none do. */
export function changedAttributes(state: Record<string, Record<string, unknown> | undefined>, wanted: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> | undefined {
  let changed: Record<string, Record<string, unknown>> | undefined;
  for (const [cluster, attributes] of Object.entries(wanted)) {
    const have = state[cluster];
    for (const [name, value] of Object.entries(attributes)) {
      const current = have?.[name];
      const same = current === value || (typeof value === 'object' && value !== null && JSON.stringify(current) === JSON.stringify(value));
      if (same) continue;
      changed ??= {};
      (changed[cluster] ??= {})[name] = value;
    }
  }
  return changed;
}
