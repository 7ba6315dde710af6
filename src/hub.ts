import type { Logger } from 'pino';
import type { Config } from './config.js';
import { AuthService } from './domain/auth/auth-service.js';
import { authOperations, type AuthOperations } from './domain/auth/operations.js';
import { DeviceRegistry } from './domain/devices/device-registry.js';
import { DeviceService } from './domain/devices/device-service.js';
import { deviceOperations, type DeviceOperations } from './domain/devices/operations.js';
import { DriverManager } from './domain/drivers/driver-manager.js';
import { LocalDriverSupervisor } from './domain/drivers/local/supervisor.js';
import { driverOperations, integrationOperations, type DriverOperations } from './domain/drivers/operations.js';
import { createDomainEventBus, type DomainEventBus } from './domain/events.js';
import { DeviceActions } from './domain/devices/actions.js';
import { buildHomeGraph } from './domain/graph/graph.js';
import { graphOperations } from './domain/graph/operations.js';
import { SceneCatalog } from './domain/scenes/catalog.js';
import { IntentEngine } from './domain/intents/engine.js';
import { intentOperations } from './domain/intents/operations.js';
import { ChangeFeed } from './domain/protocol/feed.js';
import { AlertService } from './domain/home/alerts.js';
import { bootstrapOperation } from './domain/home/bootstrap.js';
import { DocumentCollection } from './domain/home/collection.js';
import { MacroService } from './domain/home/macros.js';
import type { ActionMap, Macro, Space, Zone, ZoneGroup } from './domain/home/model.js';
import { homeOperations, type HomeOperations } from './domain/home/operations.js';
import { DesignService, PreferencesService } from './domain/home/preferences.js';
import { ActivityPresets } from './domain/home/presets.js';
import { SpaceService } from './domain/home/spaces.js';
import { ZoneService } from './domain/home/zones.js';
import { ItachClient } from './adapters/itach/itach-client.js';
import type { Program } from './domain/programs/model.js';
import { automationOperations, programOperations, type ProgramOperations } from './domain/programs/operations.js';
import { protocolOperations } from './domain/protocol/commands.js';
import { ProgramService } from './domain/programs/program-service.js';
import { errorInfo } from './domain/devices/command-results.js';
import { stateOperations } from './domain/state/operations.js';
import { systemOperations } from './domain/system/operations.js';
import { VERSION } from './version.js';
import { StateAuthority } from './domain/state/state-authority.js';
import { every, type Clock, type Timers } from './platform/clock.js';
import { OperationRegistry } from './platform/operations.js';
import { Readiness } from './platform/readiness.js';
import { openStorage, type Storage } from './storage/database.js';
import { KyselyTokenRepository, KyselyUserRepository } from './storage/repositories/auth.js';
import { KyselyDeviceRepository, KyselyStateRepository } from './storage/repositories/devices.js';
import { KyselyAlertRepository } from './storage/repositories/alerts.js';
import { KyselyDocumentRepository } from './storage/repositories/documents.js';
import { KyselyDriverSettingsRepository } from './storage/repositories/driver-settings.js';
import { KyselyFireStore, KyselyProgramRunRepository } from './storage/repositories/programs.js';

/**
 * The domain core, assembled: storage, services, their operations and the event bus. Surfaces
 * receive a Hub and adapt it; nothing in here knows about HTTP, Socket.IO or WebSockets.
 * `createHub` only wires; `start` does the slow work (migrations, loading), so the surfaces can
 * already answer /healthz and /readyz while it runs.
 */
