import {
  COMMAND_SYNONYMS,
  DEFAULT_KELVIN_RANGE,
  commandOfMeaning,
  commandValueParam,
  deriveCapabilities,
  isIrDevice,
  type CapabilityName,
  type CapabilitySource,
  type CommandMeaning,
  type DeviceAttributes,
} from './capabilities.js';
import { errorInfo } from './command-results.js';
import { isOn } from './readings.js';
import type { DeviceService } from './device-service.js';
import { deviceErrors } from './errors.js';
import type { DeviceActionResult, DeviceCommandSpec } from './model.js';

/** Where the media commands read a command's parameters; the table lives with the command synonyms. */
export { declaredParamKeys } from './capabilities.js';

/**
 * Abstract actions ("turn on", "set the volume to 30") resolved to the command a device actually
 * offers, and performed through the device service with failures reported as result entries.
 */

/**
 * Abstract actions ("turn on", "set the volume to 30", "lock"): the standard commands of the
 * device classes, which every device of a class accepts whatever its integration, resolved to the
 * command the device actually offers.
 */
export type AbstractAction =
  | { action: 'turn_on' | 'turn_off' | 'toggle' | 'open' | 'close' | 'stop' | 'lock' | 'unlock' | 'play' | 'pause' | 'next' | 'previous' }
  | { action: 'set_brightness' | 'set_volume' | 'set_temperature' | 'set_position' | 'set_tilt_position' | 'set_color_temp' | 'set_percentage'; value: number }
  | { action: 'volume_up' | 'volume_down'; value?: number }
  | { action: 'set_hs_color'; hue: number; saturation: number }
  | { action: 'set_hvac_mode'; mode: string }
  | { action: 'oscillate'; oscillating: boolean }
  | { action: 'set_direction'; direction: 'forward' | 'reverse' };

export type ActionName = AbstractAction['action'];

/**
 * How an action takes its input: `value` (a number, required or optional, in `param` of the
 * standard command), `params` (named fields of the standard command), or nothing.
 */
export interface ActionSpec {
  /** The capability that carries it; `also` lists others that can (a cover stops too). */
  capability: CapabilityName;
  also?: CapabilityName[];
  value: 'required' | 'optional' | 'none' | 'params';
  /** The standard command's parameter that carries the value. */
  param?: string;
  description: string;
}

/** Every abstract action, with the capability it needs and how it takes its input. */
export const ACTIONS: Record<ActionName, ActionSpec> = {
  turn_on: { capability: 'power', value: 'none', description: 'Switch on.' },
  turn_off: { capability: 'power', value: 'none', description: 'Switch off.' },
  toggle: { capability: 'power', value: 'none', description: 'Switch to the other state.' },
  set_brightness: { capability: 'brightness', value: 'required', param: 'brightness', description: 'Brightness 0–100 %.' },
  set_color_temp: { capability: 'color', value: 'required', param: 'kelvin', description: "Colour temperature in kelvin, within the light's minKelvin–maxKelvin." },
  set_hs_color: { capability: 'color', value: 'params', description: 'Colour: {hue 0–360, saturation 0–100}.' },
  set_volume: { capability: 'volume', value: 'required', param: 'volume', description: 'Volume 0–100 (standard command: volume_set {volume}).' },
  volume_up: { capability: 'volume', value: 'optional', param: 'value', description: 'Volume up by `value` (default one step).' },
  volume_down: { capability: 'volume', value: 'optional', param: 'value', description: 'Volume down by `value` (default one step).' },
  set_temperature: { capability: 'temperature', value: 'required', param: 'temperature', description: 'Target temperature, within minTemperature–maxTemperature (standard command: set_target_temperature {temperature}).' },
  set_hvac_mode: { capability: 'climate_mode', value: 'params', description: "Mode: {mode}, one of the device's hvacModes." },
  open: { capability: 'cover', value: 'none', description: 'Open a cover fully.' },
  close: { capability: 'cover', value: 'none', description: 'Close a cover fully.' },
  set_position: { capability: 'position', also: ['cover'], value: 'required', param: 'position', description: 'Cover position 0 (closed) – 100 (open); a cover without a position takes 0 and 100.' },
  set_tilt_position: { capability: 'position', value: 'required', param: 'tilt', description: 'Cover tilt 0 (closed) – 100 (open), where the cover tilts.' },
  lock: { capability: 'lock', value: 'none', description: 'Lock.' },
  unlock: { capability: 'lock', value: 'none', description: 'Unlock.' },
  set_percentage: { capability: 'fan_speed', value: 'required', param: 'percentage', description: 'Fan speed 0–100 % (0 switches off).' },
  oscillate: { capability: 'fan_speed', value: 'params', description: 'Oscillate: {oscillating: boolean}, where the fan oscillates.' },
  set_direction: { capability: 'fan_speed', value: 'params', description: 'Direction: {direction: "forward" | "reverse"}, where the fan reverses.' },
  play: { capability: 'media', value: 'none', description: 'Start or resume playback.' },
  pause: { capability: 'media', value: 'none', description: 'Pause playback.' },
  stop: { capability: 'media', also: ['cover'], value: 'none', description: 'Stop playback, or stop a moving cover.' },
  next: { capability: 'media', value: 'none', description: 'Next track.' },
  previous: { capability: 'media', value: 'none', description: 'Previous track.' },
};
export const ACTION_NAMES = Object.keys(ACTIONS) as ActionName[];

