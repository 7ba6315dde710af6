import { GENERIC_IR, type DeviceCommandSpec } from './model.js';

/**
 * The capability model: what each capability means, the commands and state keys that carry it,
 * and the Home Assistant style entity domain it shows up as; plus the derivation of a device's
 * capabilities from what its driver declared, the commands it offers, its category and its state.
 */

/**
 * Capability names: what a device can do, whatever its driver calls the commands.
 * - `power`: on/off (turn_on/turn_off, power_on/power_off, toggle); state `on` (boolean) or `power` ("on"/"off")
 * - `brightness`: set_brightness {brightness 0–100}; state `brightness`
 * - `color`: set_color_temp {kelvin} and/or set_hs_color {hue 0–360, saturation 0–100}; state `color_temp_kelvin`, `hue`, `saturation`
 * - `volume`: volume_set {volume 0–100} and/or volume_up/volume_down, mute; state `volume`, `muted`
 * - `temperature`: set_target_temperature {temperature}; state `current_temperature`, `target_temperature`
 * - `climate_mode`: set_mode {mode}; state `mode`
 * - `media`: play/pause/stop/next/previous; state `playback`
 * - `cover`: open/close/stop; state `state` ("open", "closed", "opening", "closing")
 * - `position`: set_position {position 0–100}, set_tilt_position {tilt 0–100} where offered; state `position`, `tilt`
 * - `lock`: lock/unlock; state `locked` (boolean) or `lock` ("locked", "unlocked", "jammed"), `jammed`
 * - `fan_speed`: set_percentage {percentage 0–100}, oscillate {oscillating}, set_direction {direction}; state `percentage`, `oscillating`, `direction`
 * - `input`: select_input {input}; state `input`
 * - `apps`, `equalizer`, `scenes`: the capability routes' driver commands
 * - `ir`: GENERIC_IR keys
 * - `sensor`: reports readings (state keys) without commands
 * - `binary_sensor`: reports a detection (motion, contact, leak…) without commands
 * - `button`: emits press events (single, double, long) as hub events
 */
export type CapabilityName =
  | 'power'
  | 'brightness'
  | 'color'
  | 'volume'
  | 'temperature'
  | 'climate_mode'
  | 'media'
  | 'cover'
  | 'position'
  | 'lock'
  | 'fan_speed'
  | 'input'
  | 'apps'
  | 'equalizer'
  | 'scenes'
  | 'ir'
  | 'sensor'
  | 'binary_sensor'
  | 'button';

export interface CapabilityCommand {
  name: string;
  params?: Record<string, unknown>;
  description: string;
}

export interface CapabilityStateKey {
  key: string;
  type: string;
  description: string;
}

export interface CapabilitySpec {
  description: string;
  commands: CapabilityCommand[];
  stateKeys: CapabilityStateKey[];
  /** Entity domain the capability shows up as (`scene` capabilities become one entity per scene). */
  entityDomain: string;
}

/** Every capability name, in the model's order (derived lists follow it). */
export const CAPABILITY_NAMES: readonly CapabilityName[] = [
  'power',
  'brightness',
  'color',
  'volume',
  'temperature',
  'climate_mode',
  'media',
  'cover',
  'position',
  'lock',
  'fan_speed',
  'input',
  'apps',
  'equalizer',
  'scenes',
  'ir',
  'sensor',
  'binary_sensor',
  'button',
];

const percent = (name: string, description: string) => ({ [name]: { type: 'number', minimum: 0, maximum: 100, description } });

