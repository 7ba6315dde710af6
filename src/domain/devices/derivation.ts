import { GENERIC_IR, type DeviceCommandSpec } from './model.js';
import { CAPABILITY_NAMES, type CapabilityName } from './capability-table.js';
import { COMMAND_SYNONYMS, commandNames, normalizeCommandName, offersMeaning, type CommandMeaning } from './command-synonyms.js';
import {
  BINARY_SENSOR_CLASSES,
  BINARY_SENSOR_CLASS_NAMES,
  BUTTON_PRESSES,
  DEFAULT_KELVIN_RANGE,
  DEFAULT_TEMPERATURE_RANGE,
  DEVICE_CLASS_MODEL,
  SENSOR_CLASSES,
  SENSOR_CLASS_NAMES,
  isDeviceClass,
  type BinarySensorClass,
  type ColorMode,
  type DeviceAttributes,
  type DeviceClass,
  type SensorClass,
} from './device-classes.js';

/**
 * The derivation of a device's capabilities, class and attributes from what its driver declared,
 * the commands it offers, its category and its state; and, by the same tables, what one of its
 * commands is for (`classifyCommand`, here rather than in command-synonyms.ts because it reads
 * `COMMAND_CAPABILITIES` and `IR_CAPABILITIES`). It is its own module because it is the logic over
 * the declared data: it reads the capability table, the command synonyms and the class
 * vocabulary, and none of them reads it at run time.
 */

/** Command names that carry each capability (the commands alone decide, whatever the category). */
const COMMAND_CAPABILITIES: Array<[CapabilityName, CommandMeaning[]]> = [
  ['power', ['turn_on', 'turn_off', 'toggle']],
  ['brightness', ['set_brightness']],
  ['volume', ['volume_set', 'volume_up', 'volume_down', 'mute']],
  ['temperature', ['set_temperature']],
  ['climate_mode', ['set_mode']],
  // stop/next/previous alone do not make a media player (a blind stops too).
  ['media', ['play', 'pause', 'play_pause']],
  // A positionable cover opens and closes too (open/close go through set_position when missing).
  ['cover', ['open', 'close', 'set_position']],
  ['position', ['set_position', 'set_tilt_position']],
  ['color', ['set_color_temp', 'set_hs_color']],
  ['lock', ['lock', 'unlock']],
  ['fan_speed', ['set_percentage', 'oscillate', 'set_direction']],
  ['input', ['select_input']],
];

/** IR keys only ever stand for these: an IR "open" is a disc tray, not a blind. */
const IR_CAPABILITIES = new Set<CapabilityName>(['power', 'volume', 'media']);

/** Declared capabilities outside the vocabulary that drivers commonly use. */
const DECLARED_ALIASES: Record<string, CapabilityName[]> = {
  light: ['power'],
  lighting: ['power'],
  switch: ['power'],
  on_off: ['power'],
  onoff: ['power'],
  dimmer: ['power', 'brightness'],
  dimmable: ['brightness'],
  dimming: ['brightness'],
  audio_volume: ['volume'],
  thermostat: ['temperature'],
  climate: ['temperature'],
  setpoint: ['temperature'],
  hvac_mode: ['climate_mode'],
  media_player: ['media'],
  playback: ['media'],
  transport: ['media'],
  blind: ['cover'],
  shade: ['cover'],
  shutter: ['cover'],
  window_covering: ['cover'],
  tilt: ['position'],
  color_temperature: ['color'],
  colour: ['color'],
  color_temp: ['color'],
  door_lock: ['lock'],
  fan: ['power', 'fan_speed'],
  speed: ['fan_speed'],
  motion: ['binary_sensor'],
  occupancy: ['binary_sensor'],
  contact: ['binary_sensor'],
  leak: ['binary_sensor'],
  smoke: ['binary_sensor'],
  tamper: ['binary_sensor'],
  stateless_switch: ['button'],
  programmable_switch: ['button'],
  source: ['input'],
  inputs: ['input'],
  source_select: ['input'],
  app: ['apps'],
  scene: ['scenes'],
  sound_mode: ['equalizer'],
};

