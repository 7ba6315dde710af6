/**
 * The home graph: one coherent, read-only view of spaces → devices → capabilities → state,
 * built from the registries in one pass. Hub protocol snapshots, entities and intents read it.
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

export interface GraphDevice {
  id: string;
  name: string;
  category: string;
  spaceId: string | null;
  capabilities: CapabilityName[];
  commands: string[];
  state: Record<string, unknown>;
  online: boolean;
  /** Home Assistant style ids of this device's entities, e.g. `light.living_room_lamp`. */
  entityIds: string[];
}

export interface GraphSpace {
  id: string;
  name: string;
  deviceIds: string[];
  activeSourceId: string | null;
}

export interface HomeGraph {
  generatedAt: number;
  spaces: GraphSpace[];
  devices: GraphDevice[];
  zones: Array<{ id: string; name: string; deviceIds: string[]; programId: string | null }>;
  programs: Array<{ id: string; name: string; semantics: string[]; hasTimer: boolean }>;
  macros: Array<{ id: string; name: string }>;
  /** Scenes devices expose (as last listed by their drivers); `id` is `<deviceId>:<sceneId>`. */
  scenes: Array<{ id: string; deviceId: string; sceneId: string; name: string }>;
}
