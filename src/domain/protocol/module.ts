import type { Clock } from '../../platform/clock.js';
import { defineModule } from '../../platform/module.js';
import type { OperationRegistry } from '../../platform/operations.js';
import type { LogicalDevice } from '../devices/model.js';
import type { DomainEventBus } from '../events.js';
import { protocolOperations, type CommandTable } from './commands.js';
import { ChangeFeed } from './feed.js';

export interface ProtocolModuleDeps {
  events: DomainEventBus;
  clock: Clock;
  /** The registry the protocol describes (every module's operations, registered by the hub). */
  operations: OperationRegistry;
  /** Hub protocol command → operation; given by the hub, which knows every module's names. */
  commands: CommandTable;
  /** A device record as the surfaces show it (the devices module's view), for the events that carry one. */
  presentDevice: (device: LogicalDevice) => unknown;
}

/**
 * The hub protocol: its self-description and the numbered change feed every stream reads. It
 * needs no other module, and starts early so that the feed numbers everything the others emit.
 */
export function protocolModule({ events, clock, operations, commands, presentDevice }: ProtocolModuleDeps) {
  const feed = new ChangeFeed(events, clock, presentDevice);
  return defineModule({
    name: 'protocol',
    needs: [],
    feed,
    operations: { protocol: protocolOperations(operations, commands) },
    async start() {
      feed.start();
    },
    async stop() {
      feed.stop();
    },
  });
}
