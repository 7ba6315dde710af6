import type { Clock, Timers } from '../../platform/clock.js';
import type { AudienceResolver } from '../access/audience.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import { DriverManager } from '../drivers/driver-manager.js';
import type { DomainEventBus } from '../events.js';
import type { IrTransmitter } from '../ir/transmitter.js';
import { stateOperations } from '../state/operations.js';
import type { StateAuthority } from '../state/state-authority.js';
import { deviceActionOperations } from './action-operations.js';
import { DeviceActions } from './actions.js';
import { DeviceRegistry } from './device-registry.js';
import { DeviceService } from './device-service.js';
import type { DeviceRepository } from './model.js';
import { deviceOperations } from './operations.js';

export interface DevicesModuleDeps {
  repository: DeviceRepository;
  state: StateAuthority;
  ir: IrTransmitter;
  /** Default time a driver has to answer an ACTION (a driver's registration may set its own). */
  actionTimeoutMs: number;
  /** What each caller may see: device reads and commands answer only what is theirs. */
  audiences: AudienceResolver;
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
  /** The connected drivers' traffic logs under its own component. */
  driverLog: ModuleLog;
}

/**
 * Logical devices and what reaches them: the registry (loaded at start), the table of connected
 * driver instances that report devices and carry their commands (`DriverManager`: drivers sit on
 * both sides of devices, feeding the registry and answering commands, so the link table is built
 * here and the drivers module adds the processes the hub launches), IR devices through the
 * transmitter, the device service, and abstract actions. It also offers `state.*`: a state view
 * joins a device's state with the device.
 */
export function devicesModule({ repository, state, ir, actionTimeoutMs, audiences, events, clock, timers, log, driverLog }: DevicesModuleDeps) {
  const registry = new DeviceRegistry(repository, clock, events);
  const drivers = new DriverManager(registry, state, events, clock, driverLog, actionTimeoutMs, timers);
  const devices = new DeviceService(registry, state, drivers, ir, events, clock);
  const actions = new DeviceActions(devices);
  return defineModule({
    name: 'devices',
    needs: ['storage', 'state', 'ir'],
    registry,
    drivers,
    devices,
    actions,
    operations: {
      devices: { ...deviceOperations(devices, audiences), ...deviceActionOperations(devices, actions) },
      state: stateOperations(devices, () => clock.now()),
    },
    async start() {
      await registry.load();
      log.info({ devices: registry.size }, 'devices loaded');
    },
    async stop() {
      drivers.stop();
    },
  });
}
