import path from 'node:path';
import { DocumentCollection } from '../../platform/document-collection.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { defineModule } from '../../platform/module.js';
import type { DomainEventBus } from '../events.js';
import { accessoryHubErrors } from './errors.js';
import { HomebridgeSupervisor, type AccessoryHubDeps } from './homebridge.js';
import { attachBuiltInDriver, type BuiltInIntegrations } from '../drivers/builtin.js';
import type { DriverManager } from '../drivers/driver-manager.js';
import { AccessoryImports, type ImportedAccessory } from './imports.js';
import { accessoryHubOperations, importOperations, pluginBridgeOperations, pluginOperations, type ImportRooms } from './operations.js';
import { BRIDGE_PLATFORM, PluginBridge, type ImportCommand } from './plugin-bridge.js';
import type { AuthService } from '../auth/auth-service.js';
import type { UserView } from '../auth/model.js';
import type { DeviceService } from '../devices/device-service.js';
import { PluginManager, type CatalogEntry } from './plugins.js';
import { HomeKitExposure, type HomeKitSettings } from './homekit.js';
import type { PluginRegistry } from './ports.js';

export interface ImportSettings {
  store: DocumentRepository<ImportedAccessory>;
  manager: DriverManager;
  pollMs: number;
  /** Where the imports are listed with their status (`integrations.list`). */
  integrations?: BuiltInIntegrations;
  /** The home's rooms, so that an import can put its devices in one (`accessory_hub.import {spaceId}`). */
  rooms?: ImportRooms;
}

export interface BridgeSettings {
  pluginSource: string;
  devices: DeviceService;
  auth: AuthService;
  accounts: { list(): Promise<UserView[]> };
  queue: DocumentRepository<ImportCommand>;
  hubUrl: () => string | undefined;
}

export interface PluginSettings {
  /** The admin's Apple Home choice (HomeKitSettings). */
  homekit: DocumentRepository<HomeKitSettings>;
  /** ACCESSORY_HUB=on: Homebridge runs even when nothing uses it. */
  forced: boolean;
  registry: PluginRegistry;
  registryUrl: string;
  catalog: DocumentRepository<CatalogEntry>;
  events: DomainEventBus;
  installTimeoutMs: number;
}

/**
 * The accessory hub (docs/accessory-hub.md): a managed Homebridge, run only while something uses
 * it: a plugin of the household's, Apple Home showing the hub's devices, or ACCESSORY_HUB=on. Off
 * (`install` absent), its status says so and its other operations answer 503. Started in the
 * background: Homebridge's own start takes seconds and never holds up the hub's.
 */
export function accessoryHubModule(deps: (Omit<AccessoryHubDeps, 'dir'> & { dataDir: string; plugins: PluginSettings; imports: ImportSettings; bridge: BridgeSettings }) | { off: true }) {
  const dir = 'off' in deps ? '' : path.join(deps.dataDir, 'accessory-hub');
  const homekit =
    'off' in deps
      ? undefined
      : new HomeKitExposure({ settings: deps.plugins.homekit, dir, files: deps.files, clock: deps.clock, knows: (id) => deps.bridge.devices.registry.find(id) !== undefined });
  // The plugin bridge's stream shows and hides devices to match.
  if (homekit && !('off' in deps)) homekit.onChange(() => deps.plugins.events.emit('accessory_hub.homekit_changed', { exposed: homekit.exposed, at: deps.clock.now() }));
  const homebridge = 'off' in deps ? undefined : new HomebridgeSupervisor({ ...deps, dir, forced: deps.plugins.forced, homekitShown: () => homekit?.exposed ?? false });
  // The plugin bridge reads the other plugins' accessories over HAP: its block follows the bridge's port and code.
  homebridge?.followConfig((config) => {
    const bridge = config.bridge as Record<string, unknown>;
    for (const block of (config.platforms as Array<Record<string, unknown>> | undefined) ?? []) {
      if (block.platform !== BRIDGE_PLATFORM) continue;
      block.hapPort = bridge.port;
      block.hapPin = bridge.pin;
    }
  });
  const plugins =
    'off' in deps || !homebridge
      ? undefined
      : new PluginManager({
          dir,
          files: deps.files,
          homebridge,
          registry: deps.plugins.registry,
          registryUrl: deps.plugins.registryUrl,
          catalog: new DocumentCollection(deps.plugins.catalog, deps.clock, ({ id }) => accessoryHubErrors.PLUGIN_NOT_FOUND({ name: id })),
          events: deps.plugins.events,
          clock: deps.clock,
          timers: deps.timers,
          processes: deps.processes,
          installTimeoutMs: deps.plugins.installTimeoutMs,
          log: deps.log,
        });
  const imports =
    'off' in deps || !homebridge
      ? undefined
      : new AccessoryImports(
          new DocumentCollection(deps.imports.store, deps.clock, ({ id }) => accessoryHubErrors.ACCESSORY_NOT_FOUND({ accessoryId: id })),
          homebridge,
          deps.hap,
          deps.timers,
          deps.imports.pollMs,
          { findByDriver: (driverKey, driverDeviceId) => deps.bridge.devices.registry.findByDriver(driverKey, driverDeviceId), events: deps.plugins.events },
        );
  const bridge =
    'off' in deps || !homebridge
      ? undefined
      : new PluginBridge({
          dir,
          files: deps.files,
          homebridge,
          ...deps.bridge,
          ...(homekit ? { homekit } : {}),
          queue: new DocumentCollection(deps.bridge.queue, deps.clock, ({ id }) => accessoryHubErrors.IMPORT_COMMAND_NOT_FOUND({ id })),
          clock: deps.clock,
          log: deps.log,
        });
  let detach: (() => void) | undefined;
  return defineModule({
    name: 'accessory-hub',
    needs: ['storage', 'devices', 'auth', 'processes', 'home'],
    homebridge,
    homekit,
    bridge,
    operations: { accessoryHub: { ...accessoryHubOperations(homebridge, homekit, bridge), ...pluginOperations(plugins), ...importOperations(imports, bridge, 'off' in deps ? undefined : deps.imports.rooms), ...pluginBridgeOperations(bridge) } },
    async start() {
      await plugins?.start();
      await homekit?.load();
      // The plugin bridge goes in before each launch: Homebridge reads plugins and config only then.
      await homebridge?.prepare();
      if (bridge) homebridge?.beforeLaunch(() => bridge.prepare());
      await homebridge?.start();
      if (imports && !('off' in deps)) {
        await imports.load();
        const hub = homebridge;
        detach = attachBuiltInDriver(deps.imports.manager, imports, deps.log, {
          ...(deps.imports.integrations ? { integrations: deps.imports.integrations } : {}),
          name: 'Homebridge imports',
          // Its devices' presence, and whether the Homebridge they come through runs at all.
          async status(own) {
            if (!hub || own.status === 'off') return own;
            const { state, lastError } = await hub.status();
            if (state === 'failed' || state === 'backoff') return { ...own, status: 'failed', lastError: lastError ?? `Homebridge is ${state}` };
            return own;
          },
        });
      }
    },
    async stop() {
      detach?.();
      await homebridge?.stop();
    },
  });
}