/** Standard command names spelled differently from the abstract action they are. */
const STANDARD_COMMAND_ALIASES: Record<string, ActionName> = { set_target_temperature: 'set_temperature', volume_set: 'set_volume', set_mode: 'set_hvac_mode' };

/** The abstract action a standard command name stands for, if it is one. */
export function standardActionName(command: string): ActionName | undefined {
  if (Object.hasOwn(ACTIONS, command)) return command as ActionName;
  return Object.hasOwn(STANDARD_COMMAND_ALIASES, command) ? STANDARD_COMMAND_ALIASES[command] : undefined;
}

/** The capabilities that can carry an action. */
export function actionCapabilities(name: ActionName): CapabilityName[] {
  const spec = ACTIONS[name];
  return [spec.capability, ...(spec.also ?? [])];
}

/** Volume change for a volume_up/down without a value on a device that only sets absolute volume. */
export const DEFAULT_VOLUME_STEP = 5;
/** At most this many presses of a step command for one action (as zone volume does). */
export const MAX_STEP_PRESSES = 20;

export interface ResolvedAction {
  command: string;
  params: Record<string, unknown>;
  /** Press the command this many times (step-only volume); absent means once. */
  repeat?: number;
  /**
   * The device is already where the action asks and its only way there is a toggle (or a zero
   * volume change): nothing should be sent.
   */
  noop?: boolean;
}

/** A refusal of a standard command's input: the field and why. */
export interface ActionInputProblem {
  field: string;
  problem: string;
}

export function isActionInputProblem(value: unknown): value is ActionInputProblem {
  return typeof value === 'object' && value !== null && 'problem' in value;
}

/**
 * Builds an action from its name and its input (a numeric `value`, or the standard command's named
 * `params`), checked against the device's attributes: a value outside the declared range, or a
 * mode the device does not list, is a problem, never clamped.
 */
