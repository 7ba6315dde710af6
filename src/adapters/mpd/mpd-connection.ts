import { connect, type Socket } from 'node:net';
import type { TimerHandle, Timers } from '../../platform/clock.js';
import { networkFailureOf, type NetworkFailure } from '../../platform/network-failures.js';
import { commandLine, parseAck, type MpdAck } from './protocol.js';

export type MpdFailure = 'ack' | 'unreachable' | 'timeout' | 'closed' | 'protocol';

/** A failed MPD exchange: MPD's own ACK (with its code and message), or the connection's trouble. */
export class MpdError extends Error {
  override readonly name = 'MpdError';
  constructor(
    readonly failure: MpdFailure,
    message: string,
    readonly ack?: MpdAck,
  ) {
    super(message);
  }

  /** The failure's cause (platform/network-failures.ts): MPD's ACK refuses the command; a garbled answer has none. */
  get networkFailure(): NetworkFailure | undefined {
    switch (this.failure) {
      case 'ack':
        return 'rejected';
      case 'timeout':
        return 'timeout';
      case 'unreachable':
      case 'closed':
        return 'unreachable';
      default:
        return undefined;
    }
  }
}

export interface MpdConnectionOptions {
  host: string;
  port: number;
  password?: string;
  /** Bound of connecting and of each command's answer (`idle` waits as long as it takes). */
  timeoutMs: number;
  /** What those bounds wait on. */
  timers: Timers;
  /** Called once when the connection ends for any reason but `close()`. */
  onClose?: (error: MpdError) => void;
}

interface Pending {
  line: string;
  lines: string[];
  resolve(lines: string[]): void;
  reject(err: MpdError): void;
  timer: TimerHandle | null;
}

const MAX_LINE_BYTES = 1024 * 1024;
const MAX_ANSWER_LINES = 500_000;

/**
 * One TCP connection to MPD: the greeting, the password, and commands answered one after
 * another (MPD answers in order; the queue keeps at most one on the wire so an ACK is always the
 * answer to the command that caused it). Every wait is bounded except `idle`, which is meant to
 * wait; nothing throws asynchronously out of it.
 */
export class MpdConnection {
  /** MPD's protocol version from its greeting, e.g. `0.23.5`. */
  version = '';
  private socket: Socket | null = null;
  private buffer = '';
  private readonly queue: Pending[] = [];
  private inFlight: Pending | null = null;
  private ended = false;
  private greeted: ((error: MpdError | null) => void) | null = null;

  private constructor(private readonly options: MpdConnectionOptions) {}

  static async open(options: MpdConnectionOptions): Promise<MpdConnection> {
    const connection = new MpdConnection(options);
    await connection.connect();
    if (options.password) {
      try {
        await connection.command('password', [options.password]);
      } catch (err) {
        connection.close();
        throw err;
      }
    }
    return connection;
  }

  get open(): boolean {
    return !this.ended;
  }

  /** Runs a command; resolves with its answer lines (without the final OK). */
  command(name: string, args: ReadonlyArray<string | number> = [], options: { timeoutMs?: number | null } = {}): Promise<string[]> {
    if (this.ended) return Promise.reject(new MpdError('closed', 'the MPD connection is closed'));
    let line: string;
    try {
      line = commandLine(name, args);
    } catch (err) {
      return Promise.reject(new MpdError('protocol', err instanceof Error ? err.message : String(err)));
    }
    return new Promise((resolve, reject) => {
      const timeoutMs = options.timeoutMs === undefined ? this.options.timeoutMs : options.timeoutMs;
      const pending: Pending = { line, lines: [], resolve, reject, timer: null };
      if (timeoutMs !== null) {
        pending.timer = this.options.timers.setTimeout(() => this.end(new MpdError('timeout', `MPD did not answer ${name} within ${timeoutMs} ms`)), timeoutMs);
      }
      this.queue.push(pending);
      this.pump();
    });
  }

  /** Waits until MPD reports a change of one of `subsystems` (all when empty); resolves with what changed. */
  async idle(subsystems: readonly string[] = []): Promise<string[]> {
    const lines = await this.command('idle', subsystems, { timeoutMs: null });
    return lines.filter((l) => l.startsWith('changed: ')).map((l) => l.slice('changed: '.length));
  }

  /** Ends a pending `idle` at once (MPD answers it with what changed so far, maybe nothing). */
  noidle(): void {
    if (this.inFlight?.line.startsWith('idle') && this.socket) this.socket.write('noidle\n');
  }

  close(): void {
    this.end(new MpdError('closed', 'closed by the hub'), false);
  }

  private connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      const { host, port, timeoutMs, timers } = this.options;
      const timer = timers.setTimeout(() => this.end(new MpdError('timeout', `no MPD greeting from ${host}:${port} within ${timeoutMs} ms`)), timeoutMs);
      this.greeted = (error) => {
        timers.clearTimeout(timer);
        this.greeted = null;
        if (error) reject(error);
        else resolve();
      };
      const socket = connect({ host, port });
      this.socket = socket;
      socket.setEncoding('utf8');
      socket.setNoDelay(true);
      socket.on('data', (chunk: string) => this.receive(chunk));
      socket.on('error', (err: NodeJS.ErrnoException) => {
        const cause = networkFailureOf(err);
        this.end(new MpdError(cause === 'unreachable' || cause === 'timeout' ? cause : 'closed', `MPD at ${host}:${port}: ${err.code ?? err.message}`));
      });
      socket.on('close', () => this.end(new MpdError('closed', `MPD at ${host}:${port} closed the connection`)));
    });
  }

  private pump(): void {
    if (this.inFlight || this.ended || this.greeted || !this.socket) return;
    const next = this.queue.shift();
    if (!next) return;
    this.inFlight = next;
    this.socket.write(next.line);
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    if (this.buffer.length > MAX_LINE_BYTES && !this.buffer.includes('\n')) return this.end(new MpdError('protocol', 'a line from MPD is over 1 MiB'));
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0 && !this.ended) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (this.greeted) {
      if (!line.startsWith('OK MPD ')) return this.end(new MpdError('protocol', `not an MPD greeting: ${line.slice(0, 80)}`));
      this.version = line.slice('OK MPD '.length).trim();
      this.greeted(null);
      this.pump();
      return;
    }
    const pending = this.inFlight;
    if (!pending) return this.end(new MpdError('protocol', `unexpected line from MPD: ${line.slice(0, 80)}`));
    if (line === 'OK') return this.settle(pending, null);
    if (line.startsWith('ACK ')) {
      const ack = parseAck(line);
      return this.settle(pending, new MpdError('ack', ack?.message ?? line, ack ?? undefined));
    }
    if (pending.lines.length >= MAX_ANSWER_LINES) return this.end(new MpdError('protocol', `an answer over ${MAX_ANSWER_LINES} lines`));
    pending.lines.push(line);
  }

  private settle(pending: Pending, error: MpdError | null): void {
    if (pending.timer) this.options.timers.clearTimeout(pending.timer);
    this.inFlight = null;
    if (error) pending.reject(error);
    else pending.resolve(pending.lines);
    this.pump();
  }

  private end(error: MpdError, notify = true): void {
    if (this.ended) return;
    this.ended = true;
    this.socket?.destroy();
    this.greeted?.(error);
    for (const pending of [...(this.inFlight ? [this.inFlight] : []), ...this.queue.splice(0)]) {
      if (pending.timer) this.options.timers.clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.inFlight = null;
    if (notify) this.options.onClose?.(error);
  }
}
