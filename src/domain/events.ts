import { EventBus, type EventBusLogger } from '../platform/event-bus.js';

/**
 * Every domain change, by name, with its payload. Streams (SSE, Socket.IO, hub protocol
 * events) subscribe to these; the domain publishes them and knows nothing of who listens.
 */
export interface DomainEvents {
  [event: string]: unknown;
  'auth.logged_in': { userId: string; username: string; clientAddress: string; at: number };
  'auth.login_failed': { username: string; clientAddress: string; at: number };
  'auth.logged_out': { userId: string; username: string; at: number };
}

export type DomainEventBus = EventBus<DomainEvents>;

export function createDomainEventBus(log?: EventBusLogger): DomainEventBus {
  return new EventBus<DomainEvents>(log);
}
