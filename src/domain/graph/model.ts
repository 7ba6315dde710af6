/**
 * The home graph: one coherent, read-only view of spaces → devices → capabilities → state,
 * built from the registries in one pass. Hub protocol snapshots, entities and intents read it.
 */
import type { CapabilityName, DeviceClass } from '../devices/capabilities.js';
import type { DeviceReading } from '../devices/readings.js';
import type { SceneEntry } from '../scenes/catalog.js';

export interface GraphDevice {
  id: string;
  name: string;
  category: string;
  spaceId: string | null;
  capabilities: CapabilityName[];
  deviceClass: DeviceClass;
  /** The canonical reading of its state (docs/devices.md). */
  reading: DeviceReading;
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
  scenes: SceneEntry[];
}
