import { Compile } from 'typebox/compile';
import { Type, type TSchema } from 'typebox';
import { resolveAction, declaredParamKeys, type ResolvedAction } from '../devices/actions.js';
import { COMMAND_SYNONYMS, deriveCapabilities, isIrDevice, normalizeCommandName, type CapabilitySource, type CommandMeaning } from '../devices/capabilities.js';
import { CAPABILITY_COMMANDS } from '../devices/device-service.js';
import type { DeviceCommandSpec } from '../devices/model.js';
import { NORMALIZED_COMMANDS, type NormalizedCommand } from './model.js';

/**
 * The normalized player commands and how each becomes a device's own command. A player backed by
 * a logical device (any driver, the built-in integrations included) is driven through the device's
 * commands, found by meaning (synonyms) as the rest of the hub finds them; so a driver that names
 * its command `media_play_pause` or `set_volume` needs no mapping of its own.
 */

const Percent = Type.Number({ minimum: 0, maximum: 100 });

/** Each command's parameters; `additionalProperties: false`, so a typo is a 400, not ignored. */
export const COMMAND_PARAMS: Record<NormalizedCommand, TSchema> = {
  play: Type.Object({}, { additionalProperties: false }),
  pause: Type.Object({}, { additionalProperties: false }),
  toggle: Type.Object({}, { additionalProperties: false, description: 'Play when paused or stopped, pause when playing.' }),
  stop: Type.Object({}, { additionalProperties: false }),
  next: Type.Object({}, { additionalProperties: false }),
  previous: Type.Object({}, { additionalProperties: false }),
  seek: Type.Object({ position: Type.Number({ minimum: 0, maximum: 86_400, description: 'Seconds from the start.' }) }, { additionalProperties: false }),
  volume_set: Type.Object({ volume: Percent }, { additionalProperties: false }),
  volume_step: Type.Object(
    { delta: Type.Integer({ minimum: -50, maximum: 50, not: { const: 0 }, description: 'Steps up (positive) or down (negative).' }) },
    { additionalProperties: false },
  ),
  mute: Type.Object({ muted: Type.Optional(Type.Boolean({ description: 'Absent: toggle.' })) }, { additionalProperties: false }),
  shuffle: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }),
  repeat: Type.Object({ mode: Type.Union([Type.Literal('off'), Type.Literal('one'), Type.Literal('all')]) }, { additionalProperties: false }),
  power_on: Type.Object({}, { additionalProperties: false }),
  power_off: Type.Object({}, { additionalProperties: false }),
  launch_app: Type.Object(
    {
      appId: Type.String({ minLength: 1, maxLength: 200 }),
      contentId: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Deep link into the app, where the target supports it.' })),
      mediaType: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    },
    { additionalProperties: false },
  ),
  select_source: Type.Object({ source: Type.String({ minLength: 1, maxLength: 200, description: 'Input or source id, e.g. "hdmi1".' }) }, { additionalProperties: false }),
};

const paramChecks = Object.fromEntries(NORMALIZED_COMMANDS.map((c) => [c, Compile(COMMAND_PARAMS[c])])) as Record<NormalizedCommand, ReturnType<typeof Compile>>;

/** Why the params are wrong (`/field message`), or null when they are right. */
export function paramsProblem(command: NormalizedCommand, params: Record<string, unknown>): string | null {
  const check = paramChecks[command];
  if (check.Check(params)) return null;
  const first = check.Errors(params)[0];
  return first ? `${first.instancePath || '/'} ${first.message}` : 'invalid';
}

/** Probe parameters used to ask whether a device can do a command at all. */
const PROBE_PARAMS: Record<NormalizedCommand, Record<string, unknown>> = {
  play: {},
  pause: {},
  toggle: {},
  stop: {},
  next: {},
  previous: {},
  seek: { position: 0 },
  volume_set: { volume: 50 },
  volume_step: { delta: 1 },
  mute: {},
  shuffle: { enabled: true },
  repeat: { mode: 'all' },
  power_on: {},
  power_off: {},
  launch_app: { appId: 'x' },
  select_source: { source: 'x' },
};

