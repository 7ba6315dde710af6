import { randomBytes } from 'node:crypto';
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt';

/**
 * Real MQTT devices for tests: six devices that announce themselves with Home Assistant MQTT
 * discovery and answer commands with the exact topics and payloads their firmware publishes.
 *
 * Where the shapes come from (read from the sources, not from memory):
 *
 * - Zigbee2MQTT (`bulb`, `climate_sensor`, `door`, `remote`): Koenkk/zigbee2mqtt
 *   `lib/extension/homeassistant.ts` (snapshot of 2026-07-21, version 2.12.1) for every discovery
 *   config, the device_automation triggers and the `/action` topic; `lib/controller.ts`
 *   (publishEntityState: state JSON with sorted keys, cached state merged in),
 *   `lib/state.ts` (`action`/`action_*` are never cached), `lib/extension/publish.ts` (how
 *   `/set`, `/set/<attribute>` and `/get` are parsed), `lib/extension/availability.ts` and
 *   `lib/mqtt.ts` (`{"state":"online"}` retained with QoS 1, the bridge's will). What each device
 *   exposes comes from Koenkk/zigbee-herdsman-converters `src/devices/philips.ts` (9290012573A,
 *   324131092621 = RWL020/RWL021), `src/devices/lumi.ts` (WSDCGQ11LM, MCCGQ11LM),
 *   `src/lib/exposes.ts`, `src/lib/philips.ts` (Hue effects); the light's answers to commands
 *   follow `src/converters/toZigbee.ts` (light_onoff_brightness, light_colortemp, light_color,
 *   on_off) and `src/lib/color.ts` (syncColorState and the colour conversions).
 *   Settings assumed: defaults (`homeassistant.legacy_action_sensor: false`,
 *   `advanced.last_seen: disable`, `advanced.output: json`) with `availability.enabled: true`, so
 *   each entity lists the bridge and the device availability topics.
 * - Tasmota (`plug`): arendst/Tasmota `tasmota/tasmota_xdrv_driver/xdrv_12_home_assistant.ino`,
 *   the legacy discovery that `SetOption19 1` turns on (`homeassistant/<component>/<chipid>_…/config`
 *   with abbreviated keys, `dev: {ids}` and, on the status sensor, `dev: {ids, name, mdl, sw, mf}`),
 *   and `tasmota/tasmota_support/support_tasmota.ino` (ExecuteCommandPower: with SetOption59, which
 *   discovery forces on, `tele/…/STATE` first, then `stat/…/RESULT` `{"POWER":"ON"}` and
 *   `stat/…/POWER` `ON`). The older `~` form (`"~":"tasmota_8D8F3C/"`, `~cmnd/POWER`) is what
 *   Tasmota 8.x sent from `tasmota/xdrv_12_home_assistant.ino` (FindPrefix/Shorten, and the switch
 *   to FullTopic `%topic%/%prefix%/` when SetOption19 is set): ask for it with
 *   `tasmotaDiscovery: 'tilde'`. No single firmware ever sent `~` together with the current
 *   `['ENERGY']['Power']` templates and short `dev` keys, so the two are kept apart.
 * - ESPHome (`cover`): esphome/esphome `esphome/components/mqtt/mqtt_cover.cpp`,
 *   `mqtt_component.cpp` (send_discovery_: key order, legacy unique id `ESPcover<object_id>`,
 *   `dev` block with `ids` as a plain string and `cns`), `mqtt_const.h` (abbreviations, on by
 *   default), `esphome/components/mqtt/__init__.py` (birth/will `<node>/status` `online`/`offline`
 *   retained, component state retained), `esphome/components/cover/cover.cpp` (OPEN/CLOSE/STOP/TOGGLE,
 *   case-insensitive) and `esphome/components/time_based/time_based_cover.cpp` (how the position
 *   moves, `opening`/`closing` while it does, a position report every second), snapshot of
 *   2024-10-25.
 *
 * Left out on purpose: the clearing messages the firmware also sends on start (Tasmota clears
 * `light/<chipid>_LI_1`, unused relays, buttons and `tasmota/discovery/<mac>/config`), the z2m
 * bridge's own entities, Hue entities that are neither a light nor a diagnostic (`effect_speed`,
 * `effect_color`), and `esphome/discover/<node>`. Time is compressed: a cover that travels for
 * seconds publishes its whole journey at once.
 */

export type SimulatedDeviceKey = 'bulb' | 'climate_sensor' | 'door' | 'remote' | 'plug' | 'cover';

export interface MqttMessage {
  topic: string;
  payload: string;
  retain?: boolean;
}

export interface SimulatedDevice {
  key: SimulatedDeviceKey;
  source: 'zigbee2mqtt' | 'tasmota' | 'esphome';
  /** Discovery configs as the firmware publishes them (retained). */
  discovery(prefix: string): MqttMessage[];
  /** Empty retained payloads on the same config topics: removes the device. */
  removal(prefix: string): MqttMessage[];
  /** Availability messages saying online / offline (retained as the firmware does). */
  online(): MqttMessage[];
  offline(): MqttMessage[];
  /** The device's current state messages (what it publishes at start and after a change). */
  state(): MqttMessage[];
  /** Topic filters the device listens on for commands. */
  commandTopics: string[];
  /** Applies a command as the firmware does and returns the messages it publishes in answer (new state). Unknown commands change nothing and return []. */
  handle(topic: string, payload: string): MqttMessage[];
  /**
   * A change that starts at the device (a sensor reading, the door opening, a wall switch) and
   * the messages the firmware publishes for it. z2m devices merge `patch` into their JSON state;
   * the plug merges it into its ENERGY readings (published as at a teleperiod); the cover takes
   * `{ position: 0..100 }`.
   */
  report(patch: Record<string, unknown>): MqttMessage[];
}

/** `current`: today's firmware (full topics, `dev: {ids}`); `tilde`: Tasmota 8.x (`~` base topic). */
export type TasmotaDiscoveryFlavour = 'current' | 'tilde';

export interface SimulatedDevicesOptions {
  tasmotaDiscovery?: TasmotaDiscoveryFlavour;
}

export const DEVICE_KEYS: readonly SimulatedDeviceKey[] = ['bulb', 'climate_sensor', 'door', 'remote', 'plug', 'cover'];

/** Fresh devices, each in its initial state. */
export function simulatedDevices(options: SimulatedDevicesOptions = {}): Record<SimulatedDeviceKey, SimulatedDevice> {
  return {
    bulb: z2mBulb(),
    climate_sensor: z2mClimateSensor(),
    door: z2mDoor(),
    remote: z2mRemote(),
    plug: tasmotaPlug(options.tasmotaDiscovery ?? 'current'),
    cover: esphomeCover(),
  };
}

// ---------------------------------------------------------------------------------------------
// Helpers

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** json-stable-stringify-without-jsonify, as z2m uses: keys sorted at every level, undefined left out. */
function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : stableStringify(v))).join(',')}]`;
  if (isObject(value)) {
    const parts = Object.keys(value)
      .sort()
      .filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableStringify(value[k])}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** object-assign-deep, as z2m's state cache merges updates. */
function deepMerge(base: Json, patch: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    const prev = out[k];
    out[k] = isObject(v) && isObject(prev) ? deepMerge(prev, v) : isObject(v) ? deepMerge({}, v) : v;
  }
  return out;
}

const roundTo = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

function removalOf(messages: MqttMessage[]): MqttMessage[] {
  return messages.map((m) => ({ topic: m.topic, payload: '', retain: true }));
}

/** MQTT topic filter matching (`+` one level, `#` the rest). */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

// ---------------------------------------------------------------------------------------------
// Colour maths used by zigbee-herdsman-converters (src/lib/color.ts): Wide RGB D65 matrices,
// McCamy's formula for xy → mireds. For mireds → xy z2m looks the point up in a table of the
// Planckian locus; this uses Kim et al.'s cubic fit of the same locus (same values to ~1e-3).

function hsvToRgb(hue: number, saturation: number): [number, number, number] {
  const h = (hue % 360) / 360;
  const s = saturation / 100;
  const v = 1;
  const i = Math.floor(h * 6);
  const f = h * 6 - i;
  const p = v * (1 - s);
  const q = v * (1 - f * s);
  const t = v * (1 - (1 - f) * s);
  switch (i % 6) {
    case 0:
      return [v, t, p];
    case 1:
      return [q, v, p];
    case 2:
      return [p, v, t];
    case 3:
      return [p, q, v];
    case 4:
      return [t, p, v];
    default:
      return [v, p, q];
  }
}