export const CAPABILITY_MODEL: Record<CapabilityName, CapabilitySpec> = {
  power: {
    description: 'Switches on and off.',
    commands: [
      { name: 'turn_on', description: 'Switch on (synonyms: power_on, on).' },
      { name: 'turn_off', description: 'Switch off (synonyms: power_off, off, standby).' },
      { name: 'toggle', description: 'Switch to the other state (synonyms: power_toggle, power).' },
    ],
    stateKeys: [
      { key: 'on', type: 'boolean', description: 'True when on.' },
      { key: 'power', type: 'string', description: '"on" or "off" (the alternative to `on`).' },
    ],
    entityDomain: 'switch',
  },
  brightness: {
    description: 'Dims a light.',
    commands: [{ name: 'set_brightness', params: percent('brightness', 'Brightness, 0–100 %.'), description: 'Set the brightness (synonyms: brightness_set, dim {level}, set_level {level}).' }],
    stateKeys: [{ key: 'brightness', type: 'number', description: 'Brightness, 0–100 %.' }],
    entityDomain: 'light',
  },
  color: {
    description: 'Sets a light\'s colour temperature and/or its colour (the attributes say which: `colorModes`, `minKelvin`, `maxKelvin`).',
    commands: [
      { name: 'set_color_temp', params: { kelvin: { type: 'number', description: 'Colour temperature in kelvin, within minKelvin–maxKelvin.' } }, description: 'Set the colour temperature (synonyms: set_color_temperature, set_kelvin; a driver taking mireds gets mireds).' },
      { name: 'set_hs_color', params: { hue: { type: 'number', minimum: 0, maximum: 360, description: 'Hue, 0–360°.' }, saturation: { type: 'number', minimum: 0, maximum: 100, description: 'Saturation, 0–100 %.' } }, description: 'Set the colour by hue and saturation (synonyms: set_color, set_hue_saturation).' },
    ],
    stateKeys: [
      { key: 'color_temp_kelvin', type: 'number', description: 'Colour temperature in kelvin (or `kelvin`; `color_temp` in mireds).' },
      { key: 'hue', type: 'number', description: 'Hue, 0–360°.' },
      { key: 'saturation', type: 'number', description: 'Saturation, 0–100 %.' },
    ],
    entityDomain: 'light',
  },
  volume: {
    description: 'Sets, steps and mutes the volume.',
    commands: [
      { name: 'volume_set', params: percent('volume', 'Volume, 0–100.'), description: 'Set the volume (synonym: set_volume).' },
      { name: 'volume_up', description: 'One step up.' },
      { name: 'volume_down', description: 'One step down.' },
      { name: 'mute', description: 'Mute or unmute.' },
    ],
    stateKeys: [
      { key: 'volume', type: 'number', description: 'Volume, 0–100.' },
      { key: 'muted', type: 'boolean', description: 'True when muted.' },
    ],
    entityDomain: 'media_player',
  },
  temperature: {
    description: 'Holds a target temperature (thermostats, air conditioners).',
    commands: [{ name: 'set_target_temperature', params: { temperature: { type: 'number', description: 'Target temperature in the device\'s unit.' } }, description: 'Set the target temperature (synonym: set_temperature).' }],
    stateKeys: [
      { key: 'current_temperature', type: 'number', description: 'Measured temperature.' },
      { key: 'target_temperature', type: 'number', description: 'Target temperature.' },
    ],
    entityDomain: 'climate',
  },
  climate_mode: {
    description: 'Selects a heating/cooling mode.',
    commands: [{ name: 'set_mode', params: { mode: { type: 'string', description: 'e.g. "heat", "cool", "auto", "off".' } }, description: 'Set the mode (synonym: set_hvac_mode).' }],
    stateKeys: [{ key: 'mode', type: 'string', description: 'Current mode.' }],
    entityDomain: 'climate',
  },
  media: {
    description: 'Controls playback.',
    commands: [
      { name: 'play', description: 'Start or resume playback.' },
      { name: 'pause', description: 'Pause playback.' },
      { name: 'stop', description: 'Stop playback.' },
      { name: 'next', description: 'Next track (synonym: next_track).' },
      { name: 'previous', description: 'Previous track (synonyms: prev, previous_track).' },
    ],
    stateKeys: [{ key: 'playback', type: 'string', description: '"playing", "paused", "stopped" or "idle".' }],
    entityDomain: 'media_player',
  },
  cover: {
    description: 'Opens, closes and stops blinds, shades, curtains, doors and garage doors.',
    commands: [
      { name: 'open', description: 'Open fully (synonym: open_cover).' },
      { name: 'close', description: 'Close fully (synonym: close_cover).' },
      { name: 'stop', description: 'Stop moving (synonym: stop_cover).' },
    ],
    stateKeys: [{ key: 'state', type: 'string', description: '"open", "closed", "opening" or "closing".' }],
    entityDomain: 'cover',
  },
  position: {
    description: 'Moves a cover to a position, and tilts its slats where offered (attribute `tilt`).',
    commands: [
      { name: 'set_position', params: percent('position', '0 closed … 100 open.'), description: 'Move to a position (synonym: set_cover_position).' },
      { name: 'set_tilt_position', params: percent('tilt', '0 closed … 100 open.'), description: 'Tilt the slats (synonym: set_cover_tilt_position).' },
    ],
    stateKeys: [
      { key: 'position', type: 'number', description: '0 closed … 100 open.' },
      { key: 'tilt', type: 'number', description: 'Tilt, 0 closed … 100 open.' },
    ],
    entityDomain: 'cover',
  },
  lock: {
    description: 'Locks and unlocks a door.',
    commands: [
      { name: 'lock', description: 'Lock (synonym: lock_door).' },
      { name: 'unlock', description: 'Unlock (synonym: unlock_door).' },
    ],
    stateKeys: [
      { key: 'locked', type: 'boolean', description: 'True when locked (or `lock`: "locked", "unlocked", "jammed").' },
      { key: 'jammed', type: 'boolean', description: 'True when the bolt is stuck.' },
    ],
    entityDomain: 'lock',
  },
  fan_speed: {
    description: 'Sets a fan\'s speed, and its oscillation and direction where offered (attributes `oscillate`, `direction`).',
    commands: [
      { name: 'set_percentage', params: percent('percentage', 'Speed, 0–100 % (0 switches off).'), description: 'Set the speed (synonyms: set_speed, set_fan_speed).' },
      { name: 'oscillate', params: { oscillating: { type: 'boolean' } }, description: 'Oscillate or not.' },
      { name: 'set_direction', params: { direction: { type: 'string', enum: ['forward', 'reverse'] } }, description: 'Turn forward or in reverse.' },
    ],
    stateKeys: [
      { key: 'percentage', type: 'number', description: 'Speed, 0–100 %.' },
      { key: 'oscillating', type: 'boolean', description: 'True while oscillating.' },
      { key: 'direction', type: 'string', description: '"forward" or "reverse".' },
    ],
    entityDomain: 'fan',
  },
  input: {
    description: 'Selects an input or source.',
    commands: [{ name: 'select_input', params: { input: { type: 'string', description: 'Input id, e.g. "hdmi1".' } }, description: 'Select an input (synonym: set_input).' }],
    stateKeys: [{ key: 'input', type: 'string', description: 'Selected input.' }],
    entityDomain: 'media_player',
  },
  apps: {
    description: 'Lists and launches apps (smart TVs, streaming boxes).',
    commands: [
      { name: 'apps.list', description: 'The launchable apps.' },
      { name: 'apps.icon', params: { appId: { type: 'string' } }, description: 'An app icon as {contentType, data: base64}.' },
      { name: 'apps.launch', params: { appId: { type: 'string' } }, description: 'Launch an app.' },
    ],
    stateKeys: [{ key: 'app', type: 'string', description: 'The app in the foreground, when reported.' }],
    entityDomain: 'media_player',
  },
  equalizer: {
    description: 'Equalizer bands and sound modes.',
    commands: [
      { name: 'equalizer.get', description: 'Bands and sound mode.' },
      { name: 'equalizer.set', params: { bands: { type: 'object' }, soundMode: { type: 'string' }, preset: { type: 'string' } }, description: 'Set bands, a sound mode or a preset.' },
    ],
    stateKeys: [{ key: 'sound_mode', type: 'string', description: 'Current sound mode, when reported.' }],
    entityDomain: 'media_player',
  },
  scenes: {
    description: 'Runs scenes the device stores (lighting bridges, multi-room audio).',
    commands: [
      { name: 'scenes.list', description: 'The scenes, as [{id, name}].' },
      { name: 'scenes.run', params: { sceneId: { type: 'string' } }, description: 'Run a scene.' },
    ],
    stateKeys: [],
    entityDomain: 'scene',
  },
  ir: {
    description: 'A GENERIC_IR device: each command is an IR key sent through an extender; there is no state.',
    commands: [{ name: '<key>', description: 'Send the IR key of that name.' }],
    stateKeys: [],
    entityDomain: 'remote',
  },
  sensor: {
    description: 'Reports readings (state keys) and takes no commands.',
    commands: [],
    stateKeys: [
      { key: 'temperature', type: 'number', description: 'Temperature.' },
      { key: 'humidity', type: 'number', description: 'Relative humidity, %.' },
      { key: '<any>', type: 'number | string | boolean', description: 'Any other reading the driver reports.' },
    ],
    entityDomain: 'sensor',
  },
  binary_sensor: {
    description: 'Reports a detection (attribute `sensorClass`: motion, occupancy, contact, leak, smoke, tamper) and takes no commands.',
    commands: [],
    stateKeys: [
      { key: '<sensorClass>', type: 'boolean', description: 'True when detected (`motion`, `occupancy`, `leak`, `smoke`, `tamper`); for `contact`, true when the contact is made (closed), or `open`.' },
    ],
    entityDomain: 'binary_sensor',
  },
  button: {
    description: 'Emits presses (`single`, `double`, `long`) as hub events (`device.button_pressed`); takes no commands.',
    commands: [],
    stateKeys: [{ key: 'last_press', type: 'string', description: 'The last press, when the driver reports it.' }],
    entityDomain: 'event',
  },
};

