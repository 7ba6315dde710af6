/**
 * Soak traffic agent (bench/soak.ts): timer-paced, open-loop HTTP and hub-protocol traffic for a
 * bounded time. The harness starts two of these, one that only probes `GET /healthz` (so that
 * nothing else in its event loop delays a probe) and one for the device commands and the polls.
 *
 * - `probe`: `GET /healthz` every `intervalMs`.
 * - `commands`: `POST /app/os/devices/:id/command {"command": ...}` at `ratePerSecond`, round-robin
 *   over the given hub device ids. A command is ok when it answers 200 with `ok: true`.
 * - `polls`: `restClients` clients each `GET /app/os/devices/:id` and `hubClients` Socket.IO clients
 *   of `/socket/hub-protocol` each `hub:command GET_DEVICE_STATE` (acknowledged), every
 *   `intervalMs`.
 * - `snapshot`: the counters so far (the harness reads them every 10 s).
 * - `finish`: stops every loop, waits (bounded) for what is in flight, and returns the figures.
 *
 * Pacing is by timers (never a spin): each tick sends what is due by then and sleeps until the
 * next is due; what a tick finds overdue goes at once, so a late timer delays messages but does
 * not lose them, and how far behind the schedule the agent ever was is reported. HTTP goes over
 * keep-alive sockets in fixed pools, opened before the run and used in turn (`scheduling: 'fifo'`),
 * so that the hub's descriptor count does not move with this agent's connection reuse. Latency is
 * timed from the call (with `performance.now()`), so time a request waits for a pool socket
 * counts. Loops stop after their count and at their deadline, whichever comes first.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
import { Samples, assertLoopback, percentiles, serveAgent } from './runtime.js';

interface Reply {
  status: number;
  body: string;
}

/** One request on `agent`; rejects on a network error or after `timeoutMs`. */
function send(agent: http.Agent, url: string, init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs: number }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers = init.body === undefined ? init.headers : { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) };
    const req = http.request(url, { method: init.method ?? 'GET', agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < 65_536) body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.setTimeout(init.timeoutMs, () => req.destroy(new Error(`timeout after ${init.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(init.body);
  });
}

/** A keep-alive pool of exactly `sockets` connections, opened now with concurrent `GET /healthz`. */
async function pool(baseUrl: string, sockets: number): Promise<http.Agent> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets, scheduling: 'fifo' });
  await Promise.all(Array.from({ length: sockets }, () => send(agent, `${baseUrl}/healthz`, { timeoutMs: 10_000 })));
  return agent;
}

/** What one kind of traffic saw. */
class Tally {
  sent = 0;
  ok = 0;
  failed = 0;
  /** HTTP status codes (or `error` / `timeout` for no answer). */
  readonly statusCodes: Record<string, number> = {};
  readonly failures: Record<string, number> = {};
  readonly latency = new Samples(2_000_000);
  /** Latencies since the last `interval()` (reset there). */
  private window: number[] = [];
  inFlight = 0;
  maxInFlight = 0;

  begin(): number {
    this.sent++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return performance.now();
  }

  end(t0: number, status: string, ok: boolean, failure?: string): void {
    const ms = performance.now() - t0;
    this.inFlight--;
    this.statusCodes[status] = (this.statusCodes[status] ?? 0) + 1;
    this.latency.push(ms);
    if (this.window.length < 100_000) this.window.push(ms);
    if (ok) this.ok++;
    else {
      this.failed++;
      const key = failure ?? status;
      // Bounded: at most 50 distinct reasons are kept.
      if (this.failures[key] !== undefined || Object.keys(this.failures).length < 50) this.failures[key] = (this.failures[key] ?? 0) + 1;
    }
  }

  /** Counters so far, and p99/max of the latencies since the previous call. */
  interval() {
    const w = this.window;
    this.window = [];
    const p = percentiles(w, [99]);
    return { sent: this.sent, ok: this.ok, failed: this.failed, inFlight: this.inFlight, answered: w.length, p99Ms: p.p99 ?? null, maxMs: w.length ? Math.max(...w) : null };
  }

  figures() {
    const values = this.latency.values();
    const mean = values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
    return {
      sent: this.sent,
      ok: this.ok,
      failed: this.failed,
      unanswered: this.inFlight,
      maxInFlight: this.maxInFlight,
      statusCodes: this.statusCodes,
      failures: this.failures,
      latencyMs: { mean, ...percentiles(values, [50, 90, 99, 99.9]), max: values.length ? values[values.length - 1]! : null },
    };
  }
}

/** Code of an HTTP status for the tallies: `2xx`-style classes are derived later from these. */
const statusKey = (err: unknown): string => (err instanceof Error && err.message.startsWith('timeout') ? 'timeout' : 'error');

interface Paced {
  /** Messages due by the schedule, sent, and how far behind the schedule a tick ever found itself. */
  readonly due: number;
  readonly fired: number;
  readonly maxBehind: number;
  readonly maxTimerLateMs: number;
  readonly startedAt: number;
  readonly stoppedAt: number | undefined;
  stop(): void;
  readonly done: Promise<void>;
}

/**
 * Calls `fire(i)` `ratePerSecond` times a second for `seconds`, paced by timers. Bounded by the
 * count (rate × seconds), by the deadline, and by `stop()`.
 */
function paced(ratePerSecond: number, seconds: number, fire: (i: number) => void): Paced {
  const total = Math.round(ratePerSecond * seconds);
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000 + 1000;
  let timer: NodeJS.Timeout | undefined;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((r) => {
    resolveDone = r;
  });
  const state = {
    due: 0,
    fired: 0,
    maxBehind: 0,
    maxTimerLateMs: 0,
    startedAt: Date.now(),
    stoppedAt: undefined as number | undefined,
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (state.stoppedAt === undefined) state.stoppedAt = Date.now();
      resolveDone();
    },
    done,
  };
  let expectedAt = t0;
  const tick = () => {
    const now = performance.now();
    state.maxTimerLateMs = Math.max(state.maxTimerLateMs, now - expectedAt);
    if (now > deadline) return state.stop();
    state.due = Math.min(total, Math.floor(((now - t0) / 1000) * ratePerSecond) + 1);
    state.maxBehind = Math.max(state.maxBehind, state.due - state.fired);
    while (state.fired < state.due) fire(state.fired++);
    if (state.fired >= total) return state.stop();
    expectedAt = t0 + (state.fired / ratePerSecond) * 1000;
    timer = setTimeout(tick, Math.max(1, expectedAt - performance.now()));
  };
  tick();
  return state;
}

const loops = new Map<string, Paced>();
const tallies = new Map<string, Tally>();
const agents: http.Agent[] = [];
let sockets: Socket[] = [];
let socketDisconnects = 0;
let socketDisconnectReasons: string[] = [];

function tally(name: string): Tally {
  let t = tallies.get(name);
  if (!t) {
    t = new Tally();
    tallies.set(name, t);
  }
  return t;
}

function startLoop(name: string, loop: Paced): void {
  if (loops.has(name)) throw new Error(`${name} is already running`);
  loops.set(name, loop);
}

async function probe({ baseUrl, intervalMs, seconds, timeoutMs = 5000 }: { baseUrl: string; intervalMs: number; seconds: number; timeoutMs?: number }) {
  assertLoopback(baseUrl);
  const agent = await pool(baseUrl, 2);
  agents.push(agent);
  const t = tally('health');
  const url = `${baseUrl}/healthz`;
  startLoop(
    'health',
    paced(1000 / intervalMs, seconds, () => {
      const t0 = t.begin();
      send(agent, url, { timeoutMs }).then(
        (r) => t.end(t0, String(r.status), r.status === 200),
        (err: unknown) => t.end(t0, statusKey(err), false, String(err)),
      );
    }),
  );
  return { started: true };
}

interface CommandParams {
  baseUrl: string;
  token: string;
  deviceIds: string[];
  command: string;
  ratePerSecond: number;
  seconds: number;
  /** Keep-alive connections carrying the commands (default 8). */
  connections?: number;
  timeoutMs?: number;
}

async function commands(p: CommandParams) {
  assertLoopback(p.baseUrl);
  if (p.deviceIds.length === 0) throw new Error('no devices');
  const agent = await pool(p.baseUrl, p.connections ?? 8);
  agents.push(agent);
  const t = tally('commands');
  const headers = { authorization: `Bearer ${p.token}`, 'content-type': 'application/json' };
  const body = JSON.stringify({ command: p.command });
  const urls = p.deviceIds.map((id) => `${p.baseUrl}/app/os/devices/${encodeURIComponent(id)}/command`);
  startLoop(
    'commands',
    paced(p.ratePerSecond, p.seconds, (i) => {
      const t0 = t.begin();
      send(agent, urls[i % urls.length]!, { method: 'POST', headers, body, timeoutMs: p.timeoutMs ?? 15_000 }).then(
        (r) => {
          let ok = false;
          let code = '';
          try {
            const parsed = JSON.parse(r.body) as { ok?: unknown; code?: unknown; error?: { code?: unknown } };
            ok = r.status === 200 && parsed.ok === true;
            code = String(parsed.code ?? parsed.error?.code ?? '');
          } catch {
            code = 'unparsable body';
          }
          t.end(t0, String(r.status), ok, ok ? undefined : `${r.status} ${code}`.trim());
        },
        (err: unknown) => t.end(t0, statusKey(err), false, String(err)),
      );
    }),
  );
  return { started: true };
}

interface PollParams {
  baseUrl: string;
  token: string;
  deviceIds: string[];
  restClients: number;
  hubClients: number;
  intervalMs: number;
  seconds: number;
  timeoutMs?: number;
}

function openHubSocket(baseUrl: string, token: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = io(`${baseUrl}/socket/hub-protocol`, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true, timeout: 20_000 });
    s.once('connect', () => {
      s.on('disconnect', (reason) => {
        socketDisconnects++;
        if (socketDisconnectReasons.length < 5) socketDisconnectReasons.push(reason);
      });
      resolve(s);
    });
    s.once('connect_error', (err) => {
      s.disconnect();
      reject(err);
    });
  });
}

async function polls(p: PollParams) {
  assertLoopback(p.baseUrl);
  const timeoutMs = p.timeoutMs ?? 5000;
  const headers = { authorization: `Bearer ${p.token}` };
  const rest = tally('rest-polls');
  const hub = tally('hub-polls');
  sockets = await Promise.all(Array.from({ length: p.hubClients }, () => openHubSocket(p.baseUrl, p.token)));
  const restAgents = await Promise.all(Array.from({ length: p.restClients }, () => pool(p.baseUrl, 1)));
  agents.push(...restAgents);
  let requestId = 0;
  // One paced loop for all pollers: each tick is one round (every client once), spread evenly.
  startLoop(
    'polls',
    paced(1000 / p.intervalMs, p.seconds, (round) => {
      restAgents.forEach((agent, k) => {
        const id = p.deviceIds[(round * (p.restClients + p.hubClients) + k) % p.deviceIds.length]!;
        const t0 = rest.begin();
        send(agent, `${p.baseUrl}/app/os/devices/${encodeURIComponent(id)}`, { headers, timeoutMs }).then(
          (r) => rest.end(t0, String(r.status), r.status === 200),
          (err: unknown) => rest.end(t0, statusKey(err), false, String(err)),
        );
      });
      sockets.forEach((socket, k) => {
        const id = p.deviceIds[(round * (p.restClients + p.hubClients) + p.restClients + k) % p.deviceIds.length]!;
        const t0 = hub.begin();
        if (socket.disconnected) {
          hub.end(t0, 'disconnected', false, 'socket disconnected');
          return;
        }
        socket.timeout(timeoutMs).emit('hub:command', { command: 'GET_DEVICE_STATE', payload: { deviceId: id }, requestId: ++requestId }, (err: Error | null, ack: { ok?: boolean; data?: { error?: { code?: string } } }) => {
          if (err) hub.end(t0, 'timeout', false, err.message);
          else hub.end(t0, ack?.ok === true ? 'ok' : 'not ok', ack?.ok === true, ack?.ok === true ? undefined : String(ack?.data?.error?.code ?? 'no ok'));
        });
      });
    }),
  );
  return { started: true, hubClients: sockets.length, restClients: restAgents.length };
}

function loopFigures(loop: Paced | undefined) {
  if (!loop) return null;
  const seconds = ((loop.stoppedAt ?? Date.now()) - loop.startedAt) / 1000;
  return { due: loop.due, fired: loop.fired, seconds, achievedPerSecond: seconds > 0 ? loop.fired / seconds : 0, maxBehind: loop.maxBehind, maxTimerLateMs: loop.maxTimerLateMs };
}

function snapshot() {
  const out: Record<string, ReturnType<Tally['interval']>> = {};
  for (const [name, t] of tallies) out[name] = t.interval();
  return out;
}

/** Stops every loop, waits up to `waitMs` for answers still due, and returns everything. */
async function finish({ waitMs = 20_000 }: { waitMs?: number }) {
  for (const loop of loops.values()) loop.stop();
  const deadline = performance.now() + waitMs;
  for (let i = 0; i < waitMs / 50 && performance.now() < deadline; i++) {
    if ([...tallies.values()].every((t) => t.inFlight === 0)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const out: Record<string, unknown> = {};
  for (const [name, t] of tallies) out[name] = { ...t.figures(), pacing: loopFigures(loops.get(name === 'rest-polls' || name === 'hub-polls' ? 'polls' : name)) };
  out.hubSockets = { clients: sockets.length, disconnects: socketDisconnects, reasons: socketDisconnectReasons };
  for (const s of sockets.splice(0)) s.disconnect();
  for (const a of agents.splice(0)) a.destroy();
  socketDisconnectReasons = [];
  return out;
}

serveAgent('soak-traffic', { probe: probe as never, commands: commands as never, polls: polls as never, snapshot: snapshot as never, finish: finish as never }, () => {
  for (const loop of loops.values()) loop.stop();
  for (const s of sockets) s.disconnect();
  for (const a of agents) a.destroy();
});