export function parseAction(name: ActionName, input: { value?: unknown; params?: Record<string, unknown> }, attributes: DeviceAttributes = {}): AbstractAction | ActionInputProblem {
  const spec = ACTIONS[name];
  const params = input.params ?? {};
  const field = input.value !== undefined ? 'value' : (spec.param ?? 'value');
  const raw = input.value !== undefined ? input.value : spec.param !== undefined ? params[spec.param] : undefined;
  const number = (f: string, v: unknown, min: number, max: number): number | ActionInputProblem => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return { field: f, problem: `${f} must be a finite number` };
    if (v < min || v > max) return { field: f, problem: `${f} must be between ${min} and ${max}` };
    return v;
  };
  switch (name) {
    case 'set_brightness':
    case 'set_volume':
    case 'set_position':
    case 'set_tilt_position':
    case 'set_percentage': {
      const v = number(field, raw, 0, 100);
      return isActionInputProblem(v) ? v : { action: name, value: v };
    }
    case 'set_color_temp': {
      const v = number(field, raw, attributes.minKelvin ?? DEFAULT_KELVIN_RANGE.min, attributes.maxKelvin ?? DEFAULT_KELVIN_RANGE.max);
      return isActionInputProblem(v) ? v : { action: name, value: v };
    }
    case 'set_temperature': {
      const v = number(field, raw, attributes.minTemperature ?? -50, attributes.maxTemperature ?? 100);
      return isActionInputProblem(v) ? v : { action: name, value: v };
    }
    case 'volume_up':
    case 'volume_down': {
      if (raw === undefined) return { action: name };
      const v = number(field, raw, 0, 100);
      return isActionInputProblem(v) ? v : { action: name, value: v };
    }
    case 'set_hs_color': {
      const hue = number('hue', params.hue, 0, 360);
      if (isActionInputProblem(hue)) return hue;
      const saturation = number('saturation', params.saturation, 0, 100);
      return isActionInputProblem(saturation) ? saturation : { action: name, hue, saturation };
    }
    case 'set_hvac_mode': {
      const mode = params.mode;
      if (typeof mode !== 'string' || mode.length === 0 || mode.length > 50) return { field: 'mode', problem: 'mode must be a non-empty string' };
      if (attributes.hvacModes && !attributes.hvacModes.includes(mode)) return { field: 'mode', problem: `mode must be one of ${attributes.hvacModes.join(', ')}` };
      return { action: name, mode };
    }
    case 'oscillate':
      if (typeof params.oscillating !== 'boolean') return { field: 'oscillating', problem: 'oscillating must be a boolean' };
      return { action: name, oscillating: params.oscillating };
    case 'set_direction':
      if (params.direction !== 'forward' && params.direction !== 'reverse') return { field: 'direction', problem: 'direction must be "forward" or "reverse"' };
      return { action: name, direction: params.direction };
    default:
      return { action: name };
  }
}

/** Builds an action from its name and optional numeric value, unchecked (intents, entity services). */
export function toAbstractAction(name: ActionName, value?: number): AbstractAction {
  switch (name) {
    case 'set_brightness':
    case 'set_volume':
    case 'set_temperature':
    case 'set_position':
    case 'set_tilt_position':
    case 'set_color_temp':
    case 'set_percentage':
      return { action: name, value: value ?? Number.NaN };
    case 'volume_up':
    case 'volume_down':
      return value === undefined ? { action: name } : { action: name, value };
    case 'set_hs_color':
      return { action: name, hue: Number.NaN, saturation: Number.NaN };
    case 'set_hvac_mode':
      return { action: name, mode: '' };
    case 'oscillate':
      return { action: name, oscillating: true };
    case 'set_direction':
      return { action: name, direction: 'forward' };
    default:
      return { action: name };
  }
}

const clampPercent = (v: number) => Math.max(0, Math.min(100, Math.round(v)));

/** Parameters that take a colour temperature in mireds rather than kelvin. */
const MIRED_PARAMS = new Set(['color_temp', 'mireds', 'ct']);

/**
 * The device's own command for an abstract action, or undefined when it cannot do it.
 *
 * The device needs the action's capability (see `deriveCapabilities`) and a command of that
 * meaning by any of its synonyms, preferring the canonical name; a device that declares no command
 * list gets the canonical names. Values go in the parameter the command declares (e.g. `dim`
 * `{level}`), else the usual one. Fallbacks: on/off through a toggle (`noop` when the state already
 * matches), toggle through on/off by state (on when unknown), open/close through set_position and
 * back, play/pause through play_pause, set_volume and volume_up/down by n through the absolute
 * setter when the volume is known, or through step commands pressed `repeat` times. IR keys take
 * no parameters, so IR devices only get parameterless commands.
 */
