import { connect, type Socket } from 'node:net';
import { irErrors } from '../../domain/ir/errors.js';
import { sendirLine, validateIrCommand, type IrCommand } from '../../domain/ir/ir-command.js';
import type { IrTransmitter } from '../../domain/ir/transmitter.js';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import type { DomainError } from '../../platform/errors.js';
import { describeNetworkCode, networkFailureOfCode } from '../../platform/network-failures.js';
import type { IntegrationStatus } from '../../domain/drivers/builtin.js';

/**
 * Client of Global Caché iTach IR extenders (TCP API, port 4998): the adapter behind the
 * domain's `IrTransmitter` port, wired in the composition root (`src/hub.ts`).
 *
 * One TCP connection per extender host, opened lazily, kept while in use and closed after
 * `idleCloseMs` without traffic. Commands on a connection run one at a time (FIFO); a timeout or
 * protocol error destroys the connection so the next command starts on a fresh one.
 */

export interface ItachLog {
  debug(o: object, m: string): void;
  warn(o: object, m: string): void;
}

export interface ItachTransmit {
  host: string;
  line: string;
  id: number;
}

export interface ItachClientOptions {
  /** TCP port of the extenders (default 4998). */
  port?: number;
  /** Give up connecting after this long (default 3000 ms). */
  connectTimeoutMs?: number;
  /** Give up waiting for `completeir` after this long (default 5000 ms). */
  replyTimeoutMs?: number;
  /** Close a connection after this long without traffic (default 60000 ms). */
  idleCloseMs?: number;
  /** Commands allowed to wait per host behind the one in flight (default 100). */
  maxQueue?: number;
  /** iTach connector addressed by `sendir` (default `1:1`). */
  connector?: string;
  log?: ItachLog;
  /** Called once per command after its `sendir` line has been written (a listener that throws is logged, not fatal). */
  onTransmit?: (info: ItachTransmit) => void;
  /** Connect, reply and idle timers. */
  timers: Timers;
  /** When an extender's health was found. */
  clock: Clock;
}

export interface ItachSendResult {
  /** The `sendir` line written, with its trailing `\r`. */
  line: string;
  /** The extender's reply line, without terminator (`completeir,1:1,<id>`). */
  reply: string;
  id: number;
}

/** Meaning of the common iTach `ERR_` codes, keyed by the numeric code. */
export const ITACH_ERROR_CODES: Readonly<Record<number, string>> = {
  1: 'invalid command (command not found)',
  2: 'invalid module address',
  3: 'invalid connector address',
  4: 'invalid ID value',
  5: 'invalid frequency value',
  6: 'invalid repeat value',
  7: 'invalid offset value',
  8: 'invalid pulse count',
  9: 'invalid pulse data',
  10: 'uneven amount of on/off statements',
  11: 'no carriage return found',
  12: 'repeat count exceeded',
  13: 'IR command sent to an input connector',
  14: 'blaster command sent to a non-blaster connector',
  15: 'no carriage return before buffer full',
  16: 'no carriage return',
  17: 'bad command syntax',
  18: 'sensor command sent to a non-input connector',
  19: 'repeated IR transmission failure',
  20: 'above the designated IR on/off pair limit',
  21: 'symbol odd boundary',
  22: 'undefined symbol',
  23: 'unknown option',
  24: 'invalid baud rate setting',
  25: 'invalid flow control setting',
  26: 'invalid parity setting',
  27: 'settings are locked',
};

/**
 * `ERR_1:1,010` → `{connector: '1:1', code: '010'}`; `ERR_01` (also `unknowncommand,ERR_01`) →
 * `{code: '01'}`; a line without an error → undefined.
 */
export function parseItachError(line: string): { connector?: string; code: string } | undefined {
  const m = /(?:^|[\s,])ERR_?(?:([0-9]+:[0-9]+),)?\s*([A-Za-z0-9]+)\s*$/.exec(line.trim());
  if (!m || m[2] === undefined) return undefined;
  return m[1] === undefined ? { code: m[2] } : { connector: m[1], code: m[2] };
}

