import { EventBus, type EventBusLogger } from '../platform/event-bus.js';
import type { LogicalDevice } from './devices/model.js';

/**
 * Every domain change, by name, with its payload. Streams (SSE, Socket.IO, hub protocol
 * events) subscribe to these; the domain publishes them and knows nothing of who listens.
 */
export interface DomainEvents {
  [event: string]: unknown;
  'auth.logged_in': { userId: string; username: string; clientAddress: string; at: number };
  'auth.login_failed': { username: string; clientAddress: string; at: number };
  'auth.logged_out': { userId: string; username: string; at: number };
  'device.discovered': { device: LogicalDevice; at: number };
  'device.updated': { device: LogicalDevice; at: number };
  'device.removed': { deviceId: string; at: number };
  /** `state` is the full merged state; `changed` the partial update that caused it. */
  'device.state_changed': { deviceId: string; state: Record<string, unknown>; changed: Record<string, unknown>; at: number };
  'device.online_changed': { deviceId: string; online: boolean; at: number };
  'device.metrics': { deviceId: string; metrics: Record<string, unknown>; at: number };
  'device.command_executed': { deviceId: string; command: string; ok: boolean; durationMs: number; at: number };
  'driver.connected': { driverKey: string; instanceId: string; transport: string; at: number };
  'driver.disconnected': { driverKey: string; instanceId: string; reason: string; at: number };
  'design.published': { design: unknown; at: number };
  'preferences.updated': { preferences: unknown; at: number };
  'ir.transmitted': { deviceId: string | null; key: string | null; host: string; freqKhz: number; raw: number[]; line: string; at: number };
}

export type DomainEventBus = EventBus<DomainEvents>;

export function createDomainEventBus(log?: EventBusLogger): DomainEventBus {
  return new EventBus<DomainEvents>(log);
}
