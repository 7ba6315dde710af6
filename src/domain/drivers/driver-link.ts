import type { ServerToDriverMessage } from './messages.js';

/**
 * One connected driver instance, whatever carries it (a WebSocket, a child process's stdio, or a
 * function call for the integrations built into the hub).
 * The driver manager talks to drivers only through links, so both transports behave alike.
 */
export interface DriverLink {
  readonly driverKey: string;
  readonly instanceId: string;
  readonly transport: 'websocket' | 'process' | 'builtin';
  /** Overrides the hub's action timeout for this driver (a local manifest's io.actionTimeoutMs). */
  readonly actionTimeoutMs?: number;
  /** The peer's IP address (WebSocket links), for the open-mode takeover check and the listings. */
  readonly remoteAddress?: string;
  /** The driver token the link registered with (DRIVER_AUTH=token); revoking it closes the link. */
  readonly tokenId?: string;
  /** Queues a message to the driver. Never throws; a closed link drops it. */
  send(message: ServerToDriverMessage): void;
  /** Ends the connection (the process is stopped by its supervisor, not here). */
  close(reason: string): void;
}
