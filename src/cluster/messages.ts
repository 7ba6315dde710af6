import type { DomainEvents } from '../domain/events.js';
import type { WireFailure } from '../platform/errors.js';

/** A driver link another instance holds, as it announces it. */
export interface LinkAnnouncement {
  instanceId: string;
  driverKey: string;
  /** The link's own action time-out, when it has one. */
  actionTimeoutMs?: number;
  /** `websocket`, `process` or `builtin`: DRIVER_AUTH=open admits nobody else to a driverKey the hub runs itself. */
  transport?: string;
  /** A WebSocket driver's peer address: DRIVER_AUTH=open hands its driverKey to no other address, on any instance. */
  remoteAddress?: string;
}

/**
 * What instances tell each other, and which part of the node owns each message: membership
 * (`bye`, `released`, `drivers-changed`, `restored`), replication (`ev`, `hello`, `welcome`,
 * `tok`, `doc`) and forwarding (`cmd`, `res`).
 */
export type ClusterMessage =
  | { t: 'ev'; e: keyof DomainEvents; p: unknown }
  | { t: 'hello' }
  | { t: 'welcome'; links: LinkAnnouncement[]; online: Array<{ deviceId: string; state: Record<string, unknown>; updatedAt: number }> }
  | { t: 'bye' }
  | { t: 'released' }
  | { t: 'restored' }
  | { t: 'drivers-changed' }
  | { t: 'cmd'; id: string; deviceId: string; command: string; params: Record<string, unknown>; timeoutMs?: number; kind?: 'ACTION' | 'COMMAND_EXECUTE' }
  | { t: 'res'; id: string; ok: true; result: unknown }
  | { t: 'res'; id: string; ok: false; error: WireFailure }
  | { t: 'tok'; hash: string; op: 'add' | 'del' }
  | { t: 'tok'; userId: string; op: 'user' }
  | { t: 'doc'; kind: string; id: string; body?: unknown };

/** One message type of the union. */
export type MessageOf<T extends ClusterMessage['t']> = Extract<ClusterMessage, { t: T }>;

/** What the parts send through: the channel (`PgChannel.send`), to one instance or (`undefined`) to all. */
export interface ClusterSender {
  send(to: string | undefined, message: ClusterMessage): void;
}
