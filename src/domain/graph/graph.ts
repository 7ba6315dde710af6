import type { DeviceService } from '../devices/device-service.js';
import type { MacroService } from '../home/macros.js';
import type { SpaceService } from '../home/spaces.js';
import type { ZoneService } from '../home/zones.js';
import type { Program } from '../programs/model.js';
import { entityDomainsOf } from '../devices/capabilities.js';
import { modelOf } from '../devices/readings.js';
import { assignSlugs } from '../../platform/slugs.js';
import type { GraphDevice, GraphSpace, HomeGraph } from './model.js';
import { byCreation, type SceneEntry } from '../scenes/catalog.js';

export interface HomeGraphDeps {
  devices: DeviceService;
  spaces: SpaceService;
  zones: ZoneService;
  macros: MacroService;
  programs: { list(): Program[] };
  /** The scene cache (a `SceneCatalog`); read only, never asks drivers. */
  scenes: { list(): SceneEntry[] };
  now(): number;
}

/**
 * Builds the home graph in one pass over the in-memory registries: no driver calls, no storage
 * reads. Removed devices are left out (and out of spaces and zones); a device whose room names no
 * space has `spaceId: null`. Devices are in creation order.
 *
 * Entity object ids are allocated over every device the registry holds, removed ones included and
 * in creation order, so that removing a device never renames the entities of another.
 */
export function buildHomeGraph(deps: HomeGraphDeps): HomeGraph {
  const all = byCreation(deps.devices.registry.list({ includeRemoved: true }));
  const objectIds = assignSlugs(all, 'device');
  const spaces = deps.spaces.list();
  const spaceIds = new Set(spaces.map((s) => s.id));

  const devices: GraphDevice[] = [];
  for (const device of all) {
    if (device.removed) continue;
    const state = { ...deps.devices.state.get(device.id).state };
    const { capabilities, deviceClass, reading } = modelOf(device, state);
    const objectId = objectIds.get(device.id)!;
    devices.push({
      id: device.id,
      name: device.name,
      category: device.category,
      spaceId: device.room !== null && spaceIds.has(device.room) ? device.room : null,
      capabilities,
      deviceClass,
      reading,
      commands: device.commands.map((c) => c.name),
      state,
      online: deps.devices.isOnline(device),
      entityIds: entityDomainsOf({ deviceClass, capabilities }).map((domain) => `${domain}.${objectId}`),
    });
  }
  const present = new Set(devices.map((d) => d.id));

  const graphSpaces: GraphSpace[] = spaces.map((space) => ({
    id: space.id,
    name: space.name,
    deviceIds: devices.filter((d) => d.spaceId === space.id).map((d) => d.id),
    activeSourceId: space.activeSourceId,
  }));

  return {
    generatedAt: deps.now(),
    spaces: graphSpaces,
    devices,
    zones: deps.zones.zones.list().map((z) => ({ id: z.id, name: z.name, deviceIds: z.deviceIds.filter((id) => present.has(id)), programId: z.programId })),
    programs: deps.programs.list().map((p) => ({ id: p.id, name: p.name, semantics: [...(p.semantics ?? [])], hasTimer: (p.triggers?.length ?? 0) > 0 })),
    macros: deps.macros.macros.list().map((m) => ({ id: m.id, name: m.name })),
    scenes: deps.scenes.list().filter((s) => present.has(s.deviceId)),
  };
}
