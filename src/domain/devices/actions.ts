import {
  COMMAND_SYNONYMS,
  deriveCapabilities,
  isIrDevice,
  normalizeCommandName,
  type CapabilityName,
  type CapabilitySource,
  type CommandMeaning,
} from './capabilities.js';
import { errorInfo } from './command-results.js';
import type { DeviceService } from './device-service.js';
import { deviceErrors } from './errors.js';
import type { DeviceActionResult, DeviceCommandSpec } from './model.js';

/**
 * Abstract actions ("turn on", "set the volume to 30") resolved to the command a device actually
 * offers, and performed through the device service with failures reported as result entries.
 */

/** Abstract actions that intents and entity actions ask for; resolved to a device's own command. */
export type AbstractAction =
  | { action: 'turn_on' }
  | { action: 'turn_off' }
  | { action: 'toggle' }
  | { action: 'set_brightness'; value: number }
  | { action: 'set_volume'; value: number }
  | { action: 'volume_up' | 'volume_down'; value?: number }
  | { action: 'set_temperature'; value: number }
  | { action: 'open' | 'close' }
  | { action: 'set_position'; value: number }
  | { action: 'play' | 'pause' | 'stop' | 'next' | 'previous' };

export type ActionName = AbstractAction['action'];

/** Every abstract action, with the capability it needs and whether it takes a value. */
export const ACTIONS: Record<ActionName, { capability: CapabilityName; value: 'required' | 'optional' | 'none'; description: string }> = {
  turn_on: { capability: 'power', value: 'none', description: 'Switch on.' },
  turn_off: { capability: 'power', value: 'none', description: 'Switch off.' },
  toggle: { capability: 'power', value: 'none', description: 'Switch to the other state.' },
  set_brightness: { capability: 'brightness', value: 'required', description: 'Brightness 0–100 %.' },
  set_volume: { capability: 'volume', value: 'required', description: 'Volume 0–100.' },
  volume_up: { capability: 'volume', value: 'optional', description: 'Volume up by `value` (default one step).' },
  volume_down: { capability: 'volume', value: 'optional', description: 'Volume down by `value` (default one step).' },
  set_temperature: { capability: 'temperature', value: 'required', description: 'Target temperature.' },
  open: { capability: 'cover', value: 'none', description: 'Open a cover fully.' },
  close: { capability: 'cover', value: 'none', description: 'Close a cover fully.' },
  set_position: { capability: 'cover', value: 'required', description: 'Cover position 0 (closed) – 100 (open).' },
  play: { capability: 'media', value: 'none', description: 'Start or resume playback.' },
  pause: { capability: 'media', value: 'none', description: 'Pause playback.' },
  stop: { capability: 'media', value: 'none', description: 'Stop playback.' },
  next: { capability: 'media', value: 'none', description: 'Next track.' },
  previous: { capability: 'media', value: 'none', description: 'Previous track.' },
};
export const ACTION_NAMES = Object.keys(ACTIONS) as ActionName[];

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

/** Builds an action from its name and optional value (protocol input). */
export function toAbstractAction(name: ActionName, value?: number): AbstractAction {
  switch (name) {
    case 'set_brightness':
    case 'set_volume':
    case 'set_temperature':
    case 'set_position':
      return { action: name, value: value ?? Number.NaN };
    case 'volume_up':
    case 'volume_down':
      return value === undefined ? { action: name } : { action: name, value };
    default:
      return { action: name };
  }
}

/** On/off from state: `on` (boolean) or `power` ("on"/"off" or boolean); undefined when unknown. */
export function isOn(state: Record<string, unknown>): boolean | undefined {
  if (typeof state.on === 'boolean') return state.on;
  const power = state.power;
  if (typeof power === 'boolean') return power;
  if (typeof power === 'string') {
    const p = power.toLowerCase();
    if (p === 'on') return true;
    if (p === 'off' || p === 'standby') return false;
  }
  return undefined;
}

const clampPercent = (v: number) => Math.max(0, Math.min(100, Math.round(v)));

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
};

function valueParam(spec: DeviceCommandSpec, meaning: CommandMeaning): string {
  const rule = VALUE_PARAMS[meaning] ?? { preferred: ['value'] };
  const declared = declaredParamKeys(spec);
  const match = rule.preferred.find((p) => declared.includes(p));
  if (match) return match;
  if (declared.length === 1) return declared[0]!;
  return rule.byName?.[normalizeCommandName(spec.name)] ?? rule.preferred[0]!;
}

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
export function resolveAction(device: CapabilitySource, action: AbstractAction, state: Record<string, unknown> = {}): ResolvedAction | undefined {
  const spec = ACTIONS[action.action];
  if (!spec) return undefined;
  if (!deriveCapabilities(device, state).includes(spec.capability)) return undefined;
  const value = 'value' in action ? action.value : undefined;
  if (value !== undefined && !Number.isFinite(value)) return undefined;

  const ir = isIrDevice(device);
  const specs: DeviceCommandSpec[] = device.commands.map((c) => (typeof c === 'string' ? { name: c } : c));
  const open = specs.length === 0 && !ir;
  const find = (meaning: CommandMeaning): DeviceCommandSpec | undefined => {
    const synonyms: readonly string[] = COMMAND_SYNONYMS[meaning];
    if (open) return { name: synonyms[0]! };
    for (const synonym of synonyms) {
      const found = specs.find((s) => normalizeCommandName(s.name) === synonym);
      if (found) return found;
    }
    return undefined;
  };
  const plain = (meaning: CommandMeaning): ResolvedAction | undefined => {
    const c = find(meaning);
    return c ? { command: c.name, params: {} } : undefined;
  };
  const withValue = (meaning: CommandMeaning, v: number): ResolvedAction | undefined => {
    if (ir) return undefined;
    const c = find(meaning);
    return c ? { command: c.name, params: { [valueParam(c, meaning)]: v } } : undefined;
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
      return plain(action.action);
  }
}

export interface SupportedAction {
  action: ActionName;
  /** The command the action resolves to now. */
  command: string;
  /** The parameter that carries the action's value, for value actions. */
  valueParam?: string;
}

/** The abstract actions a device can do now (value actions probed with a mid-range value). */
export function supportedActions(device: CapabilitySource, state: Record<string, unknown> = {}): SupportedAction[] {
  const out: SupportedAction[] = [];
  for (const name of ACTION_NAMES) {
    const resolved = resolveAction(device, toAbstractAction(name, ACTIONS[name].value === 'required' ? 50 : undefined), state);
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
    const resolved = resolveAction(device, action, this.devices.state.get(deviceId).state);
    if (!resolved) {
      return { deviceId, ok: false, error: deviceErrors.ACTION_NOT_SUPPORTED.info({ device: device.name, action: action.action.replace(/_/g, ' ') }) };
    }
    if (resolved.noop) return { deviceId, ok: true, result: { unchanged: true } };
    const presses = resolved.repeat ?? 1;
    try {
      let result: unknown;
      for (let i = 0; i < presses; i++) result = await this.devices.command(deviceId, resolved.command, resolved.params);
      if (presses > 1) return { deviceId, ok: true, command: resolved.command, result: { presses } };
      return { deviceId, ok: true, command: resolved.command, ...(result === undefined ? {} : { result }) };
    } catch (err) {
      return { deviceId, ok: false, command: resolved.command, error: errorInfo(err) };
    }
  }
}
