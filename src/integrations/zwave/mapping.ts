import type { ValueID, ValueMetadata, ZWaveNode } from 'zwave-js';
import { hsToRgb, rgbToHs } from '../../platform/colour.js';
import { NetworkFailureError } from '../../platform/network-failures.js';

/**
 * How a Z-Wave node becomes hub devices, by its command classes (the table below, one row per
 * class). A node gives one device for what it does (a switch, a dimmer, a lock, a thermostat)
 * and one per thing it measures or reports (a temperature, motion, its battery, its energy,
 * each scene button), as Home Assistant's Z-Wave JS entities do. The state of each is read from
 * the node's values (zwave-js keeps them, also across restarts), and the standard commands
 * become the command class API calls.
 */

/** Command class ids (SDS13548): the ones this table maps. Numbers, so that this file needs zwave-js for its types only. */
export const CC = {
  BinarySensor: 0x30,
  BinarySwitch: 0x25,
  Battery: 0x80,
  CentralScene: 0x5b,
  ColorSwitch: 0x33,
  DoorLock: 0x62,
  Meter: 0x32,
  MultilevelSensor: 0x31,
  MultilevelSwitch: 0x26,
  Notification: 0x71,
  ThermostatMode: 0x40,
  ThermostatOperatingState: 0x42,
  ThermostatSetpoint: 0x43,
} as const;

/** Runs a standard command on the node; rejects with a NetworkFailureError when it cannot. */
export type PartCommand = (params: Record<string, unknown>) => Promise<unknown>;

/** One hub device of a node. */
export interface NodePart {
  /** Appended to the node's device id: '' for what the node does, `temperature`, `battery`, `scene-001`… */
  readonly key: string;
  readonly name: string;
  readonly deviceClass: string;
  readonly attributes?: Record<string, unknown>;
  /** Its state now, from the node's values (only what is known). */
  state(): Record<string, unknown>;
  readonly commands: Readonly<Record<string, PartCommand>>;
}

/** The part of zwave-js's node that the mapping reads and calls (a ZWaveNode). */
export type MappedNode = Pick<ZWaveNode, 'id' | 'getValue' | 'getValueMetadata' | 'getDefinedValueIDs' | 'supportsCC' | 'deviceClass' | 'commandClasses'>;

const number = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function needNumber(params: Record<string, unknown>, key: string): number {
  const v = params[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new NetworkFailureError('rejected', `${key} must be a number`);
  return v;
}

function ccSpecific(node: MappedNode, id: ValueID): Record<string, unknown> {
  const meta = node.getValueMetadata(id) as ValueMetadata & { ccSpecific?: Record<string, unknown> };
  return meta.ccSpecific ?? {};
}

function valuesOf(node: MappedNode, cc: number, property?: string): ValueID[] {
  return node.getDefinedValueIDs().filter((v) => v.commandClass === cc && (property === undefined || v.property === property));
}

/** A value's id as it keys a part: `002-temperature`, unique within the node. */
function slug(...words: Array<string | number | undefined>): string {
  return words
    .filter((w) => w !== undefined && w !== '')
    .map((w) => String(w).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, ''))
    .join('-');
}

/** Multilevel Sensor types (SDS13812) and the sensor class each is in the hub's model. */
const SENSOR_TYPES: Readonly<Record<number, { sensorClass: string; key: string; unit: string; convert?: (value: number, unit: string | undefined) => number }>> = {
  1: { sensorClass: 'temperature', key: 'temperature', unit: '°C', convert: (v, unit) => (unit === '°F' ? Math.round(((v - 32) * 5) / 0.9) / 10 : v) },
  3: { sensorClass: 'illuminance', key: 'illuminance', unit: 'lx' },
  4: { sensorClass: 'power', key: 'power', unit: 'W' },
  5: { sensorClass: 'humidity', key: 'humidity', unit: '%' },
  8: { sensorClass: 'pressure', key: 'pressure', unit: 'hPa', convert: (v, unit) => (unit === 'kPa' ? v * 10 : v) },
  9: { sensorClass: 'pressure', key: 'pressure', unit: 'hPa', convert: (v, unit) => (unit === 'kPa' ? v * 10 : v) },
  17: { sensorClass: 'co2', key: 'co2', unit: 'ppm' },
};

