import { connect, type TLSSocket } from 'node:tls';
import type protobuf from 'protobufjs';
import type { TimerHandle, Timers } from '../../platform/clock.js';
import { networkFailureOf, type NetworkFailure } from '../../platform/network-failures.js';
import { frame, FrameReader } from './messages.js';

export type AndroidTvFailure = 'unreachable' | 'timeout' | 'wrong_code' | 'rejected' | 'protocol' | 'closed';

/** A failed Android TV exchange, by cause. */
export class AndroidTvError extends Error {
  override readonly name = 'AndroidTvError';
  constructor(
    readonly failure: AndroidTvFailure,
    message: string,
  ) {
    super(message);
  }

  /** The failure's cause (platform/network-failures.ts): a channel that is gone or garbled is as good as unreachable. */
  get networkFailure(): NetworkFailure {
    switch (this.failure) {
      case 'timeout':
        return 'timeout';
      case 'rejected':
      case 'wrong_code':
        return 'rejected';
      default:
        return 'unreachable';
    }
  }
}

/**
 * One TLS connection to a TV carrying length-prefixed protobuf messages of one type: connecting
 * with the client identity, sending, and handing each decoded message to `onMessage`. Whatever
 * goes wrong (socket error, a frame over the bound, garbage) ends the session once, with an
 * AndroidTvError, through `onEnd`; nothing is thrown asynchronously out of it.
 */
export class FramedSession {
  private socket: TLSSocket | null = null;
  private readonly reader = new FrameReader();
  private ended = false;

  constructor(
    private readonly type: protobuf.Type,
    private readonly handlers: { onMessage(message: Record<string, unknown>): void; onEnd(error: AndroidTvError): void },
    private readonly timers: Timers,
  ) {}

  /** Connects and completes the TLS handshake within `timeoutMs`; resolves with the TV's certificate (PEM). */
  open(o: { host: string; port: number; certificatePem: string; privateKeyPem: string; timeoutMs: number }): Promise<string> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: AndroidTvError) => {
        if (!settled) {
          settled = true;
          this.timers.clearTimeout(timer);
          reject(error);
        }
        this.end(error);
      };
      const timer = this.timers.setTimeout(() => fail(new AndroidTvError('timeout', `no TLS connection to ${o.host}:${o.port} within ${o.timeoutMs} ms`)), o.timeoutMs);
      // The TV's certificate is self-signed: it is not verified against a CA, but kept (the secret uses its key).
      const socket = connect({ host: o.host, port: o.port, cert: o.certificatePem, key: o.privateKeyPem, rejectUnauthorized: false });
      this.socket = socket;
      socket.on('secureConnect', () => {
        if (settled) return;
        settled = true;
        this.timers.clearTimeout(timer);
        const peer = socket.getPeerX509Certificate();
        if (!peer) return fail(new AndroidTvError('protocol', 'the TV presented no certificate'));
        resolve(peer.toString());
      });
      socket.on('data', (chunk: Buffer) => this.receive(chunk));
      socket.on('error', (err: NodeJS.ErrnoException) => {
        const cause = networkFailureOf(err);
        fail(new AndroidTvError(settled ? 'closed' : cause === 'unreachable' || cause === 'timeout' ? cause : 'rejected', `${o.host}:${o.port}: ${err.code ?? err.message}`));
      });
      socket.on('close', () => fail(new AndroidTvError(settled ? 'closed' : 'rejected', `${o.host}:${o.port} closed the connection`)));
    });
  }

  send(message: Record<string, unknown>): void {
    if (this.ended || !this.socket) return;
    this.socket.write(frame(this.type, message));
  }

  get isOpen(): boolean {
    return !this.ended && this.socket !== null;
  }

  close(): void {
    this.end(new AndroidTvError('closed', 'closed by the hub'));
  }

  private receive(chunk: Buffer): void {
    if (this.ended) return;
    let frames: Buffer[];
    try {
      frames = this.reader.push(chunk);
    } catch (err) {
      return this.end(new AndroidTvError('protocol', err instanceof Error ? err.message : String(err)));
    }
    for (const bytes of frames) {
      let message: Record<string, unknown>;
      try {
        message = this.type.toObject(this.type.decode(bytes), { defaults: false }) as Record<string, unknown>;
      } catch (err) {
        return this.end(new AndroidTvError('protocol', `undecodable message: ${err instanceof Error ? err.message : String(err)}`));
      }
      if (this.ended) return;
      this.handlers.onMessage(message);
    }
  }

  private end(error: AndroidTvError): void {
    if (this.ended) return;
    this.ended = true;
    this.socket?.destroy();
    this.handlers.onEnd(error);
  }
}

/** Waits for the next message that `match` accepts, or the session's end, within `timeoutMs`. */
export class Expectation {
  private waiting: { match: (m: Record<string, unknown>) => boolean; resolve: (m: Record<string, unknown>) => void; reject: (e: AndroidTvError) => void; timer: TimerHandle } | null = null;
  private endedWith: AndroidTvError | null = null;

  constructor(private readonly timers: Timers) {}

  next(match: (m: Record<string, unknown>) => boolean, timeoutMs: number, what: string): Promise<Record<string, unknown>> {
    if (this.endedWith) return Promise.reject(this.endedWith);
    return new Promise((resolve, reject) => {
      const timer = this.timers.setTimeout(() => {
        this.waiting = null;
        reject(new AndroidTvError('timeout', `no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting = { match, resolve, reject, timer };
    });
  }

  /** Offers a message; true when it was the one waited for. */
  offer(message: Record<string, unknown>): boolean {
    const w = this.waiting;
    if (!w || !w.match(message)) return false;
    this.timers.clearTimeout(w.timer);
    this.waiting = null;
    w.resolve(message);
    return true;
  }

  fail(error: AndroidTvError): void {
    this.endedWith = error;
    const w = this.waiting;
    if (!w) return;
    this.timers.clearTimeout(w.timer);
    this.waiting = null;
    w.reject(error);
  }
}
