import {
  BINARY_SENSOR_CLASSES,
  SENSOR_CLASSES,
  deriveAttributes,
  deriveCapabilities,
  deriveDeviceClass,
  type BinarySensorClass,
  type CapabilityName,
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

function coverReading(state: Record<string, unknown>): Pick<DeviceReading, 'position' | 'tilt' | 'coverState'> {
  const out: Pick<DeviceReading, 'position' | 'tilt' | 'coverState'> = {};
  const position = percent(state.position) ?? percent(state.current_position);
  if (position !== undefined) out.position = position;
  const tilt = percent(state.tilt) ?? percent(state.tilt_position);
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

/** The device's canonical reading for its class, from the raw state its driver reported. */
export function readingOf(deviceClass: DeviceClass, attributes: DeviceAttributes, state: Record<string, unknown>): DeviceReading {
  switch (deviceClass) {
    case 'light': {
      const on = isOn(state);
      return known({ on, brightness: percent(state.brightness), colorTempKelvin: kelvinOf(state), hue: num(state.hue), saturation: percent(state.saturation) });
    }
    case 'switch':
    case 'outlet':
      return known({ on: isOn(state), ...(num(state.power_w) !== undefined || typeof state.power === 'number' ? { value: num(state.power_w) ?? num(state.power), unit: 'W' } : {}) });
    case 'cover':
      return known(coverReading(state));
    case 'climate':
      return known({
        on: isOn(state),
        currentTemperature: num(state.current_temperature) ?? num(state.temperature),
        targetTemperature: num(state.target_temperature) ?? num(state.setpoint),
        hvacMode: str(state.hvac_mode) ?? str(state.mode),
        hvacAction: word(state.hvac_action),
        humidity: num(state.humidity) ?? num(state.current_humidity),
      });
    case 'fan': {
      const direction = word(state.direction);
      return known({
        on: isOn(state),
        percentage: percent(state.percentage) ?? percent(state.speed),
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
        volume: percent(state.volume),
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
  return { capabilities, deviceClass, attributes, reading: readingOf(deviceClass, attributes, state) };
}