/**
 * Driver command names by meaning, normalized (lowercase, `_` for separators). The first name of
 * each list is the canonical one, sent to drivers that declare no command list.
 */
export const COMMAND_SYNONYMS = {
  turn_on: ['turn_on', 'power_on', 'on', 'poweron', 'switch_on'],
  turn_off: ['turn_off', 'power_off', 'off', 'poweroff', 'switch_off', 'standby'],
  toggle: ['toggle', 'power_toggle', 'toggle_power', 'power'],
  set_brightness: ['set_brightness', 'brightness_set', 'brightness', 'dim', 'set_level', 'set_dim_level'],
  volume_set: ['volume_set', 'set_volume', 'volume'],
  volume_up: ['volume_up', 'vol_up', 'volumeup', 'volume_increase'],
  volume_down: ['volume_down', 'vol_down', 'volumedown', 'volume_decrease'],
  mute: ['mute', 'volume_mute', 'mute_toggle', 'toggle_mute', 'unmute'],
  set_temperature: ['set_target_temperature', 'set_temperature', 'set_setpoint', 'set_temp', 'target_temperature'],
  set_mode: ['set_mode', 'set_hvac_mode', 'set_climate_mode', 'hvac_mode'],
  play: ['play', 'media_play'],
  pause: ['pause', 'media_pause'],
  play_pause: ['play_pause', 'toggle_play', 'media_play_pause', 'playpause'],
  stop: ['stop', 'media_stop', 'stop_cover', 'cover_stop'],
  next: ['next', 'next_track', 'media_next', 'media_next_track', 'skip_next'],
  previous: ['previous', 'prev', 'previous_track', 'media_previous', 'media_previous_track', 'skip_previous'],
  seek: ['seek', 'media_seek', 'seek_to', 'set_playback_position'],
  shuffle: ['shuffle', 'set_shuffle', 'shuffle_set', 'media_shuffle'],
  repeat: ['repeat', 'set_repeat', 'repeat_set', 'media_repeat'],
  open: ['open', 'open_cover'],
  close: ['close', 'close_cover'],
  set_position: ['set_position', 'set_cover_position', 'position', 'move_to_position'],
  select_input: ['select_input', 'set_input', 'input', 'select_source', 'set_source', 'source'],
  set_color_temp: ['set_color_temp', 'set_color_temperature', 'set_colour_temperature', 'color_temp', 'set_kelvin', 'set_ct'],
  set_hs_color: ['set_hs_color', 'set_color', 'set_colour', 'set_hue_saturation', 'hs_color'],
  set_tilt_position: ['set_tilt_position', 'set_cover_tilt_position', 'tilt', 'set_tilt'],
  lock: ['lock', 'lock_door'],
  unlock: ['unlock', 'unlock_door'],
  set_percentage: ['set_percentage', 'set_fan_percentage', 'set_speed', 'set_fan_speed', 'fan_speed', 'percentage'],
  oscillate: ['oscillate', 'set_oscillating', 'set_oscillation'],
  set_direction: ['set_direction', 'set_fan_direction', 'direction'],
} as const satisfies Record<string, readonly string[]>;
export type CommandMeaning = keyof typeof COMMAND_SYNONYMS;

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

