import type { DeviceCommandSpec } from './model.js';
import type { CapabilitySource } from './derivation.js';

/**
 * Command synonyms and command reading: the driver command names for each meaning, and how a
 * device's own command of a meaning is found and which parameter takes its value. It is its own
 * module because dispatch (actions.ts), readings (readings.ts) and the derivation all read
 * commands this way, and reading a command needs neither the capability table nor the classes.
 */

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

/** Lowercase, `_` for separators: `Power-On` → `power_on`. */
export function normalizeCommandName(name: string): string {
  return name.trim().toLowerCase().replace(/[\s.-]+/g, '_');
}

export function commandNames(device: Pick<CapabilitySource, 'commands'>): string[] {
  return device.commands.map((c) => (typeof c === 'string' ? c : c.name));
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