/** Notification types (SDS13713) that are a binary sensor, and the values that mean "detected". */
const NOTIFICATION_SENSORS: Readonly<Record<number, { sensorClass: string; key: string; detected: (value: number) => boolean }>> = {
  1: { sensorClass: 'smoke', key: 'smoke', detected: (v) => v !== 0 },
  5: { sensorClass: 'leak', key: 'leak', detected: (v) => v !== 0 },
  // Access Control's "Door state": 22 open, 23 closed. The model's contact is true when closed.
  6: { sensorClass: 'contact', key: 'contact', detected: (v) => v === 22 },
  7: { sensorClass: 'motion', key: 'motion', detected: (v) => v !== 0 },
};

/** Binary Sensor types (by the value's property, as zwave-js names them). */
const BINARY_SENSOR_TYPES: Readonly<Record<string, { sensorClass: string; key: string }>> = {
  Motion: { sensorClass: 'motion', key: 'motion' },
  'Door/Window': { sensorClass: 'contact', key: 'contact' },
  Water: { sensorClass: 'leak', key: 'leak' },
  Smoke: { sensorClass: 'smoke', key: 'smoke' },
  Tamper: { sensorClass: 'tamper', key: 'tamper' },
};

/** Thermostat Mode values (SDS13781) and the model's hvac modes. */
const THERMOSTAT_MODES: Readonly<Record<number, string>> = { 0: 'off', 1: 'heat', 2: 'cool', 3: 'auto', 11: 'eco', 6: 'fan_only', 8: 'dry' };
const HVAC_ACTIONS: Readonly<Record<number, string>> = { 0: 'idle', 1: 'heating', 2: 'cooling', 3: 'fan', 8: 'heating', 9: 'cooling' };
/** Central Scene key attributes (0 pressed, 2 held, 3 pressed twice) as button presses. */
const SCENE_PRESSES: Readonly<Record<number, 'single' | 'long' | 'double'>> = { 0: 'single', 2: 'long', 3: 'double' };

/** Multilevel Switch levels are 0–99 (99 is full on); the model's brightness and position are 0–100. */
const toPercent = (level: number) => (level >= 99 ? 100 : Math.round((level * 100) / 99));
const toLevel = (percent: number) => Math.max(0, Math.min(99, Math.round((percent * 99) / 100)));

/** Whether a Multilevel Switch node moves something (a blind, a shade) rather than dims: generic class 0x11, specific "motor control". */
function isCover(node: MappedNode): boolean {
  const cls = node.deviceClass;
  if (!cls) return false;
  return cls.generic.key === 0x11 && [0x05, 0x06, 0x07].includes(cls.specific.key);
}

function onOffCommands(set: (on: boolean) => Promise<unknown>, isOn: () => boolean | undefined): Record<string, PartCommand> {
  return {
    turn_on: () => set(true),
    turn_off: () => set(false),
    toggle: () => set(!isOn()),
  };
}

