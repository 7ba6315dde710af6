import type { Clock, Timers } from '../../platform/clock.js';
import type { ProcessRunner } from '../../platform/processes.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import { BuiltInIntegrations } from './builtin.js';
import type { DriverManager } from './driver-manager.js';
import type { DriverSettingsRepository } from './driver-settings.js';
import type { DependencyInstallSettings } from './local/dependencies.js';
import { DriverPackages, type ArchiveReader } from './local/packages.js';
import { LocalDriverSupervisor, type DriverPlacement } from './local/supervisor.js';
import { driverOperations, integrationOperations } from './operations.js';

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
  packages: { archives: ArchiveReader; maxBytes: number; install: DependencyInstallSettings };
  /** In a cluster: which instance runs each local driver. */
  placement?: DriverPlacement;
}

/**
 * Drivers the hub launches from the drivers folder (started last, once devices are loaded, so
 * their reports land in a loaded registry), their settings, and the driver and integration
 * operations.
 */
export function driversModule({ driversDir, manager, registry, settings, clock, timers, processes, log, packages, placement }: DriversModuleDeps) {
  const localDrivers = new LocalDriverSupervisor({ driversDir, manager, settings, clock, timers, processes, log, ...(placement ? { placement } : {}) });
  const driverPackages = new DriverPackages({ driversDir, supervisor: localDrivers, clock, timers, processes, log, ...packages });
  const countDevices = (driverKey: string) => registry.list().filter((d) => d.driverKey === driverKey).length;
  // The integrations built into the hub register here (the media, music and accessory hub modules,
  // and the composition root for the IR extenders), so that `integrations.list` has every one.
  const builtIns = new BuiltInIntegrations();
  return defineModule({
    name: 'drivers',
    needs: ['devices', 'processes'],
    localDrivers,
    driverPackages,
    builtIns,
    operations: {
      drivers: driverOperations(manager, localDrivers, driverPackages),
      integrations: integrationOperations(manager, localDrivers, countDevices, builtIns),
    },
    async start() {
      await localDrivers.start();
      log.info({ local: localDrivers.list().length, driversDir }, 'local drivers started');
    },
    async stop() {
      await localDrivers.stop();
    },
  });
}
