import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { Logger } from 'pino';
import { archives } from './adapters/archives/archive-reader.js';
import { HttpBridgePeer } from './adapters/bridge/http-peer.js';
import { OllamaBackend } from './adapters/ollama/ollama-backend.js';
import { NetFreePortFinder } from './adapters/hap/free-port.js';
import { HttpHapClient } from './adapters/hap/hap-client.js';
import { HomebridgeRequirement } from './adapters/hap/homebridge-install.js';
import { NodeRuntimes } from './adapters/node-runtime/node-runtimes.js';
import { HttpPluginRegistry } from './adapters/hap/npm-registry.js';
import { AndroidTvIntegration } from './adapters/androidtv/androidtv-integration.js';
import { AndroidTvPairer } from './adapters/androidtv/cast-pairer.js';
import { CastIntegration } from './adapters/cast/cast-integration.js';
import { MediaDiscovery } from './adapters/discovery/media-discovery.js';
import { ItachClient } from './adapters/itach/itach-client.js';
import { BridgeIntegration } from './adapters/media-bridge/bridge-integration.js';
import { MpdPlayer } from './adapters/mpd/mpd-player.js';
import { RokuIntegration } from './adapters/roku/roku-integration.js';
import type { Config } from './config.js';
import { AccessGrants } from './domain/access/access-grants.js';
import { accessModule } from './domain/access/module.js';
import { accessoryHubModule } from './domain/accessory-hub/module.js';
import { aiModule } from './domain/ai/module.js';
import { activityModule } from './domain/activity/module.js';
import { auditModule } from './domain/audit/module.js';
import { backupsModule } from './domain/backups/module.js';
import { authModule } from './domain/auth/module.js';
import { debugModule } from './domain/debug/module.js';
import { devicesModule } from './domain/devices/module.js';
import { fleetModule } from './domain/fleet/module.js';
import { metricsModule } from './domain/metrics/module.js';
import { releasesModule } from './domain/releases/module.js';
import { driversModule } from './domain/drivers/module.js';
import { createDomainEventBus } from './domain/events.js';
import { graphModule } from './domain/graph/module.js';
import { homeModule } from './domain/home/module.js';
import { intentsModule } from './domain/intents/module.js';
import { irModule } from './domain/ir/module.js';
import { mediaModule } from './domain/media/module.js';
import { musicModule } from './domain/music/module.js';
import { playersModule } from './domain/players/module.js';
import { programCatalogModule, programsModule } from './domain/programs/module.js';
import { HUB_COMMANDS } from './domain/protocol/command-table.js';
import { protocolModule } from './domain/protocol/module.js';
import { remoteDirectory, remotesModule } from './domain/remotes/module.js';
import { scenesModule } from './domain/scenes/module.js';
import { stateModule } from './domain/state/module.js';
import { ClientCensus } from './domain/system/census.js';
import { systemModule } from './domain/system/module.js';
import type { Clock, Timers } from './platform/clock.js';
import { collectOperations, inDependencyOrder, type HubModule, type OperationNamesOf, type OperationsOf } from './platform/module.js';
import { firstAuthenticator, OperationRegistry } from './platform/operations.js';
import { Readiness } from './platform/readiness.js';
import { ClusterNode } from './cluster/cluster-node.js';
import { ClusterWrites } from './cluster/replication.js';
import { clusterModule } from './cluster/module.js';
import { replicatedDocuments, replicatedTokens } from './cluster/replicated.js';
import type { DocumentRepository } from './platform/document-repository.js';
import { openStorage } from './storage/factory.js';
import { storageModule } from './storage/module.js';
import { KyselyAlertRepository } from './storage/repositories/alerts.js';
import { KyselyActivityRepository } from './storage/repositories/activity.js';
import { KyselyAuditRepository } from './storage/repositories/audit.js';
import { KyselyInviteRepository, KyselyTokenRepository, KyselyUserRepository } from './storage/repositories/auth.js';
import { KyselyDeviceRepository, KyselyStateRepository } from './storage/repositories/devices.js';
import { KyselyDocumentRepository } from './storage/repositories/documents.js';
import { STATE_FOLDERS } from './storage/files.js';
import { KyselyDriverSettingsRepository } from './storage/repositories/driver-settings.js';
import { KyselyFieldHistoryRepository, KyselyFireStore, KyselyProgramRunRepository } from './storage/repositories/programs.js';
import { entityResolver } from './domain/graph/entities.js';
import { buildHomeGraph } from './domain/graph/graph.js';
import { VERSION } from './version.js';
import { NodeProcessRunner } from './adapters/process/node-process-runner.js';
import { NodeFileStore } from './adapters/files/node-file-store.js';
import { processesModule } from './adapters/process/module.js';
import { httpsModule } from './adapters/https/module.js';
import { secretsModule } from './adapters/secrets/module.js';
import { SECRET_KEY_FILE } from './platform/secret-box.js';
import { MqttLink } from './adapters/mqtt/runtime.js';
import { brokerUsers, mqttModule } from './domain/mqtt/module.js';
import { MatterLink } from './adapters/matter/runtime.js';
import { PackageRequirements, firstUsePins } from './adapters/requirements/package-requirements.js';
import { MatterBridgeControl, matterModule } from './domain/matter/module.js';
import { ScopedCaller } from './domain/auth/scoped-caller.js';
import { INTEGRATIONS } from './integrations/index.js';
import { hostIntegration } from './integrations/host.js';