/** What the node does: one row per actuating command class, the first the node supports wins. */
const ACTUATORS: ReadonlyArray<{ cc: number; part(node: MappedNode): NodePart }> = [
  {
    cc: CC.ThermostatSetpoint,
    part(node): NodePart {
      const modeId = valuesOf(node, CC.ThermostatMode, 'mode')[0];
      const modeMeta = modeId ? (node.getValueMetadata(modeId) as { states?: Record<string, string> }) : {};
      const hvacModes = Object.keys(modeMeta.states ?? {})
        .map((k) => THERMOSTAT_MODES[Number(k)])
        .filter((m): m is string => m !== undefined);
      const setpoints = valuesOf(node, CC.ThermostatSetpoint, 'setpoint');
      // Heating (1) where there is one: the setpoint the mode "heat" uses.
      const setpoint = setpoints.find((v) => v.propertyKey === 1) ?? setpoints[0];
      const temperature = valuesOf(node, CC.MultilevelSensor).find((v) => ccSpecific(node, v).sensorType === 1);
      const state = valuesOf(node, CC.ThermostatOperatingState, 'state')[0];
      return {
        key: '',
        name: 'Thermostat',
        deviceClass: 'climate',
        attributes: { temperatureUnit: '°C', ...(hvacModes.length > 0 ? { hvacModes } : {}) },
        state() {
          const out: Record<string, unknown> = {};
          const target = setpoint ? number(node.getValue(setpoint)) : undefined;
          if (target !== undefined) out.target_temperature = target;
          const current = temperature ? number(node.getValue(temperature)) : undefined;
          if (current !== undefined) out.current_temperature = current;
          const mode = modeId ? number(node.getValue(modeId)) : undefined;
          if (mode !== undefined && THERMOSTAT_MODES[mode]) out.hvac_mode = THERMOSTAT_MODES[mode];
          const action = state ? number(node.getValue(state)) : undefined;
          if (action !== undefined && HVAC_ACTIONS[action]) out.hvac_action = HVAC_ACTIONS[action];
          return out;
        },
        commands: {
          set_target_temperature: async (params) => {
            if (!setpoint) throw new NetworkFailureError('unsupported', 'the thermostat reports no setpoint');
            return node.commandClasses['Thermostat Setpoint'].set(Number(setpoint.propertyKey ?? 1), needNumber(params, 'temperature'), 0);
          },
          set_hvac_mode: async (params) => {
            const wanted = Object.entries(THERMOSTAT_MODES).find(([, name]) => name === params.mode);
            if (!wanted || !hvacModes.includes(wanted[1])) throw new NetworkFailureError('rejected', `mode must be one of ${hvacModes.join(', ')}`);
            return node.commandClasses['Thermostat Mode'].set(Number(wanted[0]));
          },
        },
      };
    },
  },
  {
    cc: CC.DoorLock,
    part(node): NodePart {
      const mode = { commandClass: CC.DoorLock, property: 'currentMode' };
      return {
        key: '',
        name: 'Lock',
        deviceClass: 'lock',
        state() {
          const v = number(node.getValue(mode));
          // Door Lock modes: 0xff secured; 0x00–0x21 unsecured (with or without a timeout); 0xfe unknown.
          return v === undefined || v === 0xfe ? {} : { locked: v === 0xff };
        },
        commands: {
          lock: () => node.commandClasses['Door Lock'].set(0xff),
          unlock: () => node.commandClasses['Door Lock'].set(0x00),
        },
      };
    },
  },
  {
    cc: CC.MultilevelSwitch,
    part(node): NodePart {
      const current = { commandClass: CC.MultilevelSwitch, property: 'currentValue' };
      const level = () => number(node.getValue(current));
      const set = (value: number) => node.commandClasses['Multilevel Switch'].set(value);
      if (isCover(node)) {
        return {
          key: '',
          name: 'Cover',
          deviceClass: 'cover',
          state() {
            const v = level();
            return v === undefined ? {} : { position: toPercent(v) };
          },
          commands: {
            open: () => set(99),
            close: () => set(0),
            stop: () => node.commandClasses['Multilevel Switch'].stopLevelChange(),
            set_position: (params) => set(toLevel(needNumber(params, 'position'))),
          },
        };
      }
      const colour = node.supportsCC(CC.ColorSwitch);
      const colourValue = { commandClass: CC.ColorSwitch, property: 'currentColor' };
      return {
        key: '',
        name: colour ? 'Colour light' : 'Dimmer',
        deviceClass: 'light',
        attributes: { colorModes: colour ? ['brightness', 'hs'] : ['brightness'] },
        state() {
          const v = level();
          const out: Record<string, unknown> = v === undefined ? {} : { on: v > 0, brightness: toPercent(v) };
          const rgb = colour ? (node.getValue(colourValue) as { red?: number; green?: number; blue?: number } | undefined) : undefined;
          if (rgb && number(rgb.red) !== undefined && number(rgb.green) !== undefined && number(rgb.blue) !== undefined) Object.assign(out, rgbToHs(rgb.red!, rgb.green!, rgb.blue!));
          return out;
        },
        commands: {
          // 255: back to the level it had before it was switched off (the node remembers it).
          ...onOffCommands((on) => set(on ? 255 : 0), () => (level() ?? 0) > 0),
          set_brightness: (params) => set(toLevel(needNumber(params, 'brightness'))),
          ...(colour
            ? {
                set_hs_color: (params: Record<string, unknown>) => {
                  const [red, green, blue] = hsToRgb({ hue: needNumber(params, 'hue'), saturation: needNumber(params, 'saturation') });
                  return node.commandClasses['Color Switch'].set({ red, green, blue });
                },
              }
            : {}),
        },
      };
    },
  },
  {
    cc: CC.BinarySwitch,
    part(node): NodePart {
      const current = { commandClass: CC.BinarySwitch, property: 'currentValue' };
      const on = () => node.getValue(current) as boolean | undefined;
      const power = valuesOf(node, CC.Meter, 'value').find((v) => ccSpecific(node, v).meterType === 1 && ccSpecific(node, v).scale === 2);
      // A switch that meters what it switches is a plug.
      const outlet = node.supportsCC(CC.Meter);
      return {
        key: '',
        name: outlet ? 'Plug' : 'Switch',
        deviceClass: outlet ? 'outlet' : 'switch',
        state() {
          const v = on();
          const out: Record<string, unknown> = typeof v === 'boolean' ? { on: v } : {};
          const w = power ? number(node.getValue(power)) : undefined;
          if (w !== undefined) out.power_w = w;
          return out;
        },
        commands: onOffCommands((value) => node.commandClasses['Binary Switch'].set(value), on),
      };
    },
  },
];

