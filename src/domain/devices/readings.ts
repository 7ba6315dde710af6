import {
  BINARY_SENSOR_CLASSES,
  SENSOR_CLASSES,
  commandOfMeaning,
  commandValueParam,
  deriveAttributes,
  deriveCapabilities,
  deriveDeviceClass,
  isIrDevice,
  type BinarySensorClass,
  type CapabilityName,
  type CapabilitySource,
  type CommandMeaning,
  type DeviceAttributes,
  type DeviceClass,
  type SensorClass,
} from './capabilities.js';
import type { LogicalDevice } from './model.js';

/**
 * The canonical reading of a device: its driver's raw state read once, in the model's units
 * (percent 0–100, kelvin, the device's temperature unit), under one name per meaning whatever the
 * driver calls it. Every surface renders this; the raw state stays as the driver reported it.
 */
export interface DeviceReading {
  on?: boolean;
  brightness?: number;
  colorTempKelvin?: number;
  hue?: number;
  saturation?: number;
  /** cover: 0 closed … 100 open, and what it is doing. */
  position?: number;
  tilt?: number;
  coverState?: 'open' | 'closed' | 'opening' | 'closing';
  currentTemperature?: number;
  targetTemperature?: number;
  hvacMode?: string;
  /** climate: what it is doing now (`heating`, `cooling`, `idle`, `off`…), when the driver says. */
  hvacAction?: string;
  humidity?: number;
  locked?: boolean;
  jammed?: boolean;
  percentage?: number;
  oscillating?: boolean;
  direction?: 'forward' | 'reverse';
  /** sensor: the value in `unit`. */
  value?: number | string;
  unit?: string;
  /** binary_sensor: true when it detects (motion, an open contact, a leak…). */
  detected?: boolean;
  /** button: the last press reported. */
  lastPress?: string;
  playback?: string;
  volume?: number;
  muted?: boolean;
  input?: string;
  app?: string;
  /** media_player: what is playing, where the integration tells. */
  title?: string;
  artist?: string;
  album?: string;
  /** media_player: an http(s) URL of the artwork, where the integration gives one. */
  artworkUrl?: string;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const word = (v: unknown): string | undefined => str(v)?.toLowerCase();
const percent = (v: unknown): number | undefined => {
  const n = num(v);
  return n === undefined ? undefined : Math.max(0, Math.min(100, n));
};
const first = <T>(state: Record<string, unknown>, keys: readonly string[], read: (v: unknown) => T | undefined): T | undefined => {
  for (const key of keys) {
    const v = read(state[key]);
    if (v !== undefined) return v;
  }
  return undefined;
};

/** A state key drivers report a reading field under; for a percent field, the raw value that means 100 % (default 100). */
interface StateKey {
  readonly key: string;
  readonly full?: number;
}

interface ReadingKeySpec {
  /**
   * The command meaning that sets the field: the value parameter of the device's own command of
   * that meaning names the key its state reports the field under (`dim {level}` → `level`).
   * None for temperatures: `set_temperature {temperature}` writes the target, yet drivers report
   * the measured temperature as `temperature`.
   */
  readonly meaning?: CommandMeaning;
  /** Percent fields are scaled to 0–100 by their key's `full` and clamped; the others are read as they are. */
  readonly percent: boolean;
  /** The keys drivers commonly use, the canonical one first. */
  readonly keys: readonly StateKey[];
}

/**
 * Where each numeric reading field is read from, the one table of state keys and their scales.
 * For a field, in order: the key the driver declared in `attributes.stateKeys` (then the only one
 * read), else the canonical key (an explicit `brightness` wins), the key the device's own command
 * writes (`commandStateKeys`), then the synonyms here. `level` is SmartThings' and Z-Wave
 * multilevel's brightness (0–100), `bri` Hue's (0–254), `Dimmer` Tasmota's (0–100).
 */
export const READING_KEYS = {
  brightness: { meaning: 'set_brightness', percent: true, keys: [{ key: 'brightness' }, { key: 'level' }, { key: 'bri', full: 254 }, { key: 'Dimmer' }] },
  hue: { percent: false, keys: [{ key: 'hue' }] },
  saturation: { percent: true, keys: [{ key: 'saturation' }] },
  position: { meaning: 'set_position', percent: true, keys: [{ key: 'position' }, { key: 'current_position' }] },
  tilt: { meaning: 'set_tilt_position', percent: true, keys: [{ key: 'tilt' }, { key: 'tilt_position' }] },
  percentage: { meaning: 'set_percentage', percent: true, keys: [{ key: 'percentage' }, { key: 'speed' }] },
  volume: { meaning: 'volume_set', percent: true, keys: [{ key: 'volume' }] },
  currentTemperature: { percent: false, keys: [{ key: 'current_temperature' }, { key: 'temperature' }] },
  targetTemperature: { percent: false, keys: [{ key: 'target_temperature' }, { key: 'setpoint' }] },
  humidity: { percent: false, keys: [{ key: 'humidity' }, { key: 'current_humidity' }] },
} as const satisfies Record<string, ReadingKeySpec>;
export type KeyedReadingField = keyof typeof READING_KEYS;
const KEYED_READING_FIELDS = Object.keys(READING_KEYS) as KeyedReadingField[];

/** State keys by reading field. */
export type ReadingStateKeys = Partial<Record<KeyedReadingField, string>>;
const NO_STATE_KEYS: ReadingStateKeys = Object.freeze({});

// Command lists are shared between devices that declare the same, and never mutated: what a list
// writes is worked out once per list.
const commandStateKeysCache = new WeakMap<object, ReadingStateKeys>();

/**
 * The state keys a device's own commands write, where they differ from the canonical key: a light
 * whose `set_brightness` is `dim {level}` reports its brightness as `level`. The keys are the
 * parameters the hub sends the values in (`commandValueParam`), so what the hub writes and what
 * it reads back are one. IR keys take no parameters and write nothing.
 */
export function commandStateKeys(device: Pick<CapabilitySource, 'commands' | 'driverKey' | 'capabilities'>): ReadingStateKeys {
  if (device.commands.length === 0 || isIrDevice(device)) return NO_STATE_KEYS;
  const cached = commandStateKeysCache.get(device.commands);
  if (cached) return cached;
  const specs = device.commands.map((c) => (typeof c === 'string' ? { name: c } : c));
  let found: ReadingStateKeys | undefined;
  for (const field of KEYED_READING_FIELDS) {
    const spec: ReadingKeySpec = READING_KEYS[field];
    const command = spec.meaning && commandOfMeaning(specs, spec.meaning);
    if (!command || !spec.meaning) continue;
    const key = commandValueParam(command, spec.meaning);
    if (key !== spec.keys[0]!.key) (found ??= {})[field] = key;
  }
  const keys = found ? Object.freeze(found) : NO_STATE_KEYS;
  commandStateKeysCache.set(device.commands, keys);
  return keys;
}

/** The field's value under `key`: a percent field scaled by the key's `full` and clamped. */
function valueAt(spec: ReadingKeySpec, state: Record<string, unknown>, key: string): number | undefined {
  const v = num(state[key]);
  if (v === undefined || !spec.percent) return v;
  const full = spec.keys.find((k) => k.key === key)?.full ?? 100;
  return percent(full === 100 ? v : Math.round((v * 100) / full));
}

/** A keyed reading field from the state, by the keys in the order `READING_KEYS` describes. */
function readKeyed(field: KeyedReadingField, state: Record<string, unknown>, declared: DeviceAttributes['stateKeys'], written: ReadingStateKeys): number | undefined {
  const spec: ReadingKeySpec = READING_KEYS[field];
  const own = declared?.[field];
  if (typeof own === 'string' && own) return valueAt(spec, state, own);
  let v = valueAt(spec, state, spec.keys[0]!.key);
  const key = written[field];
  if (v === undefined && key !== undefined) v = valueAt(spec, state, key);
  for (let i = 1; v === undefined && i < spec.keys.length; i++) v = valueAt(spec, state, spec.keys[i]!.key);
  return v;
}

/**
 * On/off from state, the one definition every surface uses: `on` or `is_on` (boolean), `power`
 * (boolean, "on"/"off"/"standby"), or `state` ("on"/"off"); undefined when unknown.
 */
export function isOn(state: Record<string, unknown>): boolean | undefined {
  for (const key of ['on', 'is_on', 'power'] as const) if (typeof state[key] === 'boolean') return state[key] as boolean;
  for (const key of ['power', 'state'] as const) {
    const p = word(state[key]);
    if (p === 'on') return true;
    if (p === 'off' || p === 'standby') return false;
  }
  return undefined;
}

/** Kelvin from `color_temp_kelvin`/`kelvin`, or from `color_temp` in mireds (as Home Assistant and HAP report it). */
function kelvinOf(state: Record<string, unknown>): number | undefined {
  const kelvin = num(state.color_temp_kelvin) ?? num(state.kelvin);
  if (kelvin !== undefined) return kelvin;
  const ct = num(state.color_temp);
  if (ct === undefined || ct <= 0) return undefined;
  return ct >= 1000 ? ct : Math.round(1_000_000 / ct);
}

function lockReading(state: Record<string, unknown>): Pick<DeviceReading, 'locked' | 'jammed'> {
  const out: Pick<DeviceReading, 'locked' | 'jammed'> = {};
  const said = word(state.lock) ?? word(state.lock_state) ?? word(state.state);
  if (typeof state.locked === 'boolean') out.locked = state.locked;
  else if (said === 'locked' || said === 'unlocked') out.locked = said === 'locked';
  if (typeof state.jammed === 'boolean') out.jammed = state.jammed;
  else if (said === 'jammed') out.jammed = true;
  else if (out.locked !== undefined) out.jammed = false;
  return out;
}

function coverReading(state: Record<string, unknown>, read: (field: KeyedReadingField) => number | undefined): Pick<DeviceReading, 'position' | 'tilt' | 'coverState'> {
  const out: Pick<DeviceReading, 'position' | 'tilt' | 'coverState'> = {};
  const position = read('position');
  if (position !== undefined) out.position = position;
  const tilt = read('tilt');
  if (tilt !== undefined) out.tilt = tilt;
  const said = word(state.state) ?? word(state.cover);
  if (said === 'open' || said === 'closed' || said === 'opening' || said === 'closing') out.coverState = said;
  else if (typeof state.open === 'boolean') out.coverState = state.open ? 'open' : 'closed';
  else if (position !== undefined) out.coverState = position > 0 ? 'open' : 'closed';
  return out;
}

function binaryDetected(sensorClass: BinarySensorClass | undefined, state: Record<string, unknown>): boolean | undefined {
  if (sensorClass === 'contact' || sensorClass === undefined) {
    if (typeof state.open === 'boolean') return state.open;
    // `contact: true` means the contact is made: closed, nothing detected.
    if (typeof state.contact === 'boolean') return !state.contact;
    const said = word(state.contact) ?? word(state.state);
    if (said === 'open' || said === 'closed') return said === 'open';
    if (sensorClass === 'contact') return undefined;
  }
  const keys = sensorClass ? BINARY_SENSOR_CLASSES[sensorClass].keys : Object.values(BINARY_SENSOR_CLASSES).flatMap((c) => c.keys);
  const found = first(state, keys, (v) => (typeof v === 'boolean' ? v : undefined));
  if (found !== undefined) return found;
  return typeof state.detected === 'boolean' ? state.detected : undefined;
}

/**
 * The fields that are known, so the reading says only what is known. Copied rather than deleted
 * from: an object that loses properties turns into a dictionary, about ten times its size (a
 * reading is kept per device).
 */
function known(reading: DeviceReading): DeviceReading {
  const out: Record<string, unknown> = {};
  for (const key in reading) {
    const value = reading[key as keyof DeviceReading];
    if (value !== undefined) out[key] = value;
  }
  return out as DeviceReading;
}

/**
 * What is playing, as the integrations name it: Home Assistant's `media_*` keys or plain ones.
 * Artwork only as an http(s) URL, so that no surface renders a `javascript:` or `data:` link.
 */
export function mediaTextOf(state: Record<string, unknown>): Pick<DeviceReading, 'title' | 'artist' | 'album' | 'artworkUrl'> {
  const artwork = str(state.artwork_url) ?? str(state.artwork) ?? str(state.entity_picture) ?? str(state.media_image_url);
  return known({
    title: str(state.title) ?? str(state.media_title),
    artist: str(state.artist) ?? str(state.media_artist),
    album: str(state.album) ?? str(state.media_album),
    artworkUrl: artwork && /^https?:\/\//i.test(artwork) ? artwork : undefined,
  });
}

/**
 * The device's canonical reading for its class, from the raw state its driver reported. Given the
 * device, the keys its own commands write are read too (`commandStateKeys`); the attributes' `stateKeys`
 * name the driver's own keys (`READING_KEYS`).
 */
export function readingOf(
  deviceClass: DeviceClass,
  attributes: DeviceAttributes,
  state: Record<string, unknown>,
  device?: Pick<CapabilitySource, 'commands' | 'driverKey' | 'capabilities'>,
): DeviceReading {
  const written = device ? commandStateKeys(device) : NO_STATE_KEYS;
  const read = (field: KeyedReadingField) => readKeyed(field, state, attributes.stateKeys, written);
  switch (deviceClass) {
    case 'light': {
      const on = isOn(state);
      return known({ on, brightness: read('brightness'), colorTempKelvin: kelvinOf(state), hue: read('hue'), saturation: read('saturation') });
    }
    case 'switch':
    case 'outlet':
      return known({ on: isOn(state), ...(num(state.power_w) !== undefined || typeof state.power === 'number' ? { value: num(state.power_w) ?? num(state.power), unit: 'W' } : {}) });
    case 'cover':
      return known(coverReading(state, read));
    case 'climate':
      return known({
        on: isOn(state),
        currentTemperature: read('currentTemperature'),
        targetTemperature: read('targetTemperature'),
        hvacMode: str(state.hvac_mode) ?? str(state.mode),
        hvacAction: word(state.hvac_action),
        humidity: read('humidity'),
      });
    case 'fan': {
      const direction = word(state.direction);
      return known({
        on: isOn(state),
        percentage: read('percentage'),
        oscillating: typeof state.oscillating === 'boolean' ? state.oscillating : undefined,
        direction: direction === 'forward' || direction === 'reverse' ? direction : undefined,
      });
    }
    case 'lock':
      return known(lockReading(state));
    case 'sensor': {
      const sensorClass = attributes.sensorClass && attributes.sensorClass in SENSOR_CLASSES ? (attributes.sensorClass as SensorClass) : undefined;
      const keys = sensorClass ? SENSOR_CLASSES[sensorClass].keys : ['value'];
      const value = first(state, keys, num) ?? num(state.value) ?? str(state.value);
      return known({ value, unit: attributes.unit });
    }
    case 'binary_sensor': {
      const sensorClass = attributes.sensorClass && attributes.sensorClass in BINARY_SENSOR_CLASSES ? (attributes.sensorClass as BinarySensorClass) : undefined;
      return known({ detected: binaryDetected(sensorClass, state) });
    }
    case 'button':
      return known({ lastPress: str(state.last_press) ?? str(state.press) });
    case 'media_player':
      return known({
        on: isOn(state),
        playback: word(state.playback),
        volume: read('volume'),
        muted: typeof state.muted === 'boolean' ? state.muted : undefined,
        input: str(state.input) ?? str(state.source),
        app: str(state.app),
        ...mediaTextOf(state),
      });
    case 'remote':
    case 'generic':
      return known({ on: isOn(state) });
  }
}

/** A device as the model reads it: its capabilities, class, attributes and canonical reading. */
export interface DeviceModel {
  capabilities: CapabilityName[];
  deviceClass: DeviceClass;
  attributes: DeviceAttributes;
  reading: DeviceReading;
}

/** Reads a device through the model: the one place class, attributes and reading are derived. */
export function modelOf(device: LogicalDevice, state: Record<string, unknown>): DeviceModel {
  const capabilities = deriveCapabilities(device, state);
  const deviceClass = deriveDeviceClass(device, capabilities);
  const attributes = deriveAttributes(deviceClass, capabilities, state, device.declaredAttributes);
  return { capabilities, deviceClass, attributes, reading: readingOf(deviceClass, attributes, state, device) };
}