/** Human explanation of an iTach error code (`'010'`, `'01'`, …). */
export function describeItachError(code: string): string {
  const n = /^[0-9]+$/.test(code) ? Number(code) : NaN;
  const known = Number.isNaN(n) ? undefined : ITACH_ERROR_CODES[n];
  return known ? `error code ${code}: ${known}` : `error code ${code}`;
}

const DEFAULTS = {
  port: 4998,
  connectTimeoutMs: 3000,
  replyTimeoutMs: 5000,
  idleCloseMs: 60_000,
  maxQueue: 100,
  connector: '1:1',
};
/** A peer that sends this much without a line terminator is not an iTach. */
const MAX_LINE_CHARS = 8192;
const MAX_ID = 65535;

const silentLog: ItachLog = { debug: () => {}, warn: () => {} };

interface Job {
  cmd: IrCommand;
  id: number;
  line: string;
  /** onTransmit already reported this command (a retried write is reported once). */
  reported?: boolean;
  resolve(result: ItachSendResult): void;
  reject(err: unknown): void;
}

/** The connection went away under a command (the command may be retried on a fresh one). */
class LinkDropped extends Error {
  constructor(readonly error: DomainError) {
    super(error.message);
  }
}

type Settings = Required<Omit<ItachClientOptions, 'log' | 'onTransmit' | 'clock'>> & Pick<ItachClientOptions, 'onTransmit'> & { log: ItachLog };

function socketError(err: NodeJS.ErrnoException, host: string, port: number): DomainError {
  const code = err.code ?? err.message;
  if (networkFailureOfCode(code) === 'timeout') {
    return irErrors.IR_EXTENDER_TIMEOUT({ extender: `${host}:${port}`, what: `timed out (${code})` }, { details: { host, port, cause: code } });
  }
  return irErrors.IR_EXTENDER_UNREACHABLE({ extender: `${host}:${port}`, what: describeNetworkCode(code) }, { details: { host, port, cause: code } });
}

/** One TCP connection to an extender. Owns its socket, its line buffer and the pending exchange. */
class Link {
  state: 'connecting' | 'open' | 'dead' = 'connecting';
  private buffer = '';
  private lastError: NodeJS.ErrnoException | undefined;
  private waiter: { line(l: string): void; fail(e: DomainError): void } | undefined;
  private readonly closed: Promise<void>;
  readonly ready: Promise<void>;