// ---------------------------------------------------------------------------------------------
// Device classes: what a device is (a light, a lock…), on top of what it can do.

/** Every device class, in the order lists follow. */
export const DEVICE_CLASSES = ['light', 'switch', 'outlet', 'cover', 'climate', 'fan', 'lock', 'sensor', 'binary_sensor', 'button', 'media_player', 'remote', 'generic'] as const;
export type DeviceClass = (typeof DEVICE_CLASSES)[number];

/** Sensor classes with their unit and the state keys drivers report them under (first present wins). */
export const SENSOR_CLASSES = {
  temperature: { unit: '°C', keys: ['temperature', 'current_temperature'] },
  humidity: { unit: '%', keys: ['humidity', 'current_humidity', 'relative_humidity'] },
  illuminance: { unit: 'lx', keys: ['illuminance', 'illuminance_lux', 'lux'] },
  power: { unit: 'W', keys: ['power', 'power_w', 'watts'] },
  energy: { unit: 'kWh', keys: ['energy', 'energy_kwh'] },
  battery: { unit: '%', keys: ['battery', 'battery_level'] },
  co2: { unit: 'ppm', keys: ['co2', 'carbon_dioxide'] },
  pm25: { unit: 'µg/m³', keys: ['pm25', 'pm2_5'] },
  pressure: { unit: 'hPa', keys: ['pressure'] },
} as const satisfies Record<string, { unit: string; keys: readonly string[] }>;
export type SensorClass = keyof typeof SENSOR_CLASSES;
export const SENSOR_CLASS_NAMES = Object.keys(SENSOR_CLASSES) as SensorClass[];

