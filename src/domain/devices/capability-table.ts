/**
 * The capability table: what each capability means, the commands and state keys that carry it,
 * and the Home Assistant style entity domain it shows up as. It is its own module because it is
 * the model's base data: command reading aside, every other part of the device model (the
 * classes, the derivation, the entity domains) reads it, and it reads none of them.
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