  constructor(
    private readonly socket: Socket,
    private readonly host: string,
    private readonly s: Settings,
    onDead: (link: Link) => void,
  ) {
    let closedResolve!: () => void;
    this.closed = new Promise<void>((r) => (closedResolve = r));
    let readyResolve!: () => void;
    let readyReject!: (e: DomainError) => void;
    this.ready = new Promise<void>((res, rej) => {
      readyResolve = res;
      readyReject = rej;
    });
    // A failed connect is reported through `ready`; never leave it unhandled.
    this.ready.catch(() => {});

    const connectTimer = s.timers.setTimeout(() => {
      readyReject(
        irErrors.IR_EXTENDER_TIMEOUT(
          { extender: `${host}:${s.port}`, what: `did not accept a connection within ${s.connectTimeoutMs} ms` },
          { details: { host, port: s.port } },
        ),
      );
      this.destroy();
    }, s.connectTimeoutMs);

    socket.setEncoding('latin1');
    socket.setNoDelay(true);
    socket.on('connect', () => {
      s.timers.clearTimeout(connectTimer);
      if (this.state !== 'connecting') return;
      this.state = 'open';
      socket.setKeepAlive(true, 30_000);
      readyResolve();
    });
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      this.lastError = err;
      s.log.debug({ host, port: s.port, err: err.code ?? err.message }, 'iTach socket error');
    });
    socket.on('end', () => {
      // The peer half-closed; nothing more will be accepted (allowHalfOpen is false).
      if (this.state === 'open') this.state = 'dead';
    });
    socket.on('close', () => {
      s.timers.clearTimeout(connectTimer);
      const wasConnecting = this.state === 'connecting';
      this.state = 'dead';
      const err = this.lastError
        ? socketError(this.lastError, host, s.port)
        : irErrors.IR_EXTENDER_UNREACHABLE({ extender: `${host}:${s.port}`, what: 'closed the connection' }, { details: { host, port: s.port, cause: 'closed' } });
      if (wasConnecting) readyReject(err);
      const w = this.waiter;
      this.waiter = undefined;
      w?.fail(err);
      onDead(this);
      closedResolve();
    });
  }

  get alive(): boolean {
    return this.state === 'open' && !this.socket.destroyed && this.socket.writable;
  }

  /** Keeps the event loop alive only while a command is in flight. */
  hold(on: boolean): void {
    if (on) this.socket.ref();
    else this.socket.unref();
  }

  /**
   * Writes `line`, resolves with the first reply line `isReply` accepts. Rejects with
   * {@link LinkDropped} when the connection goes away, or a DomainError on timeout (the link is
   * then destroyed).
   */
  exchange(line: string, isReply: (l: string) => boolean, onWritten: () => void): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      if (!this.alive) {
        reject(new LinkDropped(socketError({ name: 'Error', message: 'closed', code: 'EPIPE' }, this.host, this.s.port)));
        return;
      }
      const timer = this.s.timers.setTimeout(() => {
        this.waiter = undefined;
        reject(
          irErrors.IR_EXTENDER_TIMEOUT(
            { extender: this.host, what: `did not confirm the command within ${this.s.replyTimeoutMs} ms` },
            { details: { host: this.host, port: this.s.port } },
          ),
        );
        this.destroy();
      }, this.s.replyTimeoutMs);
      this.waiter = {
        line: (l) => {
          if (!isReply(l)) return;
          this.s.timers.clearTimeout(timer);
          this.waiter = undefined;
          resolve(l);
        },
        fail: (e) => {
          this.s.timers.clearTimeout(timer);
          this.waiter = undefined;
          reject(e.code === irErrors.IR_EXTENDER_PROTOCOL_ERROR.code ? e : new LinkDropped(e));
        },
      };
      this.socket.write(line, 'latin1');
      onWritten();
    });
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    const parts = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = parts.pop() ?? '';
    if (this.buffer.length > MAX_LINE_CHARS) {
      this.buffer = '';
      this.protocolError('sent an over-long line');
      return;
    }
    for (const raw of parts) {
      const l = raw.trim();
      if (l === '') continue;
      if (this.waiter) this.waiter.line(l);
      else this.s.log.debug({ host: this.host, line: l }, 'iTach unsolicited line ignored');
    }
  }

  private protocolError(what: string): void {
    const err = irErrors.IR_EXTENDER_PROTOCOL_ERROR({ extender: this.host, what }, { details: { host: this.host, port: this.s.port } });
    this.s.log.warn({ host: this.host }, `iTach protocol error: ${what}`);
    const w = this.waiter;
    this.waiter = undefined;
    w?.fail(err);
    this.destroy();
  }

  destroy(): void {
    if (this.state !== 'dead') this.state = 'dead';
    this.socket.destroy();
  }

  /** Ends the connection and waits until the socket is closed. */
  async close(): Promise<void> {
    this.socket.destroy();
    await this.closed;
  }
}

/** Whether an extender's connection is up: what the last command (or connection attempt) found. */
export interface ExtenderHealth {
  host: string;
  /** `up`: it took the last connection and answered; `failing`: it could not be reached, or did not answer in time. */
  state: 'up' | 'failing';
  /** `failing`: why. */
  lastError?: string;
  /** When that was found (clock time). */
  at: number;
}

/** The outcome of a command that tells of the extender's connection: it answered, or could not be reached or timed out. */
function healthOf(err: unknown): 'up' | 'failing' | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (code === irErrors.IR_EXTENDER_UNREACHABLE.code || code === irErrors.IR_EXTENDER_TIMEOUT.code) return 'failing';
  if (code === irErrors.IR_EXTENDER_ERROR.code || code === irErrors.IR_EXTENDER_BUSY.code || code === irErrors.IR_EXTENDER_PROTOCOL_ERROR.code) return 'up';
  return undefined;
}

/** The command queue and the (at most one) connection of one extender host. */
class Channel {
  private link: Link | undefined;
  private readonly queue: Job[] = [];
  private busy = false;
  private closed = false;
  private idleTimer: TimerHandle | undefined;
  health: ExtenderHealth | undefined;