/** What the node measures and reports: one row per reporting command class, each giving any number of parts. */
const REPORTERS: ReadonlyArray<{ cc: number; parts(node: MappedNode): NodePart[] }> = [
  {
    cc: CC.MultilevelSensor,
    parts(node) {
      // A thermostat shows its own temperature; the rest are sensors of their own.
      const thermostat = node.supportsCC(CC.ThermostatSetpoint);
      return valuesOf(node, CC.MultilevelSensor).flatMap((id) => {
        const type = number(ccSpecific(node, id).sensorType);
        if (thermostat && type === 1) return [];
        const known = type === undefined ? undefined : SENSOR_TYPES[type];
        const unit = (node.getValueMetadata(id) as { unit?: string }).unit;
        const label = String(id.property);
        return [
          {
            key: slug(id.endpoint || undefined, known?.key ?? label),
            name: label,
            deviceClass: 'sensor',
            attributes: known ? { sensorClass: known.sensorClass, unit: known.unit } : { ...(unit ? { unit } : {}) },
            state() {
              const v = number(node.getValue(id));
              if (v === undefined) return {};
              return known ? { [known.key]: known.convert ? known.convert(v, unit) : v } : { value: v };
            },
            commands: {},
          },
        ];
      });
    },
  },
  {
    cc: CC.Notification,
    parts(node) {
      return valuesOf(node, CC.Notification).flatMap((id) => {
        const type = number(ccSpecific(node, id).notificationType);
        const sensor = type === undefined ? undefined : NOTIFICATION_SENSORS[type];
        // Only the "… status" and "Door state" values are states; the others are events or alarms of their own.
        if (!sensor || typeof id.propertyKey !== 'string' || !/status|state/i.test(id.propertyKey) || /simple/i.test(id.propertyKey)) return [];
        return [
          {
            key: slug(id.endpoint || undefined, sensor.key),
            name: `${id.property} · ${id.propertyKey}`,
            deviceClass: 'binary_sensor',
            attributes: { sensorClass: sensor.sensorClass },
            state() {
              const v = number(node.getValue(id));
              if (v === undefined) return {};
              const detected = sensor.detected(v);
              return sensor.key === 'contact' ? { contact: !detected } : { [sensor.key]: detected };
            },
            commands: {},
          },
        ];
      });
    },
  },
  {
    cc: CC.BinarySensor,
    parts(node) {
      return valuesOf(node, CC.BinarySensor).flatMap((id) => {
        const sensor = BINARY_SENSOR_TYPES[String(id.property)];
        if (!sensor) return [];
        return [
          {
            key: slug(id.endpoint || undefined, `binary-${sensor.key}`),
            name: String(id.property),
            deviceClass: 'binary_sensor',
            attributes: { sensorClass: sensor.sensorClass },
            state() {
              const v = node.getValue(id);
              if (typeof v !== 'boolean') return {};
              return sensor.key === 'contact' ? { contact: !v } : { [sensor.key]: v };
            },
            commands: {},
          },
        ];
      });
    },
  },
  {
    cc: CC.Meter,
    parts(node) {
      // Electric energy (kWh) is a sensor of its own; the power (W) is the plug's power_w (above).
      return valuesOf(node, CC.Meter, 'value').flatMap((id) => {
        const spec = ccSpecific(node, id);
        if (spec.meterType !== 1 || spec.scale !== 0) return [];
        return [
          {
            key: slug(id.endpoint || undefined, 'energy'),
            name: 'Energy',
            deviceClass: 'sensor',
            attributes: { sensorClass: 'energy', unit: 'kWh' },
            state() {
              const v = number(node.getValue(id));
              return v === undefined ? {} : { energy: v };
            },
            commands: {},
          },
        ];
      });
    },
  },
  {
    cc: CC.Battery,
    parts(node) {
      const level = { commandClass: CC.Battery, property: 'level' };
      return [
        {
          key: 'battery',
          name: 'Battery',
          deviceClass: 'sensor',
          attributes: { sensorClass: 'battery', unit: '%' },
          state() {
            const v = number(node.getValue(level));
            return v === undefined ? {} : { battery: v };
          },
          commands: {},
        },
      ];
    },
  },
  {
    cc: CC.CentralScene,
    parts(node) {
      return valuesOf(node, CC.CentralScene, 'scene').map((id) => ({
        key: slug('scene', String(id.propertyKey)),
        name: `Scene ${Number(id.propertyKey)}`,
        deviceClass: 'button',
        attributes: { presses: ['single', 'double', 'long'] },
        state: () => ({}),
        commands: {},
      }));
    },
  },
];