function rgbToXy(r: number, g: number, b: number): { x: number; y: number } {
  const X = r * 0.664511 + g * 0.154324 + b * 0.162028;
  const Y = r * 0.283881 + g * 0.668433 + b * 0.047685;
  const Z = r * 0.000088 + g * 0.07231 + b * 0.986039;
  const sum = X + Y + Z;
  return { x: sum === 0 ? 0 : X / sum, y: sum === 0 ? 0 : Y / sum };
}

function gammaCorrected(v: number): number {
  return v > 0.04045 ? ((v + 0.055) / (1 + 0.055)) ** 2.4 : v / 12.92;
}

function xyToRgb(x: number, y: number): [number, number, number] {
  const Y = 1;
  const X = (Y / y) * x;
  const Z = (Y / y) * (1 - x - y);
  let r = X * 1.656492 - Y * 0.354851 - Z * 0.255038;
  let g = -X * 0.707196 + Y * 1.655397 + Z * 0.036152;
  let b = X * 0.051713 - Y * 0.121364 + Z * 1.01153;
  if (r > b && r > g && r > 1) [r, g, b] = [1, g / r, b / r];
  else if (g > b && g > r && g > 1) [r, g, b] = [r / g, 1, b / g];
  else if (b > r && b > g && b > 1) [r, g, b] = [r / b, g / b, 1];
  const clean = (v: number) => (Number.isNaN(v) || v < 0 ? 0 : v);
  return [clean(r), clean(g), clean(b)];
}

function rgbToHs(r: number, g: number, b: number): { hue: number; saturation: number } {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const d = max - min;
  let h = 0;
  if (max !== min) {
    if (max === r) h = (g - b + d * (g < b ? 6 : 0)) / (6 * d);
    else if (max === g) h = (b - r + d * 2) / (6 * d);
    else h = (r - g + d * 4) / (6 * d);
  }
  return { hue: (h * 360) % 360, saturation: max === 0 ? 0 : (d / max) * 100 };
}

function xyToMireds(x: number, y: number): number {
  const n = (x - 0.332) / (0.1858 - y);
  return 1_000_000 / Math.abs(437 * n ** 3 + 3601 * n ** 2 + 6861 * n + 5517);
}

function miredsToXy(mireds: number): { x: number; y: number } {
  const t = Math.min(25000, Math.max(1667, 1_000_000 / mireds));
  const x =
    t <= 4000
      ? -0.2661239e9 / t ** 3 - 0.2343589e6 / t ** 2 + 0.8776956e3 / t + 0.17991
      : -3.0258469e9 / t ** 3 + 2.1070379e6 / t ** 2 + 0.2226347e3 / t + 0.24039;
  const y =
    t <= 2222
      ? -1.1063814 * x ** 3 - 1.3481102 * x ** 2 + 2.18555832 * x - 0.20219683
      : t <= 4000
        ? -0.9549476 * x ** 3 - 1.37418593 * x ** 2 + 2.09137015 * x - 0.16748867
        : 3.081758 * x ** 3 - 5.8733867 * x ** 2 + 3.75112997 * x - 0.37001483;
  return { x, y };
}

// ---------------------------------------------------------------------------------------------
// Zigbee2MQTT (Koenkk/zigbee2mqtt lib/extension/homeassistant.ts)

const Z2M_BASE = 'zigbee2mqtt';
const Z2M_VERSION = '2.12.1';
const Z2M_COORDINATOR = '0x00124b0024c2a1b3';
const Z2M_ORIGIN = { name: 'Zigbee2MQTT', sw: Z2M_VERSION, url: 'https://www.zigbee2mqtt.io' };
const Z2M_BRIDGE_STATE = `${Z2M_BASE}/bridge/state`;

interface Z2mIdentity {
  ieee: string;
  friendlyName: string;
  /** definition.model (the vendor's model number), becomes `model_id`. */
  model: string;
  vendor: string;
  /** definition.description, becomes `model`. */
  description: string;
  softwareBuildId?: string;
  hardwareVersion?: number;
}

/** One entry of exposeToConfig(): the component, the object id and the payload before discover() completes it. */
interface Z2mEntity {
  component: string;
  objectId: string;
  payload: Json;
}

function z2mFrame(id: Z2mIdentity) {
  const base = `${Z2M_BASE}/${id.friendlyName}`;
  // getDevicePayload(): sw_version is overwritten with the device's softwareBuildID.
  const device = {
    identifiers: [`zigbee2mqtt_${id.ieee}`],
    name: id.friendlyName,
    sw_version: id.softwareBuildId,
    model: id.description,
    model_id: id.model,
    manufacturer: id.vendor,
    hw_version: id.hardwareVersion,
    via_device: `zigbee2mqtt_bridge_${Z2M_COORDINATOR}`,
  };
  const configTopic = (prefix: string, e: Z2mEntity) => `${prefix}/${e.component}/${id.ieee}/${e.objectId}/config`;
  return {
    base,
    device,
    /** discover(): fills in topics, ids, device, origin and availability, then stable-stringifies. */
    config(prefix: string, e: Z2mEntity): MqttMessage {
      const p: Json = { ...e.payload };
      if (p.state_topic === undefined || p.state_topic) p.state_topic = base;
      else delete p.state_topic;
      let objectId = id.friendlyName.replace(/\s+/g, '_').toLowerCase();
      if (e.objectId.startsWith(e.component) && e.objectId.includes('_')) objectId += `_${e.objectId.split(/_(.+)/)[1]}`;
      else if (!e.objectId.startsWith(e.component)) objectId += `_${e.objectId}`;
      p.object_id = objectId;
      p.default_entity_id = `${e.component}.${objectId}`;
      p.unique_id = `${id.ieee}_${e.objectId}_${Z2M_BASE}`;
      p.device = device;
      p.origin = Z2M_ORIGIN;
      p.availability = [
        { topic: Z2M_BRIDGE_STATE, value_template: '{{ value_json.state }}' },
        { topic: `${base}/availability`, value_template: '{{ value_json.state }}' },
      ];
      p.availability_mode = 'all';
      const postfix = typeof p.command_topic_postfix === 'string' ? `/${p.command_topic_postfix}` : '';
      delete p.command_topic_postfix;
      if (p.command_topic === true) p.command_topic = `${base}/set${postfix}`;
      return { topic: configTopic(prefix, e), payload: stableStringify(p), retain: true };
    },
    /** publishDeviceTriggerDiscover(): one config per action value. */
    trigger(prefix: string, action: string): MqttMessage {
      const payload = {
        automation_type: 'trigger',
        type: 'action',
        subtype: action,
        payload: action,
        topic: `${base}/action`,
        device,
        origin: Z2M_ORIGIN,
      };
      return { topic: `${prefix}/device_automation/${id.ieee}/action_${action}/config`, payload: stableStringify(payload), retain: true };
    },
    online: (): MqttMessage[] => [
      { topic: Z2M_BRIDGE_STATE, payload: JSON.stringify({ state: 'online' }), retain: true },
      { topic: `${base}/availability`, payload: JSON.stringify({ state: 'online' }), retain: true },
    ],
    offline: (): MqttMessage[] => [{ topic: `${base}/availability`, payload: JSON.stringify({ state: 'offline' }), retain: true }],
    /** publishEntityState(): the whole cached state, sorted keys, not retained. */
    state: (state: Json): MqttMessage => ({ topic: base, payload: stableStringify(state), retain: false }),
  };
}

/**
 * exposeToConfig() for a numeric expose without SET access: `name` is the label, dropped again
 * when a device_class is set; `enabled_by_default` true unless the lookup says otherwise; the
 * expose's category wins over the lookup's.
 */
function z2mSensor(property: string, payload: Json): Z2mEntity {
  return {
    component: 'sensor',
    objectId: property,
    payload: { value_template: `{{ value_json["${property}"] }}`, enabled_by_default: true, ...payload },
  };
}

const Z2M_LINKQUALITY = z2mSensor('linkquality', {
  name: 'Linkquality',
  enabled_by_default: false,
  unit_of_measurement: 'lqi',
  entity_category: 'diagnostic',
  icon: 'mdi:signal',
  state_class: 'measurement',
});
// e.battery(): unit %, category diagnostic; NUMERIC_DISCOVERY_LOOKUP.battery.
const Z2M_BATTERY = z2mSensor('battery', {
  unit_of_measurement: '%',
  device_class: 'battery',
  state_class: 'measurement',
  entity_category: 'diagnostic',
});
// e.battery_voltage() is named `voltage`, unit mV, category diagnostic.
const Z2M_VOLTAGE = z2mSensor('voltage', {
  unit_of_measurement: 'mV',
  device_class: 'voltage',
  state_class: 'measurement',
  entity_category: 'diagnostic',
});

