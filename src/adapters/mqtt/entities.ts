/**
 * Home Assistant MQTT discovery, read into the hub's device model (docs/devices.md, docs/mqtt.md):
 * one discovery config (already expanded from its abbreviations) becomes the plan of one hub
 * device: its class, attributes and standard commands, the topics whose payloads are its state,
 * its availability, and the publications each standard command makes. `device_automation`
 * triggers become presses of button devices. Nothing here does I/O: the integration subscribes,
 * publishes and reports what a plan says.
 *
 * Key names and defaults follow Home Assistant's MQTT platforms (homeassistant/components/mqtt/
 * light/schema_basic.py, light/schema_json.py, switch.py, cover.py, climate.py, fan.py, lock.py,
 * sensor.py, binary_sensor.py, button.py, device_trigger.py), since that is what Zigbee2MQTT,
 * Tasmota and ESPHome write their configs for.
 */
import { createHash } from 'node:crypto';
import { BINARY_SENSOR_CLASS_OF_HOME_ASSISTANT, SENSOR_CLASS_OF_HOME_ASSISTANT, type ButtonPress } from '../../domain/devices/capabilities.js';
import { NetworkFailureError } from '../../platform/network-failures.js';
import { hsToRgb, hsToXy, rgbToHs, xyToHs, type Hs } from '../../platform/colour.js';
import { compileTemplate, TemplateError, type CompiledTemplate } from './templates.js';

/** The components the hub imports; a config of any other is rejected with its reason. */
export const MQTT_COMPONENTS = ['light', 'switch', 'cover', 'climate', 'fan', 'lock', 'sensor', 'binary_sensor', 'button', 'device_automation'] as const;
export type MqttComponent = (typeof MQTT_COMPONENTS)[number];

/** A config the hub cannot use; its message is the reason `GET /mqtt/status` lists. */
export class DiscoveryError extends Error {
  override readonly name = 'DiscoveryError';
}

/** Topics longer than this are refused, in configs and on the wire. */
export const MAX_TOPIC_CHARS = 512;
const MAX_ID_CHARS = 200;

export interface ConfigTopic {
  component: string;
  nodeId?: string;
  objectId: string;
}

/** `<prefix>/<component>/[<node_id>/]<object_id>/config`, or undefined for any other topic. */
export function parseConfigTopic(prefix: string, topic: string): ConfigTopic | undefined {
  if (!topic.startsWith(`${prefix}/`) || !topic.endsWith('/config')) return undefined;
  const parts = topic.slice(prefix.length + 1, -'/config'.length).split('/');
  if (parts.length === 2) return { component: parts[0]!, objectId: parts[1]! };
  if (parts.length === 3) return { component: parts[0]!, nodeId: parts[1]!, objectId: parts[2]! };
  return undefined;
}

export interface Publication {
  topic: string;
  payload: string;
  retain?: boolean;
}

/** What one payload says of a device: state to merge, or a button press. */
export interface Observation {
  state?: Record<string, unknown>;
  press?: ButtonPress;
}

export interface TopicListener {
  topic: string;
  /** Undefined when the payload says nothing the hub reads (an unknown word, an empty template). Throws TemplateError. */
  read(payload: string): Observation | undefined;
}

export interface AvailabilityTopic {
  topic: string;
  /** True, false, or undefined when the payload is neither word. */
  read(payload: string): boolean | undefined;
}

export interface AvailabilitySpec {
  topics: AvailabilityTopic[];
  /** Home Assistant's `availability_mode`: every topic, any topic, or the latest message. */
  mode: 'all' | 'any' | 'latest';
}

/** The physical device a config's `device` block names; entities with the same key belong together. */
export interface MqttDeviceInfo {
  key: string;
  name?: string;
  manufacturer?: string;
  model?: string;
  swVersion?: string;
  viaDevice?: string;
  suggestedArea?: string;
}

/** One hub device from one entity config. */
export interface EntityPlan {
  kind: 'entity';
  /** The device's id in the `mqtt` integration (unique_id, or the config topic's path). */
  id: string;
  component: Exclude<MqttComponent, 'device_automation'>;
  name: string;
  deviceClass: string;
  attributes: Record<string, unknown>;
  /** The standard commands it takes (none for sensors). */
  commands: string[];
  device?: MqttDeviceInfo;
  listeners: TopicListener[];
  availability?: AvailabilitySpec;
  /** No state topic: a command is taken to have done what it says (Home Assistant's optimistic mode). */
  optimistic: boolean;
  /** QoS of its subscriptions. */
  qos: 0 | 1 | 2;
  /** The publications of a standard command; throws NetworkFailureError (`unsupported`, `rejected`). */
  command(name: string, params: Record<string, unknown>, state: Record<string, unknown>): Publication[];
  /** In optimistic mode: the state a command leaves. */
  assumed?(name: string, params: Record<string, unknown>): Record<string, unknown> | undefined;
}

/** One `device_automation` trigger: a payload on a topic that is a press of one button. */
export interface TriggerPlan {
  kind: 'trigger';
  /** The button device it is a press of (one per physical button). */
  buttonId: string;
  buttonName: string;
  device?: MqttDeviceInfo;
  press: ButtonPress;
  listener: TopicListener;
  qos: 0 | 1 | 2;
}

type Config = Record<string, unknown>;

// ---- reading a config --------------------------------------------------------------------------

const str = (config: Config, key: string): string | undefined => {
  const v = config[key];
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
};
const num = (config: Config, key: string): number | undefined => {
  const v = config[key];
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
};
const bool = (config: Config, key: string): boolean | undefined => (typeof config[key] === 'boolean' ? (config[key] as boolean) : undefined);
/** A payload setting: its default when absent, undefined when the config sets it to null (disabled). */
const payload = (config: Config, key: string, fallback: string): string | undefined => (config[key] === null ? undefined : (str(config, key) ?? fallback));

