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
import { ProgramScheduler, type FireStore } from './scheduler.js';
import { parse as parseYaml } from 'yaml';
import { checkYamlNesting } from './yaml-guard.js';
import type { AlertService } from '../home/alerts.js';
import type { SceneCatalog } from '../scenes/catalog.js';
import type { DriverPlacement } from '../drivers/local/driver-process.js';
import { AutomationEngine, type AutomationLimits } from '../automations/engine.js';
import { DeviceTriggers, type MqttMessages, type PendingForRepository } from '../automations/device-triggers.js';
import { FieldTracker, type FieldHistoryRepository } from '../automations/fields.js';
import { AutomationConditions, type HomePlace } from '../automations/waits.js';
import { importHomeAssistantAutomation, looksLikeHomeAssistant, type EntityResolver } from './home-assistant.js';

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
  alerts: AlertService;
  scenes: SceneCatalog;
  /** Where the home is and its time zone (sun triggers, time windows). */
  place: HomePlace;
  /** The automations' watched fields and counting `for`s, as stored. */
  fieldHistory: FieldHistoryRepository;
  pendingFor: PendingForRepository;
  /** Entity ids as LIST_ENTITIES names them, for Home Assistant automations saved as YAML (one resolver per import). */
  entities?: () => EntityResolver;
  /** The MQTT link's messages, for MQTT triggers (absent without MQTT). */
  mqtt?: MqttMessages;
  /** In a cluster: the lease that decides which instance listens for the triggers. */
  placement?: DriverPlacement;
  limits?: Partial<AutomationLimits>;
  /** Who sees what: a user lists and runs only the routines within their grants (the home's reach). */
  audiences: AudienceResolver;
  reach: RoutineReach;
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
}

/**
 * Programs and automations: saving, running with a mode, traces, the automation engine (its
 * triggers armed at start, on the lease holder in a cluster), webhooks, and the activity presets,
 * zone programs and action-map runs the home offers.
 */
export function programsModule(deps: ProgramsModuleDeps) {
  const { catalog, runs, fires, devices, zones, macros, alerts, scenes, place, audiences, reach, events, clock, timers, log } = deps;
  const tracker = new FieldTracker(deps.fieldHistory, devices, clock, timers, log);
  const triggers = new DeviceTriggers({ devices, events, tracker, pending: deps.pendingFor, ...(deps.mqtt ? { mqtt: deps.mqtt } : {}), clock, timers, log });
  const automation = new AutomationConditions(devices, tracker, triggers, place, clock, timers);
  // The scheduler fires into the engine, which is built just below from the same parts: the
  // closure reads `engine` only when a time or sun trigger comes due, after start.
  const scheduler = new ProgramScheduler({
    clock,
    timers,
    store: fires,
    log,
    defaultTimezone: () => place.timezone(),
    location: () => place.location(),
    fire: (key, scheduledAt) => engine.scheduleFired(key, scheduledAt),
  });
  const entities = deps.entities;
  const programs = new ProgramService({
    programs: catalog.records,
    runs,
    scheduler,
    devices,
    zones,
    macros,
    alerts,
    scenes,
    automation,
    ...(entities ? { importYaml: (text: string) => homeAssistantYaml(text, entities()) } : {}),
    ...(deps.placement ? { clustered: true } : {}),
    events,
    clock,
    timers,
    log,
  });
  const engine = new AutomationEngine({
    programs, devices, triggers, tracker, scheduler, alerts, place, conditions: automation, events, clock, timers, log,
    ...(deps.placement ? { placement: deps.placement } : {}),
    ...(deps.limits ? { limits: deps.limits } : {}),
  });
  // A new home location or time zone moves the sun and the clock: the triggers are armed again.
  const actionMaps = new ActionMapRunner(macros, programs, devices, events, clock);
  const presets = new ActivityPresets(programs, macros, actionMaps);
  return defineModule({
    name: 'programs',
    needs: ['program-catalog', 'home', 'devices', 'scenes'],
    programs,
    engine,
    presets,
    actionMaps,
    operations: {
      programs: programOperations(programs, { audiences, reach }),
      automations: automationOperations(programs, engine),
      // Activity presets and zone programs belong to the home's group (hub.ops.home), beside the home module's own.
      home: activityOperations(programs, presets, actionMaps, { audiences, reach }),
    },
    async start() {
      await programs.start();
      await engine.start();
      events.on(engine, 'home.settings_updated', () => void engine.rearmAll());
    },
    async stop() {
      events.removeOwner(engine);
      await engine.stop();
      await programs.stop();
    },
  });
}

/** A YAML document that reads as a Home Assistant automation, as a save body; undefined for the hub's own format. */
function homeAssistantYaml(text: string, entities: EntityResolver): Record<string, unknown> | undefined {
  checkYamlNesting(text);
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 50 });
  } catch {
    return undefined; // the hub's compiler reports the syntax error with its position
  }
  if (!looksLikeHomeAssistant(doc)) return undefined;
  return importHomeAssistantAutomation(text, entities) as unknown as Record<string, unknown>;
}