/**
 * The domain core, assembled: one module per domain folder, built here from its typed
 * dependencies (this file is the composition root, the only place that picks adapters: SQLite
 * repositories, the iTach IR client), then started in dependency order and stopped in reverse.
 * Surfaces receive a Hub and adapt it; nothing in here knows about HTTP, Socket.IO or WebSockets.
 * `createHub` only wires; `start` does the slow work (migrations, loading), so the surfaces can
 * already answer /healthz and /readyz while it runs.
 */
/** What the process around the hub provides it. */
export interface HubHost {
  /** The newest log lines the process keeps (the admin panel's log page). */
  recentLogs?: () => readonly string[];
  /** Restarts the service in this process (stop, then start again): a restored backup takes effect so. */
  restart?: (reason: string) => void;
  /** The HTTP port the service listens on, once it does (for what runs beside it and calls back, like the Homebridge plugin). */
  httpPort?: () => number | undefined;
}

export function createHub(config: Config, clock: Clock, timers: Timers, log: Logger, host: HubHost = {}) {
  const events = createDomainEventBus(log);
  const component = (name: string) => log.child({ component: name });
  const storage = openStorage({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize });
  const { db } = storage;
  // On PostgreSQL the instance joins the cluster of every instance on the same database (of one, when alone).
  // Its replicated writes come first (the repositories below tell the other instances through them);
  // the cluster node is built around them once the devices it keeps in step exist (below).
  const clusterWrites = storage.pool && config.databaseUrl ? new ClusterWrites(db) : undefined;
  /** A document aggregate's repository; in a cluster, its writes reach the other instances' caches. */
  const documents = <T extends { id: string }>(kind: string): DocumentRepository<T> => {
    const over = (on: typeof db) => new KyselyDocumentRepository<T>(on, kind);
    return clusterWrites ? replicatedDocuments(over, db, kind, clusterWrites) : over(db);
  };
  // Empty until the modules are known below; each module is a part /readyz waits for.
  const readiness = new Readiness([]);

  const store = storageModule(storage, component('storage'));
  const fireStore = new KyselyFireStore(db);
  const auth = authModule({
    users: new KyselyUserRepository(db),
    tokens: clusterWrites ? replicatedTokens((on) => new KyselyTokenRepository(on), db, clusterWrites) : new KyselyTokenRepository(db),
    invites: new KyselyInviteRepository(db),
    registration: config.appRegistration,
    registrationLimits: { maxPerClient: config.appRegistrationLimit, windowMs: config.appRegistrationWindowSeconds * 1000 },
    settings: {
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      streamTokenTtlSeconds: config.streamTokenTtlSeconds,
      maxFailuresPerClient: config.loginMaxFailuresPerClient,
      maxFailuresPerClientUser: config.loginMaxFailuresPerClientUser,
      windowMs: config.loginFailureWindowSeconds * 1000,
    },
    admin: { username: config.adminUsername, password: config.adminPassword },
    events,
    clock,
    timers,
    log: component('auth'),
  });
  // Paired remotes' tokens authenticate too, after account tokens; the remotes module loads them.
  const remotesDirectory = remoteDirectory({ repository: documents('remote'), events, clock });
  const operations = new OperationRegistry(firstAuthenticator(auth.auth, remotesDirectory), component('operations'));
  // Who sees what: built here, before the device, home and graph operations that filter by it; the
  // access module (below, once the spaces and devices that grants name exist) loads and manages it.
  const accessGrants = new AccessGrants(documents('user_access'), clock);
  const itach = new ItachClient({ port: config.irExtenderPort, replyTimeoutMs: config.irReplyTimeoutMs, log: component('ir'), timers, clock });
  const ir = irModule(itach);
  const state = stateModule({
    repository: new KyselyStateRepository(db),
    telemetry: { maxEntriesPerDevice: config.telemetryMaxEntries, maxAgeMs: config.telemetryMaxAgeSeconds * 1000 },
    events,
    clock,
    timers,
    log: component('state'),
  });
  const devices = devicesModule({
    repository: new KyselyDeviceRepository(db),
    state: state.authority,
    ir: ir.transmitter,
    actionTimeoutMs: config.actionTimeoutMs,
    audiences: accessGrants,
    events,
    clock,
    timers,
    log: component('devices'),
    driverLog: component('drivers'),
  });
  // The cluster node, given the parts of the domain it keeps in step (they exist from here, nothing is
  // bound later); it gives the driver manager its route to the drivers linked to other instances.
  const cluster =
    clusterWrites && storage.pool && config.databaseUrl
      ? new ClusterNode({
          db,
          writes: clusterWrites,
          restoredAtStart: () => storage.restoredAtStart,
          ...(host.restart ? { restart: host.restart } : {}),
          pool: storage.pool,
          url: config.databaseUrl,
          events,
          clock,
          timers,
          log: component('cluster'),
          settings: { leaseMs: config.clusterLeaseMs, actionTimeoutMs: config.actionTimeoutMs, forwardMarginMs: config.clusterForwardMarginMs, version: VERSION },
          state: state.authority,
          registry: devices.registry,
          drivers: devices.drivers,
          auth: auth.auth,
        })
      : undefined;
  // Built after the devices, whose view its events carry; it still starts first (it needs no module).
  const protocol = protocolModule({ events, clock, operations, commands: HUB_COMMANDS, presentDevice: (device) => devices.devices.view(device) });
  const scenes = scenesModule({ devices: devices.devices, audiences: accessGrants, events, clock, log: component('scenes') });
  // Every child process of the hub (local drivers, Homebridge, npm and pip) goes through one runner,
  // which makes sure that none outlives the hub.
  const processRunner = new NodeProcessRunner({ clock, timers, log: component('processes'), recordFile: path.join(config.dataDir, 'run', 'children.json') });
  const processes = processesModule(processRunner, component('processes'));
  // The files the domain writes (driver packages, backups, releases, the accessory hub's folder) go through one store.
  const files = new NodeFileStore();
  const drivers = driversModule({
    driversDir: config.driversDir,
    processes: processRunner,
    manager: devices.drivers,
    registry: devices.registry,
    settings: new KyselyDriverSettingsRepository(db),
    clock,
    timers,
    log: component('local-drivers'),
    packages: {
      archives,
      files,
      maxBytes: config.driverUploadMaxBytes,
      install: { timeoutMs: config.driverInstallTimeoutMs, ...(config.driverNpmRegistry ? { npmRegistry: config.driverNpmRegistry } : {}) },
    },
    ...(cluster ? { placement: cluster.placement, linksElsewhere: (driverKey: string) => cluster.linksElsewhere(driverKey) } : {}),
    driverAuth: { mode: config.driverAuth, tokens: documents('driver_token') },
  });
  // GENERIC_IR: the iTach client knows whether the extenders it used are up or failing.
  drivers.builtIns.register({ key: 'GENERIC_IR', name: 'IR extenders (iTach)', status: () => itach.status() });
  const programCatalog = programCatalogModule({ repository: documents('program'), clock });
  const home = homeModule({
    repositories: {
      spaces: documents('space'),
      zones: documents('zone'),
      zoneGroups: documents('zone_group'),
      macros: documents('macro'),
      actionMaps: documents('action_map'),
      alerts: new KyselyAlertRepository(db),
      preferences: documents('preferences'),
      design: documents('design'),
      settings: documents('home_settings'),
    },
    devices: devices.devices,
    programs: programCatalog.catalog,
    alertRetention: { maxCount: config.alertsMaxCount, maxAgeMs: config.alertsMaxAgeDays * 86_400_000 },
    settingsDefaults: config.home,
    audiences: accessGrants,
    events,
    clock,
    timers,
  });
  const players = playersModule({
    repositories: { players: documents('player'), assignments: documents('player_assignment') },
    devices: devices.devices,
    spaces: home.spaces.spaces,
    users: auth.accounts,
    events,
    clock,
    log: component('players'),
  });
  const roku = new RokuIntegration({
    pollIntervalMs: config.media.rokuPollIntervalMs,
    requestTimeoutMs: config.media.rokuRequestTimeoutMs,
    clock,
    timers,
    log: component('roku'),
  });
  const media = mediaModule({
    repository: documents('media_endpoint'),
    devices: devices.devices,
    spaces: home.spaces.spaces,
    discovery: new MediaDiscovery({
      interfaceAddress: config.media.discoveryInterface,
      ssdp: config.media.ssdpAddress,
      mdns: config.media.mdnsAddress,
      describeRoku: (host, port) => roku.probe(host, port),
      clock,
      timers,
      log: component('media-discovery'),
    }),
    controllers: [
      roku,
      new AndroidTvIntegration({ connectTimeoutMs: config.media.castStepTimeoutMs, retryMs: 2000, maxRetryMs: 60_000, clock, timers, log: component('androidtv') }),
      new CastIntegration({ timeoutMs: config.media.castStepTimeoutMs, timers }),
      new BridgeIntegration({ timers }),
    ],
    integrations: drivers.builtIns,
    pairer: new AndroidTvPairer({ clock, timers }),
    settings: {
      discoveryTimeoutMs: config.media.discoveryTimeoutMs,
      maxDiscoveryTimeoutMs: 60_000,
      pairing: { stepTimeoutMs: config.media.castStepTimeoutMs, codeTimeoutMs: config.media.castCodeTimeoutMs, clientName: 'Home Control Service' },
    },
    audiences: accessGrants,
    events,
    clock,
    timers,
    log: component('media'),
  });
  const music = musicModule({
    player: new MpdPlayer({ ...config.media.mpd, retryMs: 1000, maxRetryMs: 30_000, clock, timers, log: component('mpd') }),
    targets: config.media.mpdTargets.map(({ id, host, port }) => ({
      id: `mpd:${id}`,
      name: id,
      player: new MpdPlayer({ host, port, timeoutMs: config.media.mpd.timeoutMs, retryMs: 1000, maxRetryMs: 30_000, clock, timers, log: component(`mpd:${id}`) }),
    })),
    media: media.media,
    audiences: accessGrants,
    events,
    log: component('music'),
    integrations: drivers.builtIns,
  });
  // MQTT (docs/mqtt.md): the embedded broker's users, and the link when MQTT_URL is set.
  const mqttUsers = brokerUsers(documents('mqtt_broker_user'), clock);
  // Commands from MQTT dashboards run as the `mqtt` caller (docs/mqtt.md).
  const mqttCaller = new ScopedCaller('mqtt', { registry: operations, auth: auth.auth, accounts: auth.accounts, clock });
  const mqttUrl = config.mqtt.url;
  // Built before the programs: automations' MQTT triggers listen through it (its hub id is read at start).
  const mqttLink =
    mqttUrl === undefined
      ? undefined
      : new MqttLink({
            config: { ...config.mqtt, url: mqttUrl },
            manager: devices.drivers,
            integrations: drivers.builtIns,
            devices: devices.devices,
            events,
            hubId: () => fleet.fleet.id,
            command: (deviceId, command, params) => mqttCaller.call('mqtt.exposed.command', { deviceId, command, params }, 'mqtt'),
            verifyUser: (username, password) => mqttUsers.verify(username, password),
            ...(cluster ? { placement: cluster.placement } : {}),
            actionTimeoutMs: config.actionTimeoutMs,
            clock,
            timers,
            log: component('mqtt'),
          });
  const programs = programsModule({
    catalog: programCatalog.catalog,
    runs: new KyselyProgramRunRepository(db),
    fires: fireStore,
    devices: devices.devices,
    zones: home.zones,
    macros: home.macros,
    alerts: home.alerts,
    scenes: scenes.scenes,
    place: home.settings,
    fieldHistory: new KyselyFieldHistoryRepository(db),
    pendingFor: documents('automation_pending_for'),
    entities: () =>
      entityResolver(() =>
        buildHomeGraph({ devices: devices.devices, spaces: home.spaces, zones: home.zones, macros: home.macros, programs: programCatalog.catalog, scenes: scenes.scenes, now: () => clock.now() }),
      ),
    ...(cluster ? { placement: cluster.placement } : {}),
    ...(mqttLink ? { mqtt: mqttLink.messages } : {}),
    limits: config.automations,
    audiences: accessGrants,
    reach: home.reach,
    events,
    clock,
    timers,
    log: component('programs'),
  });
  const graph = graphModule({
    devices: devices.devices,
    actions: devices.actions,
    drivers: devices.drivers,
    localDrivers: drivers.localDrivers,
    spaces: home.spaces,
    zones: home.zones,
    macros: home.macros,
    preferences: home.preferences,
    design: home.design,
    programs: programs.programs,
    scenes: scenes.scenes,
    media: media.media,
    readiness,
    audiences: accessGrants,
    clock,
  });
  const intents = intentsModule({
    devices: devices.devices,
    actions: devices.actions,
    spaces: home.spaces,
    zones: home.zones,
    macros: home.macros,
    programs: programs.programs,
    scenes: scenes.scenes,
    clock,
  });
  const remotes = remotesModule({
    directory: remotesDirectory,
    devices: devices.devices,
    spaces: home.spaces,
    preferences: home.preferences,
    actionMaps: programs.actionMaps,
    routines: home.reach,
    accounts: auth.accounts,
    audiences: accessGrants,
    events,
    clock,
    timers,
    pairingLimits: {
      maxOpenPerClient: config.remotePairing.maxOpenPerClient,
      maxOpen: config.remotePairing.maxOpen,
      maxWrongCodesPerRequest: config.remotePairing.maxWrongCodesPerRequest,
      maxWrongCodesPerClient: config.remotePairing.maxWrongCodesPerClient,
      wrongCodeWindowMs: config.remotePairing.wrongCodeWindowSeconds * 1000,
      lifetimeMs: config.remotePairing.lifetimeSeconds * 1000,
    },
  });
  const access = accessModule({ grants: accessGrants, users: auth.accounts, spaces: home.spaces, devices: devices.registry, events, log: component('access') });
  const census = new ClientCensus();
  const system = systemModule({
    version: VERSION,
    dataDir: config.dataDir,
    readiness,
    migrations: () => [...store.appliedMigrations],
    drivers: () => {
      const local = drivers.localDrivers.list();
      return { connected: devices.drivers.list().length, local: local.length, localRunning: local.filter((d) => d.status === 'running').length };
    },
    census,
    recentLogs: host.recentLogs ?? (() => []),
    database: { engine: storage.engine, location: storage.location },
    cluster: () => (cluster ? { instance: cluster.id, peers: cluster.peerIds(), leasesHeld: cluster.stats().leasesHeld } : null),
    clock,
  });
  const backups = backupsModule({
    dataDir: config.dataDir,
    driversDir: config.driversDir,
    stateFolders: STATE_FOLDERS,
    files,
    version: VERSION,
    database: storage.snapshots,
    archives,
    clock,
    timers,
    log: component('backups'),
    maxBytes: config.backupMaxBytes,
    ...(host.restart ? { restart: host.restart } : {}),
    ...(config.backupSchedule ? { schedule: { cron: config.backupSchedule, keep: config.backupKeep, keepDays: config.backupKeepDays } } : {}),
    // One instance of a cluster takes each scheduled backup: the slot is claimed like a timer's.
    fires: fireStore,
  });
  // The hub's secret key (DATA_DIR/secret.key, never in a backup): what must be kept to be used again, like the fleet link's token, is stored sealed with it.
  const secrets = secretsModule({ file: path.join(config.dataDir, SECRET_KEY_FILE), log: component('secrets'), timers });
  const https = httpsModule({ config: config.https, host: config.host, dataDir: config.dataDir, clock, timers, log: component('https'), settings: documents('https_settings') });
  const fleet = fleetModule({
    repositories: {
      hub: documents('fleet_hub'),
      link: documents('fleet_link'),
      statuses: documents('fleet_release_status'),
      registered: documents('fleet_registered_device'),
    },
    devices: devices.devices,
    auth: auth.auth,
    audiences: accessGrants,
    peer: new HttpBridgePeer({ requestTimeoutMs: config.bridgeRequestTimeoutMs, commandTimeoutMs: config.actionTimeoutMs + config.bridgeRequestTimeoutMs }),
    secrets: secrets.box,
    events,
    clock,
    timers,
    log: component('fleet'),
    settings: { pollIntervalMs: config.bridgePollIntervalMs, maxBackoffMs: config.bridgeMaxBackoffMs, version: VERSION },
  });
  const releases = releasesModule({
    repository: documents('integration_release'),
    packages: drivers.driverPackages,
    archives,
    dir: path.join(config.dataDir, 'releases'),
    packagesDir: path.join(config.dataDir, 'releases', '.packages'),
    files,
    clock,
    maxBytes: config.driverUploadMaxBytes,
  });
  // Homebridge is installed on first use: a home box without it (`npm ci --omit=dev`) installs it the first time something uses it.
  const homebridge =
    config.accessoryHub === 'off'
      ? undefined
      : new HomebridgeRequirement(
          new PackageRequirements({
            label: 'Homebridge',
            packages: firstUsePins(['homebridge']),
            dir: path.join(config.dataDir, 'requirements', 'accessory-hub'),
            registryUrl: config.npmRegistry,
            installTimeoutMs: config.driverInstallTimeoutMs,
            processes: processRunner,
            timers,
            log: component('accessory-hub'),
          }),
        );
  const accessoryHub = accessoryHubModule(
    homebridge
      ? {
          dataDir: config.dataDir,
          files,
          homebridge,
          hap: new HttpHapClient(),
          processes: processRunner,
          clock,
          timers,
          log: component('accessory-hub'),
          defaultPort: config.accessoryHubPort,
          freePorts: new NetFreePortFinder(),
          runtime: new NodeRuntimes({
            dir: path.join(config.dataDir, 'runtimes'),
            registryUrl: config.accessoryHubRegistry,
            ...(config.accessoryHubNode ? { configured: config.accessoryHubNode } : {}),
            installTimeoutMs: config.driverInstallTimeoutMs,
            processes: processRunner,
            timers,
            log: component('node-runtime'),
          }),
          plugins: {
            registry: new HttpPluginRegistry(),
            registryUrl: config.accessoryHubRegistry,
            catalog: documents('accessory_plugin_catalog'),
            homekit: documents('accessory_hub_homekit'),
            forced: config.accessoryHub === 'on',
            events,
            installTimeoutMs: config.driverInstallTimeoutMs,
          },
          imports: { store: documents('accessory_import'), manager: devices.drivers, pollMs: config.accessoryHubPollMs, integrations: drivers.builtIns, rooms: home.spaces },
          bridge: {
            pluginSource: fileURLToPath(new URL('../accessory-hub/plugin', import.meta.url)),
            devices: devices.devices,
            auth: auth.auth,
            accounts: auth.accounts,
            queue: documents('accessory_import_command'),
            hubUrl: () => {
              const port = host.httpPort?.();
              return port ? `http://127.0.0.1:${port}` : undefined;
            },
          },
          ...(config.accessoryHubBind.includes('all') ? {} : { bind: config.accessoryHubBind }),
        }
      : { off: true },
  );
  const ai = aiModule({
    ...(config.aiBackend === 'ollama' ? { backend: new OllamaBackend(config.aiOllamaUrl, config.aiModel, config.aiRecommendedModels, clock) } : {}),
    graphLoaded: () => readiness.waitingFor.length === 0 || !readiness.waitingFor.includes('graph'), events, clock, registry: operations });
  const metrics = metricsModule(auth.auth);
  const mqtt = mqttModule({
    mode: mqttUrl === undefined ? 'off' : mqttUrl === 'embedded' ? 'embedded' : 'external',
    runtime: mqttLink,
    users: mqttUsers,
    caller: mqttCaller,
    devices: devices.devices,
    baseTopic: config.mqtt.baseTopic,
  });
  // The Matter bridge (docs/matter.md): matter.js loads only when the bridge starts.
  const matterCaller = new ScopedCaller('matter', { registry: operations, auth: auth.auth, accounts: auth.accounts, clock });
  const matter = matterModule({
    control: new MatterBridgeControl({
      mode: config.matter.mode,
      runtime: new MatterLink({
        config: config.matter,
        storageDir: config.matter.storageDir,
        hubId: () => fleet.fleet.id,
        devices: devices.devices,
        events,
        command: (deviceId, command, params, from) => matterCaller.call('matter.bridged.command', { deviceId, command, params }, from),
        ...(cluster ? { placement: cluster.placement } : {}),
        ...(config.matter.process === 'child' ? { processes: processRunner } : {}),
        requirements: new PackageRequirements({
          label: 'Matter',
          packages: firstUsePins(['@matter/main', '@matter/nodejs']),
          dir: path.join(config.dataDir, 'requirements', 'matter'),
          registryUrl: config.npmRegistry,
          installTimeoutMs: config.driverInstallTimeoutMs,
          processes: processRunner,
          timers,
          log: component('matter'),
        }),
        clock,
        timers,
        notice: (message) => void home.alerts.submit({ type: 'matter_bridge_restarted', severity: 'warning', message, source: 'matter' }).catch(() => undefined),
        log: component('matter'),
      }),
      settings: documents('matter_settings'),
      clock,
    }),
    caller: matterCaller,
    devices: devices.devices,
  });
  // The integrations built from their folders (src/integrations): each one's settings, module and routes, from its declaration.
  const integrations = INTEGRATIONS.map((definition) =>
    hostIntegration(definition, {
      dataDir: config.dataDir,
      environment: config.integrations,
      devices: devices.devices,
      manager: devices.drivers,
      integrations: drivers.builtIns,
      documents,
      secrets: secrets.box,
      events,
      processes: processRunner,
      clock,
      timers,
      requirements: (d) =>
        new PackageRequirements({
          label: d.title,
          packages: firstUsePins(d.requirements),
          dir: path.join(config.dataDir, 'requirements', d.name),
          registryUrl: config.npmRegistry,
          installTimeoutMs: config.driverInstallTimeoutMs,
          processes: processRunner,
          timers,
          log: component(d.name),
        }),
      ...(cluster ? { leases: cluster.placement } : {}),
      log: component,
    }),
  );
  const debug = debugModule({ registry: devices.registry, state: state.authority, drivers: devices.drivers, config: { ...config } });
  const audit = auditModule({ repository: new KyselyAuditRepository(db), operations, events, clock, log: component('audit') });
  const activity = activityModule({ repository: new KyselyActivityRepository(db), operations, clock, timers, log: component('activity'), names: (id) => devices.registry.find(id)?.name });

  // The hub's modules, in start order (the sort only checks it, and would fix an order a module's
  // needs forbid). `hub.ops` and the operation names are derived from this one list.
  const listed = [store, processes, secrets, ...(cluster ? [clusterModule(cluster)] : []), protocol, auth, access, ir, state, devices, scenes, drivers, programCatalog, home, players, media, music, programs, remotes, graph, intents, system, audit, activity, backups, debug, fleet, releases, accessoryHub, ai, metrics, mqtt, matter, https] as const;
  const modules: HubModule[] = inDependencyOrder([...listed, ...integrations.map((i) => i.module)]);
  for (const module of modules) {
    readiness.markNotReady(module.name);
    for (const group of Object.values(module.operations)) operations.register(...Object.values(group));
  }
  // Each integration's groups (its own and `<name>Settings`) are offered too; they are typed by their folder, not here.
  const ops = collectOperations(modules) as OperationsOf<typeof listed>;
  // The hub protocol's commands name operations: a misspelt one fails the type check here.
  HUB_COMMANDS satisfies Record<string, OperationNamesOf<typeof listed>>;

  return {
    config,
    clock,
    /** The injected timers: every delay of the hub and its surfaces waits on them. */
    timers,
    log,
    events,
    storage,
    /** This instance's part in a cluster (PostgreSQL storage), else undefined. */
    cluster,
    readiness,
    /** The modules in start order. */
    modules: modules as readonly HubModule[],
    auth: auth.auth,
    access: accessGrants,
    devices: devices.devices,
    drivers: devices.drivers,
    localDrivers: drivers.localDrivers,
    driverPackages: drivers.driverPackages,
    /** Who may register on the driver WebSocket (DRIVER_AUTH and the driver tokens). */
    driverAdmission: drivers.admission,
    state: state.authority,
    programs: programs.programs,
    /** Numbered device state changes and hub events, for the real-time surfaces. */
    feed: protocol.feed,
    home: { spaces: home.spaces, zones: home.zones, macros: home.macros, alerts: home.alerts, preferences: home.preferences, design: home.design },
    scenes: scenes.scenes,
    intents: intents.intents,
    media: media.media,
    mediaController: music.controller,
    fleet: fleet.fleet,
    /** The accessory hub's plugin bridge (its stream route follows devices through it), when Homebridge is installed. */
    accessoryBridge: accessoryHub.bridge,
    /** The integrations built from their folders, with their routes and admin pages (the surfaces bind them). */
    integrations,
    /** HTTPS beside HTTP: app.ts hands it the HTTP server once the hub is ready. */
    https: https.https,
    operations,
    ops,
    /** Connected clients by surface; the surfaces register their counts. */
    census,
    /** Migration names applied to the database, once started. */
    get appliedMigrations(): readonly string[] {
      return store.appliedMigrations;
    },
    async start() {
      for (const module of modules) {
        await module.start?.();
        readiness.markReady(module.name);
      }
      // Loaded: what the other instances said meanwhile applies now, and they say what they hold.
      cluster?.open();
    },
    /**
     * Stops every module in reverse start order, also after a failed start (what they hold exists
     * from construction); one that fails to stop is logged and does not keep the others open.
     */
    async stop() {
      for (const module of [...modules].reverse()) {
        try {
          await module.stop?.();
          log.debug({ module: module.name }, 'module stopped');
        } catch (err) {
          log.error({ err, module: module.name }, 'module did not stop cleanly');
        }
      }
      events.removeAllListeners();
    },
  };
}

export type Hub = ReturnType<typeof createHub>;
