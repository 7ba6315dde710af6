/**
 * Soak stream clients (bench/soak.ts): SSE clients of `GET /app/os/state/stream` and Socket.IO
 * clients of `/socket/hub-protocol` (websocket transport) in one process. A share of each kind
 * are "churn" clients: on every `churn` call (the harness makes one every 10 s) they disconnect
 * and connect again. SSE churn clients alternate between a fresh connection (a new snapshot) and
 * a resume with `Last-Event-ID` (what a browser's EventSource does), so both paths are exercised.
 * A client the hub closes on its own is counted as an unexpected close and connected again on the
 * next `churn` call.
 *
 * Per kind it counts the events received by name, the connects (ok / failed, with the SSE status
 * codes and the time to the first event), and for SSE the delay from the bench driver's `sentAt`
 * (its Date.now() when it sent the STATE_UPDATE) to receipt, in a whole-millisecond histogram.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
import { Samples, assertLoopback, percentiles, serveAgent } from './runtime.js';
import { SseFrameReader, eventName, numberAfter } from '../lib/sse-frames.js';

type Kind = 'sse' | 'socketio';

interface Client {
  kind: Kind;
  churn: boolean;
  open: boolean;
  /** Set when we close it on purpose (churn, end of run). */
  closing: boolean;
  lastEventId: string | undefined;
  /** Incremented by every connect: events of an earlier connection no longer count as this one's. */
  generation: number;
  close(): void;
}

interface KindStats {
  connects: number;
  connectFailures: number;
  connectFailureReasons: Record<string, number>;
  /** SSE: HTTP status of every connect attempt. */
  statusCodes: Record<string, number>;
  connectMs: Samples;
  events: Record<string, number>;
  unexpectedCloses: number;
  unexpectedCloseReasons: string[];
  resumes: number;
}

const MAX_MS = 30_000;
const sseLatency = new Uint32Array(MAX_MS + 1);
const clients: Client[] = [];
const stats: Record<Kind, KindStats> = { sse: newStats(), socketio: newStats() };
let baseUrl = '';
let token = '';
let churnCycles = 0;

function newStats(): KindStats {
  return { connects: 0, connectFailures: 0, connectFailureReasons: {}, statusCodes: {}, connectMs: new Samples(100_000), events: {}, unexpectedCloses: 0, unexpectedCloseReasons: [], resumes: 0 };
}

function countEvent(kind: Kind, name: string, n = 1): void {
  const e = stats[kind].events;
  e[name] = (e[name] ?? 0) + n;
}

function connectFailed(kind: Kind, reason: string): void {
  const s = stats[kind];
  s.connectFailures++;
  if (s.connectFailureReasons[reason] !== undefined || Object.keys(s.connectFailureReasons).length < 20) s.connectFailureReasons[reason] = (s.connectFailureReasons[reason] ?? 0) + 1;
}

function closedUnexpectedly(client: Client, generation: number, reason: string): void {
  if (client.generation !== generation || !client.open || client.closing) return;
  client.open = false;
  const s = stats[client.kind];
  s.unexpectedCloses++;
  if (s.unexpectedCloseReasons.length < 10) s.unexpectedCloseReasons.push(reason);
}


/** Opens (or reopens) an SSE client; resolves once its `ready` event arrived. */
function connectSse(client: Client, resume: boolean): Promise<void> {
  const generation = ++client.generation;
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let ready = false;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (resume && client.lastEventId !== undefined) {
      headers['last-event-id'] = client.lastEventId;
      stats.sse.resumes++;
    }
    const fail = (reason: string) => {
      if (ready) return;
      clearTimeout(timer);
      req.destroy();
      connectFailed('sse', reason);
      reject(new Error(reason));
    };
    const timer = setTimeout(() => fail('no ready event within 20 s'), 20_000);
    const req = http.get(`${baseUrl}/app/os/state/stream?accessToken=${encodeURIComponent(token)}`, { agent: false, headers }, (res) => {
      const status = String(res.statusCode ?? 0);
      stats.sse.statusCodes[status] = (stats.sse.statusCodes[status] ?? 0) + 1;
      if (res.statusCode !== 200) {
        res.resume();
        fail(`status ${status}`);
        return;
      }
      res.setEncoding('utf8');
      let now = 0;
      const frames = new SseFrameReader((frame) => {
        const { text, start, eventAt, end } = frame;
        const name = eventName(frame);
        countEvent('sse', name);
        if (name === 'state') {
          const sentAt = numberAfter(text, '"sentAt":', eventAt, end);
          if (sentAt > 0) sseLatency[Math.min(MAX_MS, Math.max(0, now - sentAt))]!++;
        } else if (name === 'ready' && !ready) {
          ready = true;
          clearTimeout(timer);
          client.open = true;
          stats.sse.connects++;
          stats.sse.connectMs.push(performance.now() - t0);
          resolve();
        }
        const idAt = text.indexOf('id: ', start);
        if (idAt !== -1 && idAt < eventAt) client.lastEventId = text.slice(idAt + 4, text.indexOf('\n', idAt));
      });
      res.on('data', (chunk: string) => {
        now = Date.now();
        frames.push(chunk);
        // Bounded: a frame never grows past 8 MiB here (a snapshot of 200 devices is far smaller).
        if (frames.held > 8 * 2 ** 20) req.destroy(new Error('frame too large'));
      });
      res.on('close', () => closedUnexpectedly(client, generation, 'stream ended'));
    });
    req.on('error', (err) => {
      if (!ready) fail(err.message);
      else closedUnexpectedly(client, generation, err.message);
    });
    client.close = () => req.destroy();
  });
}

