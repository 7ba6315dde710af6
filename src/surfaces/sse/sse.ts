import type { TimerHandle, Timers } from '../../platform/clock.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { logRequest } from '../http/request-log.js';

export interface SseOptions {
  /** Interval of `ping` events (also keeps proxies from closing an idle stream). */
  heartbeatMs: number;
  /** Bytes a client may have unread before it is dropped; it can reconnect and resume. */
  maxBufferedBytes: number;
  /** Reconnect delay suggested to EventSource clients. */
  retryMs?: number;
  /** The hub's injected timers, which the heartbeat waits on. */
  timers: Timers;
}

/**
 * One server-sent-event stream. Every stream of the service (state, media controller, AI
 * events, plugin state) goes through this: headers, framing, heartbeat, a bounded buffer, and
 * cleanup the moment the client goes away.
 */
export class SseStream {
  private static open = 0;
  /** Streams open now, over every route (for the admin panel's client count). */
  static get openCount(): number {
    return SseStream.open;
  }
  private closed = false;
  private readonly heartbeat: TimerHandle;
  private readonly closeHandlers: Array<() => void> = [];
  /** Set when the stream was closed because the client did not keep up. */
  dropped = false;

  constructor(
    private readonly reply: FastifyReply,
    private readonly options: SseOptions,
  ) {
    const res = reply.raw;
    reply.hijack();
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': String(reply.request.id),
    });
    res.write(`retry: ${options.retryMs ?? 2000}\n\n`);
    SseStream.open++;
    this.heartbeat = options.timers.setInterval(() => this.send('ping', {}), options.heartbeatMs);
    res.on('close', () => this.close());
    res.on('error', () => this.close());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  onClose(handler: () => void): void {
    if (this.closed) handler();
    else this.closeHandlers.push(handler);
  }

  /** Writes one event; returns false (and drops the client) when it is too far behind. */
  send(event: string, data: unknown, id?: string | number): boolean {
    return this.sendFrame(frame(event, data, id));
  }

  /** Writes an already framed chunk (shared between clients of a broadcast). */
  sendFrame(text: string): boolean {
    if (this.closed) return false;
    const res = this.reply.raw;
    if (res.writableLength > this.options.maxBufferedBytes) {
      this.dropped = true;
      this.reply.request.log.warn({ buffered: res.writableLength }, 'SSE client too slow; dropped');
      this.close();
      return false;
    }
    res.write(text);
    return true;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    SseStream.open--;
    this.options.timers.clearInterval(this.heartbeat);
    for (const handler of this.closeHandlers.splice(0)) {
      try {
        handler();
      } catch (err) {
        this.reply.request.log.error({ err }, 'SSE close handler failed');
      }
    }
    if (!this.reply.raw.destroyed) {
      if (this.dropped) this.reply.raw.destroy();
      else this.reply.raw.end();
    }
    // Fastify does not log a reply it handed over; the stream's line is written when it ends.
    logRequest(this.reply.request, 200, this.reply.elapsedTime);
  }
}

export function frame(event: string, data: unknown, id?: string | number): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The `Last-Event-ID` a reconnecting EventSource sends (header, or `lastEventId` in the query). */
export function lastEventIdOf(request: FastifyRequest): string | undefined {
  const header = request.headers['last-event-id'];
  if (typeof header === 'string' && header) return header;
  const query = (request.query as Record<string, unknown> | undefined)?.lastEventId;
  return typeof query === 'string' && query ? query : undefined;
}