function commandSpecs(device: CapabilitySource): DeviceCommandSpec[] {
  return device.commands.map((c) => (typeof c === 'string' ? { name: c } : c));
}

/** The device's command of that meaning, preferring the canonical synonym. */
function findCommand(device: CapabilitySource, meaning: CommandMeaning): DeviceCommandSpec | undefined {
  const specs = commandSpecs(device);
  for (const synonym of COMMAND_SYNONYMS[meaning] as readonly string[]) {
    const found = specs.find((s) => normalizeCommandName(s.name) === synonym);
    if (found) return found;
  }
  return undefined;
}

/** A parameterised command: the value goes in the parameter the command declares, else `preferred`. */
function withParam(device: CapabilitySource, meaning: CommandMeaning, preferred: string, value: unknown): ResolvedAction | undefined {
  if (isIrDevice(device)) return undefined;
  const spec = findCommand(device, meaning);
  if (!spec) return undefined;
  const declared = declaredParamKeys(spec);
  const param = declared.includes(preferred) ? preferred : declared.length === 1 ? declared[0]! : preferred;
  return { command: spec.name, params: { [param]: value } };
}

/**
 * The device command for a normalized command with valid params, or undefined when the device
 * cannot do it. `state` is the device's current state (play/pause over a play_pause toggle,
 * volume steps, mute) as in the abstract actions.
 */
export function resolvePlayerCommand(device: CapabilitySource, state: Record<string, unknown>, command: NormalizedCommand, params: Record<string, unknown>): ResolvedAction | undefined {
  switch (command) {
    case 'play':
    case 'pause':
    case 'stop':
    case 'next':
    case 'previous':
      return resolveAction(device, { action: command }, state);
    case 'toggle': {
      const toggle = findCommand(device, 'play_pause');
      if (toggle) return { command: toggle.name, params: {} };
      return resolveAction(device, { action: state.playback === 'playing' ? 'pause' : 'play' }, state);
    }
    case 'seek':
      return withParam(device, 'seek', 'position', params.position);
    case 'volume_set':
      return resolveAction(device, { action: 'set_volume', value: params.volume as number }, state);
    case 'volume_step': {
      const delta = params.delta as number;
      return resolveAction(device, { action: delta > 0 ? 'volume_up' : 'volume_down', value: Math.abs(delta) }, state);
    }
    case 'mute': {
      const spec = findCommand(device, 'mute');
      if (!spec) return undefined;
      const muted = params.muted as boolean | undefined;
      if (muted === undefined) return { command: spec.name, params: {} };
      // A mute that only toggles is sent only when the state says it is needed.
      const takesValue = declaredParamKeys(spec).length > 0;
      if (takesValue) return { command: spec.name, params: { [declaredParamKeys(spec)[0]!]: muted } };
      return state.muted === muted ? { command: spec.name, params: {}, noop: true } : { command: spec.name, params: {} };
    }
    case 'shuffle':
      return withParam(device, 'shuffle', 'enabled', params.enabled);
    case 'repeat':
      return withParam(device, 'repeat', 'mode', params.mode);
    case 'power_on':
      return resolveAction(device, { action: 'turn_on' }, state);
    case 'power_off':
      return resolveAction(device, { action: 'turn_off' }, state);
    case 'launch_app': {
      if (!deriveCapabilities(device, state).includes('apps')) return undefined;
      const { appId, contentId, mediaType } = params as { appId: string; contentId?: string; mediaType?: string };
      return { command: CAPABILITY_COMMANDS.apps.launch, params: { appId, ...(contentId ? { contentId } : {}), ...(mediaType ? { mediaType } : {}) } };
    }
    case 'select_source':
      return withParam(device, 'select_input', 'input', params.source);
  }
}

/** The normalized commands a device can do, in the documented order. */
export function playerCommandsOf(device: CapabilitySource, state: Record<string, unknown>): NormalizedCommand[] {
  return NORMALIZED_COMMANDS.filter((command) => resolvePlayerCommand(device, state, command, PROBE_PARAMS[command]) !== undefined);
}
