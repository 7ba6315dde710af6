import type { Clock, Timers } from '../../platform/clock.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { DriverManager } from './driver-manager.js';
import type { DriverSettingsRepository } from './driver-settings.js';
import { LocalDriverSupervisor } from './local/supervisor.js';
import { driverOperations, integrationOperations } from './operations.js';

export interface DriversModuleDeps {
  driversDir: string;
  /** The connected drivers (built by the devices module, which dispatches through it). */
  manager: DriverManager;
  registry: DeviceRegistry;
  settings: DriverSettingsRepository;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
}

/**
 * Drivers the hub launches from the drivers folder (started last, once devices are loaded, so
 * their reports land in a loaded registry), their settings, and the driver and integration
 * operations.
 */
export function driversModule({ driversDir, manager, registry, settings, clock, timers, log }: DriversModuleDeps) {
  const localDrivers = new LocalDriverSupervisor({ driversDir, manager, settings, clock, timers, log });
  const countDevices = (driverKey: string) => registry.list().filter((d) => d.driverKey === driverKey).length;
  return defineModule({
    name: 'drivers',
    needs: ['devices'],
    localDrivers,
    operations: {
      drivers: driverOperations(manager, localDrivers),
      integrations: integrationOperations(manager, localDrivers, countDevices),
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