/** The `update` entity z2m adds for a definition with `ota`. */
function z2mUpdate(ieee: string): Z2mEntity {
  return {
    component: 'update',
    objectId: 'update',
    payload: {
      name: null,
      entity_picture: 'https://github.com/Koenkk/zigbee2mqtt/raw/master/images/logo.png',
      state_topic: true,
      device_class: 'firmware',
      entity_category: 'config',
      command_topic: `${Z2M_BASE}/bridge/request/device/ota_update/update`,
      payload_install: `{"id": "${ieee}"}`,
      value_template:
        `{"latest_version":"{{ value_json['update']['latest_version'] }}","installed_version":"{{ value_json['update']['installed_version'] }}",` +
        `"update_percentage":{{ value_json['update'].get('progress', 'null') }},"in_progress":{{ (value_json['update']['state'] == 'updating')|lower }}}`,
    },
  };
}

/** publish.ts parseTopic()/parseMessage(): `<base>/set`, `<base>/set/<attribute>`, `<base>/get…`. */
function parseZ2mCommand(base: string, topic: string, payload: string): { type: 'set' | 'get'; message: Json } | undefined {
  const match = topic.startsWith(`${base}/`) ? /^(set|get)(?:\/([^/]+))?$/.exec(topic.slice(base.length + 1)) : null;
  if (!match) return undefined;
  const type = match[1] as 'set' | 'get';
  const attribute = match[2];
  let message: unknown;
  if (attribute) {
    try {
      message = { [attribute]: JSON.parse(payload) };
    } catch {
      message = { [attribute]: payload };
    }
  } else {
    try {
      message = JSON.parse(payload);
    } catch {
      const states = ['on', 'off', 'toggle', 'open', 'close', 'stop', 'lock', 'unlock'];
      message = states.includes(payload.toLowerCase()) ? { state: payload } : undefined;
    }
  }
  return isObject(message) ? { type, message } : undefined;
}

function z2mCommon(id: Z2mIdentity, key: SimulatedDeviceKey, entities: Z2mEntity[], initial: Json) {
  const frame = z2mFrame(id);
  let state = initial;
  const discovery = (prefix: string) => entities.map((e) => frame.config(prefix, e));
  return {
    frame,
    get state() {
      return state;
    },
    set state(next: Json) {
      state = next;
    },
    device: {
      key,
      source: 'zigbee2mqtt' as const,
      discovery,
      removal: (prefix: string) => removalOf(discovery(prefix)),
      online: () => frame.online(),
      offline: () => frame.offline(),
      state: () => [frame.state(state)],
      commandTopics: [] as string[],
      handle: (): MqttMessage[] => [],
      report(patch: Json): MqttMessage[] {
        state = deepMerge(state, patch);
        return [frame.state(state)];
      },
    } satisfies SimulatedDevice,
  };
}

// --- bulb: Philips 9290012573A (Hue white and color ambiance E26/E27/E14), philips.m.light({colorTemp: {range: [153, 500]}, color: {modes: ['xy', 'hs'], enhancedHue: true}}) + m.identify()

const HUE_EFFECTS = [
  'blink', 'breathe', 'okay', 'channel_change', 'candle', 'fireplace', 'colorloop',
  'sunset', 'sunrise', 'sparkle', 'opal', 'glisten', 'underwater', 'cosmos', 'sunbeam', 'enchant',
  'none', 'finish_effect', 'stop_effect', 'stop_hue_effect',
];
const MIREDS_MIN = 153;
const MIREDS_MAX = 500;

type ColorMode = 'xy' | 'hs' | 'color_temp';

/** syncColorState() for a light whose state already has x/y, hue/saturation and color_temp. */
function syncColor(mode: ColorMode, next: { color?: Json; color_temp?: number }, old: Json): Json {
  const oldColor = isObject(old.color) ? old.color : {};
  const clampCt = (v: number) => Math.min(MIREDS_MAX, Math.max(MIREDS_MIN, v));
  const pick = (k: string) => (next.color?.[k] !== undefined ? Number(next.color[k]) : oldColor[k] !== undefined ? Number(oldColor[k]) : undefined);
  const color: Json = {};
  const result: Json = { color_mode: mode };
  if (mode === 'hs') {
    const hue = pick('hue');
    const saturation = pick('saturation');
    if (hue !== undefined) color.hue = hue;
    if (saturation !== undefined) color.saturation = saturation;
    if (hue !== undefined && saturation !== undefined) {
      const xy = rgbToXy(...hsvToRgb(hue, saturation));
      result.color_temp = clampCt(Math.round(xyToMireds(xy.x, xy.y)));
      color.x = roundTo(xy.x, 4);
      color.y = roundTo(xy.y, 4);
    }
  } else if (mode === 'xy') {
    const x = pick('x');
    const y = pick('y');
    if (x !== undefined) color.x = x;
    if (y !== undefined) color.y = y;
    if (x !== undefined && y !== undefined) {
      result.color_temp = clampCt(Math.round(xyToMireds(x, y)));
      const hs = rgbToHs(...xyToRgb(x, y));
      color.hue = Math.round(hs.hue) % 360; // ColorHSV keeps hue in [0, 360)
      color.saturation = Math.round(hs.saturation);
    }
  } else {
    const ct = next.color_temp ?? (old.color_temp as number | undefined);
    if (ct !== undefined) {
      result.color_temp = ct;
      const xy = miredsToXy(ct);
      color.x = roundTo(xy.x, 4);
      color.y = roundTo(xy.y, 4);
      const hs = rgbToHs(...xyToRgb(color.x as number, color.y as number));
      color.hue = Math.round(hs.hue) % 360; // ColorHSV keeps hue in [0, 360)
      color.saturation = Math.round(hs.saturation);
    }
  }
  if (Object.keys(color).length) result.color = color;
  return result;
}