export function resolveAction(
  device: CapabilitySource,
  action: AbstractAction,
  state: Record<string, unknown> = {},
  capabilities: readonly CapabilityName[] = deriveCapabilities(device, state),
): ResolvedAction | undefined {
  if (!Object.hasOwn(ACTIONS, action.action)) return undefined;
  if (!actionCapabilities(action.action).some((c) => capabilities.includes(c))) return undefined;
  const value = 'value' in action ? action.value : undefined;
  if (value !== undefined && !Number.isFinite(value)) return undefined;

  const ir = isIrDevice(device);
  const specs: DeviceCommandSpec[] = device.commands.map((c) => (typeof c === 'string' ? { name: c } : c));
  const open = specs.length === 0 && !ir;
  const find = (meaning: CommandMeaning): DeviceCommandSpec | undefined => {
    if (open) return { name: COMMAND_SYNONYMS[meaning][0] };
    return commandOfMeaning(specs, meaning);
  };
  const plain = (meaning: CommandMeaning): ResolvedAction | undefined => {
    const c = find(meaning);
    return c ? { command: c.name, params: {} } : undefined;
  };
  const withValue = (meaning: CommandMeaning, v: unknown): ResolvedAction | undefined => {
    if (ir) return undefined;
    const c = find(meaning);
    return c ? { command: c.name, params: { [commandValueParam(c, meaning)]: v } } : undefined;
  };
  const on = isOn(state);
  const viaToggle = (target: boolean): ResolvedAction | undefined => {
    // A driver without a command list gets explicit on/off, not a guess at a toggle.
    const toggle = open ? undefined : find('toggle');
    if (!toggle) return undefined;
    return on === target ? { command: toggle.name, params: {}, noop: true } : { command: toggle.name, params: {} };
  };
  const volume = typeof state.volume === 'number' && Number.isFinite(state.volume) ? state.volume : undefined;
  const steps = (delta: number): ResolvedAction | undefined => {
    const step = plain(delta >= 0 ? 'volume_up' : 'volume_down');
    if (!step) return undefined;
    const presses = Math.min(Math.abs(Math.round(delta)), MAX_STEP_PRESSES);
    return presses === 0 ? { ...step, noop: true } : presses === 1 ? step : { ...step, repeat: presses };
  };

  switch (action.action) {
    case 'turn_on':
      return plain('turn_on') ?? viaToggle(true);
    case 'turn_off':
      return plain('turn_off') ?? viaToggle(false);
    case 'toggle': {
      const toggle = open ? undefined : plain('toggle');
      if (toggle) return toggle;
      return on === true ? plain('turn_off') : plain('turn_on');
    }
    case 'set_brightness':
      return withValue('set_brightness', clampPercent(action.value));
    case 'set_volume': {
      const target = clampPercent(action.value);
      const set = withValue('volume_set', target);
      if (set) return set;
      return volume === undefined ? undefined : steps(target - volume);
    }
    case 'volume_up':
    case 'volume_down': {
      const sign = action.action === 'volume_up' ? 1 : -1;
      if (action.value === undefined) {
        const step = plain(action.action);
        if (step) return step;
        return volume === undefined ? undefined : withValue('volume_set', clampPercent(volume + sign * DEFAULT_VOLUME_STEP));
      }
      const set = volume === undefined ? undefined : withValue('volume_set', clampPercent(volume + sign * action.value));
      return set ?? steps(sign * action.value);
    }
    case 'set_temperature':
      return withValue('set_temperature', action.value);
    case 'open':
      return plain('open') ?? withValue('set_position', 100);
    case 'close':
      return plain('close') ?? withValue('set_position', 0);
    case 'set_position': {
      const position = clampPercent(action.value);
      return withValue('set_position', position) ?? (position === 100 ? plain('open') : position === 0 ? plain('close') : undefined);
    }
    case 'play':
    case 'pause': {
      const direct = plain(action.action);
      if (direct) return direct;
      const playPause = plain('play_pause');
      if (!playPause) return undefined;
      const playing = state.playback === 'playing';
      const already = action.action === 'play' ? playing : state.playback === 'paused' || state.playback === 'stopped';
      return already ? { ...playPause, noop: true } : playPause;
    }
    case 'stop':
    case 'next':
    case 'previous':
    case 'lock':
    case 'unlock':
      return plain(action.action);
    case 'set_tilt_position':
      return withValue('set_tilt_position', clampPercent(action.value));
    case 'set_color_temp': {
      const c = ir ? undefined : find('set_color_temp');
      if (!c) return undefined;
      const param = commandValueParam(c, 'set_color_temp');
      // A driver that takes mireds (Home Assistant's and HAP's unit) gets mireds.
      return { command: c.name, params: { [param]: MIRED_PARAMS.has(param) ? Math.round(1_000_000 / action.value) : Math.round(action.value) } };
    }
    case 'set_hs_color': {
      if (!Number.isFinite(action.hue) || !Number.isFinite(action.saturation)) return undefined;
      const c = ir ? undefined : find('set_hs_color');
      return c ? { command: c.name, params: { hue: action.hue, saturation: action.saturation } } : undefined;
    }
    case 'set_hvac_mode':
      return action.mode ? withValue('set_mode', action.mode) : undefined;
    case 'set_percentage': {
      const percentage = clampPercent(action.value);
      return withValue('set_percentage', percentage) ?? (percentage === 0 ? plain('turn_off') : undefined);
    }
    case 'oscillate':
      return withValue('oscillate', action.oscillating);
    case 'set_direction':
      return withValue('set_direction', action.direction);
  }
}

