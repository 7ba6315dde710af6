/**
 * Bench driver: a WebSocket driver (the `ws` package) in its own process. It registers,
 * discovers devices, answers every ACTION at once with `ACTION_RESULT ok:true`, and sends
 * STATE_UPDATEs on request: as fast as the socket takes them (`flood`) or at a steady rate with
 * a send timestamp (`rate`). Methods are called by the harness through bench/lib/agent.ts.
 */
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { Samples, assertLoopback, percentiles, serveAgent } from './runtime.js';

let ws: WebSocket | undefined;
let registered = false;
let actionsAnswered = 0;
let statusErrors = 0;
let lastStatusError: string | undefined;
/** Driver's own time per ACTION: from the message event to the answer handed to the socket. */
const ownTimes = new Samples(2_000_000);
let seq = 0;
const floodCounts = new Map<string, number>();

function socket(): WebSocket {
  if (!ws || ws.readyState !== WebSocket.OPEN || !registered) throw new Error('not connected');
  return ws;
}

/** Sends `text` and resolves once it (and so everything before it) has been handed to the kernel. */
function sendFlushed(s: WebSocket, text: string): Promise<void> {
  return new Promise((resolve, reject) => s.send(text, (err) => (err ? reject(err) : resolve())));
}

function onMessage(data: WebSocket.RawData): void {
  const t0 = performance.now();
  const text = data.toString();
  let msg: { type?: string; actionId?: string; status?: string; code?: string; message?: string };
  try {
    msg = JSON.parse(text) as typeof msg;
  } catch {
    return;
  }
  if (msg.type === 'ACTION' || msg.type === 'COMMAND_EXECUTE') {
    ws!.send(`{"type":"ACTION_RESULT","actionId":${JSON.stringify(msg.actionId)},"ok":true}`);
    actionsAnswered++;
    ownTimes.push(performance.now() - t0);
    return;
  }
  if (msg.type === 'DRIVER_STATUS' && msg.status === 'error') {
    statusErrors++;
    lastStatusError = `${msg.code}: ${msg.message}`;
  }
}

interface ConnectParams {
  url: string;
  driverKey: string;
  instanceId: string;
}

async function connect({ url, driverKey, instanceId }: ConnectParams): Promise<{ ms: number }> {
  assertLoopback(url);
  const t0 = performance.now();
  const s = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: 10_000 });
  ws = s;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('registration not confirmed within 10 s')), 10_000);
    s.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    s.once('open', () => s.send(JSON.stringify({ method: 'driver.register', driverKey, instanceId, protocolVersion: 1, name: 'Bench driver', version: '1.0.0' })));
    const onFirst = (data: WebSocket.RawData) => {
      const msg = JSON.parse(data.toString()) as { type?: string; status?: string; message?: string };
      if (msg.type !== 'DRIVER_STATUS') return;
      s.off('message', onFirst);
      clearTimeout(timer);
      if (msg.status === 'registered') resolve();
      else reject(new Error(`registration refused: ${msg.message}`));
    };
    s.on('message', onFirst);
  });
  registered = true;
  s.on('message', onMessage);
  s.on('close', () => {
    registered = false;
  });
  return { ms: performance.now() - t0 };
}

interface DiscoverParams {
  /** Driver device ids are `${prefix}${i}` for i in [from, from + count). */
  prefix: string;
  from: number;
  count: number;
  commands?: unknown[];
  category?: string;
  properties?: Record<string, unknown>;
  state?: Record<string, unknown>;
}

async function discover(p: DiscoverParams): Promise<{ sent: number; ms: number }> {
  const s = socket();
  const t0 = performance.now();
  for (let i = p.from; i < p.from + p.count; i++) {
    const device = {
      id: `${p.prefix}${i}`,
      name: `Bench device ${i}`,
      category: p.category ?? 'light',
      ...(p.commands ? { commands: p.commands } : {}),
      ...(p.properties ? { properties: p.properties } : {}),
      ...(p.state ? { state: p.state } : {}),
    };
    const text = JSON.stringify({ type: 'DEVICE_DISCOVERED', device });
    // Every 200 messages and at the end, wait for the kernel to take what was sent.
    if (i % 200 === 199 || i === p.from + p.count - 1) await sendFlushed(s, text);
    else s.send(text);
  }
  return { sent: p.count, ms: performance.now() - t0 };
}

interface FloodParams {
  deviceIds: string[];
  seconds: number;
  /** Hard cap on messages (bounds the loop whatever the speed). */
  maxMessages?: number;
  /** Keep at most this much in the send buffer before waiting for the kernel to take it. */
  highWaterBytes?: number;
  /**
   * Also change what a light shows (bench/homekit.ts: values HomeKit renders): each update is
   * `{n, brightness: n % 101, on: n % 2 === 0}` instead of `{n}`. Off unless set.
   */
  light?: boolean;
}

