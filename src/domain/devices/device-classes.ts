import { CAPABILITY_NAMES, type CapabilityName } from './capability-table.js';

/**
 * The class vocabulary: the device classes and what each admits, the sensor and binary sensor
 * classes, button presses, colour modes, fan directions, default ranges and the attributes a
 * device carries beside its class. It is its own module because it is declared data, read by the
 * derivation, the entity domains and the surfaces alike; deriving a device's class is derivation.ts.
 */

// ---------------------------------------------------------------------------------------------
// Device classes: what a device is (a light, a lock…), on top of what it can do.

/** Every device class, in the order lists follow. */
export const DEVICE_CLASSES = ['light', 'switch', 'outlet', 'cover', 'climate', 'fan', 'lock', 'sensor', 'binary_sensor', 'button', 'media_player', 'remote', 'generic'] as const;
export type DeviceClass = (typeof DEVICE_CLASSES)[number];

/**
 * Sensor classes with their unit, the state keys drivers report them under (first present wins)
 * and their Home Assistant device classes: the first is the one the hub says (MQTT export, the
 * graph's entities), the others are read as this class too (MQTT discovery). The one place the
 * hub's sensor vocabulary meets Home Assistant's.
 */
export const SENSOR_CLASSES = {
  temperature: { unit: '°C', keys: ['temperature', 'current_temperature'], homeAssistant: ['temperature'] },
  humidity: { unit: '%', keys: ['humidity', 'current_humidity', 'relative_humidity'], homeAssistant: ['humidity'] },
  illuminance: { unit: 'lx', keys: ['illuminance', 'illuminance_lux', 'lux'], homeAssistant: ['illuminance'] },
  power: { unit: 'W', keys: ['power', 'power_w', 'watts'], homeAssistant: ['power'] },
  energy: { unit: 'kWh', keys: ['energy', 'energy_kwh'], homeAssistant: ['energy'] },
  battery: { unit: '%', keys: ['battery', 'battery_level'], homeAssistant: ['battery'] },
  co2: { unit: 'ppm', keys: ['co2', 'carbon_dioxide'], homeAssistant: ['carbon_dioxide'] },
  pm25: { unit: 'µg/m³', keys: ['pm25', 'pm2_5'], homeAssistant: ['pm25'] },
  pressure: { unit: 'hPa', keys: ['pressure'], homeAssistant: ['pressure', 'atmospheric_pressure'] },
} as const satisfies Record<string, { unit: string; keys: readonly string[]; homeAssistant: readonly [string, ...string[]] }>;
export type SensorClass = keyof typeof SENSOR_CLASSES;
export const SENSOR_CLASS_NAMES = Object.keys(SENSOR_CLASSES) as SensorClass[];

/**
 * Binary sensor classes: the state keys they are reported under and the words for detected / clear.
 * `contact` is true when the contact is made (the door is closed), as Zigbee2MQTT and HomeKit say;
 * a driver may report `open` (true when open) instead. Their Home Assistant device classes as
 * the sensor classes' above.
 */
export const BINARY_SENSOR_CLASSES = {
  motion: { keys: ['motion', 'motion_detected'], words: ['Motion', 'Clear'], homeAssistant: ['motion'] },
  occupancy: { keys: ['occupancy', 'occupied', 'presence'], words: ['Occupied', 'Clear'], homeAssistant: ['occupancy', 'presence'] },
  contact: { keys: ['contact', 'open'], words: ['Open', 'Closed'], homeAssistant: ['door', 'window', 'opening', 'garage_door'] },
  leak: { keys: ['leak', 'water_leak', 'moisture'], words: ['Wet', 'Dry'], homeAssistant: ['moisture'] },
  smoke: { keys: ['smoke', 'smoke_detected'], words: ['Smoke', 'Clear'], homeAssistant: ['smoke'] },
  tamper: { keys: ['tamper', 'tampered'], words: ['Tampered', 'Clear'], homeAssistant: ['tamper'] },
} as const satisfies Record<string, { keys: readonly string[]; words: readonly [string, string]; homeAssistant: readonly [string, ...string[]] }>;
export type BinarySensorClass = keyof typeof BINARY_SENSOR_CLASSES;
export const BINARY_SENSOR_CLASS_NAMES = Object.keys(BINARY_SENSOR_CLASSES) as BinarySensorClass[];

/** A Home Assistant sensor device class → the hub's sensor class (MQTT discovery reads it so). */
export const SENSOR_CLASS_OF_HOME_ASSISTANT: Readonly<Record<string, SensorClass>> = Object.fromEntries(
  SENSOR_CLASS_NAMES.flatMap((c) => SENSOR_CLASSES[c].homeAssistant.map((ha) => [ha, c])),
);
/** A Home Assistant binary sensor device class → the hub's binary sensor class. */
export const BINARY_SENSOR_CLASS_OF_HOME_ASSISTANT: Readonly<Record<string, BinarySensorClass>> = Object.fromEntries(
  BINARY_SENSOR_CLASS_NAMES.flatMap((c) => BINARY_SENSOR_CLASSES[c].homeAssistant.map((ha) => [ha, c])),
);
/** The Home Assistant device class the hub says for one of its sensor classes (undefined for another word). */
export function homeAssistantSensorClass(sensorClass: unknown): string | undefined {
  return typeof sensorClass === 'string' && Object.hasOwn(SENSOR_CLASSES, sensorClass) ? SENSOR_CLASSES[sensorClass as SensorClass].homeAssistant[0] : undefined;
}
/** The Home Assistant device class the hub says for one of its binary sensor classes. */
export function homeAssistantBinarySensorClass(sensorClass: unknown): string | undefined {
  return typeof sensorClass === 'string' && Object.hasOwn(BINARY_SENSOR_CLASSES, sensorClass) ? BINARY_SENSOR_CLASSES[sensorClass as BinarySensorClass].homeAssistant[0] : undefined;
}

