import { connect, type TLSSocket } from 'node:tls';
import protobuf from 'protobufjs';
import type { TimerHandle, Timers } from '../../platform/clock.js';
import { networkFailureOf, type NetworkFailure } from '../../platform/network-failures.js';

/**
 * Google Cast v2 (CASTV2) framing: TLS on port 8009 carrying `CastMessage` protobufs, each
 * preceded by its length as a 4-byte big-endian integer. Messages name a namespace (`urn:x-cast:…`),
 * a source and a destination, and carry JSON text.
 */
const root = protobuf.Root.fromJSON({
  nested: {
    CastMessage: {
      fields: {
        protocolVersion: { type: 'int32', id: 1 },
        sourceId: { type: 'string', id: 2 },
        destinationId: { type: 'string', id: 3 },
        namespace: { type: 'string', id: 4 },
        payloadType: { type: 'int32', id: 5 },
        payloadUtf8: { type: 'string', id: 6 },
        payloadBinary: { type: 'bytes', id: 7 },
      },
    },
  },
});
export const CastMessage = root.lookupType('CastMessage');

export const NS = {
  connection: 'urn:x-cast:com.google.cast.tp.connection',
  heartbeat: 'urn:x-cast:com.google.cast.tp.heartbeat',
  receiver: 'urn:x-cast:com.google.cast.receiver',
  media: 'urn:x-cast:com.google.cast.media',
} as const;

export const CAST_PORT = 8009;
/** The Default Media Receiver: plays a URL it is given. */
export const DEFAULT_MEDIA_RECEIVER = 'CC1AD845';
const MAX_FRAME_BYTES = 64 * 1024;

export interface CastEnvelope {
  sourceId: string;
  destinationId: string;
  namespace: string;
  data: Record<string, unknown>;
}

export function encodeCast(e: CastEnvelope): Buffer {
  const body = CastMessage.encode(CastMessage.fromObject({ protocolVersion: 0, sourceId: e.sourceId, destinationId: e.destinationId, namespace: e.namespace, payloadType: 0, payloadUtf8: JSON.stringify(e.data) })).finish();
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

/** Splits a byte stream into Cast messages; throws on a frame over the bound or a payload that is not JSON. */
export class CastReader {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): CastEnvelope[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const out: CastEnvelope[] = [];
    while (this.buffer.length >= 4) {
      const length = this.buffer.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) throw new Error(`Cast frame of ${length} bytes is over the bound`);
      if (this.buffer.length < 4 + length) break;
      const m = CastMessage.toObject(CastMessage.decode(this.buffer.subarray(4, 4 + length))) as { sourceId?: string; destinationId?: string; namespace?: string; payloadUtf8?: string };
      this.buffer = this.buffer.subarray(4 + length);
      out.push({ sourceId: m.sourceId ?? '', destinationId: m.destinationId ?? '', namespace: m.namespace ?? '', data: JSON.parse(m.payloadUtf8 ?? '{}') as Record<string, unknown> });
    }
    return out;
  }
}

export class CastError extends Error {
  override readonly name = 'CastError';
  constructor(
    readonly failure: 'unreachable' | 'timeout' | 'rejected' | 'closed' | 'protocol',
    message: string,
  ) {
    super(message);
  }

  /** The failure's cause (platform/network-failures.ts): a session that closed is as good as unreachable; what the receiver refused or garbled is `rejected`. */
  get networkFailure(): NetworkFailure {
    if (this.failure === 'timeout') return 'timeout';
    if (this.failure === 'unreachable' || this.failure === 'closed') return 'unreachable';
    return 'rejected';
  }
}

/**
 * A sender's session with a Cast receiver, for playing a URL: connect, launch the Default Media
 * Receiver (or join it when it runs), LOAD the media, then media commands (PLAY, PAUSE, STOP,
 * SEEK) and receiver volume. Every request waits for its answer (matched by requestId), bounded.
 */
export class CastSender {
  private socket: TLSSocket | null = null;
  private readonly reader = new CastReader();
  private nextRequest = 1;
  private readonly waiting = new Map<number, { resolve(d: Record<string, unknown>): void; reject(e: CastError): void; timer: TimerHandle }>();
  private heartbeat: NodeJS.Timeout | null = null;
  private transportId: string | null = null;
  private mediaSessionId: number | null = null;

  /** `timers` bound the connection and each request; the heartbeat keeps Node's (see `open`). */
  constructor(private readonly o: { host: string; port?: number; timeoutMs: number; timers: Timers }) {}