export interface Hub {
  config: Config;
  clock: Clock;
  log: Logger;
  events: DomainEventBus;
  storage: Storage;
  readiness: Readiness;
  auth: AuthService;
  devices: DeviceService;
  drivers: DriverManager;
  localDrivers: LocalDriverSupervisor;
  state: StateAuthority;
  programs: ProgramService;
  /** Numbered device state changes and hub events, for the real-time surfaces. */
  feed: ChangeFeed;
  home: { spaces: SpaceService; zones: ZoneService; macros: MacroService; presets: ActivityPresets; alerts: AlertService; preferences: PreferencesService; design: DesignService };
  operations: OperationRegistry;
  ops: {
    auth: AuthOperations;
    devices: DeviceOperations;
    state: ReturnType<typeof stateOperations>;
    drivers: DriverOperations;
    home: HomeOperations;
    programs: ProgramOperations;
    bootstrap: { bootstrap: ReturnType<typeof bootstrapOperation> };
    automations: ReturnType<typeof automationOperations>;
    integrations: ReturnType<typeof integrationOperations>;
    protocol: ReturnType<typeof protocolOperations>;
    graph: ReturnType<typeof graphOperations>;
    intents: ReturnType<typeof intentOperations>;
    system: ReturnType<typeof systemOperations>;
  };
  scenes: SceneCatalog;
  intents: IntentEngine;
  /** Migration names applied to the database, once started. */
  appliedMigrations: string[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

const TOKEN_PURGE_INTERVAL_MS = 10 * 60 * 1000;
const TELEMETRY_PRUNE_INTERVAL_MS = 60 * 1000;

export function createHub(config: Config, clock: Clock, timers: Timers, log: Logger): Hub {
  const readiness = new Readiness(['storage', 'auth', 'devices', 'home', 'drivers']);
  const events = createDomainEventBus(log);
  const feed = new ChangeFeed(events, clock);
  feed.start();
  const storage = openStorage(config.dataDir);
  const auth = new AuthService(
    new KyselyUserRepository(storage.db),
    new KyselyTokenRepository(storage.db),
    clock,
    {
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      streamTokenTtlSeconds: config.streamTokenTtlSeconds,
      maxFailuresPerClient: config.loginMaxFailuresPerClient,
      maxFailuresPerClientUser: config.loginMaxFailuresPerClientUser,
      windowMs: config.loginFailureWindowSeconds * 1000,
    },
    events,
  );
  const registry = new DeviceRegistry(new KyselyDeviceRepository(storage.db), clock, events);
  const state = new StateAuthority(new KyselyStateRepository(storage.db), clock, events, log.child({ component: 'state' }), {
    maxEntriesPerDevice: config.telemetryMaxEntries,
    maxAgeMs: config.telemetryMaxAgeSeconds * 1000,
  }, timers);
  const drivers = new DriverManager(registry, state, events, clock, log.child({ component: 'drivers' }), config.actionTimeoutMs, timers);
  const ir = new ItachClient({ port: config.irExtenderPort, replyTimeoutMs: config.irReplyTimeoutMs, log: log.child({ component: 'ir' }), timers });
  const devices = new DeviceService(registry, state, drivers, ir, events, clock);
  const localDrivers = new LocalDriverSupervisor({
    driversDir: config.driversDir,
    manager: drivers,
    settings: new KyselyDriverSettingsRepository(storage.db),
    clock,
    timers,
    log: log.child({ component: 'local-drivers' }),
  });

  const docs = <T extends { id: string; createdAt: number; updatedAt: number }>(kind: string, noun: string) =>
    new DocumentCollection<T>(new KyselyDocumentRepository<T>(storage.db, kind), clock, noun);
  const collections = {
    spaces: docs<Space>('space', 'space'),
    zones: docs<Zone>('zone', 'zone'),
    zoneGroups: docs<ZoneGroup>('zone_group', 'zone group'),
    macros: docs<Macro>('macro', 'macro'),
    actionMaps: docs<ActionMap>('action_map', 'action map'),
    programs: docs<Program>('program', 'program'),
  };
  const programs = new ProgramService(
    collections.programs,
    new KyselyProgramRunRepository(storage.db),
    new KyselyFireStore(storage.db),
    devices,
    events,
    clock,
    timers,
    log.child({ component: 'programs' }),
  );
  const spaces = new SpaceService(collections.spaces, devices, events, clock);
  const zones = new ZoneService(collections.zones, collections.zoneGroups, devices, () => programs, events, clock);
  const macros = new MacroService(collections.macros, collections.actionMaps, devices, events, clock, timers, () => programs, (id) => !!collections.spaces.find(id));
  programs.connect(zones, macros);
  spaces.addDependent(macros);
  const home = {
    spaces,
    zones,
    macros,
    presets: new ActivityPresets(() => programs, macros),
    alerts: new AlertService(new KyselyAlertRepository(storage.db), events, clock, {
      maxCount: config.alertsMaxCount,
      maxAgeMs: config.alertsMaxAgeDays * 86_400_000,
    }),
    preferences: new PreferencesService(new KyselyDocumentRepository(storage.db, 'preferences'), registry, events, clock),
    design: new DesignService(new KyselyDocumentRepository(storage.db, 'design'), events, clock),
  };
  spaces.addDependent(home.preferences);

  const coreOps = {
    auth: authOperations(auth),
    devices: deviceOperations(devices),
    state: stateOperations(devices, () => clock.now()),
    drivers: driverOperations(drivers, localDrivers),
    home: homeOperations(home),
    programs: programOperations(programs),
    bootstrap: { bootstrap: bootstrapOperation({ devices, spaces, zones, programs, preferences: home.preferences, design: home.design, now: () => clock.now() }) },
  };
  const scenes = new SceneCatalog(devices, clock);
  const unwatchScenes = scenes.watch(events);
  const deviceActions = new DeviceActions(devices);
  const graphDeps = { devices, spaces, zones, macros, programs, scenes, now: () => clock.now() };
  const intents = new IntentEngine({
    graph: () => buildHomeGraph(graphDeps),
    perform: (deviceId, action) => deviceActions.perform(deviceId, action),
    runProgram: async (programId) => {
      try {
        const run = await programs.run(programId, { trigger: 'intent' });
        return { ok: true, runId: run.id };
      } catch (err) {
        return { ok: false, error: errorInfo(err) };
      }
    },
    runScene: async (sceneId) => {
      try {
        await scenes.run(sceneId);
        return { ok: true };
      } catch (err) {
        return { ok: false, error: errorInfo(err) };
      }
    },
    runMacro: async (macroId) => {
      try {
        const result = await macros.run(macroId);
        return result.ok ? { ok: true } : { ok: false, error: { code: 'MACRO_FAILED', message: 'Some steps of the macro failed.' } };
      } catch (err) {
        return { ok: false, error: errorInfo(err) };
      }
    },
    setZoneVolume: async (zoneId, volume) => {
      const { results } = await zones.setVolume(zoneId, { volume });
      return { ok: results.every((r) => r.ok), results: results.map((r) => ({ deviceId: r.deviceId, ok: r.ok })) };
    },
  });
  const operations = new OperationRegistry(auth, log.child({ component: 'operations' }));
  const countDevices = (driverKey: string) => registry.list().filter((d) => d.driverKey === driverKey).length;
  const ops = {
    ...coreOps,
    automations: automationOperations(programs),
    integrations: integrationOperations(drivers, localDrivers, countDevices),
    protocol: protocolOperations(operations),
    graph: graphOperations({ ...graphDeps, actions: deviceActions, drivers, localDrivers, readiness }),
    intents: intentOperations(intents),
    system: systemOperations({ version: VERSION, dataDir: config.dataDir, readiness, migrations: () => hub.appliedMigrations }),
  };
  for (const group of Object.values(ops)) operations.register(...Object.values(group));

  const periodic: Array<() => void> = [];
  const repeat = (ms: number, fn: () => Promise<unknown> | void) => {
    periodic.push(every(timers, ms, fn, (err: unknown) => log.error({ err }, 'periodic task failed')));
  };

  const hub: Hub = {
    config,
    clock,
    log,
    events,
    storage,
    readiness,
    auth,
    devices,
    drivers,
    localDrivers,
    state,
    programs,
    feed,
    home,
    scenes,
    intents,
    operations,
    ops,
    appliedMigrations: [],
    async start() {
      hub.appliedMigrations = await storage.migrate();
      readiness.markReady('storage');
      log.info({ dataDir: config.dataDir, migrations: hub.appliedMigrations.length }, 'storage ready');

      const admin = await auth.ensureAdmin(config.adminUsername, config.adminPassword);
      if (admin.generatedPassword) {
        // Shown once, at creation: only the hash is stored, so it cannot be shown again.
        log.warn(`created admin account "${config.adminUsername}" with generated password ${admin.generatedPassword} (shown once; set ADMIN_PASSWORD to choose one)`);
      } else if (admin.created) {
        log.info({ username: config.adminUsername }, 'created admin account');
      }
      await auth.start();
      repeat(TOKEN_PURGE_INTERVAL_MS, () => auth.purgeExpired());
      readiness.markReady('auth');

      await registry.load();
      await state.load();
      state.start();
      repeat(TELEMETRY_PRUNE_INTERVAL_MS, () => state.telemetry.prune(clock.now()));
      readiness.markReady('devices');
      log.info({ devices: registry.size }, 'devices loaded');

      for (const collection of Object.values(collections)) await collection.load();
      await home.preferences.load();
      await home.design.load();
      await home.alerts.prune();
      await programs.start();
      readiness.markReady('home');

      await localDrivers.start();
      readiness.markReady('drivers');
      log.info({ local: localDrivers.list().length, driversDir: config.driversDir }, 'local drivers started');
    },
    async stop() {
      for (const stopTask of periodic) stopTask();
      unwatchScenes();
      await programs.stop();
      await localDrivers.stop();
      drivers.stop();
      await ir.close();
      await state.stop();
      feed.stop();
      events.removeAllListeners();
      await storage.close();
    },
  };
  return hub;
}
