import type { Clock } from '../../platform/clock.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { defineModule } from '../../platform/module.js';
import type { ScopedCaller } from '../auth/scoped-caller.js';
import type { DeviceService } from '../devices/device-service.js';
import { BrokerUsers, type BrokerUser } from './broker-users.js';
import { mqttOperations } from './operations.js';
import type { MqttRuntime } from './ports.js';

export interface MqttModuleDeps {
  mode: 'off' | 'external' | 'embedded';
  /** The adapter (src/adapters/mqtt); undefined when MQTT is off. */
  runtime: MqttRuntime | undefined;
  users: BrokerUsers;
  caller: ScopedCaller;
  devices: DeviceService;
  baseTopic: string;
}

export function brokerUsers(repository: DocumentRepository<BrokerUser>, clock: Clock): BrokerUsers {
  return new BrokerUsers(repository, clock);
}

/**
 * MQTT (docs/mqtt.md): the embedded broker's users, and the link the adapter runs (devices that
 * announce themselves with Home Assistant discovery; the hub's devices exposed). Started after the
 * devices and drivers, so that discovered devices land in a loaded registry.
 */
export function mqttModule({ mode, runtime, users, caller, devices, baseTopic }: MqttModuleDeps) {
  return defineModule({
    name: 'mqtt',
    needs: ['storage', 'auth', 'devices', 'drivers', 'fleet'],
    operations: { mqtt: mqttOperations({ runtime, mode, users, devices, baseTopic }) },
    users,
    async start() {
      await users.load();
      await runtime?.start();
    },
    async stop() {
      await runtime?.stop();
      await caller.stop();
    },
  });
}
