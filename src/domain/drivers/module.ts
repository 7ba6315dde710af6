import type { Clock, Timers } from '../../platform/clock.js';
import { DocumentCollection } from '../../platform/document-collection.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import type { FileStore } from '../../platform/files.js';
import type { ProcessRunner } from '../../platform/processes.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import { BuiltInIntegrations } from './builtin.js';
import { DriverAdmission, type DriverAuthMode } from './driver-admission.js';
import type { DriverManager } from './driver-manager.js';
import type { DriverSettingsRepository } from './driver-settings.js';
import { DriverTokens, type DriverToken } from './driver-tokens.js';
import { driverErrors, driverProtocolErrors } from './errors.js';
import type { DependencyInstallSettings } from './local/dependencies.js';
import { DriverPackages, type ArchiveReader } from './local/packages.js';
import { LocalDriverSupervisor, type DriverPlacement } from './local/supervisor.js';
import { driverOperations, driverTokenOperations, integrationOperations } from './operations.js';

export interface DriversModuleDeps {
  driversDir: string;
  /** The connected drivers (built by the devices module, which dispatches through it). */
  manager: DriverManager;
  registry: DeviceRegistry;
  settings: DriverSettingsRepository;
  clock: Clock;
  timers: Timers;
  /** Spawns the local drivers and the dependency installers. */
  processes: ProcessRunner;
  log: ModuleLog;
  /** Uploaded driver packages: how archives are read, how large they may be, how dependencies install. */
  packages: { archives: ArchiveReader; files: FileStore; maxBytes: number; install: DependencyInstallSettings };
  /** In a cluster: which instance runs each local driver. */
  placement?: DriverPlacement;
  /** DRIVER_AUTH, and the driver tokens it checks (docs/drivers.md#authentication). */
  driverAuth: { mode: DriverAuthMode; tokens: DocumentRepository<DriverToken> };
  /** In a cluster: the links of a driverKey that the other instances hold (the open mode's takeover check spans them). */
  linksElsewhere?: (driverKey: string) => ReadonlyArray<{ transport?: string; remoteAddress?: string }>;
}

/**
 * Drivers the hub launches from the drivers folder (started last, once devices are loaded, so
 * their reports land in a loaded registry), their settings, and the driver and integration
 * operations.
 */
export function driversModule({ driversDir, manager, registry, settings, clock, timers, processes, log, packages, placement, driverAuth, linksElsewhere }: DriversModuleDeps) {
  const localDrivers = new LocalDriverSupervisor({ driversDir, manager, settings, clock, timers, processes, log, ...(placement ? { placement } : {}) });
  const driverPackages = new DriverPackages({ driversDir, supervisor: localDrivers, clock, timers, processes, log, ...packages });
  const countDevices = (driverKey: string) => registry.list().filter((d) => d.driverKey === driverKey).length;
  // The integrations built into the hub register here (the media, music and accessory hub modules,
  // and the composition root for the IR extenders), so that `integrations.list` has every one.
  const builtIns = new BuiltInIntegrations();
  const tokens = new DriverTokens(new DocumentCollection(driverAuth.tokens, clock, driverErrors.DRIVER_TOKEN_NOT_FOUND));
  const admission = new DriverAdmission(driverAuth.mode, tokens, manager, linksElsewhere);
  // A revoked token ends the connections that registered with it, on whichever instance hears of it.
  tokens.onRevoked((id) => manager.disconnectToken(id, driverProtocolErrors.DRIVER_TOKEN_REVOKED.info()));
  return defineModule({
    name: 'drivers',
    needs: ['storage', 'devices', 'processes'],
    localDrivers,
    driverPackages,
    builtIns,
    driverTokens: tokens,
    admission,
    operations: {
      drivers: driverOperations(manager, localDrivers, driverPackages),
      integrations: integrationOperations(manager, localDrivers, countDevices, builtIns),
      driverTokens: driverTokenOperations(tokens, manager),
    },
    async start() {
      await tokens.load();
      await localDrivers.start();
      log.info({ local: localDrivers.list().length, driversDir }, 'local drivers started');
    },
    async stop() {
      await localDrivers.stop();
    },
  });
}