function topic(config: Config, key: string): string | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v === '') throw new DiscoveryError(`${key} must be a non-empty string`);
  if (v.length > MAX_TOPIC_CHARS) throw new DiscoveryError(`${key} is longer than ${MAX_TOPIC_CHARS} characters`);
  if (/[+#\0]/.test(v)) throw new DiscoveryError(`${key} must be a plain topic (no wildcards): ${v}`);
  return v;
}

function template(config: Config, key: string): CompiledTemplate | undefined {
  const source = config[key];
  if (source === undefined || source === null) return undefined;
  if (typeof source !== 'string') throw new DiscoveryError(`${key} must be a template string`);
  // An empty template is no template (Shelly's scripts send `""`): the payload is the value.
  if (source.trim() === '') return undefined;
  try {
    return compileTemplate(source);
  } catch (err) {
    throw new DiscoveryError(`${key} does not compile: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function qosOf(config: Config): 0 | 1 | 2 {
  const q = num(config, 'qos');
  return q === 1 || q === 2 ? q : 0;
}

function parseJson(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[' && first !== '"') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A value template applied to a payload (`value`, `value_json`), or the payload itself without one. */
function rendered(tpl: CompiledTemplate | undefined, text: string): string {
  if (!tpl) return text;
  return tpl.render({ value: text, value_json: parseJson(text) }).trim();
}

/** Whether a rendered payload is the configured word (a JSON boolean in the config matches `true`/`True` alike). */
function same(value: string, expected: unknown): boolean {
  if (typeof expected === 'boolean') return value.toLowerCase() === String(expected);
  return value === String(expected);
}

function numberOf(text: string): number | undefined {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, v));
const round = (v: number, digits = 0) => Math.round(v * 10 ** digits) / 10 ** digits;

function commandPayload(tpl: CompiledTemplate | undefined, value: unknown): string {
  if (!tpl) return typeof value === 'string' ? value : JSON.stringify(value);
  return tpl.render({ value: typeof value === 'string' ? value : (value as string) });
}

function needNumber(params: Record<string, unknown>, key: string): number {
  const v = params[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new NetworkFailureError('rejected', `${key} must be a number`);
  return v;
}

function unsupported(command: string): never {
  throw new NetworkFailureError('unsupported', `this MQTT device has no way to ${command}`);
}

// ---- the device block, names and ids -----------------------------------------------------------

function deviceInfo(config: Config): MqttDeviceInfo | undefined {
  const block = config.device;
  if (!block || typeof block !== 'object' || Array.isArray(block)) return undefined;
  const d = block as Config;
  const ids = Array.isArray(d.identifiers) ? d.identifiers.filter((i): i is string => typeof i === 'string') : typeof d.identifiers === 'string' ? [d.identifiers] : [];
  const connections = Array.isArray(d.connections) ? d.connections.filter((c): c is unknown[] => Array.isArray(c)).map((c) => c.map(String).join(':')) : [];
  const key = ids[0] ?? connections[0];
  if (!key) return undefined;
  const out: MqttDeviceInfo = { key: key.slice(0, MAX_ID_CHARS) };
  const copy = (from: string, to: keyof Omit<MqttDeviceInfo, 'key'>) => {
    const v = str(d, from);
    if (v) out[to] = v.slice(0, 200);
  };
  copy('name', 'name');
  copy('manufacturer', 'manufacturer');
  copy('model', 'model');
  copy('sw_version', 'swVersion');
  copy('via_device', 'viaDevice');
  copy('suggested_area', 'suggestedArea');
  return out;
}

/** Home Assistant's naming: the device's name, then the entity's (unless it already starts with it); a null name is the device's own. */
function entityName(config: Config, device: MqttDeviceInfo | undefined, fallback: string): string {
  const own = config.name === null ? undefined : str(config, 'name');
  const base = device?.name;
  let name: string;
  if (own && base) name = own.toLowerCase().startsWith(base.toLowerCase()) ? own : `${base} ${own}`;
  else name = own ?? base ?? fallback;
  return name.slice(0, 200) || fallback;
}

/** An id within the hub's 200 characters: long ones keep a readable head and a hash of the whole. */
function boundedId(id: string): string {
  if (id.length <= MAX_ID_CHARS) return id;
  return `${id.slice(0, 150)}~${createHash('sha256').update(id).digest('hex').slice(0, 40)}`;
}

function entityId(config: Config, at: ConfigTopic): string {
  const unique = str(config, 'unique_id');
  return boundedId(unique ? unique : [at.component, at.nodeId, at.objectId].filter(Boolean).join('/'));
}

function availabilityOf(config: Config): AvailabilitySpec | undefined {
  const topics: AvailabilityTopic[] = [];
  const add = (entry: Config, topicKey: string, templateKey: string) => {
    const t = topic(entry, topicKey);
    if (!t) return;
    const tpl = template(entry, templateKey);
    const on = payload(entry, 'payload_available', 'online') ?? 'online';
    const off = payload(entry, 'payload_not_available', 'offline') ?? 'offline';
    topics.push({
      topic: t,
      read(text) {
        const v = rendered(tpl, text);
        return same(v, on) ? true : same(v, off) ? false : undefined;
      },
    });
  };
  if (config.availability_topic !== undefined) add(config, 'availability_topic', 'availability_template');
  if (Array.isArray(config.availability)) {
    for (const entry of config.availability.slice(0, 10)) if (entry && typeof entry === 'object') add(entry as Config, 'topic', 'value_template');
  }
  if (topics.length === 0) return undefined;
  const mode = str(config, 'availability_mode');
  return { topics, mode: mode === 'all' || mode === 'any' ? mode : 'latest' };
}

// ---- the components ----------------------------------------------------------------------------

interface Parts {
  deviceClass: string;
  attributes?: Record<string, unknown>;
  commands: string[];
  listeners: TopicListener[];
  optimistic?: boolean;
  command?: EntityPlan['command'];
  assumed?: EntityPlan['assumed'];
}

function listen(t: string | undefined, read: (text: string) => Observation | undefined): TopicListener[] {
  return t ? [{ topic: t, read }] : [];
}

/** The json_attributes topic: the object the template (or payload) gives, under `attributes`. */
function attributesListener(config: Config): TopicListener[] {
  const t = topic(config, 'json_attributes_topic');
  const tpl = template(config, 'json_attributes_template');
  return listen(t, (text) => {
    const parsed = parseJson(rendered(tpl, text));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    const entries = Object.entries(parsed as Config).slice(0, 100);
    return { state: { attributes: Object.fromEntries(entries) } };
  });
}

function onOffListener(config: Config, stateKey: string, templateKey: string, onWord: string | undefined, offWord: string | undefined): TopicListener[] {
  const tpl = template(config, templateKey);
  return listen(topic(config, stateKey), (text) => {
    const v = rendered(tpl, text);
    if (onWord !== undefined && same(v, onWord)) return { state: { on: true } };
    if (offWord !== undefined && same(v, offWord)) return { state: { on: false } };
    return undefined;
  });
}

function kelvinRange(config: Config): { minKelvin: number; maxKelvin: number } {
  if (bool(config, 'color_temp_kelvin')) return { minKelvin: num(config, 'min_kelvin') ?? 2000, maxKelvin: num(config, 'max_kelvin') ?? 6535 };
  const minMireds = num(config, 'min_mireds') ?? 153;
  const maxMireds = num(config, 'max_mireds') ?? 500;
  return { minKelvin: Math.round(1_000_000 / maxMireds), maxKelvin: Math.round(1_000_000 / minMireds) };
}

function hsOf(color: Config): Hs | undefined {
  const n = (k: string) => (typeof color[k] === 'number' && Number.isFinite(color[k]) ? (color[k] as number) : undefined);
  const h = n('h') ?? n('hue');
  const s = n('s') ?? n('saturation');
  if (h !== undefined && s !== undefined) return { hue: round(h, 1), saturation: round(s, 1) };
  const x = n('x');
  const y = n('y');
  if (x !== undefined && y !== undefined) return xyToHs(x, y);
  const r = n('r');
  const g = n('g');
  const b = n('b');
  if (r !== undefined && g !== undefined && b !== undefined) return rgbToHs(r, g, b);
  return undefined;
}

function lightJson(config: Config): Parts {
  const commandTopic = topic(config, 'command_topic');
  const stateTopic = topic(config, 'state_topic');
  const scale = num(config, 'brightness_scale') ?? 255;
  const kelvinUnit = bool(config, 'color_temp_kelvin') === true;
  const declaredModes = Array.isArray(config.supported_color_modes) ? config.supported_color_modes.filter((m): m is string => typeof m === 'string') : [];
  const modes = new Set(declaredModes);
  // Legacy flags (before supported_color_modes).
  if (bool(config, 'color_temp')) modes.add('color_temp');
  if (bool(config, 'hs')) modes.add('hs');
  if (bool(config, 'xy')) modes.add('xy');
  if (bool(config, 'rgb')) modes.add('rgb');
  const colourMode = ['hs', 'xy', 'rgb', 'rgbw', 'rgbww'].find((m) => modes.has(m));
  const hasCt = modes.has('color_temp');
  const dims = bool(config, 'brightness') === true || colourMode !== undefined || hasCt || modes.has('brightness') || modes.has('white');
  const colorModes = ['onoff', ...(dims ? ['brightness'] : []), ...(hasCt ? ['color_temp'] : []), ...(colourMode ? ['hs'] : [])];
  const commands = ['turn_on', 'turn_off', ...(dims ? ['set_brightness'] : []), ...(hasCt ? ['set_color_temp'] : []), ...(colourMode ? ['set_hs_color'] : [])];
  const listeners = listen(stateTopic, (text) => {
    const parsed = parseJson(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    const j = parsed as Config;
    const state: Record<string, unknown> = {};
    const s = str(j, 'state');
    if (s !== undefined) {
      if (same(s, 'ON')) state.on = true;
      else if (same(s, 'OFF')) state.on = false;
    }
    const b = num(j, 'brightness');
    if (b !== undefined) state.brightness = round(clamp((b / scale) * 100, 0, 100));
    const ct = num(j, 'color_temp');
    if (ct !== undefined && ct > 0) state.color_temp_kelvin = kelvinUnit ? Math.round(ct) : Math.round(1_000_000 / ct);
    if (j.color && typeof j.color === 'object') {
      const hs = hsOf(j.color as Config);
      if (hs) Object.assign(state, hs);
    }
    const mode = str(j, 'color_mode');
    if (mode) state.color_mode = mode;
    return Object.keys(state).length ? { state } : undefined;
  });
  const send = (body: Config): Publication[] => (commandTopic ? [{ topic: commandTopic, payload: JSON.stringify(body) }] : unsupported('command it'));
  return {
    deviceClass: 'light',
    attributes: { colorModes, ...(hasCt ? kelvinRange(config) : {}) },
    commands: commandTopic ? commands : [],
    listeners,
    optimistic: !stateTopic,
    command(name, params) {
      switch (name) {
        case 'turn_on':
          return send({ state: 'ON' });
        case 'turn_off':
          return send({ state: 'OFF' });
        case 'set_brightness': {
          const pct = clamp(needNumber(params, 'brightness'), 0, 100);
          return send(pct === 0 ? { state: 'OFF' } : { state: 'ON', brightness: Math.max(1, Math.round((pct / 100) * scale)) });
        }
        case 'set_color_temp': {
          const kelvin = needNumber(params, 'kelvin');
          return send({ state: 'ON', color_temp: kelvinUnit ? Math.round(kelvin) : Math.round(1_000_000 / kelvin) });
        }
        case 'set_hs_color': {
          const hs = { hue: needNumber(params, 'hue'), saturation: needNumber(params, 'saturation') };
          if (colourMode === 'hs') return send({ state: 'ON', color: { h: hs.hue, s: hs.saturation } });
          if (colourMode === 'xy') return send({ state: 'ON', color: hsToXy(hs) });
          if (colourMode) {
            const [r, g, b] = hsToRgb(hs);
            return send({ state: 'ON', color: { r, g, b } });
          }
          return unsupported(name);
        }
        default:
          return unsupported(name);
      }
    },
    assumed: lightAssumed,
  };
}

function lightAssumed(name: string, params: Record<string, unknown>): Record<string, unknown> | undefined {
  switch (name) {
    case 'turn_on':
      return { on: true };
    case 'turn_off':
      return { on: false };
    case 'set_brightness':
      return { on: (params.brightness as number) > 0, brightness: params.brightness };
    case 'set_color_temp':
      return { on: true, color_temp_kelvin: params.kelvin };
    case 'set_hs_color':
      return { on: true, hue: params.hue, saturation: params.saturation };
    default:
      return undefined;
  }
}

function lightBasic(config: Config): Parts {
  const commandTopic = topic(config, 'command_topic');
  const onWord = payload(config, 'payload_on', 'ON');
  const offWord = payload(config, 'payload_off', 'OFF');
  const scale = num(config, 'brightness_scale') ?? 255;
  const kelvinUnit = bool(config, 'color_temp_kelvin') === true;
  const onCommandType = str(config, 'on_command_type') ?? 'last';
  const brightnessCommand = topic(config, 'brightness_command_topic');
  const ctCommand = topic(config, 'color_temp_command_topic');
  const hsCommand = topic(config, 'hs_command_topic');
  const xyCommand = topic(config, 'xy_command_topic');
  const rgbCommand = topic(config, 'rgb_command_topic');
  const brightnessTpl = template(config, 'brightness_command_template');
  const ctTpl = template(config, 'color_temp_command_template');
  const hsTpl = template(config, 'hs_command_template');
  const xyTpl = template(config, 'xy_command_template');
  const rgbTpl = template(config, 'rgb_command_template');
  const stateTopic = topic(config, 'state_topic');
  const hasColour = Boolean(hsCommand ?? xyCommand ?? rgbCommand);
  const dims = Boolean(brightnessCommand) || hasColour;
  const listeners: TopicListener[] = [
    ...onOffListener(config, 'state_topic', 'state_value_template', onWord, offWord),
    ...listen(topic(config, 'brightness_state_topic'), (text) => {
      const n = numberOf(rendered(template(config, 'brightness_value_template'), text));
      return n === undefined ? undefined : { state: { brightness: round(clamp((n / scale) * 100, 0, 100)) } };
    }),
    ...listen(topic(config, 'color_temp_state_topic'), (text) => {
      const n = numberOf(rendered(template(config, 'color_temp_value_template'), text));
      return n === undefined || n <= 0 ? undefined : { state: { color_temp_kelvin: kelvinUnit ? Math.round(n) : Math.round(1_000_000 / n) } };
    }),
    ...tupleListener(config, 'hs_state_topic', 'hs_value_template', ([h, s]) => (h === undefined || s === undefined ? undefined : { hue: round(h, 1), saturation: round(s, 1) })),
    ...tupleListener(config, 'xy_state_topic', 'xy_value_template', ([x, y]) => (x === undefined || y === undefined ? undefined : { ...xyToHs(x, y) })),
    ...tupleListener(config, 'rgb_state_topic', 'rgb_value_template', ([r, g, b]) => (r === undefined || g === undefined || b === undefined ? undefined : { ...rgbToHs(r, g, b) })),
  ];
  const withOn = (publications: Publication[]): Publication[] => {
    if (!commandTopic || onWord === undefined || onCommandType === 'brightness') return publications;
    const on = { topic: commandTopic, payload: onWord };
    return onCommandType === 'first' ? [on, ...publications] : [...publications, on];
  };
  return {
    deviceClass: 'light',
    attributes: { colorModes: ['onoff', ...(dims ? ['brightness'] : []), ...(ctCommand ? ['color_temp'] : []), ...(hasColour ? ['hs'] : [])], ...(ctCommand ? kelvinRange(config) : {}) },
    commands: commandTopic ? ['turn_on', 'turn_off', ...(brightnessCommand ? ['set_brightness'] : []), ...(ctCommand ? ['set_color_temp'] : []), ...(hasColour ? ['set_hs_color'] : [])] : [],
    listeners,
    optimistic: !stateTopic,
    command(name, params) {
      switch (name) {
        case 'turn_on':
        case 'turn_off': {
          const word = name === 'turn_on' ? onWord : offWord;
          return commandTopic && word !== undefined ? [{ topic: commandTopic, payload: word }] : unsupported(name);
        }
        case 'set_brightness': {
          const pct = clamp(needNumber(params, 'brightness'), 0, 100);
          if (!brightnessCommand) return unsupported(name);
          if (pct === 0 && commandTopic && offWord !== undefined) return [{ topic: commandTopic, payload: offWord }];
          return withOn([{ topic: brightnessCommand, payload: commandPayload(brightnessTpl, String(Math.max(1, Math.round((pct / 100) * scale)))) }]);
        }
        case 'set_color_temp': {
          if (!ctCommand) return unsupported(name);
          const kelvin = needNumber(params, 'kelvin');
          return withOn([{ topic: ctCommand, payload: commandPayload(ctTpl, String(kelvinUnit ? Math.round(kelvin) : Math.round(1_000_000 / kelvin))) }]);
        }
        case 'set_hs_color': {
          const hs = { hue: needNumber(params, 'hue'), saturation: needNumber(params, 'saturation') };
          if (hsCommand) return withOn([{ topic: hsCommand, payload: commandPayload(hsTpl, `${round(hs.hue, 1)},${round(hs.saturation, 1)}`) }]);
          if (xyCommand) {
            const { x, y } = hsToXy(hs);
            return withOn([{ topic: xyCommand, payload: commandPayload(xyTpl, `${x},${y}`) }]);
          }
          if (rgbCommand) return withOn([{ topic: rgbCommand, payload: commandPayload(rgbTpl, hsToRgb(hs).join(',')) }]);
          return unsupported(name);
        }
        default:
          return unsupported(name);
      }
    },
    assumed: lightAssumed,
  };
}

/** A comma-separated tuple of numbers on a topic ("h,s", "x,y", "r,g,b"), read into state. */
function tupleListener(config: Config, topicKey: string, templateKey: string, read: (values: Array<number | undefined>) => Record<string, unknown> | undefined): TopicListener[] {
  const tpl = template(config, templateKey);
  return listen(topic(config, topicKey), (text) => {
    const values = rendered(tpl, text)
      .split(',')
      .map((v) => numberOf(v));
    const state = read(values);
    return state ? { state } : undefined;
  });
}

function switchParts(config: Config): Parts {
  const commandTopic = topic(config, 'command_topic');
  const onWord = payload(config, 'payload_on', 'ON');
  const offWord = payload(config, 'payload_off', 'OFF');
  const stateOn = payload(config, 'state_on', onWord ?? 'ON');
  const stateOff = payload(config, 'state_off', offWord ?? 'OFF');
  return {
    deviceClass: str(config, 'device_class') === 'outlet' ? 'outlet' : 'switch',
    commands: commandTopic ? ['turn_on', 'turn_off'] : [],
    listeners: onOffListener(config, 'state_topic', 'value_template', stateOn, stateOff),
    optimistic: !topic(config, 'state_topic'),
    command(name) {
      const word = name === 'turn_on' ? onWord : name === 'turn_off' ? offWord : undefined;
      return commandTopic && word !== undefined ? [{ topic: commandTopic, payload: word }] : unsupported(name);
    },
    assumed: (name) => (name === 'turn_on' ? { on: true } : name === 'turn_off' ? { on: false } : undefined),
  };
}

function coverParts(config: Config): Parts {
  const commandTopic = topic(config, 'command_topic');
  const setPosition = topic(config, 'set_position_topic');
  const tiltCommand = topic(config, 'tilt_command_topic');
  const open = payload(config, 'payload_open', 'OPEN');
  const close = payload(config, 'payload_close', 'CLOSE');
  const stop = payload(config, 'payload_stop', 'STOP');
  const positionOpen = num(config, 'position_open') ?? 100;
  const positionClosed = num(config, 'position_closed') ?? 0;
  const tiltMin = num(config, 'tilt_min') ?? 0;
  const tiltMax = num(config, 'tilt_max') ?? 100;
  const toPercent = (v: number, lo: number, hi: number) => (hi === lo ? 0 : round(clamp(((v - lo) / (hi - lo)) * 100, 0, 100)));
  const fromPercent = (pct: number, lo: number, hi: number) => Math.round(lo + ((hi - lo) * clamp(pct, 0, 100)) / 100);
  const words: Array<[string, string]> = [
    [payload(config, 'state_open', 'open') ?? 'open', 'open'],
    [payload(config, 'state_closed', 'closed') ?? 'closed', 'closed'],
    [payload(config, 'state_opening', 'opening') ?? 'opening', 'opening'],
    [payload(config, 'state_closing', 'closing') ?? 'closing', 'closing'],
  ];
  const stateTpl = template(config, 'value_template');
  const positionTpl = template(config, 'position_template');
  const tiltTpl = template(config, 'tilt_status_template');
  const setPositionTpl = template(config, 'set_position_template');
  const tiltCommandTpl = template(config, 'tilt_command_template');
  const listeners: TopicListener[] = [
    ...listen(topic(config, 'state_topic'), (text) => {
      const v = rendered(stateTpl, text);
      const word = words.find(([w]) => same(v, w));
      if (word) return { state: { state: word[1] } };
      // A state topic may carry the position itself (Home Assistant accepts a number there).
      const n = numberOf(v);
      return n === undefined ? undefined : { state: { position: toPercent(n, positionClosed, positionOpen) } };
    }),
    ...listen(topic(config, 'position_topic'), (text) => {
      const n = numberOf(rendered(positionTpl, text));
      return n === undefined ? undefined : { state: { position: toPercent(n, positionClosed, positionOpen) } };
    }),
    ...listen(topic(config, 'tilt_status_topic'), (text) => {
      const n = numberOf(rendered(tiltTpl, text));
      return n === undefined ? undefined : { state: { tilt: toPercent(n, tiltMin, tiltMax) } };
    }),
  ];
  const commands = [
    ...(commandTopic && open !== undefined ? ['open'] : []),
    ...(commandTopic && close !== undefined ? ['close'] : []),
    ...(commandTopic && stop !== undefined ? ['stop'] : []),
    ...(setPosition ? ['set_position'] : []),
    ...(tiltCommand ? ['set_tilt_position'] : []),
  ];
  return {
    deviceClass: 'cover',
    attributes: { tilt: Boolean(tiltCommand) },
    commands,
    listeners,
    optimistic: !topic(config, 'state_topic') && !topic(config, 'position_topic'),
    command(name, params) {
      switch (name) {
        case 'open':
        case 'close':
        case 'stop': {
          const word = name === 'open' ? open : name === 'close' ? close : stop;
          return commandTopic && word !== undefined ? [{ topic: commandTopic, payload: word }] : unsupported(name);
        }
        case 'set_position':
          if (!setPosition) return unsupported(name);
          return [{ topic: setPosition, payload: commandPayload(setPositionTpl, String(fromPercent(needNumber(params, 'position'), positionClosed, positionOpen))) }];
        case 'set_tilt_position':
          if (!tiltCommand) return unsupported(name);
          return [{ topic: tiltCommand, payload: commandPayload(tiltCommandTpl, String(fromPercent(needNumber(params, 'tilt'), tiltMin, tiltMax))) }];
        default:
          return unsupported(name);
      }
    },
    assumed: (name, params) =>
      name === 'open' ? { state: 'open', position: 100 } : name === 'close' ? { state: 'closed', position: 0 } : name === 'set_position' ? { position: params.position } : undefined,
  };
}

function climateParts(config: Config): Parts {
  const temperatureCommand = topic(config, 'temperature_command_topic');
  const modeCommand = topic(config, 'mode_command_topic');
  const powerCommand = topic(config, 'power_command_topic');
  const onWord = payload(config, 'payload_on', 'ON');
  const offWord = payload(config, 'payload_off', 'OFF');
  const modes = Array.isArray(config.modes) ? config.modes.filter((m): m is string => typeof m === 'string').slice(0, 20) : ['auto', 'off', 'cool', 'heat', 'dry', 'fan_only'];
  const unit = str(config, 'temperature_unit');
  const temperatureTpl = template(config, 'temperature_command_template');
  const modeTpl = template(config, 'mode_command_template');
  const numeric = (topicKey: string, templateKey: string, key: string): TopicListener[] => {
    const tpl = template(config, templateKey);
    return listen(topic(config, topicKey), (text) => {
      const n = numberOf(rendered(tpl, text));
      return n === undefined ? undefined : { state: { [key]: n } };
    });
  };
  const word = (topicKey: string, templateKey: string, key: string): TopicListener[] => {
    const tpl = template(config, templateKey);
    return listen(topic(config, topicKey), (text) => {
      const v = rendered(tpl, text);
      return v === '' || v === 'None' ? undefined : { state: { [key]: v.slice(0, 50) } };
    });
  };
  return {
    deviceClass: 'climate',
    attributes: {
      minTemperature: num(config, 'min_temp') ?? (unit === 'F' ? 45 : 7),
      maxTemperature: num(config, 'max_temp') ?? (unit === 'F' ? 95 : 35),
      temperatureStep: num(config, 'temp_step') ?? (unit === 'F' ? 1 : 0.5),
      temperatureUnit: unit === 'F' ? '°F' : '°C',
      hvacModes: modes,
    },
    commands: [...(temperatureCommand ? ['set_target_temperature'] : []), ...(modeCommand ? ['set_mode'] : []), ...(powerCommand ? ['turn_on', 'turn_off'] : [])],
    listeners: [
      ...numeric('current_temperature_topic', 'current_temperature_template', 'current_temperature'),
      ...numeric('temperature_state_topic', 'temperature_state_template', 'target_temperature'),
      ...numeric('current_humidity_topic', 'current_humidity_template', 'humidity'),
      ...word('mode_state_topic', 'mode_state_template', 'hvac_mode'),
      ...word('action_topic', 'action_template', 'hvac_action'),
    ],
    optimistic: !topic(config, 'temperature_state_topic') && !topic(config, 'mode_state_topic'),
    command(name, params) {
      switch (name) {
        case 'set_target_temperature':
          return temperatureCommand ? [{ topic: temperatureCommand, payload: commandPayload(temperatureTpl, String(needNumber(params, 'temperature'))) }] : unsupported(name);
        case 'set_mode': {
          const mode = params.mode;
          if (typeof mode !== 'string' || !modes.includes(mode)) throw new NetworkFailureError('rejected', `mode must be one of ${modes.join(', ')}`);
          return modeCommand ? [{ topic: modeCommand, payload: commandPayload(modeTpl, mode) }] : unsupported(name);
        }
        case 'turn_on':
        case 'turn_off': {
          const w = name === 'turn_on' ? onWord : offWord;
          return powerCommand && w !== undefined ? [{ topic: powerCommand, payload: w }] : unsupported(name);
        }
        default:
          return unsupported(name);
      }
    },
    assumed: (name, params) => (name === 'set_target_temperature' ? { target_temperature: params.temperature } : name === 'set_mode' ? { hvac_mode: params.mode } : undefined),
  };
}

function fanParts(config: Config): Parts {
  const commandTopic = topic(config, 'command_topic');
  const percentageCommand = topic(config, 'percentage_command_topic');
  const oscillationCommand = topic(config, 'oscillation_command_topic');
  const directionCommand = topic(config, 'direction_command_topic');
  const onWord = payload(config, 'payload_on', 'ON');
  const offWord = payload(config, 'payload_off', 'OFF');
  const oscOn = payload(config, 'payload_oscillation_on', 'oscillate_on') ?? 'oscillate_on';
  const oscOff = payload(config, 'payload_oscillation_off', 'oscillate_off') ?? 'oscillate_off';
  const min = num(config, 'speed_range_min') ?? 1;
  const max = num(config, 'speed_range_max') ?? 100;
  const percentageTpl = template(config, 'percentage_command_template');
  const oscillationTpl = template(config, 'oscillation_value_template');
  const directionTpl = template(config, 'direction_value_template');
  const percentageValueTpl = template(config, 'percentage_value_template');
  const steps = max - min + 1;
  return {
    deviceClass: 'fan',
    attributes: { oscillate: Boolean(oscillationCommand), direction: Boolean(directionCommand) },
    commands: [
      ...(commandTopic ? ['turn_on', 'turn_off'] : []),
      ...(percentageCommand ? ['set_percentage'] : []),
      ...(oscillationCommand ? ['oscillate'] : []),
      ...(directionCommand ? ['set_direction'] : []),
    ],
    listeners: [
      ...onOffListener(config, 'state_topic', 'state_value_template', onWord, offWord),
      ...listen(topic(config, 'percentage_state_topic'), (text) => {
        const n = numberOf(rendered(percentageValueTpl, text));
        return n === undefined ? undefined : { state: { percentage: n < min ? 0 : round(clamp(((n - min + 1) / steps) * 100, 0, 100)) } };
      }),
      ...listen(topic(config, 'oscillation_state_topic'), (text) => {
        const v = rendered(oscillationTpl, text);
        return same(v, oscOn) ? { state: { oscillating: true } } : same(v, oscOff) ? { state: { oscillating: false } } : undefined;
      }),
      ...listen(topic(config, 'direction_state_topic'), (text) => {
        const v = rendered(directionTpl, text);
        return v === 'forward' || v === 'reverse' ? { state: { direction: v } } : undefined;
      }),
    ],
    optimistic: !topic(config, 'state_topic'),
    command(name, params) {
      switch (name) {
        case 'turn_on':
        case 'turn_off': {
          const w = name === 'turn_on' ? onWord : offWord;
          return commandTopic && w !== undefined ? [{ topic: commandTopic, payload: w }] : unsupported(name);
        }
        case 'set_percentage': {
          if (!percentageCommand) return unsupported(name);
          const pct = clamp(needNumber(params, 'percentage'), 0, 100);
          if (pct === 0 && commandTopic && offWord !== undefined) return [{ topic: commandTopic, payload: offWord }];
          return [{ topic: percentageCommand, payload: commandPayload(percentageTpl, String(Math.ceil((pct / 100) * steps) + min - 1)) }];
        }
        case 'oscillate':
          return oscillationCommand ? [{ topic: oscillationCommand, payload: params.oscillating === true ? oscOn : oscOff }] : unsupported(name);
        case 'set_direction': {
          const d = params.direction;
          if (d !== 'forward' && d !== 'reverse') throw new NetworkFailureError('rejected', 'direction must be forward or reverse');
          return directionCommand ? [{ topic: directionCommand, payload: d }] : unsupported(name);
        }
        default:
          return unsupported(name);
      }
    },
    assumed: (name, params) => (name === 'turn_on' ? { on: true } : name === 'turn_off' ? { on: false } : name === 'set_percentage' ? { on: (params.percentage as number) > 0, percentage: params.percentage } : undefined),
  };
}

function lockParts(config: Config): Parts {
  const commandTopic = topic(config, 'command_topic');
  const lockWord = payload(config, 'payload_lock', 'LOCK');
  const unlockWord = payload(config, 'payload_unlock', 'UNLOCK');
  const words: Array<[string, Record<string, unknown>]> = [
    [payload(config, 'state_locked', 'LOCKED') ?? 'LOCKED', { locked: true, jammed: false }],
    [payload(config, 'state_unlocked', 'UNLOCKED') ?? 'UNLOCKED', { locked: false, jammed: false }],
    [payload(config, 'state_jammed', 'JAMMED') ?? 'JAMMED', { jammed: true }],
  ];
  const tpl = template(config, 'value_template');
  return {
    deviceClass: 'lock',
    commands: commandTopic ? ['lock', 'unlock'] : [],
    listeners: listen(topic(config, 'state_topic'), (text) => {
      const v = rendered(tpl, text);
      const found = words.find(([w]) => same(v, w));
      return found ? { state: found[1] } : undefined;
    }),
    optimistic: !topic(config, 'state_topic'),
    command(name) {
      const w = name === 'lock' ? lockWord : name === 'unlock' ? unlockWord : undefined;
      return commandTopic && w !== undefined ? [{ topic: commandTopic, payload: w }] : unsupported(name);
    },
    assumed: (name) => (name === 'lock' ? { locked: true } : name === 'unlock' ? { locked: false } : undefined),
  };
}

function sensorParts(config: Config): Parts {
  const stateTopic = topic(config, 'state_topic');
  if (!stateTopic) throw new DiscoveryError('a sensor needs a state_topic');
  const tpl = template(config, 'value_template');
  const sensorClass = SENSOR_CLASS_OF_HOME_ASSISTANT[str(config, 'device_class') ?? ''];
  const unit = str(config, 'unit_of_measurement')?.trim() || undefined;
  return {
    deviceClass: 'sensor',
    attributes: { ...(sensorClass ? { sensorClass } : {}), ...(unit ? { unit: unit.slice(0, 20) } : {}) },
    commands: [],
    listeners: [
      ...listen(stateTopic, (text) => {
        const v = rendered(tpl, text);
        if (v === '' || v === 'unknown' || v === 'unavailable' || v === 'None') return undefined;
        return { state: { value: numberOf(v) ?? v.slice(0, 255) } };
      }),
    ],
    command: (name) => unsupported(name),
  };
}

function binarySensorParts(config: Config): Parts {
  const stateTopic = topic(config, 'state_topic');
  if (!stateTopic) throw new DiscoveryError('a binary_sensor needs a state_topic');
  const tpl = template(config, 'value_template');
  const onWord = config.payload_on ?? 'ON';
  const offWord = config.payload_off ?? 'OFF';
  const sensorClass = BINARY_SENSOR_CLASS_OF_HOME_ASSISTANT[str(config, 'device_class') ?? ''];
  // The hub reads a contact as `open` (true when open); every other class as `detected`.
  const key = sensorClass === 'contact' ? 'open' : 'detected';
  return {
    deviceClass: 'binary_sensor',
    attributes: sensorClass ? { sensorClass } : {},
    commands: [],
    listeners: listen(stateTopic, (text) => {
      const v = rendered(tpl, text);
      return same(v, onWord) ? { state: { [key]: true } } : same(v, offWord) ? { state: { [key]: false } } : undefined;
    }),
    command: (name) => unsupported(name),
  };
}

/** An MQTT button is something the hub presses (a restart, a doorbell chime): a device with one command, `press`. */
function buttonParts(config: Config): Parts {
  const commandTopic = topic(config, 'command_topic');
  if (!commandTopic) throw new DiscoveryError('a button needs a command_topic');
  const press = payload(config, 'payload_press', 'PRESS') ?? 'PRESS';
  const tpl = template(config, 'command_template');
  return {
    deviceClass: 'generic',
    commands: ['press'],
    listeners: [],
    command: (name) => (name === 'press' ? [{ topic: commandTopic, payload: commandPayload(tpl, press) }] : unsupported(name)),
  };
}

// ---- device triggers ---------------------------------------------------------------------------

const PRESS_WORDS: Array<[RegExp, ButtonPress]> = [
  [/(^|_)(double|double_press|double_click|double_tap|2_press|two_press)$/, 'double'],
  [/(^|_)(hold|long|long_press|long_click|held|hold_release|press_long)$/, 'long'],
  [/(^|_)(press|click|single|short_press|short|tap|1_press|single_press|on|off)$/, 'single'],
];
/** Parts of a trigger's name that end a press rather than make one (the hub reports presses, not releases). */
const NOT_A_PRESS = /(^|_)(release|released|hold_release|press_release|stop|start)$/;

/** Which button, and which press: Home Assistant's standard types (`button_short_press` + `button_1`), or Zigbee2MQTT's action names (`on_press`, `brightness_up_hold`). */
export function pressOf(type: string, subtype: string): { button: string; press: ButtonPress } | undefined {
  const standard = /^button_(short|long|double|triple|quadruple|quintuple)_(press|release)$/.exec(type);
  if (standard) {
    // A release ends a press already reported (a long release ends the long press).
    if (standard[2] === 'release') return undefined;
    const press: ButtonPress = standard[1] === 'long' ? 'long' : standard[1] === 'short' ? 'single' : 'double';
    return { button: subtype || 'button', press };
  }
  const name = subtype || type;
  if (NOT_A_PRESS.test(name) && !/^(on|off)$/.test(name)) return undefined;
  for (const [pattern, press] of PRESS_WORDS) {
    const m = pattern.exec(name);
    if (!m) continue;
    // `on`/`off` on their own are buttons of a remote, pressed once.
    if (name === 'on' || name === 'off') return { button: name, press: 'single' };
    const button = name.slice(0, m.index).replace(/_+$/, '');
    return { button: button || 'button', press };
  }
  return { button: name, press: 'single' };
}

function triggerPlan(config: Config): TriggerPlan | null {
  if (str(config, 'automation_type') !== 'trigger') throw new DiscoveryError('a device_automation must have automation_type "trigger"');
  const t = topic(config, 'topic');
  if (!t) throw new DiscoveryError('a device trigger needs a topic');
  const device = deviceInfo(config);
  if (!device) throw new DiscoveryError('a device trigger needs a device block with identifiers or connections');
  const type = str(config, 'type') ?? '';
  const subtype = str(config, 'subtype') ?? '';
  const which = pressOf(type, subtype);
  // A release ends a press the hub already reported: left out like a disabled entity.
  if (!which) return null;
  const expected = str(config, 'payload');
  const tpl = template(config, 'value_template');
  const press = which.press;
  return {
    kind: 'trigger',
    buttonId: boundedId(`${device.key}/button/${which.button}`),
    buttonName: `${device.name ?? device.key} ${which.button.replace(/_/g, ' ')}`.slice(0, 200),
    device,
    press,
    qos: qosOf(config),
    listener: {
      topic: t,
      read(text) {
        const v = rendered(tpl, text);
        return expected === undefined || v === expected ? { press } : undefined;
      },
    },
  };
}

const PARTS: Record<EntityPlan['component'], (config: Config) => Parts> = {
  light: (config) => {
    const schema = str(config, 'schema') ?? 'default';
    if (schema === 'json') return lightJson(config);
    if (schema === 'default' || schema === 'basic') return lightBasic(config);
    throw new DiscoveryError(`light schema ${schema} is not supported (default and json are)`);
  },
  switch: switchParts,
  cover: coverParts,
  climate: climateParts,
  fan: fanParts,
  lock: lockParts,
  sensor: sensorParts,
  binary_sensor: binarySensorParts,
  button: buttonParts,
};

/**
 * The plan of one discovery config (its keys expanded), or a DiscoveryError saying why the hub
 * cannot use it. Left out (`null`): entities their integration disables by default
 * (`enabled_by_default: false`), as Home Assistant leaves them disabled, and button releases.
 */
export function planDiscovery(at: ConfigTopic, config: Config): EntityPlan | TriggerPlan | null {
  if (!(MQTT_COMPONENTS as readonly string[]).includes(at.component)) throw new DiscoveryError(`component ${at.component} is not supported (${MQTT_COMPONENTS.join(', ')} are)`);
  try {
    if (at.component === 'device_automation') return triggerPlan(config);
    if (config.enabled_by_default === false) return null;
    const component = at.component as EntityPlan['component'];
    const parts = PARTS[component](config);
    const device = deviceInfo(config);
    const id = entityId(config, at);
    const availability = availabilityOf(config);
    return {
      kind: 'entity',
      id,
      component,
      name: entityName(config, device, at.objectId),
      deviceClass: parts.deviceClass,
      attributes: parts.attributes ?? {},
      commands: parts.commands,
      ...(device ? { device } : {}),
      listeners: [...parts.listeners, ...attributesListener(config)],
      ...(availability ? { availability } : {}),
      optimistic: parts.optimistic ?? false,
      qos: qosOf(config),
      command: parts.command ?? ((name) => unsupported(name)),
      ...(parts.assumed ? { assumed: parts.assumed } : {}),
    };
  } catch (err) {
    if (err instanceof TemplateError) throw new DiscoveryError(err.message);
    throw err;
  }
}