/** Opens (or reopens) a Socket.IO client of /socket/hub-protocol; resolves once connected. */
function connectSocketIo(client: Client): Promise<void> {
  const generation = ++client.generation;
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const socket: Socket = io(`${baseUrl}/socket/hub-protocol`, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true, timeout: 20_000 });
    client.close = () => socket.disconnect();
    socket.on('hub:event', (e: { type?: unknown }) => countEvent('socketio', typeof e?.type === 'string' ? e.type : 'hub:event'));
    socket.once('connect', () => {
      client.open = true;
      stats.socketio.connects++;
      stats.socketio.connectMs.push(performance.now() - t0);
      resolve();
    });
    socket.once('connect_error', (err) => {
      socket.disconnect();
      connectFailed('socketio', err.message);
      reject(err);
    });
    socket.on('disconnect', (reason) => closedUnexpectedly(client, generation, reason));
  });
}

function connect(client: Client, resume = false): Promise<void> {
  client.closing = false;
  return client.kind === 'sse' ? connectSse(client, resume) : connectSocketIo(client);
}

async function open(p: { baseUrl: string; token: string; sse: number; socketio: number; churnFraction: number }) {
  assertLoopback(p.baseUrl);
  baseUrl = p.baseUrl;
  token = p.token;
  const fresh: Client[] = [];
  for (const [kind, count] of [
    ['sse', p.sse],
    ['socketio', p.socketio],
  ] as [Kind, number][]) {
    const churning = Math.round(count * p.churnFraction);
    for (let i = 0; i < count; i++) fresh.push({ kind, churn: i < churning, open: false, closing: false, lastEventId: undefined, generation: 0, close: () => {} });
  }
  const results = await Promise.allSettled(fresh.map((c) => connect(c)));
  clients.push(...fresh);
  const failed = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
  return { opened: fresh.length - failed.length, failed: failed.length, errors: failed.slice(0, 5) };
}

/**
 * Disconnects every churn client and connects it again, and connects again any other client
 * that the hub closed; resolves when all are back (each connect bounded at 20 s).
 */
async function churn() {
  const t0 = performance.now();
  churnCycles++;
  const resume = churnCycles % 2 === 0;
  const churning = clients.filter((c) => c.churn);
  const recovering = clients.filter((c) => !c.churn && !c.open);
  for (const c of churning) {
    c.closing = true;
    c.open = false;
    c.close();
  }
  const results = await Promise.allSettled([...churning.map((c) => connect(c, resume)), ...recovering.map((c) => connect(c, true))]);
  const failed = results.filter((r) => r.status === 'rejected').length;
  return { cycle: churnCycles, reconnected: results.length - failed, failed, recovered: recovering.length, ms: performance.now() - t0 };
}

function histogramPercentile(p: number): number | null {
  let total = 0;
  for (const n of sseLatency) total += n;
  if (total === 0) return null;
  const rank = Math.ceil((p / 100) * total);
  let seen = 0;
  for (let ms = 0; ms < sseLatency.length; ms++) {
    seen += sseLatency[ms]!;
    if (seen >= rank) return ms;
  }
  return MAX_MS;
}

function report() {
  const out: Record<string, unknown> = { churnCycles };
  for (const kind of ['sse', 'socketio'] as Kind[]) {
    const s = stats[kind];
    const mine = clients.filter((c) => c.kind === kind);
    out[kind] = {
      clients: mine.length,
      churnClients: mine.filter((c) => c.churn).length,
      openNow: mine.filter((c) => c.open).length,
      connects: s.connects,
      connectFailures: s.connectFailures,
      connectFailureReasons: s.connectFailureReasons,
      statusCodes: s.statusCodes,
      resumes: s.resumes,
      connectMs: { ...percentiles(s.connectMs.values(), [50, 99]), max: s.connectMs.length ? Math.max(...s.connectMs.values()) : null },
      events: s.events,
      unexpectedCloses: s.unexpectedCloses,
      unexpectedCloseReasons: s.unexpectedCloseReasons,
    };
  }
  out.sseStateDelayMs = { p50: histogramPercentile(50), p99: histogramPercentile(99), 'p99.9': histogramPercentile(99.9), max: histogramPercentile(100) };
  return out;
}

function closeAll() {
  for (const c of clients.splice(0)) {
    c.closing = true;
    c.close();
  }
  return { closed: true };
}

serveAgent('soak-streams', { open: open as never, churn: churn as never, stats: report as never, close: closeAll as never }, () => {
  for (const c of clients) {
    c.closing = true;
    c.close();
  }
});
