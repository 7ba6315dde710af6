import type { Writable } from 'node:stream';
import type { DriverLink } from '../driver-link.js';
import type { ServerToDriverMessage } from '../messages.js';

export interface ProcessLinkLogger {
  warn(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

export interface ProcessLinkOptions {
  driverKey: string;
  /** Default `local:<driverKey>`. */
  instanceId?: string;
  /** The manifest's io.actionTimeoutMs. */
  actionTimeoutMs?: number;
  /** The child's stdin. */
  stdin: Writable;
  /** Names of the manifest's command catalog: an ACTION for one of them is sent as COMMAND_EXECUTE. */
  commands?: Iterable<string>;
  log: ProcessLinkLogger;
  /** Messages held while stdin is not draining; past this, messages are dropped. Default 1000. */
  maxQueued?: number;
  /** Called once when the hub closes the link (not when the supervisor retires it). */
  onClose?: (reason: string) => void;
}

export const localInstanceId = (driverKey: string) => `local:${driverKey}`;

/**
 * A driver link over a child process's stdin: one JSON object per line. Never throws: when the
 * process is gone (EPIPE, closed pipe) messages are dropped; when the process does not read its
 * stdin, at most `maxQueued` messages wait for it and the rest are dropped (and logged).
 */
export class ProcessLink implements DriverLink {
  readonly transport = 'process' as const;
  readonly driverKey: string;
  readonly instanceId: string;
  readonly actionTimeoutMs: number | undefined;
  private readonly stdin: Writable;
  private readonly commands: ReadonlySet<string>;
  private readonly log: ProcessLinkLogger;
  private readonly maxQueued: number;
  private readonly onClose: ((reason: string) => void) | undefined;
  private readonly queue: string[] = [];
  private waitingForDrain = false;
  private closed = false;
  private broken = false;
  private droppedSinceLog = 0;
  /** Messages written to stdin (or queued for it) and dropped, for diagnostics. */
  sent = 0;
  dropped = 0;

  constructor(options: ProcessLinkOptions) {
    this.driverKey = options.driverKey;
    this.instanceId = options.instanceId ?? localInstanceId(options.driverKey);
    this.actionTimeoutMs = options.actionTimeoutMs;
    this.stdin = options.stdin;
    this.commands = new Set(options.commands ?? []);
    this.log = options.log;
    this.maxQueued = options.maxQueued ?? 1000;
    this.onClose = options.onClose;
    // EPIPE and friends arrive here, asynchronously; without a listener they would crash the hub.
    this.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (!this.broken) this.log.debug?.({ driver: this.driverKey, code: err.code, err: err.message }, 'driver stdin failed; messages to it are dropped');
      this.broken = true;
      this.queue.length = 0;
    });
    this.stdin.on('close', () => {
      this.broken = true;
      this.queue.length = 0;
    });
  }

  get isOpen(): boolean {
    return !this.closed && !this.broken && !this.stdin.destroyed && !this.stdin.writableEnded;
  }

  get queued(): number {
    return this.queue.length;
  }

  send(message: ServerToDriverMessage): void {
    if (!this.isOpen) {
      this.dropped++;
      return;
    }
    let line: string;
    try {
      const wire = message.type === 'ACTION' && this.commands.has(message.command) ? { ...message, type: 'COMMAND_EXECUTE' as const } : message;
      line = `${JSON.stringify(wire)}\n`;
    } catch (err) {
      this.dropped++;
      this.log.warn({ driver: this.driverKey, type: message.type, err: (err as Error).message }, 'message to driver could not be serialized; dropped');
      return;
    }
    if (this.waitingForDrain) {
      if (this.queue.length >= this.maxQueued) {
        this.dropped++;
        if (this.droppedSinceLog++ === 0) {
          this.log.warn({ driver: this.driverKey, queued: this.queue.length, type: message.type }, 'driver is not reading its stdin; messages to it are being dropped');
        }
        return;
      }
      this.queue.push(line);
      this.sent++;
      return;
    }
    this.sent++;
    this.write(line);
  }

  /** The hub ends the connection: stdin is closed (the driver sees end of input). */
  close(reason: string): void {
    if (this.closed) return;
    this.retire();
    try {
      this.stdin.end();
    } catch {
      // already gone
    }
    this.onClose?.(reason);
  }

  /** The supervisor ends the link (the process exited or is being stopped): no more messages. */
  retire(): void {
    this.closed = true;
    this.queue.length = 0;
  }

  private write(line: string): void {
    try {
      if (!this.stdin.write(line)) {
        this.waitingForDrain = true;
        this.stdin.once('drain', this.onDrain);
      }
    } catch (err) {
      this.broken = true;
      this.log.debug?.({ driver: this.driverKey, err: (err as Error).message }, 'write to driver stdin failed');
    }
  }

  private readonly onDrain = (): void => {
    this.waitingForDrain = false;
    while (this.queue.length > 0 && !this.waitingForDrain && this.isOpen) this.write(this.queue.shift()!);
    if (this.droppedSinceLog > 0 && !this.waitingForDrain) {
      this.log.warn({ driver: this.driverKey, dropped: this.droppedSinceLog }, 'driver stdin drained; messages were dropped while it was full');
      this.droppedSinceLog = 0;
    }
  };
}