/** Categories (the driver's or an admin's word for the device) that name a class. */
const CATEGORY_CLASSES: Array<[RegExp, DeviceClass]> = [
  [/^(light|lighting|lamp|dimmer|bulb|led|light_?strip|lightbulb)$/, 'light'],
  [/^(outlet|plug|smart_?plug|socket|power_?strip)$/, 'outlet'],
  [/^(switch|relay|wall_?switch)$/, 'switch'],
  [/^(cover|blinds?|shades?|shutters?|curtains?|awning|garage(_?door)?|door|gate|window_?covering)$/, 'cover'],
  [/^(climate|thermostat|hvac|heater|air_?conditioner|heat_?pump)$/, 'climate'],
  [/^(fan|ceiling_?fan)$/, 'fan'],
  [/^(lock|door_?lock|smart_?lock)$/, 'lock'],
  [/^(button|doorbell|scene_?controller|stateless_?switch)$/, 'button'],
  [/^(tv|television|speaker|receiver|av_?receiver|soundbar|media_?player|streamer|roku|android_?tv|cast)$/, 'media_player'],
];
const BINARY_SENSOR_WORDS = /motion|occupancy|presence|contact|door_sensor|window_sensor|leak|water|smoke|tamper|binary/;

const SENSOR_WORDS = /sensor|meter|measurement|thermometer|hygrometer|weather|humidity|illuminance|motion|contact|occupancy|battery|co2|pressure|energy/;

/** The parts of a device the derivation reads; a `LogicalDevice` has them all. */
export interface CapabilitySource {
  driverKey?: string;
  category: string;
  /** What the driver declared (any vocabulary). */
  capabilities: readonly string[];
  commands: ReadonlyArray<string | DeviceCommandSpec>;
  /** The class the driver declared, if any (it always wins). */
  declaredClass?: DeviceClass | null | undefined;
}

export function isIrDevice(device: Pick<CapabilitySource, 'driverKey' | 'capabilities'>): boolean {
  return device.driverKey === GENERIC_IR || (device.driverKey === undefined && device.capabilities.includes('ir'));
}

export function isSensorCategory(category: string): boolean {
  return SENSOR_WORDS.test(category.toLowerCase());
}