  constructor(
    private readonly host: string,
    private readonly s: Settings,
    private readonly clock: Clock,
  ) {}

  enqueue(job: Job): void {
    if (this.closed) {
      job.reject(closedError());
      return;
    }
    if (this.queue.length >= this.s.maxQueue) {
      job.reject(
        irErrors.IR_EXTENDER_BUSY(
          { extender: this.host, what: `has too many commands waiting (${this.s.maxQueue})` },
          { details: { host: this.host, queued: this.queue.length }, retryAfterSeconds: 1 },
        ),
      );
      return;
    }
    this.queue.push(job);
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.busy || this.closed) return;
    const job = this.queue.shift();
    if (!job) {
      this.armIdle();
      return;
    }
    this.busy = true;
    this.disarmIdle();
    try {
      const result = await this.run(job);
      this.found('up');
      job.resolve(result);
    } catch (err) {
      const error = this.closed ? closedError() : err instanceof LinkDropped ? err.error : err;
      const health = this.closed ? undefined : healthOf(error);
      if (health) this.found(health, error);
      job.reject(error);
    } finally {
      this.busy = false;
    }
    void this.pump();
  }

  private found(state: 'up' | 'failing', err?: unknown): void {
    if (state === 'failing' && this.health?.state !== 'failing') this.s.log.warn({ host: this.host, err: err instanceof Error ? err.message : String(err) }, 'iTach extender cannot be reached');
    this.health = { host: this.host, state, at: this.clock.now(), ...(state === 'failing' && err instanceof Error ? { lastError: err.message } : {}) };
  }

  /**
   * One exchange, never repeated: a connection that goes away after the line was written may
   * have let the extender send the IR already, and a key sent twice toggles a TV's power back (the
   * caller gets 502 and decides). A connection the extender closed while idle is not reused
   * (`openLink` opens a new one once it sees the close).
   */
  private async run(job: Job): Promise<ItachSendResult> {
    const link = await this.openLink();
    link.hold(true);
    try {
      const reply = await link.exchange(job.line, (l) => this.isReplyTo(job, l), () => this.transmitted(job));
      return this.interpret(job, reply);
    } finally {
      link.hold(false);
    }
  }

  private async openLink(): Promise<Link> {
    if (this.link?.alive) return this.link;
    this.link?.destroy();
    const socket = connect({ host: this.host, port: this.s.port });
    const link = new Link(socket, this.host, this.s, (dead) => {
      if (this.link === dead) this.link = undefined;
    });
    this.link = link;
    await link.ready;
    if (this.closed) {
      link.destroy();
      throw closedError();
    }
    this.s.log.debug({ host: this.host, port: this.s.port }, 'iTach connected');
    return link;
  }

  private transmitted(job: Job): void {
    if (!this.s.onTransmit || job.reported) return;
    job.reported = true;
    try {
      this.s.onTransmit({ host: this.host, line: job.line, id: job.id });
    } catch (err) {
      this.s.log.warn({ host: this.host, err: String(err) }, 'iTach onTransmit listener threw');
    }
  }

  private isReplyTo(job: Job, l: string): boolean {
    const [verb, connector, id] = l.split(',');
    if (verb === 'completeir' || verb === 'busyIR') {
      if (connector === this.s.connector && id === String(job.id)) return true;
      this.s.log.debug({ host: this.host, line: l, id: job.id }, 'iTach line for another command ignored');
      return false;
    }
    if (l.startsWith('ERR') || l.startsWith('unknowncommand')) return true;
    this.s.log.debug({ host: this.host, line: l }, 'iTach unexpected line ignored');
    return false;
  }

  private interpret(job: Job, reply: string): ItachSendResult {
    if (reply.startsWith('completeir,')) return { line: job.line, reply, id: job.id };
    if (reply.startsWith('busyIR,')) {
      throw irErrors.IR_EXTENDER_BUSY({ extender: this.host, what: 'is busy transmitting another command' }, { details: { host: this.host, reply }, retryAfterSeconds: 1 });
    }
    const parsed = parseItachError(reply);
    const code = parsed?.code ?? reply;
    throw irErrors.IR_EXTENDER_ERROR({ extender: this.host, reason: describeItachError(code) }, { details: { host: this.host, reply, code } });
  }

  private armIdle(): void {
    this.disarmIdle();
    if (!this.link || this.closed) return;
    const link = this.link;
    this.idleTimer = this.s.timers.setTimeout(() => {
      this.idleTimer = undefined;
      if (this.busy || this.link !== link) return;
      this.s.log.debug({ host: this.host }, 'iTach connection idle; closing');
      this.link = undefined;
      link.destroy();
    }, this.s.idleCloseMs);
  }

  private disarmIdle(): void {
    this.s.timers.clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.disarmIdle();
    for (const job of this.queue.splice(0)) job.reject(closedError());
    const link = this.link;
    this.link = undefined;
    if (link) await link.close();
  }
}

