/**
 * Stream clients in one process: SSE clients of GET /app/os/state/stream and/or Socket.IO clients
 * of /socket/device-state (websocket transport). Each counts, per step, the state changes it
 * received whose state carries `{seq, sentAt, step}` (the bench driver's `rate`), and the delay
 * from `sentAt` (the driver's Date.now() when it sent the STATE_UPDATE) to receipt (this
 * process's Date.now(); same machine clock, so 1 ms resolution) goes into a per-step histogram.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
import { assertLoopback, serveAgent } from './runtime.js';
import { SseFrameReader, numberAfter } from '../lib/sse-frames.js';

type Kind = 'sse' | 'socketio';

interface Client {
  kind: Kind;
  received: Map<number, number>;
  closed: boolean;
  closeReason?: string;
  close(): void;
}

/** Latency histogram buckets: whole milliseconds 0..MAX_MS-1, the last one collects the rest. */
const MAX_MS = 30_000;
const clients: Client[] = [];
const histograms = new Map<string, Uint32Array>();

function record(client: Client, step: number, latencyMs: number): void {
  client.received.set(step, (client.received.get(step) ?? 0) + 1);
  const key = `${client.kind}:${step}`;
  let h = histograms.get(key);
  if (!h) {
    h = new Uint32Array(MAX_MS + 1);
    histograms.set(key, h);
  }
  h[Math.min(MAX_MS, Math.max(0, Math.round(latencyMs)))]!++;
}


function openSse(baseUrl: string, token: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    let ready = false;
    const client: Client = {
      kind: 'sse',
      received: new Map(),
      closed: false,
      close: () => req.destroy(),
    };
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error('SSE: no snapshot within 20 s'));
    }, 20_000);
    const req = http.get(`${baseUrl}/app/os/state/stream?accessToken=${encodeURIComponent(token)}`, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        clearTimeout(timer);
        res.resume();
        reject(new Error(`SSE: status ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      let now = 0;
      const frames = new SseFrameReader(({ text, eventAt, end }) => {
        if (text.startsWith('event: state\n', eventAt)) {
          const step = numberAfter(text, '"step":', eventAt, end);
          const sentAt = numberAfter(text, '"sentAt":', eventAt, end);
          if (step > 0 && sentAt > 0) record(client, step, now - sentAt);
        } else if (!ready && text.startsWith('event: snapshot\n', eventAt)) {
          ready = true;
          clearTimeout(timer);
          resolve(client);
        }
      });
      res.on('data', (chunk: string) => {
        now = Date.now();
        frames.push(chunk);
      });
      res.on('close', () => {
        client.closed = true;
        client.closeReason ??= 'stream ended';
      });
    });
    req.on('error', (err) => {
      client.closed = true;
      client.closeReason = err.message;
      if (!ready) {
        clearTimeout(timer);
        reject(err);
      }
    });
  });
}

function openSocketIo(baseUrl: string, token: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket: Socket = io(`${baseUrl}/socket/device-state`, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true, timeout: 20_000 });
    const client: Client = { kind: 'socketio', received: new Map(), closed: false, close: () => socket.disconnect() };
    socket.on('device:state:update', (msg: { state?: { step?: number; sentAt?: number } }) => {
      const s = msg?.state;
      if (s && typeof s.step === 'number' && typeof s.sentAt === 'number') record(client, s.step, Date.now() - s.sentAt);
    });
    socket.once('connect', () => resolve(client));
    socket.once('connect_error', (err) => {
      socket.disconnect();
      reject(err);
    });
    socket.on('disconnect', (reason) => {
      client.closed = true;
      client.closeReason = reason;
    });
  });
}

async function open({ baseUrl, token, kind, count, parallel = 25 }: { baseUrl: string; token: string; kind: Kind; count: number; parallel?: number }) {
  assertLoopback(baseUrl);
  const t0 = performance.now();
  let failed = 0;
  const errors: string[] = [];
  for (let i = 0; i < count; i += parallel) {
    const wave = Array.from({ length: Math.min(parallel, count - i) }, () => (kind === 'sse' ? openSse(baseUrl, token) : openSocketIo(baseUrl, token)));
    for (const r of await Promise.allSettled(wave)) {
      if (r.status === 'fulfilled') clients.push(r.value);
      else {
        failed++;
        if (errors.length < 5) errors.push(String(r.reason));
      }
    }
  }
  return { opened: count - failed, failed, errors, ms: performance.now() - t0 };
}

function progress({ step, expected }: { step: number; expected: number }) {
  let complete = 0;
  let closed = 0;
  for (const c of clients) {
    if ((c.received.get(step) ?? 0) >= expected) complete++;
    if (c.closed) closed++;
  }
  return { clients: clients.length, complete, closed };
}

function collect({ step, expected }: { step: number; expected: number }) {
  const byKind: Record<string, { clients: number; complete: number; closed: number; closeReasons: string[]; totalReceived: number; minReceived: number; maxReceived: number; histogram: [number, number][] }> = {};
  for (const c of clients) {
    const k = (byKind[c.kind] ??= { clients: 0, complete: 0, closed: 0, closeReasons: [], totalReceived: 0, minReceived: Infinity, maxReceived: 0, histogram: [] });
    const n = c.received.get(step) ?? 0;
    k.clients++;
    if (n >= expected) k.complete++;
    if (c.closed) {
      k.closed++;
      if (k.closeReasons.length < 3 && c.closeReason) k.closeReasons.push(c.closeReason);
    }
    k.totalReceived += n;
    k.minReceived = Math.min(k.minReceived, n);
    k.maxReceived = Math.max(k.maxReceived, n);
  }
  for (const [kind, k] of Object.entries(byKind)) {
    const h = histograms.get(`${kind}:${step}`);
    if (h) for (let ms = 0; ms < h.length; ms++) if (h[ms]! > 0) k.histogram.push([ms, h[ms]!]);
    if (k.minReceived === Infinity) k.minReceived = 0;
  }
  return byKind;
}

function closeAll() {
  for (const c of clients.splice(0)) c.close();
  return { closed: true };
}

serveAgent('stream-clients', { open: open as never, progress: progress as never, collect: collect as never, close: closeAll as never }, () => {
  for (const c of clients) c.close();
});
