import type { Clock, Timers } from '../../platform/clock.js';
import type { AudienceResolver } from '../access/audience.js';
import { defineModule } from '../../platform/module.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import { AlertService, type AlertRetention } from './alerts.js';
import { DocumentCollection } from '../../platform/document-collection.js';
import { homeErrors } from './errors.js';
import { MacroService } from './macros.js';
import type { ActionMap, AlertRepository, HomePreferences, Macro, Space, Zone, ZoneGroup } from './model.js';
import { homeOperations } from './operations.js';
import type { ProgramDirectory } from './ports.js';
import { DesignService, PreferencesService } from './preferences.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { RoutineReach } from './routine-reach.js';
import { HomeSettingsService, type HomeSettings, type HomeSettingsDefaults } from './settings.js';
import { SpaceService } from './spaces.js';
import { ZoneService } from './zones.js';

export interface HomeRepositories {
  spaces: DocumentRepository<Space>;
  zones: DocumentRepository<Zone>;
  zoneGroups: DocumentRepository<ZoneGroup>;
  macros: DocumentRepository<Macro>;
  actionMaps: DocumentRepository<ActionMap>;
  alerts: AlertRepository;
  preferences: DocumentRepository<HomePreferences & { id: string }>;
  /** The selected design profile. */
  design: DocumentRepository<{ id: string; profileId: string; selectedAt: number }>;
  settings: DocumentRepository<HomeSettings & { id: string }>;
}

export interface HomeModuleDeps {
  repositories: HomeRepositories;
  devices: DeviceService;
  /** What home reads of programs (the program catalog, a module below this one). */
  programs: ProgramDirectory;
  alertRetention: AlertRetention;
  /** What each caller may see: space, zone and action map reads answer only what is theirs. */
  audiences: AudienceResolver;
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  /** The home location and time zone given at start (HOME_LATITUDE, HOME_LONGITUDE, HOME_TIMEZONE). */
  settingsDefaults?: HomeSettingsDefaults;
}

/**
 * The home model: spaces and their remote sources, zones and zone groups, macros and action
 * maps, alerts, preferences and design profiles, loaded into memory at start.
 */
export function homeModule({ repositories: repos, devices, programs, alertRetention, audiences, events, clock, timers, settingsDefaults }: HomeModuleDeps) {
  const collections = {
    spaces: new DocumentCollection(repos.spaces, clock, homeErrors.SPACE_NOT_FOUND),
    zones: new DocumentCollection(repos.zones, clock, homeErrors.ZONE_NOT_FOUND),
    zoneGroups: new DocumentCollection(repos.zoneGroups, clock, homeErrors.ZONE_GROUP_NOT_FOUND),
    macros: new DocumentCollection(repos.macros, clock, homeErrors.MACRO_NOT_FOUND),
    actionMaps: new DocumentCollection(repos.actionMaps, clock, homeErrors.ACTION_MAP_NOT_FOUND),
  };
  const macros = new MacroService(collections.macros, collections.actionMaps, devices, events, clock, timers, programs, (id) => !!collections.spaces.find(id));
  const zones = new ZoneService(collections.zones, collections.zoneGroups, devices, programs, events, clock);
  const alerts = new AlertService(repos.alerts, events, clock, alertRetention);
  const preferences = new PreferencesService(repos.preferences, devices.registry, events, clock);
  const design = new DesignService(repos.design, events, clock);
  const settings = new HomeSettingsService(repos.settings, events, clock, settingsDefaults);
  // Action maps and the default space refer to spaces: they let go of a removed one.
  const spaces = new SpaceService(collections.spaces, devices, events, clock, [macros, preferences]);
  const reach = new RoutineReach(programs, collections.macros, collections.zones, devices.registry);
  const services = { spaces, zones, macros, alerts, preferences, design, settings };
  return defineModule({
    name: 'home',
    needs: ['devices', 'program-catalog'],
    ...services,
    reach,
    operations: { home: homeOperations(services, { audiences, devices: devices.registry, views: devices, reach }) },
    async start() {
      for (const collection of Object.values(collections)) await collection.load();
      await preferences.load();
      await design.load();
      await settings.load();
      await alerts.prune();
    },
  });
}
