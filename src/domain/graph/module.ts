import type { Clock } from '../../platform/clock.js';
import { defineModule } from '../../platform/module.js';
import type { Readiness } from '../../platform/readiness.js';
import type { AudienceResolver } from '../access/audience.js';
import type { DeviceActions } from '../devices/actions.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DriverManager } from '../drivers/driver-manager.js';
import type { LocalDriverSupervisor } from '../drivers/local/supervisor.js';
import type { MacroService } from '../home/macros.js';
import type { MediaService } from '../media/media-service.js';
import type { DesignService, PreferencesService } from '../home/preferences.js';
import type { SpaceService } from '../home/spaces.js';
import type { ZoneService } from '../home/zones.js';
import type { ProgramService } from '../programs/program-service.js';
import type { SceneCatalog } from '../scenes/catalog.js';
import { bootstrapOperation } from './bootstrap.js';
import { graphOperations } from './operations.js';

export interface GraphModuleDeps {
  devices: DeviceService;
  actions: DeviceActions;
  drivers: DriverManager;
  localDrivers: LocalDriverSupervisor;
  spaces: SpaceService;
  zones: ZoneService;
  macros: MacroService;
  preferences: PreferencesService;
  design: DesignService;
  programs: ProgramService;
  scenes: SceneCatalog;
  media: MediaService;
  readiness: Readiness;
  audiences: AudienceResolver;
  clock: Clock;
}

/**
 * The home as one read model, built from memory per call: the graph, context snapshots,
 * entities and their services, the system snapshot, and the clients' bootstrap payload. It sits
 * on top: it reads every other domain module and nothing reads it.
 */
export function graphModule(deps: GraphModuleDeps) {
  const { devices, spaces, zones, programs, preferences, design, media, audiences, clock } = deps;
  const now = () => clock.now();
  return defineModule({
    name: 'graph',
    needs: ['devices', 'drivers', 'home', 'programs', 'scenes', 'media'],
    operations: {
      graph: graphOperations({ ...deps, now }),
      bootstrap: { bootstrap: bootstrapOperation({ devices, spaces, zones, programs, preferences, design, media, audiences, now }) },
    },
  });
}