/** The class a category names, if any (`lamp` → light, `plug` → outlet, `motion_sensor` → binary_sensor). */
export function classOfCategory(category: string): DeviceClass | undefined {
  const c = normalizeCommandName(category);
  const named = CATEGORY_CLASSES.find(([pattern]) => pattern.test(c))?.[1];
  if (named) return named;
  if (BINARY_SENSOR_WORDS.test(c) && /sensor|detector/.test(c)) return 'binary_sensor';
  if (SENSOR_WORDS.test(c)) return 'sensor';
  return undefined;
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The binary sensor class a state reports (a boolean under one of the classes' keys), if any. */
export function binarySensorClassOf(state: Record<string, unknown>): BinarySensorClass | undefined {
  if (state.contact === 'open' || state.contact === 'closed') return 'contact';
  return BINARY_SENSOR_CLASS_NAMES.find((c) => BINARY_SENSOR_CLASSES[c].keys.some((k) => typeof state[k] === 'boolean'));
}

/** The sensor class a state reports (a number under one of the classes' keys), if any. */
export function sensorClassOf(state: Record<string, unknown>): SensorClass | undefined {
  return SENSOR_CLASS_NAMES.find((c) => SENSOR_CLASSES[c].keys.some((k) => isFiniteNumber(state[k])));
}

/**
 * A device's capabilities, in the model's order, from:
 * - what its driver declared (vocabulary names and common aliases such as `dimmer`, `thermostat`);
 * - its command names (with synonyms: turn_on/power_on/on, dim, set_volume, set_temperature,
 *   open/close/set_position, lock/unlock, set_percentage, set_color_temp…) and `apps.*`/`equalizer.*`/`scenes.*`;
 * - GENERIC_IR: `ir`, plus power/volume/media when its keys are named like power, volume_up, play;
 * - its declared class or its category, when the driver lists no commands: the class's canonical
 *   commands (a light switches, and dims with a `brightness` state key; a lock locks); a sensor
 *   category reports readings;
 * - its state: a device with state but no commands (and nothing else to do) is a `sensor`, or a
 *   `binary_sensor` when what it reports is a detection.
 */
export function deriveCapabilities(device: CapabilitySource, state: Record<string, unknown> = {}): CapabilityName[] {
  const { found: fromRecord, ir, commandCount, sensorCategory, declaredClass, categoryClass } = recordCapabilities(device);
  if (ir) return [...fromRecord];
  const found = new Set<CapabilityName>(fromRecord);
  let cls = declaredClass ?? categoryClass;
  // A "climate" category reporting readings without a target is a weather sensor, not a thermostat.
  if (!declaredClass && cls === 'climate' && !isFiniteNumber(state.target_temperature) && !isFiniteNumber(state.setpoint)) cls = undefined;
  if (cls && commandCount === 0) {
    // No command list: the class's canonical commands, refined by what the state shows.
    for (const c of DEVICE_CLASS_MODEL[cls].defaults) found.add(c);
    if (cls === 'light' && isFiniteNumber(state.brightness)) found.add('brightness');
    if (cls === 'light' && ['hue', 'color_temp_kelvin', 'kelvin', 'color_temp'].some((k) => isFiniteNumber(state[k]))) found.add('color');
    if (cls === 'cover' && isFiniteNumber(state.position)) found.add('position');
    if (cls === 'fan' && isFiniteNumber(state.percentage)) found.add('fan_speed');
    if (cls === 'climate' && typeof (state.mode ?? state.hvac_mode) === 'string') found.add('climate_mode');
  }
  // A light category with an on/off command list dims too once it reports a brightness.
  if (categoryClass === 'light' && found.has('power') && isFiniteNumber(state.brightness)) found.add('brightness');
  // A device that only reports, and reports a detection (a door sensor with its battery), is a binary sensor.
  if (cls === 'binary_sensor' || ((cls === undefined || cls === 'sensor') && commandCount === 0 && binarySensorClassOf(state))) found.add('binary_sensor');
  if (cls === 'button') found.add('button');
  if (found.has('binary_sensor') && !sensorCategory && !sensorClassOf(state)) found.delete('sensor');
  const actuator = [...found].some((c) => c !== 'sensor' && c !== 'binary_sensor');
  if (commandCount === 0 && !actuator && !found.has('binary_sensor') && Object.keys(state).length > 0) found.add('sensor');
  return inModelOrder(found);
}

/**
 * The capabilities in the model's order, in an array of their own length (kept per device: an
 * array grown by push keeps room for more).
 */
function inModelOrder(found: ReadonlySet<CapabilityName>): CapabilityName[] {
  const out: CapabilityName[] = [];
  for (const c of CAPABILITY_NAMES) if (found.has(c)) out.push(c);
  return out.slice();
}

/** What the record alone says (declarations, commands, category): the part of the derivation that no state changes. */
interface RecordCapabilities {
  found: readonly CapabilityName[];
  ir: boolean;
  commandCount: number;
  sensorCategory: boolean;
  declaredClass: DeviceClass | undefined;
  categoryClass: DeviceClass | undefined;
}

// Device records are replaced, never mutated, on change: what a record says is read once per
// record (matching command names by synonym is most of the derivation's cost).
const recordCapabilitiesCache = new WeakMap<CapabilitySource, RecordCapabilities>();

function recordCapabilities(device: CapabilitySource): RecordCapabilities {
  const cached = recordCapabilitiesCache.get(device);
  if (cached) return cached;
  const found = new Set<CapabilityName>();
  const ir = isIrDevice(device);
  const names = commandNames(device);
  const sensorCategory = isSensorCategory(device.category);

  for (const raw of device.capabilities) {
    const declared = normalizeCommandName(raw);
    if ((CAPABILITY_NAMES as readonly string[]).includes(declared)) {
      // A sensor that declares "temperature" means it measures one, not that it holds a target.
      found.add(declared === 'temperature' && sensorCategory && names.length === 0 ? 'sensor' : (declared as CapabilityName));
    } else if (DECLARED_ALIASES[declared]) {
      for (const c of DECLARED_ALIASES[declared]) found.add(c);
    } else if (SENSOR_WORDS.test(declared)) {
      found.add('sensor');
    }
  }
  if (ir) {
    found.add('ir');
    for (const [capability, meanings] of COMMAND_CAPABILITIES) {
      if (IR_CAPABILITIES.has(capability) && meanings.some((m) => offersMeaning(names, m))) found.add(capability);
    }
  } else {
    for (const [capability, meanings] of COMMAND_CAPABILITIES) {
      if (meanings.some((m) => offersMeaning(names, m))) found.add(capability);
    }
    for (const capability of ['apps', 'equalizer', 'scenes'] as const) {
      if (names.some((n) => n.toLowerCase().startsWith(`${capability}.`))) found.add(capability);
    }
    if (sensorCategory) found.add('sensor');
  }
  const result: RecordCapabilities = {
    // An array, in the model's order, rather than the Set: a few bytes per record instead of hundreds.
    found: inModelOrder(found),
    ir,
    commandCount: names.length,
    sensorCategory,
    declaredClass: device.declaredClass ?? undefined,
    categoryClass: classOfCategory(device.category),
  };
  recordCapabilitiesCache.set(device, result);
  return result;
}

/**
 * The device's class: the one its driver declared, else derived from its capabilities (a lock, a
 * thermostat, a positionable cover, a fan with a speed, a media player, a dimmable or colour light),
 * then its category (`lamp` → light, `plug` → outlet, `tv` → media_player), then what is left: plain
 * on/off is a switch, a reporting device a sensor or binary sensor; else `generic`.
 */
export function deriveDeviceClass(device: CapabilitySource, capabilities: readonly CapabilityName[]): DeviceClass {
  if (device.declaredClass && isDeviceClass(device.declaredClass)) return device.declaredClass;
  if (isIrDevice(device)) return 'remote';
  const has = (c: CapabilityName) => capabilities.includes(c);
  if (has('lock')) return 'lock';
  if (has('temperature') || has('climate_mode')) return 'climate';
  if (has('cover') || has('position')) return 'cover';
  if (has('fan_speed')) return 'fan';
  if (has('media') || has('volume') || has('input') || has('apps')) return 'media_player';
  if (has('brightness') || has('color')) return 'light';
  if (has('button')) return 'button';
  if (has('binary_sensor') && capabilities.every((c) => c === 'sensor' || c === 'binary_sensor')) return 'binary_sensor';
  const byCategory = classOfCategory(device.category);
  if (byCategory) {
    // A category names the class when the device does what that class does: a reporting class
    // for a device that only reports, an acting class for one that has its class's capabilities.
    const reportsOnly = capabilities.every((c) => c === 'sensor' || c === 'binary_sensor' || c === 'button');
    const reporting = byCategory === 'sensor' || byCategory === 'binary_sensor' || byCategory === 'button';
    if (reporting ? reportsOnly : !reportsOnly && DEVICE_CLASS_MODEL[byCategory].defaults.every(has)) return byCategory;
  }
  if (has('power')) return 'switch';
  if (has('binary_sensor')) return 'binary_sensor';
  if (has('sensor')) return 'sensor';
  return 'generic';
}

/**
 * Attributes: what the driver declared wins field by field; the rest is derived (a light's colour
 * modes from its capabilities, a sensor's class and unit from the state it reports).
 */
export function deriveAttributes(deviceClass: DeviceClass, capabilities: readonly CapabilityName[], state: Record<string, unknown>, declared: DeviceAttributes = {}): DeviceAttributes {
  const derived: DeviceAttributes = {};
  switch (deviceClass) {
    case 'light': {
      const modes: ColorMode[] = [];
      if (capabilities.includes('color')) {
        if (isFiniteNumber(state.hue) || isFiniteNumber(state.saturation) || !['color_temp_kelvin', 'kelvin', 'color_temp'].some((k) => isFiniteNumber(state[k]))) modes.push('hs');
        if (['color_temp_kelvin', 'kelvin', 'color_temp'].some((k) => isFiniteNumber(state[k])) || !modes.includes('hs')) modes.push('color_temp');
      }
      if (modes.length === 0) modes.push(capabilities.includes('brightness') ? 'brightness' : 'onoff');
      derived.colorModes = modes.slice();
      if (modes.includes('color_temp') || declared.colorModes?.includes('color_temp')) {
        derived.minKelvin = DEFAULT_KELVIN_RANGE.min;
        derived.maxKelvin = DEFAULT_KELVIN_RANGE.max;
      }
      break;
    }
    case 'climate':
      derived.minTemperature = DEFAULT_TEMPERATURE_RANGE.min;
      derived.maxTemperature = DEFAULT_TEMPERATURE_RANGE.max;
      derived.temperatureStep = 0.5;
      derived.temperatureUnit = '°C';
      break;
    case 'cover':
      derived.tilt = isFiniteNumber(state.tilt) || isFiniteNumber(state.tilt_position);
      break;
    case 'fan':
      derived.oscillate = typeof state.oscillating === 'boolean';
      derived.direction = typeof state.direction === 'string';
      break;
    case 'sensor': {
      const sensorClass = declared.sensorClass ?? sensorClassOf(state);
      if (sensorClass) {
        derived.sensorClass = sensorClass;
        if (sensorClass in SENSOR_CLASSES) derived.unit = SENSOR_CLASSES[sensorClass as SensorClass].unit;
      }
      break;
    }
    case 'binary_sensor': {
      const sensorClass = binarySensorClassOf(state);
      if (sensorClass) derived.sensorClass = sensorClass;
      break;
    }
    case 'button':
      derived.presses = [...BUTTON_PRESSES];
      break;
    default:
      break;
  }
  return { ...derived, ...declared };
}

/**
 * What one of a device's commands is for: its meaning (by synonym) and the capability it carries;
 * `apps.*`/`equalizer.*`/`scenes.*` by prefix; any other IR key is `ir`; otherwise null.
 */
export function classifyCommand(
  device: Pick<CapabilitySource, 'driverKey' | 'capabilities'>,
  name: string,
  derived: readonly CapabilityName[] = [],
): { capability: CapabilityName | null; meaning: CommandMeaning | null } {
  const ir = isIrDevice(device);
  const normalized = normalizeCommandName(name);
  const meaning = (Object.keys(COMMAND_SYNONYMS) as CommandMeaning[]).find((m) => (COMMAND_SYNONYMS[m] as readonly string[]).includes(normalized)) ?? null;
  if (!ir) {
    for (const capability of ['apps', 'equalizer', 'scenes'] as const) if (name.toLowerCase().startsWith(`${capability}.`)) return { capability, meaning: null };
  }
  let capability: CapabilityName | null = null;
  if (meaning) {
    capability = COMMAND_CAPABILITIES.find(([, meanings]) => meanings.includes(meaning))?.[0] ?? null;
    // stop/next/previous/seek/shuffle/repeat belong to media players though they alone make none.
    // A cover's stop stops the cover.
    if (meaning === 'stop' && derived.includes('cover') && !derived.includes('media')) capability = 'cover';
    if (!capability && ['stop', 'next', 'previous', 'seek', 'shuffle', 'repeat'].includes(meaning)) capability = 'media';
    if (ir && capability && !IR_CAPABILITIES.has(capability)) capability = null;
  }
  return { capability: capability ?? (ir ? 'ir' : null), meaning };
}