export const BUTTON_PRESSES = ['single', 'double', 'long'] as const;
export type ButtonPress = (typeof BUTTON_PRESSES)[number];
export const COLOR_MODES = ['onoff', 'brightness', 'color_temp', 'hs'] as const;
export type ColorMode = (typeof COLOR_MODES)[number];
export const FAN_DIRECTIONS = ['forward', 'reverse'] as const;

/** Colour temperature range when a light declares none (warm candle to blue sky). */
export const DEFAULT_KELVIN_RANGE = { min: 2000, max: 6500 } as const;
/** Target temperature range when a climate device declares none, in °C. */
export const DEFAULT_TEMPERATURE_RANGE = { min: 5, max: 35 } as const;

/**
 * Ranges, units and supported modes, declared beside the class by the driver (or integration) and
 * otherwise derived from capabilities and state, so that no surface has to guess them.
 */
export interface DeviceAttributes {
  /** light: the colour modes it supports. */
  colorModes?: ColorMode[];
  /** light: colour temperature range, kelvin. */
  minKelvin?: number;
  maxKelvin?: number;
  /** cover: whether its slats tilt. */
  tilt?: boolean;
  /** climate: target temperature range and step, in `temperatureUnit`. */
  minTemperature?: number;
  maxTemperature?: number;
  temperatureStep?: number;
  temperatureUnit?: '°C' | '°F';
  /** climate: the modes `set_hvac_mode` takes (e.g. off, heat, cool, auto). */
  hvacModes?: string[];
  /** fan: whether it oscillates and turns in reverse. */
  oscillate?: boolean;
  direction?: boolean;
  /** sensor and binary_sensor: what it measures or detects. */
  sensorClass?: SensorClass | BinarySensorClass;
  /** sensor: the unit of its value. */
  unit?: string;
  /** button: the presses it emits. */
  presses?: ButtonPress[];
  /**
   * Any class: the state key a reading field is read from, where the driver's differs from the
   * usual ones (`{brightness: 'lvl'}`); see `READING_KEYS` in readings.ts for the fields.
   */
  stateKeys?: Record<string, string>;
}

export interface DeviceClassSpec {
  description: string;
  /** Capabilities whose commands a device of this class accepts (a `generic` device: all). */
  capabilities: readonly CapabilityName[];
  /** Capabilities a device of this class has when its driver lists no commands (it takes the canonical ones). */
  defaults: readonly CapabilityName[];
  /** The entity domain it shows up as (intents, entities, MQTT). */
  entityDomain: string;
}

export const DEVICE_CLASS_MODEL: Record<DeviceClass, DeviceClassSpec> = {
  light: { description: 'A light: on/off, and brightness and colour where its attributes say.', capabilities: ['power', 'brightness', 'color'], defaults: ['power'], entityDomain: 'light' },
  switch: { description: 'Anything that only switches on and off.', capabilities: ['power'], defaults: ['power'], entityDomain: 'switch' },
  outlet: { description: 'A plug or socket: on/off, often with a power reading.', capabilities: ['power'], defaults: ['power'], entityDomain: 'switch' },
  cover: { description: 'Blinds, shades, curtains, doors and garage doors: open, close, stop, and a position (and tilt) where offered.', capabilities: ['cover', 'position'], defaults: ['cover'], entityDomain: 'cover' },
  climate: { description: 'Thermostats, heaters and air conditioners: a target temperature and a mode.', capabilities: ['temperature', 'climate_mode', 'power', 'fan_speed'], defaults: ['temperature'], entityDomain: 'climate' },
  fan: { description: 'A fan: on/off, a speed percentage, and oscillation and direction where offered.', capabilities: ['power', 'fan_speed'], defaults: ['power'], entityDomain: 'fan' },
  lock: { description: 'A door lock: lock and unlock; it may report being jammed.', capabilities: ['lock'], defaults: ['lock'], entityDomain: 'lock' },
  sensor: { description: 'A measurement with a unit (attribute `sensorClass`: temperature, humidity, illuminance, power, energy, battery, co2, pm25, pressure).', capabilities: [], defaults: [], entityDomain: 'sensor' },
  binary_sensor: { description: 'A detection (attribute `sensorClass`: motion, occupancy, contact, leak, smoke, tamper).', capabilities: [], defaults: [], entityDomain: 'binary_sensor' },
  button: { description: 'A button whose presses (single, double, long) are hub events.', capabilities: [], defaults: [], entityDomain: 'event' },
  media_player: { description: 'TVs, receivers, speakers and streamers: power, playback, volume, inputs and apps.', capabilities: ['power', 'volume', 'media', 'input', 'apps', 'equalizer', 'scenes'], defaults: [], entityDomain: 'media_player' },
  remote: { description: 'An IR remote: its keys, and power, volume and transport where its keys are named so.', capabilities: ['ir', 'power', 'volume', 'media'], defaults: [], entityDomain: 'remote' },
  generic: { description: 'Nothing recognised: its own commands, and whatever its capabilities allow.', capabilities: CAPABILITY_NAMES, defaults: [], entityDomain: 'switch' },
};

export function isDeviceClass(value: unknown): value is DeviceClass {
  return typeof value === 'string' && (DEVICE_CLASSES as readonly string[]).includes(value);
}