  /** Connects (TLS, the receiver's self-signed certificate accepted) and opens the virtual connection to the receiver. */
  async open(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const timer = this.o.timers.setTimeout(() => {
        socket.destroy();
        reject(new CastError('timeout', `no TLS connection to ${this.o.host} within ${this.o.timeoutMs} ms`));
      }, this.o.timeoutMs);
      const socket = connect({ host: this.o.host, port: this.o.port ?? CAST_PORT, rejectUnauthorized: false }, () => {
        this.o.timers.clearTimeout(timer);
        resolve();
      });
      this.socket = socket;
      socket.on('data', (chunk: Buffer) => this.receive(chunk));
      socket.on('error', (err: NodeJS.ErrnoException) => {
        this.o.timers.clearTimeout(timer);
        const cause = networkFailureOf(err);
        reject(new CastError(cause === 'unreachable' || cause === 'timeout' ? cause : 'closed', `${this.o.host}: ${err.code ?? err.message}`));
        this.fail(new CastError('closed', err.message));
      });
      socket.on('close', () => this.fail(new CastError('closed', 'the receiver closed the connection')));
    });
    this.send('receiver-0', NS.connection, { type: 'CONNECT' });
    // Node's timer, not the injected one: the PING keeps the session alive for the receiver, which
    // drops a silent sender by its own wall clock; the hub's clock standing still must not stop it.
    this.heartbeat = setInterval(() => this.send('receiver-0', NS.heartbeat, { type: 'PING' }), 5000);
    this.heartbeat.unref();
  }

  /** Launches (or joins) the Default Media Receiver and loads the URL; resolves with the media status. */
  async load(url: string, contentType: string, metadata: { title?: string; artist?: string } = {}): Promise<Record<string, unknown>> {
    const status = await this.request('receiver-0', NS.receiver, { type: 'GET_STATUS' });
    let app = this.appOf(status);
    if (!app) app = this.appOf(await this.request('receiver-0', NS.receiver, { type: 'LAUNCH', appId: DEFAULT_MEDIA_RECEIVER }));
    if (!app) throw new CastError('rejected', 'the receiver did not launch the Default Media Receiver');
    this.transportId = app;
    this.send(app, NS.connection, { type: 'CONNECT' });
    const loaded = await this.request(app, NS.media, {
      type: 'LOAD',
      autoplay: true,
      currentTime: 0,
      media: { contentId: url, contentType, streamType: 'BUFFERED', metadata: { metadataType: 3, ...metadata } },
    });
    if (loaded.type === 'LOAD_FAILED' || loaded.type === 'INVALID_REQUEST') throw new CastError('rejected', `the receiver refused the media: ${String(loaded.reason ?? loaded.type)}`);
    const first = (loaded.status as Array<{ mediaSessionId?: number }> | undefined)?.[0];
    this.mediaSessionId = first?.mediaSessionId ?? null;
    return loaded;
  }

  async media(type: 'PLAY' | 'PAUSE' | 'STOP' | 'SEEK', extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    if (!this.transportId || this.mediaSessionId === null) throw new CastError('rejected', 'nothing is loaded on the receiver');
    return this.request(this.transportId, NS.media, { type, mediaSessionId: this.mediaSessionId, ...extra });
  }

  /** The receiver's volume and the app in front (RECEIVER_STATUS). */
  async receiverStatus(): Promise<{ volume: number | null; muted: boolean | null; app: string | null }> {
    const status = (await this.request('receiver-0', NS.receiver, { type: 'GET_STATUS' })).status as
      | { volume?: { level?: number; muted?: boolean }; applications?: Array<{ displayName?: string }> }
      | undefined;
    const level = status?.volume?.level;
    return {
      volume: typeof level === 'number' ? Math.round(level * 100) : null,
      muted: typeof status?.volume?.muted === 'boolean' ? status.volume.muted : null,
      app: status?.applications?.[0]?.displayName ?? null,
    };
  }

  async setVolume(volume: { level?: number; muted?: boolean }): Promise<Record<string, unknown>> {
    return this.request('receiver-0', NS.receiver, { type: 'SET_VOLUME', volume });
  }

  close(): void {
    this.fail(new CastError('closed', 'closed by the hub'));
  }

  private appOf(status: Record<string, unknown>): string | null {
    const apps = (status.status as { applications?: Array<{ appId?: string; transportId?: string }> } | undefined)?.applications ?? [];
    return apps.find((a) => a.appId === DEFAULT_MEDIA_RECEIVER)?.transportId ?? null;
  }

  private send(destinationId: string, namespace: string, data: Record<string, unknown>): void {
    this.socket?.write(encodeCast({ sourceId: 'sender-0', destinationId, namespace, data }));
  }

  private request(destinationId: string, namespace: string, data: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (!this.socket || this.socket.destroyed) return Promise.reject(new CastError('closed', 'not connected to the receiver'));
    const requestId = this.nextRequest++;
    return new Promise((resolve, reject) => {
      const timer = this.o.timers.setTimeout(() => {
        this.waiting.delete(requestId);
        reject(new CastError('timeout', `the receiver did not answer ${String(data.type)} within ${this.o.timeoutMs} ms`));
      }, this.o.timeoutMs);
      this.waiting.set(requestId, { resolve, reject, timer });
      this.send(destinationId, namespace, { ...data, requestId });
    });
  }

  private receive(chunk: Buffer): void {
    let messages: CastEnvelope[];
    try {
      messages = this.reader.push(chunk);
    } catch (err) {
      return this.fail(new CastError('protocol', err instanceof Error ? err.message : String(err)));
    }
    for (const m of messages) {
      if (m.namespace === NS.heartbeat && m.data.type === 'PING') {
        this.send(m.sourceId, NS.heartbeat, { type: 'PONG' });
        continue;
      }
      const id = typeof m.data.requestId === 'number' ? m.data.requestId : undefined;
      const w = id === undefined ? undefined : this.waiting.get(id);
      if (!w) continue;
      this.o.timers.clearTimeout(w.timer);
      this.waiting.delete(id!);
      w.resolve(m.data);
    }
  }

  private fail(error: CastError): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.socket?.destroy();
    this.socket = null;
    for (const [id, w] of this.waiting) {
      this.o.timers.clearTimeout(w.timer);
      w.reject(error);
      this.waiting.delete(id);
    }
  }
}