function closedError(): DomainError {
  return irErrors.IR_CLIENT_CLOSED();
}

export class ItachClient implements IrTransmitter {
  private readonly s: Settings;
  private readonly clock: Clock;
  private readonly channels = new Map<string, Channel>();
  private nextId = 1;
  private closed = false;

  constructor(options: ItachClientOptions) {
    this.clock = options.clock;
    this.s = {
      port: options.port ?? DEFAULTS.port,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      replyTimeoutMs: options.replyTimeoutMs ?? DEFAULTS.replyTimeoutMs,
      idleCloseMs: options.idleCloseMs ?? DEFAULTS.idleCloseMs,
      maxQueue: options.maxQueue ?? DEFAULTS.maxQueue,
      connector: options.connector ?? DEFAULTS.connector,
      log: options.log ?? silentLog,
      onTransmit: options.onTransmit,
      timers: options.timers,
    };
  }

  /** Transmits `cmd` through the extender at `host` and resolves once it confirmed (`completeir`). */
  send(host: string, cmd: IrCommand): Promise<ItachSendResult> {
    const problems = validateIrCommand(cmd);
    if (problems.length > 0) {
      return Promise.reject(irErrors.INVALID_IR_COMMAND({ problem: problems.join('; ') }, { details: { problems } }));
    }
    if (typeof host !== 'string' || host.trim() === '') {
      return Promise.reject(irErrors.INVALID_EXTENDER_HOST({}, { details: { host } }));
    }
    if (this.closed) return Promise.reject(closedError());
    const id = this.allocateId();
    const line = sendirLine(cmd, id, this.s.connector);
    return new Promise<ItachSendResult>((resolve, reject) => {
      let channel = this.channels.get(host);
      if (!channel) {
        channel = new Channel(host, this.s, this.clock);
        this.channels.set(host, channel);
      }
      channel.enqueue({ cmd, id, line, resolve, reject });
    });
  }

  /** The extenders used so far, and whether their connection is up or failing. */
  extenders(): ExtenderHealth[] {
    return [...this.channels.values()].map((c) => c.health).filter((h): h is ExtenderHealth => h !== undefined);
  }

  /**
   * As a built-in integration (GENERIC_IR in `integrations.list`): `degraded` while an extender it
   * used cannot be reached (`unreachable` counts the extenders), `off` once closed. The devices are
   * the registry's GENERIC_IR devices, counted by the hub.
   */
  status(): IntegrationStatus {
    if (this.closed) return { status: 'off' };
    const failing = this.extenders().filter((e) => e.state === 'failing');
    if (failing.length === 0) return { status: 'running' };
    const last = failing.reduce((a, b) => (b.at > a.at ? b : a));
    return { status: 'degraded', unreachable: failing.length, ...(last.lastError ? { lastError: last.lastError } : {}) };
  }

  /** Closes every connection; queued and in-flight commands fail with IR_CLIENT_CLOSED. */
  async close(): Promise<void> {
    this.closed = true;
    const channels = [...this.channels.values()];
    this.channels.clear();
    await Promise.all(channels.map((c) => c.close()));
  }

  private allocateId(): number {
    const id = this.nextId;
    this.nextId = id >= MAX_ID ? 1 : id + 1;
    return id;
  }
}