export interface SupportedAction {
  action: ActionName;
  /** The command the action resolves to now. */
  command: string;
  /** The parameter that carries the action's value, for value actions. */
  valueParam?: string;
}

/** An action with a typical input, to ask whether a device can do it at all. */
function probe(name: ActionName): AbstractAction {
  switch (name) {
    case 'set_color_temp':
      return { action: name, value: 4000 };
    case 'set_temperature':
      return { action: name, value: 20 };
    case 'set_hs_color':
      return { action: name, hue: 180, saturation: 50 };
    case 'set_hvac_mode':
      return { action: name, mode: 'auto' };
    default:
      return toAbstractAction(name, ACTIONS[name].value === 'required' ? 50 : undefined);
  }
}

/** The abstract actions a device can do now (value actions probed with a typical value). */
export function supportedActions(device: CapabilitySource, state: Record<string, unknown> = {}): SupportedAction[] {
  const out: SupportedAction[] = [];
  const capabilities = deriveCapabilities(device, state);
  for (const name of ACTION_NAMES) {
    const resolved = resolveAction(device, probe(name), state, capabilities);
    if (!resolved) continue;
    const param = Object.keys(resolved.params)[0];
    out.push({ action: name, command: resolved.command, ...(param ? { valueParam: param } : {}) });
  }
  return out;
}

/** Performs abstract actions on devices. Never throws: every failure is a result entry. */
export class DeviceActions {
  constructor(private readonly devices: DeviceService) {}

  /** Whether the device can do the action now (no driver call). */
  resolve(deviceId: string, action: AbstractAction): ResolvedAction | undefined {
    const device = this.devices.registry.find(deviceId);
    if (!device || device.removed) return undefined;
    return resolveAction(device, action, this.devices.state.get(deviceId).state);
  }

  async perform(deviceId: string, action: AbstractAction): Promise<DeviceActionResult> {
    const device = this.devices.registry.find(deviceId);
    if (!device || device.removed) return { deviceId, ok: false, error: deviceErrors.DEVICE_NOT_FOUND.info({ id: deviceId }) };
    const spec = ACTIONS[action.action];
    if (!spec) return { deviceId, ok: false, error: deviceErrors.ACTION_NOT_SUPPORTED.info({ device: device.name, action: String(action.action) }) };
    const value = 'value' in action ? action.value : undefined;
    if ((spec.value === 'required' && value === undefined) || (value !== undefined && !Number.isFinite(value))) {
      return { deviceId, ok: false, error: deviceErrors.INVALID_ACTION_VALUE.info({ action: action.action }) };
    }
    try {
      return { deviceId, ok: true, ...(await this.devices.perform(device, action)) };
    } catch (err) {
      const resolved = resolveAction(device, action, this.devices.state.get(deviceId).state);
      return { deviceId, ok: false, ...(resolved ? { command: resolved.command } : {}), error: errorInfo(err) };
    }
  }
}
