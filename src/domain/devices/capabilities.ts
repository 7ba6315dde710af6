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
 * - `volume`: volume_set {volume 0–100} and/or volume_up/volume_down, mute; state `volume`, `muted`
 * - `temperature`: set_target_temperature {temperature}; state `current_temperature`, `target_temperature`
 * - `climate_mode`: set_mode {mode}; state `mode`
 * - `media`: play/pause/stop/next/previous; state `playback`
 * - `cover`: open/close/set_position {position 0–100}; state `position`
 * - `input`: select_input {input}; state `input`
 * - `apps`, `equalizer`, `scenes`: the capability routes' driver commands
 * - `ir`: GENERIC_IR keys
 * - `sensor`: reports readings (state keys) without commands
 */
export type CapabilityName =
  | 'power'
  | 'brightness'
  | 'volume'
  | 'temperature'
  | 'climate_mode'
  | 'media'
  | 'cover'
  | 'input'
  | 'apps'
  | 'equalizer'
  | 'scenes'
  | 'ir'
  | 'sensor';

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
  'volume',
  'temperature',
  'climate_mode',
  'media',
  'cover',
  'input',
  'apps',
  'equalizer',
  'scenes',
  'ir',
  'sensor',
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
    description: 'Opens, closes and positions blinds, shades, curtains and garage doors.',
    commands: [
      { name: 'open', description: 'Open fully (synonym: open_cover).' },
      { name: 'close', description: 'Close fully (synonym: close_cover).' },
      { name: 'set_position', params: percent('position', '0 closed … 100 open.'), description: 'Move to a position (synonym: set_cover_position).' },
    ],
    stateKeys: [{ key: 'position', type: 'number', description: '0 closed … 100 open.' }],
    entityDomain: 'cover',
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
  stop: ['stop', 'media_stop'],
  next: ['next', 'next_track', 'media_next', 'media_next_track', 'skip_next'],
  previous: ['previous', 'prev', 'previous_track', 'media_previous', 'media_previous_track', 'skip_previous'],
  seek: ['seek', 'media_seek', 'seek_to', 'set_playback_position'],
  shuffle: ['shuffle', 'set_shuffle', 'shuffle_set', 'media_shuffle'],
  repeat: ['repeat', 'set_repeat', 'repeat_set', 'media_repeat'],
  open: ['open', 'open_cover'],
  close: ['close', 'close_cover'],
  set_position: ['set_position', 'set_cover_position', 'position', 'move_to_position'],
  select_input: ['select_input', 'set_input', 'input', 'select_source', 'set_source', 'source'],
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
  ['cover', ['open', 'close', 'set_position']],
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
  source: ['input'],
  inputs: ['input'],
  source_select: ['input'],
  app: ['apps'],
  scene: ['scenes'],
  sound_mode: ['equalizer'],
};

export const LIGHT_CATEGORIES = new Set(['light', 'lighting', 'lamp', 'dimmer', 'bulb']);
const SENSOR_WORDS = /sensor|meter|measurement|thermometer|hygrometer|weather|humidity|illuminance|motion|contact|occupancy|battery|co2|pressure|energy/;

/** The parts of a device the derivation reads; a `LogicalDevice` has them all. */
export interface CapabilitySource {
  driverKey?: string;
  category: string;
  /** What the driver declared (any vocabulary). */
  capabilities: readonly string[];
  commands: ReadonlyArray<string | DeviceCommandSpec>;
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

export function isLightCategory(category: string): boolean {
  return LIGHT_CATEGORIES.has(category.toLowerCase());
}

export function isSensorCategory(category: string): boolean {
  return SENSOR_WORDS.test(category.toLowerCase());
}

/** True when the device offers a command of that meaning (by any of its synonyms). */
export function offersMeaning(names: Iterable<string>, meaning: CommandMeaning): boolean {
  const synonyms: readonly string[] = COMMAND_SYNONYMS[meaning];
  for (const n of names) if (synonyms.includes(normalizeCommandName(n))) return true;
  return false;
}

/**
 * A device's capabilities, in the model's order, from:
 * - what its driver declared (vocabulary names and common aliases such as `dimmer`, `thermostat`);
 * - its command names (with synonyms: turn_on/power_on/on, dim, set_volume, set_temperature,
 *   open/close/set_position, select_input/set_input, play/pause) and `apps.*`/`equalizer.*`/`scenes.*`;
 * - GENERIC_IR: `ir`, plus power/volume/media when its keys are named like power, volume_up, play;
 * - its category: a light with no command list is switchable, and dimmable only with a `brightness`
 *   state key or command; a sensor category reports readings;
 * - its state: a device with state but no commands (and nothing else to do) is a `sensor`.
 */
export function deriveCapabilities(device: CapabilitySource, state: Record<string, unknown> = {}): CapabilityName[] {
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
    if (isLightCategory(device.category)) {
      // A light without a command list takes the canonical commands; with one, it needs an on/off.
      if (names.length === 0) found.add('power');
      if (found.has('power') && typeof state.brightness === 'number') found.add('brightness');
    }
    if (sensorCategory) found.add('sensor');
    const actuator = [...found].some((c) => c !== 'sensor');
    if (names.length === 0 && !actuator && Object.keys(state).length > 0) found.add('sensor');
  }

  return CAPABILITY_NAMES.filter((c) => found.has(c));
}

/**
 * What one of a device's commands is for: its meaning (by synonym) and the capability it carries;
 * `apps.*`/`equalizer.*`/`scenes.*` by prefix; any other IR key is `ir`; otherwise null.
 */
export function classifyCommand(device: Pick<CapabilitySource, 'driverKey' | 'capabilities'>, name: string): { capability: CapabilityName | null; meaning: CommandMeaning | null } {
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
    if (!capability && ['stop', 'next', 'previous', 'seek', 'shuffle', 'repeat'].includes(meaning)) capability = 'media';
    if (ir && capability && !IR_CAPABILITIES.has(capability)) capability = null;
  }
  return { capability: capability ?? (ir ? 'ir' : null), meaning };
}

/** Entity domains in the order a device's entities are listed. */
export const DEVICE_ENTITY_DOMAINS = ['light', 'switch', 'media_player', 'climate', 'cover', 'remote', 'sensor'] as const;

/**
 * The entity domains a device shows up as: one per distinct domain of its capabilities, where a
 * lighting device's power is a `light`, and `switch` (plain on/off) folds into any richer domain
 * that also switches (light, media_player, climate, cover, remote). Scenes get their own entities.
 */
export function entityDomainsOf(device: { category: string; capabilities: readonly CapabilityName[] }): string[] {
  const domains = new Set<string>();
  for (const capability of device.capabilities) {
    if (capability === 'scenes') continue;
    const domain = CAPABILITY_MODEL[capability].entityDomain;
    domains.add(domain === 'switch' && isLightCategory(device.category) ? 'light' : domain);
  }
  if (domains.has('switch') && ['light', 'media_player', 'climate', 'cover', 'remote'].some((d) => domains.has(d))) domains.delete('switch');
  return DEVICE_ENTITY_DOMAINS.filter((d) => domains.has(d));
}