/**
 * Binary sensor classes: the state keys they are reported under and the words for detected / clear.
 * `contact` is true when the contact is made (the door is closed), as Zigbee2MQTT and HomeKit say;
 * a driver may report `open` (true when open) instead.
 */
export const BINARY_SENSOR_CLASSES = {
  motion: { keys: ['motion', 'motion_detected'], words: ['Motion', 'Clear'] },
  occupancy: { keys: ['occupancy', 'occupied', 'presence'], words: ['Occupied', 'Clear'] },
  contact: { keys: ['contact', 'open'], words: ['Open', 'Closed'] },
  leak: { keys: ['leak', 'water_leak', 'moisture'], words: ['Wet', 'Dry'] },
  smoke: { keys: ['smoke', 'smoke_detected'], words: ['Smoke', 'Clear'] },
  tamper: { keys: ['tamper', 'tampered'], words: ['Tampered', 'Clear'] },
} as const satisfies Record<string, { keys: readonly string[]; words: readonly [string, string] }>;
export type BinarySensorClass = keyof typeof BINARY_SENSOR_CLASSES;
export const BINARY_SENSOR_CLASS_NAMES = Object.keys(BINARY_SENSOR_CLASSES) as BinarySensorClass[];

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

/** Lowercase, `_` for separators: `Power-On` → `power_on`. */
export function normalizeCommandName(name: string): string {
  return name.trim().toLowerCase().replace(/[\s.-]+/g, '_');
}