/**
 * STATE_UPDATEs round-robin over `deviceIds`, as fast as the socket takes them. Each carries a
 * per-device counter `n` (1, 2, ...; continued by the next call): the harness knows each
 * device's last value, so it can tell from a snapshot when every update has been applied.
 * With `light`, the update also carries the brightness and on/off derived from `n`.
 */
async function flood(p: FloodParams): Promise<{ sent: number; finalCounts: number[]; startedAt: number; endedAt: number; sendSeconds: number; waits: number }> {
  const s = socket();
  const ids = p.deviceIds.map((id) => JSON.stringify(id));
  // Counters run on across calls, so a later flood never repeats a value an earlier one left.
  const counts = p.deviceIds.map((id) => floodCounts.get(id) ?? 0);
  const highWater = p.highWaterBytes ?? 256 * 1024;
  const maxMessages = p.maxMessages ?? 5_000_000;
  const startedAt = Date.now();
  const t0 = performance.now();
  const deadline = t0 + p.seconds * 1000;
  let sent = 0;
  let waits = 0;
  let d = 0;
  while (sent < maxMessages && performance.now() < deadline) {
    // A burst while the buffer is low; its last message waits for the kernel to take it, so the
    // loop never runs ahead of what the socket (TCP backpressure from the hub) accepts.
    for (let burst = 0; sent < maxMessages; burst++) {
      const n = ++counts[d]!;
      const text = p.light
        ? `{"type":"STATE_UPDATE","deviceId":${ids[d]},"state":{"n":${n},"brightness":${n % 101},"on":${n % 2 === 0}}}`
        : `{"type":"STATE_UPDATE","deviceId":${ids[d]},"state":{"n":${n}}}`;
      sent++;
      d = d + 1 === ids.length ? 0 : d + 1;
      if (burst === 499 || s.bufferedAmount >= highWater || sent === maxMessages) {
        waits++;
        await sendFlushed(s, text);
        break;
      }
      s.send(text);
    }
  }
  const sendSeconds = (performance.now() - t0) / 1000;
  p.deviceIds.forEach((id, i) => floodCounts.set(id, counts[i]!));
  return { sent, finalCounts: counts, startedAt, endedAt: Date.now(), sendSeconds, waits };
}

interface RateParams {
  deviceIds: string[];
  ratePerSecond: number;
  seconds: number;
  /** Step number, put in the state so that clients can count per step. */
  step: number;
}

/**
 * STATE_UPDATEs at a steady rate (round-robin over `deviceIds`), each with state
 * `{seq, sentAt: Date.now(), step}`; seq runs on across calls.
 */
async function rate(p: RateParams): Promise<{ step: number; sent: number; firstSeq: number; lastSeq: number; startedAt: number; endedAt: number; achievedPerSecond: number; maxBehindMessages: number }> {
  const s = socket();
  const ids = p.deviceIds.map((id) => JSON.stringify(id));
  const total = Math.round(p.ratePerSecond * p.seconds);
  const firstSeq = seq + 1;
  const startedAt = Date.now();
  const t0 = performance.now();
  let sent = 0;
  let d = 0;
  let maxBehind = 0;
  const hardDeadline = t0 + p.seconds * 1000 * 3 + 5000;
  while (sent < total && performance.now() < hardDeadline) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * p.ratePerSecond) + 1);
    maxBehind = Math.max(maxBehind, due - sent);
    let last: Promise<void> | undefined;
    while (sent < due) {
      seq++;
      const text = `{"type":"STATE_UPDATE","deviceId":${ids[d]},"state":{"seq":${seq},"sentAt":${Date.now()},"step":${p.step}}}`;
      sent++;
      d = d + 1 === ids.length ? 0 : d + 1;
      if (sent === total) last = sendFlushed(s, text);
      else s.send(text);
    }
    if (last) await last;
    if (sent >= total) break;
    // Sleep until the next message is due (at least 1 ms: timers are the pacing, not a spin).
    const nextAt = t0 + (sent / p.ratePerSecond) * 1000;
    await new Promise((r) => setTimeout(r, Math.max(1, nextAt - performance.now())));
  }
  const seconds = (performance.now() - t0) / 1000;
  return { step: p.step, sent, firstSeq, lastSeq: seq, startedAt, endedAt: Date.now(), achievedPerSecond: sent / seconds, maxBehindMessages: maxBehind };
}

function stats(params: { reset?: boolean }) {
  const own = ownTimes.values();
  const out = {
    actionsAnswered,
    statusErrors,
    lastStatusError,
    ownTimeMs: { mean: own.length ? own.reduce((a, b) => a + b, 0) / own.length : null, ...percentiles(own, [50, 99]) },
  };
  if (params.reset) {
    actionsAnswered = 0;
    ownTimes.clear();
  }
  return out;
}

serveAgent(
  'driver',
  {
    connect: connect as never,
    discover: discover as never,
    flood: flood as never,
    rate: rate as never,
    stats: stats as never,
    close: () => {
      ws?.close(1000, 'bench done');
      return { closed: true };
    },
  },
  () => ws?.terminate(),
);