/** The light converters of the bulb: each returns the state to publish, or throws like z2m's converters. */
const bulbConverters: Record<string, { keys: string[]; set: (key: string, value: unknown, message: Json, cache: Json) => Json | undefined }> = {
  // toZigbee light_onoff_brightness (turnsOffAtBrightness1: true for philips.m.light)
  onoff: {
    keys: ['state', 'brightness', 'brightness_percent'],
    set(_key, _value, message, cache) {
      let state = message.state !== undefined ? (typeof message.state === 'string' ? message.state.toLowerCase() : null) : undefined;
      let brightness: number | undefined;
      if (message.brightness != null) brightness = Number(message.brightness);
      else if (message.brightness_percent != null) brightness = Math.round((Number(message.brightness_percent) * 255) / 100);
      if (brightness === 255) brightness = 254;
      if (brightness !== undefined && (Number.isNaN(brightness) || brightness < 0 || brightness > 254)) throw new Error('invalid brightness');
      if (state != null && !['on', 'off', 'toggle'].includes(state)) throw new Error('invalid state');
      if (state == null && brightness === undefined) throw new Error('state or brightness needed');
      if (state === undefined) state = brightness === 0 ? 'off' : 'on';
      const target = state === 'toggle' ? (cache.state === 'ON' ? 'off' : 'on') : state;
      if (target === 'off') brightness = brightness === 0 ? 0 : undefined;
      if (brightness === undefined) {
        // on_off: a toggle answers with the flipped cached state.
        const result: Json = { state: state === 'toggle' ? (cache.state === 'OFF' ? 'ON' : 'OFF') : String(state).toUpperCase() };
        if (result.state === 'ON' && cache.brightness === 0) result.brightness = 1;
        return result;
      }
      if (brightness === 0 && (target === 'on' || state === null)) brightness = 1;
      if (brightness === 1) brightness = 2;
      const result: Json = { brightness };
      if (state !== null) result.state = brightness === 0 ? 'OFF' : 'ON';
      return result;
    },
  },
  // toZigbee light_colortemp
  colortemp: {
    keys: ['color_temp', 'color_temp_percent'],
    set(key, value, _message, cache) {
      const presets: Record<string, number> = { warmest: MIREDS_MAX, warm: 454, neutral: 370, cool: 250, coolest: MIREDS_MIN };
      let v: unknown = value;
      if (key === 'color_temp_percent') v = Math.round(MIREDS_MIN + (Number(value) * (MIREDS_MAX - MIREDS_MIN)) / 100);
      if (typeof v === 'string' && v in presets) v = presets[v];
      const n = Number(v);
      if (v === null || v === '' || Number.isNaN(n)) throw new Error('invalid color_temp');
      return syncColor('color_temp', { color_temp: Math.min(MIREDS_MAX, Math.max(MIREDS_MIN, n)) }, cache);
    },
  },
  // toZigbee light_color with Color.fromConverterArg()
  color: {
    keys: ['color'],
    set(_key, value, _message, cache) {
      const hex = typeof value === 'string' ? value : isObject(value) && typeof value.hex === 'string' ? value.hex : undefined;
      const xyFromRgb = (r: number, g: number, b: number) => {
        const xy = rgbToXy(gammaCorrected(r), gammaCorrected(g), gammaCorrected(b));
        return syncColor('xy', { color: { x: roundTo(xy.x, 4), y: roundTo(xy.y, 4) } }, cache);
      };
      if (hex !== undefined) {
        if (!/^#?[0-9a-fA-F]{6}$/.test(hex) || (typeof value === 'string' && !hex.startsWith('#'))) throw new Error('invalid color');
        const n = Number.parseInt(hex.replace('#', ''), 16);
        return xyFromRgb(((n >> 16) & 255) / 255, ((n >> 8) & 255) / 255, (n & 255) / 255);
      }
      if (!isObject(value)) throw new Error('invalid color');
      if (value.x != null && value.y != null) return syncColor('xy', { color: { x: Number(value.x), y: Number(value.y) } }, cache);
      if (value.r != null && value.g != null && value.b != null) return xyFromRgb(Number(value.r) / 255, Number(value.g) / 255, Number(value.b) / 255);
      const hue = value.h ?? value.hue;
      const saturation = value.s ?? value.saturation;
      if (hue == null && saturation == null) throw new Error('invalid color');
      const color: Json = {};
      if (hue != null) color.hue = Number(hue) % 360;
      if (saturation != null) color.saturation = Number(saturation);
      return syncColor('hs', { color }, cache);
    },
  },
  effect: {
    keys: ['effect'],
    set(_key, value) {
      if (typeof value !== 'string' || !HUE_EFFECTS.includes(value)) throw new Error('invalid effect');
      return { effect: value };
    },
  },
  power_on_behavior: {
    keys: ['power_on_behavior'],
    set(_key, value) {
      if (typeof value !== 'string' || !['off', 'on', 'toggle', 'previous'].includes(value)) throw new Error('invalid power_on_behavior');
      return { power_on_behavior: value };
    },
  },
  // identify makes the bulb blink; transition is an option of the other converters: no state.
  identify: { keys: ['identify'], set: () => undefined },
  transition: { keys: ['transition'], set: () => undefined },
};

function z2mBulb(): SimulatedDevice {
  const id: Z2mIdentity = {
    ieee: '0x0017880104e45517',
    friendlyName: 'living_room_bulb',
    model: '9290012573A',
    vendor: 'Philips',
    description: 'Hue white and color ambiance E26/E27/E14',
    softwareBuildId: '1.116.3',
    hardwareVersion: 1,
  };
  const entities: Z2mEntity[] = [
    {
      component: 'light',
      objectId: 'light',
      payload: {
        name: null,
        brightness: true,
        schema: 'json',
        command_topic: true,
        brightness_scale: 254,
        // color_xy comes before color_hs in the expose, so xy is preferred over hs.
        supported_color_modes: ['xy', 'color_temp'],
        max_mireds: MIREDS_MAX,
        min_mireds: MIREDS_MIN,
        effect: true,
        effect_list: HUE_EFFECTS,
      },
    },
    {
      component: 'select',
      objectId: 'power_on_behavior',
      payload: {
        name: 'Power-on behavior',
        value_template: '{{ value_json["power_on_behavior"] }}',
        state_topic: true,
        command_topic: true,
        command_topic_postfix: 'power_on_behavior',
        options: ['off', 'on', 'toggle', 'previous'],
        entity_category: 'config',
        icon: 'mdi:power-settings',
      },
    },
    {
      component: 'select',
      objectId: 'effect',
      payload: {
        name: 'Effect',
        value_template: '{{ value_json["effect"] }}',
        state_topic: true,
        command_topic: true,
        command_topic_postfix: 'effect',
        options: HUE_EFFECTS,
        enabled_by_default: false,
        icon: 'mdi:palette',
      },
    },
    {
      component: 'button',
      objectId: 'identify',
      payload: {
        state_topic: false,
        command_topic: true,
        command_topic_postfix: 'identify',
        payload_press: 'identify',
        device_class: 'identify',
        entity_category: 'config',
      },
    },
    Z2M_LINKQUALITY,
    z2mUpdate(id.ieee),
  ];
  const initial: Json = {
    brightness: 254,
    ...syncColor('color_temp', { color_temp: 366 }, { color: { x: 0, y: 0, hue: 0, saturation: 0 } }),
    linkquality: 143,
    power_on_behavior: 'previous',
    state: 'OFF',
    update: { installed_version: 16786432, latest_version: 16786432, state: 'idle' },
  };
  const z = z2mCommon(id, 'bulb', entities, initial);
  const base = z.frame.base;
  // adjustMessageBeforePublish(): color.hue/saturation are copied to h/s in what is published.
  const publish = (state: Json): MqttMessage => {
    const out = deepMerge({}, state);
    if (isObject(out.color)) {
      if (out.color.hue !== undefined) out.color.h = out.color.hue;
      if (out.color.saturation !== undefined) out.color.s = out.color.saturation;
    }
    return z.frame.state(out);
  };
  return {
    ...z.device,
    state: () => [publish(z.state)],
    commandTopics: [`${base}/set`, `${base}/set/+`, `${base}/get`, `${base}/get/+`],
    handle(topic, payload) {
      const parsed = parseZ2mCommand(base, topic, payload);
      if (!parsed) return [];
      const { message } = parsed;
      const converterOf = (key: string) => Object.entries(bulbConverters).find(([, c]) => c.keys.includes(key));
      if (parsed.type === 'get') {
        // The bulb answers the reads with attribute reports: z2m publishes the (unchanged) state.
        return Object.keys(message).some((k) => converterOf(k) && k !== 'identify' && k !== 'transition') ? [publish(z.state)] : [];
      }
      // publish.ts: each converter runs once, against the cached state from before the message,
      // and what they return is published as one state message.
      const used = new Set<string>();
      let update: Json = {};
      for (const [key, value] of Object.entries(message)) {
        const found = converterOf(key);
        if (!found || used.has(found[0])) continue; // z2m: "No converter available" / converter already used
        used.add(found[0]);
        try {
          const result = found[1].set(key, value, message, z.state);
          if (result) update = { ...update, ...result };
        } catch {
          // z2m logs "Publish 'set' … failed" and goes on with the other keys.
        }
      }
      if (Object.keys(update).length === 0) return [];
      z.state = deepMerge(z.state, update);
      return [publish(z.state)];
    },
    report(patch) {
      z.state = deepMerge(z.state, patch);
      return [publish(z.state)];
    },
  };
}

// --- climate_sensor: Aqara WSDCGQ11LM, exposes [battery, temperature, humidity, pressure, battery_voltage] + linkquality

function z2mClimateSensor(): SimulatedDevice {
  const id: Z2mIdentity = {
    ieee: '0x00158d0001a2b3c4',
    friendlyName: 'bedroom_climate',
    model: 'WSDCGQ11LM',
    vendor: 'Aqara',
    description: 'Temperature and humidity sensor',
    softwareBuildId: '3000-0001',
    hardwareVersion: 30,
  };
  const entities: Z2mEntity[] = [
    Z2M_BATTERY,
    z2mSensor('temperature', { unit_of_measurement: '°C', device_class: 'temperature', state_class: 'measurement' }),
    z2mSensor('humidity', { unit_of_measurement: '%', device_class: 'humidity', state_class: 'measurement' }),
    z2mSensor('pressure', { unit_of_measurement: 'hPa', device_class: 'atmospheric_pressure', state_class: 'measurement' }),
    Z2M_VOLTAGE,
    Z2M_LINKQUALITY,
  ];
  const initial: Json = { battery: 97, humidity: 48.2, linkquality: 87, pressure: 1008.3, temperature: 21.5, voltage: 2995 };
  return z2mCommon(id, 'climate_sensor', entities, initial).device;
}

// --- door: Aqara MCCGQ11LM, exposes [battery, contact, device_temperature, battery_voltage, power_outage_count(false), trigger_count()] + linkquality

function z2mDoor(): SimulatedDevice {
  const id: Z2mIdentity = {
    ieee: '0x00158d0002c3d4e5',
    friendlyName: 'front_door',
    model: 'MCCGQ11LM',
    vendor: 'Aqara',
    description: 'Door and window sensor',
    softwareBuildId: '3000-0001',
    hardwareVersion: 1,
  };
  const entities: Z2mEntity[] = [
    Z2M_BATTERY,
    {
      // Binary('contact', STATE, false, true): payload_on false (open), payload_off true (closed);
      // BINARY_DISCOVERY_LOOKUP.contact = door; the name goes as a device_class is set.
      component: 'binary_sensor',
      objectId: 'contact',
      payload: { value_template: '{{ value_json["contact"] }}', payload_on: false, payload_off: true, device_class: 'door' },
    },
    z2mSensor('device_temperature', {
      unit_of_measurement: '°C',
      device_class: 'temperature',
      entity_category: 'diagnostic',
      state_class: 'measurement',
    }),
    Z2M_VOLTAGE,
    z2mSensor('power_outage_count', {
      name: 'Power outage count',
      icon: 'mdi:counter',
      enabled_by_default: false,
      state_class: 'measurement',
      entity_category: 'diagnostic',
    }),
    z2mSensor('trigger_count', {
      name: 'Trigger count',
      icon: 'mdi:counter',
      enabled_by_default: false,
      state_class: 'measurement',
      entity_category: 'diagnostic',
    }),
    Z2M_LINKQUALITY,
  ];
  const initial: Json = { battery: 100, contact: true, device_temperature: 22, linkquality: 102, power_outage_count: 6, trigger_count: 0, voltage: 3025 };
  return z2mCommon(id, 'door', entities, initial).device;
}

// --- remote: Philips 324131092621 (Hue dimmer switch gen 1, RWL020/RWL021)

export const REMOTE_ACTIONS: readonly string[] = ['on', 'up', 'down', 'off'].flatMap((b) => [
  `${b}_press`,
  `${b}_press_release`,
  `${b}_hold`,
  `${b}_hold_release`,
]);

function z2mRemote(): SimulatedDevice & { press(action: string): MqttMessage[] } {
  const id: Z2mIdentity = {
    ieee: '0x0017880104a1b2c3',
    friendlyName: 'hallway_remote',
    model: '324131092621',
    vendor: 'Philips',
    description: 'Hue dimmer switch gen 1',
    softwareBuildId: '6.1.1.28573',
    hardwareVersion: 1,
  };
  // The action enum gets no entity (legacy_action_sensor: false, experimental_event_entities:
  // false); device triggers replace it.
  const entities: Z2mEntity[] = [
    Z2M_BATTERY,
    z2mSensor('action_duration', { unit_of_measurement: 's', icon: 'mdi:timer', device_class: 'duration', entity_category: 'diagnostic' }),
    Z2M_LINKQUALITY,
    z2mUpdate(id.ieee),
  ];
  const initial: Json = {
    battery: 85,
    linkquality: 69,
    update: { installed_version: 33569561, latest_version: 33569561, state: 'idle' },
  };
  const z = z2mCommon(id, 'remote', entities, initial);
  const triggered = new Set<string>();
  let pressStart: number | undefined;
  const discovery = (prefix: string) => [...z.device.discovery(prefix), ...REMOTE_ACTIONS.map((a) => z.frame.trigger(prefix, a))];
  return {
    ...z.device,
    /**
     * Entity configs and one device_automation trigger per action. z2m publishes a trigger the
     * first time its action happens; the set here is what the broker keeps once every button
     * has been used.
     */
    discovery(prefix) {
      for (const a of REMOTE_ACTIONS) triggered.add(a);
      return discovery(prefix);
    },
    removal: (prefix) => removalOf(discovery(prefix)),
    /**
     * A button event: the state with `action` (and `action_duration` on a hold, seconds since
     * the press) on `<base>`, the trigger config the first time, then the bare action on
     * `<base>/action`. `action*` is not kept in the state cache.
     */
    press(action: string, prefix = 'homeassistant'): MqttMessage[] {
      if (!REMOTE_ACTIONS.includes(action)) throw new Error(`the Hue dimmer switch has no action '${action}'`);
      const update: Json = { action };
      const type = action.slice(action.indexOf('_') + 1);
      if (type === 'press') pressStart = Date.now();
      else if (type === 'hold' && pressStart !== undefined) update.action_duration = (Date.now() - pressStart) / 1000;
      const out: MqttMessage[] = [z.frame.state(deepMerge(z.state, update))];
      if (!triggered.has(action)) {
        triggered.add(action);
        out.push(z.frame.trigger(prefix, action));
      }
      out.push({ topic: `${z.frame.base}/action`, payload: action, retain: false });
      return out;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Tasmota: a Sonoff Pow R2 (one relay, CSE7766 energy monitor), topic tasmota_8D8F3C

const TASMOTA_TOPIC = 'tasmota_8D8F3C';
const TASMOTA_CHIP_ID = '8D8F3C'; // ESP_getChipId(): the MAC's last three bytes
const TASMOTA_MAC = '84:F3:EB:8D:8F:3C';
const TASMOTA_NAME = 'Kitchen Plug'; // DeviceName and FriendlyName1
const TASMOTA_MODULE = 'Sonoff Pow R2';

const ENERGY_ON = { ApparentPower: 48, Current: 0.208, Factor: 0.87, Power: 42, ReactivePower: 23 };
const ENERGY_OFF = { ApparentPower: 0, Current: 0, Factor: 0, Power: 0, ReactivePower: 0 };

/** Current firmware: unit and `dev_cla`/`ic` per key (kHAssJsonSensorUnits / kHAssJsonSensorDevCla). */
const TASMOTA_SENSOR_CLASS: Record<string, [string, string]> = {
  TotalStartTime: [' ', '"ic":"mdi:progress-clock"'],
  Total: ['kWh', '"dev_cla":"energy","stat_cla":"total_increasing"'],
  Yesterday: ['kWh', '"dev_cla":"energy"'],
  Today: ['kWh', '"dev_cla":"energy"'],
  Power: ['W', '"dev_cla":"power"'],
  ApparentPower: ['VA', '"dev_cla":"power"'],
  ReactivePower: ['VAr', '"dev_cla":"power"'],
  Factor: ['Cos φ', '"dev_cla":"power_factor"'],
  Voltage: ['V', '"dev_cla":"voltage"'],
  Current: ['A', '"dev_cla":"current"'],
};
/** Tasmota 8.x: HASS_DISCOVER_SENSOR_KWH / _WATT / _VOLTAGE / _AMPERE, else `" "` and the plain template. */
const TASMOTA_8_SENSOR_CLASS: Record<string, [string, string] | undefined> = {
  Total: ['kWh', 'power'],
  Yesterday: ['kWh', 'power'],
  Today: ['kWh', 'power'],
  Power: ['W', 'power'],
  Voltage: ['V', 'power'],
  Current: ['A', 'power'],
};

function tasmotaPlug(flavour: TasmotaDiscoveryFlavour): SimulatedDevice {
  const tilde = flavour === 'tilde';
  // FullTopic: `%prefix%/%topic%/` by default; 8.x set `%topic%/%prefix%/` with SetOption19.
  const full = (prefix: 'cmnd' | 'stat' | 'tele', command: string) =>
    tilde ? `${TASMOTA_TOPIC}/${prefix}/${command}` : `${prefix}/${TASMOTA_TOPIC}/${command}`;
  const version = tilde ? '8.1.0(tasmota)' : '14.4.1(tasmota)';
  const lwt = full('tele', 'LWT');
  const started = Date.now();
  let power: 'ON' | 'OFF' = 'OFF';
  let telePeriod = 300;
  let energy: Json = {
    TotalStartTime: '2024-01-14T18:40:13',
    Total: 12.345,
    Yesterday: 0.512,
    Today: 0.213,
    Period: 0,
    ...ENERGY_OFF,
    Voltage: 231,
  };
  const announcedKeys = ['TotalStartTime', 'Total', 'Yesterday', 'Today', 'Power', 'ApparentPower', 'ReactivePower', 'Factor', 'Voltage', 'Current'];

  const time = () => new Date().toISOString().slice(0, 19);
  const uptime = () => {
    const s = Math.floor((Date.now() - started) / 1000) + 5025;
    const pad = (n: number) => String(n).padStart(2, '0');
    return { text: `${Math.floor(s / 86400)}T${pad(Math.floor(s / 3600) % 24)}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`, seconds: s };
  };
  // MqttShowState()
  const teleState = (): MqttMessage => {
    const up = uptime();
    const wifi = tilde
      ? { AP: 1, SSId: 'HomeWiFi', BSSId: '3C:A6:2F:12:34:56', Channel: 6, RSSI: 76, Signal: -62, LinkCount: 1, Downtime: '0T00:00:03' }
      : { AP: 1, SSId: 'HomeWiFi', BSSId: '3C:A6:2F:12:34:56', Channel: 6, Mode: '11n', RSSI: 76, Signal: -62, LinkCount: 1, Downtime: '0T00:00:03' };
    const body = { Time: time(), Uptime: up.text, UptimeSec: up.seconds, Heap: 25, SleepMode: 'Dynamic', Sleep: 50, LoadAvg: 19, MqttCount: 1, POWER: power, Wifi: wifi };
    return { topic: full('tele', 'STATE'), payload: JSON.stringify(body), retain: false };
  };
  // EnergyShow(): the keys in the firmware's order (Period only at a teleperiod).
  const energyOrder = ['TotalStartTime', 'Total', 'Yesterday', 'Today', 'Period', 'Power', 'ApparentPower', 'ReactivePower', 'Factor', 'Voltage', 'Current'];
  const energyJson = (): Json => {
    const ordered: Json = {};
    for (const k of [...energyOrder, ...Object.keys(energy)]) if (energy[k] !== undefined && !(k in ordered)) ordered[k] = energy[k];
    return ordered;
  };
  const teleSensor = (): MqttMessage => ({ topic: full('tele', 'SENSOR'), payload: JSON.stringify({ Time: time(), ENERGY: energyJson() }), retain: false });
  // HAssPublishStatus(): the status sensor's state, every teleperiod.
  const hassState = (): MqttMessage => {
    const up = uptime().text;
    const body = tilde
      ? {
          Version: version, BuildDateTime: '2020-01-09T14:23:45', Core: '2_6_1', SDK: '2.2.2-dev(38a443e)', Module: TASMOTA_MODULE,
          RestartReason: 'Software/System restart', Uptime: up, 'WiFi LinkCount': 1, 'WiFi Downtime': '0T00:00:03', MqttCount: 1,
          BootCount: 12, SaveCount: 34, IPAddress: '192.168.1.42', RSSI: '76', LoadAvg: 19,
        }
      : {
          Version: version, BuildDateTime: '2024-12-04T09:12:31', 'Module or Template': TASMOTA_MODULE, RestartReason: 'Software/System restart',
          Uptime: up, Hostname: 'tasmota-8D8F3C-3900', IPAddress: '192.168.1.42', RSSI: '76', 'Signal (dBm)': '-62',
          'WiFi LinkCount': 1, 'WiFi Downtime': '0T00:00:03', MqttCount: 1, LoadAvg: 19,
        };
    return { topic: full('tele', 'HASS_STATE'), payload: JSON.stringify(body), retain: false };
  };
  // MqttPublishPowerState(): stat/RESULT then stat/POWER (PowerRetain off).
  const powerState = (): MqttMessage[] => [
    { topic: full('stat', 'RESULT'), payload: JSON.stringify({ POWER: power }), retain: false },
    { topic: full('stat', 'POWER'), payload: power, retain: false },
  ];

  const discovery = (prefix: string): MqttMessage[] => {
    const out: MqttMessage[] = [];
    const cfg = (component: string, uniqueId: string, payload: string) =>
      out.push({ topic: `${prefix}/${component}/${uniqueId}/config`, payload, retain: true });
    if (tilde) {
      // HAssAnnounceRelayLight(), HAssAnnounceSensors(), HAssAnnounceStatusSensor() of Tasmota 8.x:
      // FindPrefix() of the two topics becomes `~`, Shorten() puts `~` in their place.
      const device = `"device":{"identifiers":["${TASMOTA_CHIP_ID}"],"connections":[["mac","${TASMOTA_MAC}"]]}`;
      cfg(
        'switch',
        `${TASMOTA_CHIP_ID}_RL_1`,
        `{"name":"${TASMOTA_NAME}","cmd_t":"~cmnd/POWER","stat_t":"~tele/STATE","val_tpl":"{{value_json.POWER}}","pl_off":"OFF","pl_on":"ON",` +
          `"avty_t":"~tele/LWT","pl_avail":"Online","pl_not_avail":"Offline","uniq_id":"${TASMOTA_CHIP_ID}_RL_1",${device},"~":"${TASMOTA_TOPIC}/"}`,
      );
      for (const key of announcedKeys) {
        const cls = TASMOTA_8_SENSOR_CLASS[key];
        const tail = cls
          ? `"unit_of_meas":"${cls[0]}","val_tpl":"{{value_json['ENERGY'].${key}}}","dev_cla":"${cls[1]}"`
          : `"unit_of_meas":" ","val_tpl":"{{value_json['ENERGY'].${key}}}"`;
        cfg(
          'sensor',
          `${TASMOTA_CHIP_ID}_ENERGY_${key}`,
          `{"name":"${TASMOTA_NAME} ENERGY ${key}","stat_t":"~SENSOR","avty_t":"~LWT","frc_upd":true,"pl_avail":"Online","pl_not_avail":"Offline",` +
            `"uniq_id":"${TASMOTA_CHIP_ID}_ENERGY_${key}",${device},"~":"${TASMOTA_TOPIC}/tele/",${tail}}`,
        );
      }
      cfg(
        'sensor',
        `${TASMOTA_CHIP_ID}_status`,
        `{"name":"${TASMOTA_NAME} status","stat_t":"~HASS_STATE","avty_t":"~LWT","frc_upd":true,"pl_avail":"Online","pl_not_avail":"Offline",` +
          `"json_attributes_topic":"~HASS_STATE","unit_of_meas":" ","val_tpl":"{{value_json['RSSI']}}","ic":"mdi:information-outline",` +
          `"uniq_id":"${TASMOTA_CHIP_ID}_status","device":{"identifiers":["${TASMOTA_CHIP_ID}"],"connections":[["mac","${TASMOTA_MAC}"]],` +
          `"name":"${TASMOTA_NAME}","model":"${TASMOTA_MODULE}","sw_version":"${version}","manufacturer":"Tasmota"},"~":"${TASMOTA_TOPIC}/tele/"}`,
      );
      return out;
    }
    // Current firmware, in HAssDiscovery() order: sensors, relays, status sensor.
    const lwtPart = `"avty_t":"${lwt}","pl_avail":"Online","pl_not_avail":"Offline"`;
    const devShort = `"dev":{"ids":["${TASMOTA_CHIP_ID}"]}`;
    for (const key of announcedKeys) {
      const [unit, cls] = TASMOTA_SENSOR_CLASS[key] ?? [' ', '"ic":"mdi:eye"'];
      cfg(
        'sensor',
        `${TASMOTA_CHIP_ID}_ENERGY_${key}`,
        `{"name":"${TASMOTA_NAME} ENERGY ${key}","stat_t":"${full('tele', 'SENSOR')}",${lwtPart},"uniq_id":"${TASMOTA_CHIP_ID}_ENERGY_${key}",${devShort},` +
          `"unit_of_meas":"${unit}",${cls},"frc_upd":true,"val_tpl":"{{value_json['ENERGY']['${key}']}}"}`,
      );
    }
    cfg(
      'switch',
      `${TASMOTA_CHIP_ID}_RL_1`,
      `{"name":"${TASMOTA_NAME}","stat_t":"${full('tele', 'STATE')}",${lwtPart},"cmd_t":"${full('cmnd', 'POWER')}","pl_off":"OFF","pl_on":"ON",` +
        `"val_tpl":"{{value_json.POWER}}","uniq_id":"${TASMOTA_CHIP_ID}_RL_1",${devShort}}`,
    );
    cfg(
      'sensor',
      `${TASMOTA_CHIP_ID}_status`,
      `{"name":"${TASMOTA_NAME} status","stat_t":"${full('tele', 'HASS_STATE')}",${lwtPart},"json_attr_t":"${full('tele', 'HASS_STATE')}",` +
        `"unit_of_meas":"%","val_tpl":"{{value_json['RSSI']}}","ic":"mdi:information-outline","uniq_id":"${TASMOTA_CHIP_ID}_status",` +
        `"dev":{"ids":["${TASMOTA_CHIP_ID}"],"name":"${TASMOTA_NAME}","mdl":"${TASMOTA_MODULE}","sw":"${version}","mf":"Tasmota"}}`,
    );
    return out;
  };

  const setPower = (next: 'ON' | 'OFF') => {
    power = next;
    energy = { ...energy, ...(next === 'ON' ? ENERGY_ON : ENERGY_OFF) };
  };
  const cmndPrefix = full('cmnd', '');

  return {
    key: 'plug',
    source: 'tasmota',
    discovery,
    removal: (prefix) => removalOf(discovery(prefix)),
    online: () => [{ topic: lwt, payload: 'Online', retain: true }],
    offline: () => [{ topic: lwt, payload: 'Offline', retain: true }],
    state: () => [teleState(), teleSensor(), hassState(), ...powerState()],
    commandTopics: [tilde ? `${TASMOTA_TOPIC}/cmnd/#` : `cmnd/${TASMOTA_TOPIC}/#`],
    handle(topic, payload) {
      if (!topic.startsWith(cmndPrefix)) return [];
      const command = topic.slice(cmndPrefix.length).toUpperCase();
      const arg = payload.trim();
      if (command === 'POWER' || command === 'POWER1') {
        // GetStateNumber(): off/on/toggle or 0/1/2; anything else (and no payload) shows the state.
        const n = ({ off: 0, on: 1, toggle: 2, '0': 0, '1': 1, '2': 2 } as Record<string, number>)[arg.toLowerCase()];
        if (n === undefined) return powerState();
        setPower(n === 2 ? (power === 'ON' ? 'OFF' : 'ON') : n === 1 ? 'ON' : 'OFF');
        // ExecuteCommandPower(): SetOption59 sends tele/STATE, then MqttPublishPowerState().
        return [teleState(), ...powerState()];
      }
      if (command === 'STATE') {
        // CmndState(): tele/STATE (SetOption59), and the same JSON as the command's RESULT.
        const tele = teleState();
        return [tele, { topic: full('stat', 'RESULT'), payload: tele.payload, retain: false }];
      }
      if (command === 'TELEPERIOD') {
        // Setting it restarts the cycle: the telemetry follows within a second.
        if (arg !== '') {
          const n = Number(arg);
          if (!Number.isInteger(n)) return [];
          telePeriod = n === 1 ? 300 : n === 0 ? 0 : Math.min(3600, Math.max(10, n));
        }
        const result: MqttMessage = { topic: full('stat', 'RESULT'), payload: JSON.stringify({ TelePeriod: telePeriod }), retain: false };
        return arg === '' ? [result] : [result, teleState(), teleSensor()];
      }
      return [];
    },
    report(patch) {
      energy = { ...energy, ...patch };
      return [teleSensor()];
    },
  };
}

// ---------------------------------------------------------------------------------------------
// ESPHome: node `esphome-blinds`, a time_based cover "Living Room Blinds" (device_class blind)

const ESPHOME_NODE = 'esphome-blinds';
const ESPHOME_MAC = 'a0b765f1c2d4'; // get_mac_address(): lower-case, no separators
const ESPHOME_VERSION = '2024.10.2';
const ESPHOME_BUILT = 'Oct 25 2024, 11:05:25';

function esphomeCover(): SimulatedDevice {
  const objectId = 'living_room_blinds'; // str_sanitize(str_snake_case("Living Room Blinds"))
  const base = `${ESPHOME_NODE}/cover/${objectId}`;
  const stateTopic = `${base}/state`;
  const commandTopic = `${base}/command`;
  const positionState = `${base}/position/state`;
  const positionCommand = `${base}/position/command`;
  const status = `${ESPHOME_NODE}/status`;
  const FULL_TRAVEL_MS = 4000; // open/close duration: one position report a second
  let position = 0; // 0..1, restored closed
  let lastOperation: 'opening' | 'closing' = 'closing';

  // MQTTCoverComponent::publish_state(): position first, then the state; both retained.
  const publish = (pos: number, operation: 'idle' | 'opening' | 'closing'): MqttMessage[] => [
    { topic: positionState, payload: String(Math.round(pos * 100)), retain: true },
    {
      topic: stateTopic,
      payload: operation === 'opening' ? 'opening' : operation === 'closing' ? 'closing' : pos === 0 ? 'closed' : 'open',
      retain: true,
    },
  ];
  /** TimeBasedCover: a report as it starts, one a second while moving, the final one when there. */
  const moveTo = (target: number): MqttMessage[] => {
    if (target === position) return [];
    const operation = target > position ? 'opening' : 'closing';
    lastOperation = operation;
    const out = publish(position, operation);
    const step = 1000 / FULL_TRAVEL_MS;
    let p = position;
    for (;;) {
      p = operation === 'opening' ? Math.min(target, p + step) : Math.max(target, p - step);
      if (p === target) break;
      out.push(...publish(p, operation));
    }
    position = target;
    out.push(...publish(position, 'idle'));
    return out;
  };

  const discovery = (prefix: string): MqttMessage[] => {
    // MQTTComponent::send_discovery_() with MQTTCoverComponent::send_discovery(), in that order.
    const config = {
      dev_cla: 'blind',
      pos_t: positionState,
      set_pos_t: positionCommand,
      name: 'Living Room Blinds',
      stat_t: stateTopic,
      cmd_t: commandTopic,
      avty_t: status,
      uniq_id: `ESPcover${objectId}`,
      dev: {
        ids: ESPHOME_MAC,
        name: ESPHOME_NODE,
        sw: `${ESPHOME_VERSION} (${ESPHOME_BUILT})`,
        mdl: 'esp32dev',
        mf: 'Espressif',
        cns: [['mac', ESPHOME_MAC]],
      },
    };
    return [{ topic: `${prefix}/cover/${ESPHOME_NODE}/${objectId}/config`, payload: JSON.stringify(config), retain: true }];
  };

  return {
    key: 'cover',
    source: 'esphome',
    discovery,
    removal: (prefix) => removalOf(discovery(prefix)),
    online: () => [{ topic: status, payload: 'online', retain: true }],
    offline: () => [{ topic: status, payload: 'offline', retain: true }],
    state: () => publish(position, 'idle'),
    commandTopics: [commandTopic, positionCommand],
    handle(topic, payload) {
      if (topic === commandTopic) {
        // CoverCall::set_command(): case-insensitive.
        switch (payload.trim().toUpperCase()) {
          case 'OPEN':
            return moveTo(1);
          case 'CLOSE':
            return moveTo(0);
          case 'STOP':
            return publish(position, 'idle');
          case 'TOGGLE':
            return moveTo(position === 0 || lastOperation === 'closing' ? 1 : 0);
          default:
            return [];
        }
      }
      if (topic === positionCommand) {
        const value = Number.parseFloat(payload);
        if (!Number.isFinite(value)) return []; // "Invalid position value"
        return moveTo(Math.min(1, Math.max(0, value / 100))); // CoverCall::validate_() clamps
      }
      return [];
    },
    report(patch) {
      const value = Number(patch.position);
      if (!Number.isFinite(value)) return [];
      return moveTo(Math.min(1, Math.max(0, value / 100)));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The simulator: one MQTT connection per firmware, each with that firmware's will.

export interface MqttDeviceSimulatorOptions {
  prefix?: string;
  username?: string;
  password?: string;
  devices?: SimulatedDeviceKey[];
  tasmotaDiscovery?: TasmotaDiscoveryFlavour;
  /**
   * Answer Home Assistant's birth message (`<prefix>/status` `online`) as the firmware does:
   * z2m republishes the bridge state and every device state (after 30 s; here at once), Tasmota
   * its tele/STATE. Default true.
   */
  answerBirth?: boolean;
  /** Bound on connecting, subscribing and each publish (ms, default 5000). */
  timeoutMs?: number;
}

export interface ReceivedCommand {
  topic: string;
  payload: string;
  qos: number;
}

type Source = SimulatedDevice['source'];

async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export class MqttDeviceSimulator {
  readonly devices: Record<SimulatedDeviceKey, SimulatedDevice>;
  readonly commands: ReceivedCommand[] = [];
  private readonly clients = new Map<Source, MqttClient>();
  private readonly queues = new Map<Source, Promise<void>>();
  private readonly waiters = new Set<{ match: (topic: string) => boolean; resolve: (c: ReceivedCommand) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private readonly announced = new Set<SimulatedDeviceKey>();
  private closed = false;

  private constructor(
    private readonly prefix: string,
    private readonly active: SimulatedDeviceKey[],
    private readonly timeoutMs: number,
    devices: Record<SimulatedDeviceKey, SimulatedDevice>,
  ) {
    this.devices = devices;
  }

  static async connect(brokerUrl: string, options: MqttDeviceSimulatorOptions = {}): Promise<MqttDeviceSimulator> {
    const devices = simulatedDevices({ tasmotaDiscovery: options.tasmotaDiscovery });
    const active = [...new Set(options.devices ?? DEVICE_KEYS)];
    const timeoutMs = options.timeoutMs ?? 5000;
    const prefix = options.prefix ?? 'homeassistant';
    const sim = new MqttDeviceSimulator(prefix, active, timeoutMs, devices);
    const suffix = randomBytes(3).toString('hex');
    const plug = devices.plug.online()[0];
    const cover = devices.cover.offline()[0];
    // The wills and client settings of each firmware (z2m lib/mqtt.ts; Tasmota MqttReconnect():
    // client DVES_<chipid>, will LWT "Offline" QoS 1 retained, keepalive 30; ESPHome: will
    // <node>/status "offline" retained, keepalive 15 s, clean_session false). The random suffix
    // keeps two simulators on one broker from taking over each other's session.
    const settings: Record<Source, IClientOptions> = {
      zigbee2mqtt: {
        clientId: `zigbee2mqtt_${suffix}`,
        keepalive: 60,
        will: { topic: Z2M_BRIDGE_STATE, payload: Buffer.from(JSON.stringify({ state: 'offline' })), retain: true, qos: 1 },
      },
      tasmota: {
        clientId: `DVES_${TASMOTA_CHIP_ID}_${suffix}`,
        keepalive: 30,
        will: { topic: plug?.topic ?? '', payload: Buffer.from('Offline'), retain: true, qos: 1 },
      },
      esphome: {
        clientId: `${ESPHOME_NODE}-${ESPHOME_MAC}-${suffix}`,
        keepalive: 15,
        clean: false,
        will: { topic: cover?.topic ?? '', payload: Buffer.from('offline'), retain: true, qos: 0 },
      },
    };
    const sources = [...new Set(active.map((k) => devices[k].source))];
    try {
      for (const source of sources) {
        const client = await within(
          timeoutMs + 500,
          connectAsync(
            brokerUrl,
            {
              protocolVersion: 4,
              reconnectPeriod: 0,
              connectTimeout: timeoutMs,
              username: options.username,
              password: options.password,
              ...settings[source],
            },
            false,
          ),
          `${source} connecting to ${brokerUrl}`,
        );
        client.on('error', () => {});
        sim.clients.set(source, client);
        sim.queues.set(source, Promise.resolve());
        client.on('message', (topic, payload, packet) => sim.enqueue(source, topic, payload.toString(), packet.qos));
        const filters = active.filter((k) => devices[k].source === source).flatMap((k) => devices[k].commandTopics);
        if (options.answerBirth !== false && source !== 'esphome') filters.push(`${prefix}/status`);
        if (filters.length) await within(timeoutMs, client.subscribeAsync(filters, { qos: 1 }), `${source} subscribing`);
      }
    } catch (error) {
      await sim.close();
      throw error;
    }
    return sim;
  }

  /** Publishes availability online, state, and the discovery configs (retained) of the chosen devices. */
  async announce(keys: SimulatedDeviceKey[] = this.active): Promise<void> {
    for (const key of keys) {
      const device = this.device(key);
      this.announced.add(key);
      // Firmware order: availability, then discovery, then the state (so that what is not
      // retained reaches a hub that subscribes on discovery).
      for (const m of [...device.online(), ...device.discovery(this.prefix), ...device.state()]) await this.send(device.source, m);
    }
  }

  /** QoS 1, through the first connection. */
  async publish(message: MqttMessage): Promise<void> {
    const source = this.clients.keys().next().value;
    if (!source) throw new Error('the simulator is closed');
    await this.send(source, message);
  }

  async remove(key: SimulatedDeviceKey): Promise<void> {
    const device = this.device(key);
    this.announced.delete(key);
    for (const m of device.removal(this.prefix)) await this.send(device.source, m);
  }

  async goOffline(key: SimulatedDeviceKey): Promise<void> {
    const device = this.device(key);
    for (const m of device.offline()) await this.send(device.source, m);
  }

  async goOnline(key: SimulatedDeviceKey): Promise<void> {
    const device = this.device(key);
    for (const m of [...device.online(), ...device.state()]) await this.send(device.source, m);
  }

  /** A spontaneous change at the device (see SimulatedDevice.report), published. */
  async report(key: SimulatedDeviceKey, patch: Record<string, unknown>): Promise<void> {
    const device = this.device(key);
    for (const m of device.report(patch)) await this.send(device.source, m);
  }

  /** For the remote: publishes the action payload like a button press. */
  async press(action: string): Promise<void> {
    const remote = this.device('remote') as SimulatedDevice & { press(action: string, prefix?: string): MqttMessage[] };
    for (const m of remote.press(action, this.prefix)) await this.send('zigbee2mqtt', m);
  }

  /** Resolves with the first command received after the call matching `topic` (or rejects after timeoutMs, default 3000). */
  nextCommand(topic: string | RegExp, timeoutMs = 3000): Promise<ReceivedCommand> {
    if (this.closed) return Promise.reject(new Error('the simulator is closed'));
    const match = (t: string) => (typeof topic === 'string' ? t === topic : topic.test(t));
    return new Promise<ReceivedCommand>((resolve, reject) => {
      const waiter = {
        match,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(new Error(`no command on ${String(topic)} within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(new Error('the simulator is closed'));
    }
    this.waiters.clear();
    const clients = [...this.clients.values()];
    this.clients.clear();
    // A clean DISCONNECT: the brokers drop the wills, as when the firmware shuts down in order.
    await Promise.all(
      clients.map(async (c) => {
        try {
          await within(2000, c.endAsync(), 'disconnecting');
        } catch {
          await c.endAsync(true).catch(() => {});
        }
      }),
    );
  }

  private device(key: SimulatedDeviceKey): SimulatedDevice {
    if (!this.active.includes(key)) throw new Error(`'${key}' is not one of this simulator's devices (${this.active.join(', ')})`);
    return this.devices[key];
  }

  private async send(source: Source, m: MqttMessage): Promise<void> {
    const client = this.clients.get(source);
    if (!client) throw new Error(this.closed ? 'the simulator is closed' : `no ${source} connection`);
    await within(this.timeoutMs, client.publishAsync(m.topic, m.payload, { qos: 1, retain: m.retain ?? false }), `publishing ${m.topic}`);
  }

  /** Commands are answered one at a time per connection, in the order they came. */
  private enqueue(source: Source, topic: string, payload: string, qos: number): void {
    const queue = this.queues.get(source) ?? Promise.resolve();
    this.queues.set(
      source,
      queue.then(() => this.onMessage(source, topic, payload, qos)).catch(() => {}),
    );
  }

  private async onMessage(source: Source, topic: string, payload: string, qos: number): Promise<void> {
    if (this.closed) return;
    if (topic === `${this.prefix}/status`) {
      if (payload.toLowerCase() !== 'online') return;
      const devices = [...this.announced].map((k) => this.devices[k]).filter((d) => d.source === source);
      if (source === 'zigbee2mqtt' && devices.length > 0) {
        await this.send(source, { topic: Z2M_BRIDGE_STATE, payload: JSON.stringify({ state: 'online' }), retain: true });
      }
      for (const device of devices) {
        const answer = source === 'zigbee2mqtt' ? device.state() : device.state().filter((m) => m.topic.endsWith('/STATE'));
        for (const m of answer) await this.send(source, m);
      }
      return;
    }
    const device = this.active.map((k) => this.devices[k]).find((d) => d.source === source && d.commandTopics.some((f) => topicMatches(f, topic)));
    if (!device) return;
    const command: ReceivedCommand = { topic, payload, qos };
    this.commands.push(command);
    try {
      for (const m of device.handle(topic, payload)) await this.send(source, m);
    } finally {
      for (const w of [...this.waiters]) {
        if (!w.match(topic)) continue;
        this.waiters.delete(w);
        clearTimeout(w.timer);
        w.resolve(command);
      }
    }
  }
}