export function commandNames(device: Pick<CapabilitySource, 'commands'>): string[] {
  return device.commands.map((c) => (typeof c === 'string' ? c : c.name));
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

/** True when the device offers a command of that meaning (by any of its synonyms). */
export function offersMeaning(names: Iterable<string>, meaning: CommandMeaning): boolean {
  const synonyms: readonly string[] = COMMAND_SYNONYMS[meaning];
  for (const n of names) if (synonyms.includes(normalizeCommandName(n))) return true;
  return false;
}

/**
 * The device's own command of a meaning: the first of the meaning's synonyms it offers, so the
 * canonical name wins over the others.
 */
export function commandOfMeaning(specs: readonly DeviceCommandSpec[], meaning: CommandMeaning): DeviceCommandSpec | undefined {
  for (const synonym of COMMAND_SYNONYMS[meaning] as readonly string[]) {
    const found = specs.find((s) => normalizeCommandName(s.name) === synonym);
    if (found) return found;
  }
  return undefined;
}

const SCHEMA_KEYWORDS = new Set(['type', 'required', 'properties', 'additionalProperties', 'description', 'title', '$schema']);

/** Parameter names a command declares: JSON-Schema `properties`, or the keys of a plain map. */
export function declaredParamKeys(spec: DeviceCommandSpec): string[] {
  const params = spec.params;
  if (!params) return [];
  const properties = params.properties;
  if (properties && typeof properties === 'object' && !Array.isArray(properties)) return Object.keys(properties);
  return Object.keys(params).filter((k) => !SCHEMA_KEYWORDS.has(k));
}

/** Default value parameter per command name, when the command declares none. */
const VALUE_PARAMS: Partial<Record<CommandMeaning, { preferred: string[]; byName?: Record<string, string> }>> = {
  set_brightness: { preferred: ['brightness', 'level', 'value', 'percent'], byName: { dim: 'level', set_level: 'level', set_dim_level: 'level' } },
  volume_set: { preferred: ['volume', 'level', 'value'] },
  set_temperature: { preferred: ['temperature', 'target_temperature', 'setpoint', 'value'] },
  set_position: { preferred: ['position', 'value', 'percent'] },
  set_tilt_position: { preferred: ['tilt', 'tilt_position', 'position', 'value'] },
  set_color_temp: { preferred: ['kelvin', 'color_temp_kelvin', 'color_temp', 'mireds', 'value'] },
  set_percentage: { preferred: ['percentage', 'speed', 'value', 'percent'] },
  set_mode: { preferred: ['mode', 'hvac_mode', 'value'] },
  oscillate: { preferred: ['oscillating', 'oscillate', 'value'] },
  set_direction: { preferred: ['direction', 'value'] },
};

/**
 * The parameter a device's command of that meaning takes its value in: the one it declares (`dim
 * {level}` → `level`), else the usual one for its name. The hub sends the value there, and reads
 * the device's state back from the key of that name (see `readingOf`).
 */
export function commandValueParam(spec: DeviceCommandSpec, meaning: CommandMeaning): string {
  const rule = VALUE_PARAMS[meaning] ?? { preferred: ['value'] };
  const declared = declaredParamKeys(spec);
  const match = rule.preferred.find((p) => declared.includes(p));
  if (match) return match;
  if (declared.length === 1) return declared[0]!;
  return rule.byName?.[normalizeCommandName(spec.name)] ?? rule.preferred[0]!;
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

/** Entity domains in the order a device's entities are listed. */
export const DEVICE_ENTITY_DOMAINS = ['light', 'switch', 'fan', 'lock', 'media_player', 'climate', 'cover', 'remote', 'sensor', 'binary_sensor', 'event'] as const;

/**
 * The entity domains a device shows up as: its class's domain first, then one per other distinct
 * domain of its capabilities, where plain on/off (`switch`) folds into any richer domain that also
 * switches. A generic device takes its capabilities' domains. Scenes get their own entities.
 */
export function entityDomainsOf(device: { deviceClass: DeviceClass; capabilities: readonly CapabilityName[] }): string[] {
  const domains = new Set<string>();
  if (device.deviceClass !== 'generic') domains.add(DEVICE_CLASS_MODEL[device.deviceClass].entityDomain);
  const admitted = DEVICE_CLASS_MODEL[device.deviceClass].capabilities;
  for (const capability of device.capabilities) {
    if (capability === 'scenes') continue;
    // What the class already covers shows up in its own domain (a light's power is the light).
    if (device.deviceClass !== 'generic' && admitted.includes(capability)) continue;
    domains.add(CAPABILITY_MODEL[capability].entityDomain);
  }
  if (domains.has('switch') && ['light', 'fan', 'media_player', 'climate', 'cover', 'remote'].some((d) => domains.has(d))) domains.delete('switch');
  return DEVICE_ENTITY_DOMAINS.filter((d) => domains.has(d));
}

/** The device's primary entity domain: its class's, or for a generic device its first capability's. */
export function entityDomainOf(device: { deviceClass: DeviceClass; capabilities: readonly CapabilityName[] }): string | undefined {
  return entityDomainsOf(device)[0];
}
