import type { AudienceResolver } from '../access/audience.js';
import type { RoutineReach } from '../home/routine-reach.js';
import type { Clock, Timers } from '../../platform/clock.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import { DocumentCollection } from '../../platform/document-collection.js';
import type { MacroService } from '../home/macros.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import type { ZoneService } from '../home/zones.js';
import { ActionMapRunner } from './action-maps.js';
import { activityOperations } from './activity-operations.js';
import { ProgramCatalog } from './catalog.js';
import { programErrors } from './errors.js';
import type { Program } from './model.js';
import { automationOperations, programOperations } from './operations.js';
import { ActivityPresets } from './presets.js';
import { ProgramService, type ProgramRunRepository } from './program-service.js';
import type { FireStore } from './scheduler.js';

/**
 * The program records, loaded before the home model, which reads them: zones name a program and
 * programs name zones, so the records sit below both and the program service above the home.
 */
export function programCatalogModule({ repository, clock }: { repository: DocumentRepository<Program>; clock: Clock }) {
  const catalog = new ProgramCatalog(new DocumentCollection(repository, clock, programErrors.PROGRAM_NOT_FOUND));
  return defineModule({
    name: 'program-catalog',
    needs: ['storage'],
    catalog,
    operations: {},
    async start() {
      await catalog.records.load();
    },
  });
}

export interface ProgramsModuleDeps {
  catalog: ProgramCatalog;
  runs: ProgramRunRepository;
  fires: FireStore;
  devices: DeviceService;
  /** What program steps reach besides devices. */
  zones: ZoneService;
  macros: MacroService;
  /** Who sees what: a user lists and runs only the routines within their grants (the home's reach). */
  audiences: AudienceResolver;
  reach: RoutineReach;
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
}

/**
 * Programs: saving, running and their timers (scheduled at start, cancelled with their runs at
 * stop), automations, and the activity presets, zone programs and action-map runs the home offers.
 */
export function programsModule({ catalog, runs, fires, devices, zones, macros, audiences, reach, events, clock, timers, log }: ProgramsModuleDeps) {
  const programs = new ProgramService(catalog.records, runs, fires, devices, zones, macros, events, clock, timers, log);
  const actionMaps = new ActionMapRunner(macros, programs, devices, events, clock);
  const presets = new ActivityPresets(programs, macros, actionMaps);
  return defineModule({
    name: 'programs',
    needs: ['program-catalog', 'home', 'devices'],
    programs,
    presets,
    actionMaps,
    operations: {
      programs: programOperations(programs, { audiences, reach }),
      automations: automationOperations(programs),
      activities: activityOperations(programs, presets, actionMaps, { audiences, reach }),
    },
    async start() {
      await programs.start();
    },
    async stop() {
      await programs.stop();
    },
  });
}