/** Every hub device of the node, by its command classes. */
export function partsOf(node: MappedNode): NodePart[] {
  const actuator = ACTUATORS.find((row) => node.supportsCC(row.cc));
  const parts = [...(actuator ? [actuator.part(node)] : []), ...REPORTERS.filter((row) => node.supportsCC(row.cc)).flatMap((row) => row.parts(node))];
  // Keys are unique within the node (two sensors of one type on one endpoint get a number).
  const seen = new Map<string, number>();
  return parts.map((part) => {
    const n = (seen.get(part.key) ?? 0) + 1;
    seen.set(part.key, n);
    return n === 1 ? part : { ...part, key: `${part.key}-${n}` };
  });
}

/** A Central Scene notification as a button press of the part `scene-<key>`; undefined for a key release and other values. */
export function scenePress(args: { commandClass: number; property: string | number; propertyKey?: string | number; value?: unknown }): { key: string; press: 'single' | 'double' | 'long' } | undefined {
  if (args.commandClass !== CC.CentralScene || args.property !== 'scene') return undefined;
  const press = typeof args.value === 'number' ? SCENE_PRESSES[args.value] : undefined;
  return press ? { key: slug('scene', String(args.propertyKey)), press } : undefined;
}

/** The command classes the table maps, for the docs and the status: the others a node has are left unmapped. */
export const MAPPED_COMMAND_CLASSES: readonly number[] = [...ACTUATORS.map((r) => r.cc), ...REPORTERS.map((r) => r.cc)];
