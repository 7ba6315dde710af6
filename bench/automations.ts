/**
 * `npm run bench -- automations`: 1,000 automations on a hub run as `npm start` runs it
 * (`node dist/main.js`, a fresh `DATA_DIR` under BENCH_DATA_DIR on disk, default LOG_LEVEL, the
 * admin's token), against a reference in the same run: a fresh hub with the same devices and no
 * automations, fed the same load. Both hubs run side by side; they are loaded in turn, never at
 * once, the order rotating by one each round.
 *
 * The home (BENCH_AUTOMATIONS_COUNT, 1,000): N motion sensors (`binary_sensor`, sensor class
 * `motion`, state key `motion`) and N lights (`turn_on`, `turn_off`) from two WebSocket driver
 * links (`bench.driver`, instances `<side>-motion` and `<side>-lights`). On the automations hub,
 * N automations saved through `POST /v1/os/programs/save` as canonical JSON:
 * `{name, triggers:[{type:'state', deviceIds:[motion i], field:'detected', to:true}],
 * steps:[{type:'command', deviceId: light i, command:'turn_on'}], mode:'single'}`.
 *
 * The drivers run in one child process (this file started with `--bench-automations-role=drivers`,
 * driven over IPC like the agents of bench/agents/), one process per hub. The load: BENCH_AUTOMATIONS_RATE
 * (500) STATE_UPDATEs/s, paced, round-robin over the sensors, each `{motion, n}` with `n` a
 * per-sensor counter. Every update changes the watched field: each sensor goes round a cycle of
 * BENCH_AUTOMATIONS_FIRE_EVERY (10) values, `true` (a run: motion detected), then `false`, `null`
 * (the reading unknown), `false`, `null`…, so one update in 10 triggers a run and the others are
 * changes the automation's trigger looks at and lets pass. Phases are spread so the runs are even.
 *
 * - Ingest: updates absorbed per second (sent / time from the first send until
 *   `GET /v1/os/state/snapshot` shows every sensor's last `n`) with the automations ≥ 0.95× the
 *   reference's (median of the per-round ratios). At a paced load this stays near 1 as long as
 *   the hub keeps up; hub CPU per update and the flood below show what the automations cost.
 * - Latency: from the sensors' driver's `STATE_UPDATE` with `motion: true` to the `ACTION` for
 *   the light reaching the lights' driver, both in the drivers' process (one clock,
 *   `performance.now()`): p50/p99 over every run of every round; p99 < 20 ms.
 * - Memory: hub RSS (`/proc/<pid>/status` VmRSS, at the end of each loaded window) with the
 *   automations at most 50 MB (50 × 10^6 bytes) above the reference's, median of the rounds. RSS
 *   as the system sees it: it includes heap V8 has not collected or given back (after the saves,
 *   during the runs), not only what the automations keep alive.
 * - Index: `GET /v1/os/automations/status` (`armed`, `indexedFields`) shows the triggers are
 *   registered in the index by device and field.
 * - Informative: a flood (as fast as the socket takes them) of updates that change the watched
 *   field without triggering, absorbed/s on each hub (BENCH_AUTOMATIONS_FLOOD_SECONDS, 3; 0 skips).
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { Samples, assertLoopback, serveAgent } from './agents/runtime.js';
import { startAgent, type AgentHandle } from './lib/agent.js';
import type { Benchmark, BenchmarkContext, BenchmarkOutcome } from './lib/benchmark.js';
import { absoluteResult, inRotation, ratioResult, targetLine, type Round, type TargetResult } from './lib/compare.js';
import { BENCH_DRIVER_KEY, devicesOfInstance, getJson, hubIdsByDriverId, postJson, reportIfExited } from './lib/hub-setup.js';
import { memoryOf } from './lib/proc.js';
import { format, median, table } from './lib/report.js';
import { startService, type ServiceHandle, type Session } from './lib/service.js';
import { integerSetting } from './lib/settings.js';
import { MiB, measureWindow, otherNote, undisturbed, type Participant, type WindowFigures } from './lib/window.js';

const OS_API = '/v1/os';
const AUTOMATIONS = 'automations';
const REFERENCE = 'no automations';
const ROLE_FLAG = '--bench-automations-role=';
const SENSOR_PREFIX = 'motion-';
const LIGHT_PREFIX = 'light-';

export const AUTOMATIONS_TARGETS = {
  automations: 1000,
  ratePerSecond: 500,
  ingest: { figure: 'state updates absorbed/s at 500/s', subject: AUTOMATIONS, reference: REFERENCE, bound: 'atLeast', limit: 0.95 },
  latencyP99: { figure: 'p99 STATE_UPDATE → ACTION at the light, all rounds', subject: AUTOMATIONS, bound: 'below', limit: 20, unit: 'ms' },
  /** Read as 50 × 10^6 bytes (47.7 MiB), the stricter reading. */
  maxExtraRssBytes: 50 * 1000 * 1000,
} as const;

// ---------------------------------------------------------------------------------------------
// Settings (BENCH_AUTOMATIONS_*; BENCH_WARMUP, BENCH_LOG_LEVEL, BENCH_CPU_PROF, BENCH_DATA_DIR and the quiet settings as everywhere)

interface AutomationSettings {
  count: number;
  ratePerSecond: number;
  seconds: number;
  rounds: number;
  fireEvery: number;
  floodSeconds: number;
}


function automationSettings(ctx: BenchmarkContext): AutomationSettings {
  return {
    count: integerSetting('BENCH_AUTOMATIONS_COUNT', AUTOMATIONS_TARGETS.automations, 10, 10_000),
    ratePerSecond: integerSetting('BENCH_AUTOMATIONS_RATE', AUTOMATIONS_TARGETS.ratePerSecond, 10, 20_000),
    seconds: integerSetting('BENCH_AUTOMATIONS_SECONDS', 10, 2, 120),
    // Three rounds unless BENCH_ROUNDS asks for more: the ingest target is a ratio of pairs.
    rounds: integerSetting('BENCH_AUTOMATIONS_ROUNDS', Math.max(3, ctx.settings.rounds), 1, 20),
    fireEvery: integerSetting('BENCH_AUTOMATIONS_FIRE_EVERY', 10, 2, 1000),
    floodSeconds: integerSetting('BENCH_AUTOMATIONS_FLOOD_SECONDS', 3, 0, 60),
  };
}

// ---------------------------------------------------------------------------------------------
// What the drivers' process answers

interface LoadResult {
  sent: number;
  fires: number;
  /** ACTIONs for a light whose sensor fired, in time (each one a latency sample). */
  actions: number;
  /** Fires whose ACTION had not arrived when the grace after the load ended. */
  lost: number;
  /** ACTIONs for a light with no fire waiting (late, or never asked for). */
  unexpectedActions: number;
  /** A fire while the previous one of the same sensor was still waiting for its ACTION. */
  overlapped: number;
  statusErrors: number;
  lastStatusError?: string;
  finalCounts: number[];
  startedAt: number;
  endedAt: number;
  sendSeconds: number;
  achievedPerSecond: number;
  maxBehindMessages: number;
  latencyMs: number[];
}

interface FloodResult {
  sent: number;
  finalCounts: number[];
  startedAt: number;
  endedAt: number;
  sendSeconds: number;
  statusErrors: number;
}

// ---------------------------------------------------------------------------------------------
// The drivers' role (runs in its own process)

function serveDrivers(): void {
  let sensors: WebSocket | undefined;
  let lights: WebSocket | undefined;
  let count = 0;
  let counts: number[] = [];
  let steps: number[] = [];
  let last: (boolean | null)[] = [];
  let cursor = 0;
  /** performance.now() of the fire waiting for its ACTION, by sensor index; NaN: none. */
  let pending = new Float64Array(0);
  let pendingCount = 0;
  let measuring = false;
  const latencies = new Samples(1_000_000);
  let actions = 0;
  let unexpectedActions = 0;
  let overlapped = 0;
  let statusErrors = 0;
  let lastStatusError: string | undefined;

  const open = (link: WebSocket | undefined, name: string): WebSocket => {
    if (!link || link.readyState !== WebSocket.OPEN) throw new Error(`${name} link not connected`);
    return link;
  };
  const flushed = (s: WebSocket, text: string) => new Promise<void>((resolve, reject) => s.send(text, (err) => (err ? reject(err) : resolve())));

  const register = async (url: string, instanceId: string): Promise<WebSocket> => {
    const s = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: 10_000 });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${instanceId}: registration not confirmed within 10 s`)), 10_000);
      s.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      s.once('open', () => s.send(JSON.stringify({ method: 'driver.register', driverKey: BENCH_DRIVER_KEY, instanceId, protocolVersion: 1, name: 'Bench automations driver', version: '1.0.0' })));
      const onFirst = (data: WebSocket.RawData) => {
        const msg = JSON.parse(data.toString()) as { type?: string; status?: string; message?: string };
        if (msg.type !== 'DRIVER_STATUS') return;
        s.off('message', onFirst);
        clearTimeout(timer);
        if (msg.status === 'registered') resolve();
        else reject(new Error(`${instanceId}: registration refused: ${msg.message}`));
      };
      s.on('message', onFirst);
    });
    return s;
  };

  const onStatus = (msg: { type?: string; status?: string; code?: string; message?: string }) => {
    if (msg.type === 'DRIVER_STATUS' && msg.status === 'error') {
      statusErrors++;
      lastStatusError = `${msg.code}: ${msg.message}`;
    }
  };

  const connect = async ({ url, prefix }: { url: string; prefix: string }) => {
    assertLoopback(url);
    sensors?.terminate();
    lights?.terminate();
    sensors = await register(url, `${prefix}-motion`);
    lights = await register(url, `${prefix}-lights`);
    sensors.on('message', (data) => onStatus(JSON.parse(data.toString()) as never));
    const l = lights;
    l.on('message', (data) => {
      const at = performance.now();
      const msg = JSON.parse(data.toString()) as { type?: string; actionId?: string; deviceId?: string; status?: string; code?: string; message?: string };
      if (msg.type !== 'ACTION' && msg.type !== 'COMMAND_EXECUTE') return onStatus(msg);
      l.send(`{"type":"ACTION_RESULT","actionId":${JSON.stringify(msg.actionId)},"ok":true}`);
      const i = typeof msg.deviceId === 'string' && msg.deviceId.startsWith(LIGHT_PREFIX) ? Number(msg.deviceId.slice(LIGHT_PREFIX.length)) : -1;
      const firedAt = i >= 0 && i < pending.length ? pending[i]! : NaN;
      if (Number.isNaN(firedAt)) {
        unexpectedActions++;
        return;
      }
      pending[i] = NaN;
      pendingCount--;
      actions++;
      if (measuring) latencies.push(at - firedAt);
    });
    return { instances: [`${prefix}-motion`, `${prefix}-lights`] };
  };

  /** DEVICE_DISCOVERED for devices [from, from + n) of a link; resolves when the kernel took the last. */
  const discover = async ({ link, from, n, total, fireEvery }: { link: 'sensors' | 'lights'; from: number; n: number; total: number; fireEvery: number }) => {
    const s = open(link === 'sensors' ? sensors : lights, link);
    if (link === 'sensors' && from === 0) {
      count = total;
      counts = Array.from({ length: total }, () => 0);
      // Phases spread so that the runs come evenly, not all in one pass over the sensors.
      steps = Array.from({ length: total }, (_, i) => 1 + (i % fireEvery));
      last = Array.from({ length: total }, () => false);
      pending = new Float64Array(total).fill(NaN);
      pendingCount = 0;
      cursor = 0;
    }
    for (let i = from; i < from + n; i++) {
      const device =
        link === 'sensors'
          ? { id: `${SENSOR_PREFIX}${i}`, name: `Bench motion ${i}`, deviceClass: 'binary_sensor', attributes: { sensorClass: 'motion' }, state: { motion: false, n: 0 } }
          : { id: `${LIGHT_PREFIX}${i}`, name: `Bench light ${i}`, deviceClass: 'light', commands: ['turn_on', 'turn_off'], state: { on: false } };
      const text = JSON.stringify({ type: 'DEVICE_DISCOVERED', device });
      if (i % 200 === 199 || i === from + n - 1) await flushed(s, text);
      else s.send(text);
    }
    return { sent: n };
  };

  /** The next update of the next sensor in the round; marks a fire when it is a change to `true`. */
  const nextUpdate = (fireEvery: number, expectActions: boolean): { text: string; fired: boolean } => {
    const d = cursor;
    cursor = cursor + 1 === count ? 0 : cursor + 1;
    const pos = steps[d]! % fireEvery;
    steps[d]!++;
    const value = pos === 0 ? true : pos % 2 === 1 ? false : null;
    const fired = value === true && last[d] !== true;
    last[d] = value;
    const n = ++counts[d]!;
    if (fired && expectActions) {
      if (Number.isNaN(pending[d]!)) pendingCount++;
      else overlapped++;
      pending[d] = performance.now();
    }
    return { text: `{"type":"STATE_UPDATE","deviceId":"${SENSOR_PREFIX}${d}","state":{"motion":${value},"n":${n}}}`, fired };
  };

  /** `ratePerSecond` updates/s for `seconds` (paced by timers); then waits up to `graceMs` for the ACTIONs still due. */
  const load = async (p: { seconds: number; ratePerSecond: number; fireEvery: number; expectActions: boolean; graceMs: number }): Promise<LoadResult> => {
    const s = open(sensors, 'sensors');
    if (count === 0) throw new Error('discover first');
    const total = Math.round(p.ratePerSecond * p.seconds);
    latencies.clear();
    actions = 0;
    unexpectedActions = 0;
    overlapped = 0;
    statusErrors = 0;
    lastStatusError = undefined;
    measuring = true;
    let fires = 0;
    let sent = 0;
    let maxBehind = 0;
    const startedAt = Date.now();
    const t0 = performance.now();
    const hardDeadline = t0 + p.seconds * 3000 + 5000;
    while (sent < total && performance.now() < hardDeadline) {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * p.ratePerSecond) + 1);
      maxBehind = Math.max(maxBehind, due - sent);
      let lastWrite: Promise<void> | undefined;
      while (sent < due) {
        const u = nextUpdate(p.fireEvery, p.expectActions);
        if (u.fired) fires++;
        sent++;
        if (sent === total) lastWrite = flushed(s, u.text);
        else s.send(u.text);
      }
      if (lastWrite) await lastWrite;
      if (sent >= total) break;
      const nextAt = t0 + (sent / p.ratePerSecond) * 1000;
      await sleep(Math.max(1, nextAt - performance.now()));
    }
    const sendSeconds = (performance.now() - t0) / 1000;
    const endedAt = Date.now();
    for (let i = 0; i < p.graceMs / 10 && p.expectActions && pendingCount > 0; i++) await sleep(10);
    measuring = false;
    const lost = pendingCount;
    // Whatever is still waiting is counted lost here, not as a late sample of the next load.
    pending.fill(NaN);
    pendingCount = 0;
    return {
      sent,
      fires,
      actions,
      lost,
      unexpectedActions,
      overlapped,
      statusErrors,
      ...(lastStatusError ? { lastStatusError } : {}),
      finalCounts: [...counts],
      startedAt,
      endedAt,
      sendSeconds,
      achievedPerSecond: sent / sendSeconds,
      maxBehindMessages: maxBehind,
      latencyMs: Array.from(latencies.values()),
    };
  };

  /**
   * Updates that change the watched field without triggering (`false` ↔ `null`), as fast as the
   * socket takes them: bursts of at most 500, never more than 256 KiB buffered.
   */
  const flood = async ({ seconds, maxMessages = 5_000_000 }: { seconds: number; maxMessages?: number }): Promise<FloodResult> => {
    const s = open(sensors, 'sensors');
    if (count === 0) throw new Error('discover first');
    statusErrors = 0;
    const startedAt = Date.now();
    const t0 = performance.now();
    const deadline = t0 + seconds * 1000;
    let sent = 0;
    while (sent < maxMessages && performance.now() < deadline) {
      for (let burst = 0; sent < maxMessages; burst++) {
        const d = cursor;
        cursor = cursor + 1 === count ? 0 : cursor + 1;
        const value = last[d] === null ? false : null;
        last[d] = value;
        const text = `{"type":"STATE_UPDATE","deviceId":"${SENSOR_PREFIX}${d}","state":{"motion":${value},"n":${++counts[d]!}}}`;
        sent++;
        if (burst === 499 || s.bufferedAmount >= 256 * 1024 || sent === maxMessages) {
          await flushed(s, text);
          break;
        }
        s.send(text);
      }
    }
    return { sent, finalCounts: [...counts], startedAt, endedAt: Date.now(), sendSeconds: (performance.now() - t0) / 1000, statusErrors };
  };

  serveAgent('automations drivers', { connect: connect as never, discover: discover as never, load: load as never, flood: flood as never }, () => {
    sensors?.terminate();
    lights?.terminate();
  });
}

// ---------------------------------------------------------------------------------------------
// The harness

interface Side {
  label: string;
  service: ServiceHandle;
  session: Session;
  drivers: AgentHandle;
  sensorIds: string[];
}

/** What a run started, stopped in reverse order however it ends. */
interface Started {
  service: ServiceHandle;
  drivers?: AgentHandle;
}

interface Status {
  role: string;
  armed: number;
  indexedFields: number;
  trackedFields: number;
}

interface SideRun {
  label: string;
  load: Omit<LoadResult, 'latencyMs' | 'finalCounts'>;
  latency: Record<string, number | null>;
  latencyMs: number[];
  appliedAt: number;
  polls: number;
  absorbSeconds: number;
  absorbedPerSecond: number;
  lagAfterLastSendMs: number;
  hubCpuMicrosPerUpdate: number | null;
  hubRssBytes: number | null;
  window: WindowFigures;
  attempts: number;
  disturbed: boolean;
}

function pct(sorted: number[], p: number): number | null {
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function startDrivers(name: string): Promise<AgentHandle> {
  return startAgent(name, 'automations-drivers', { entry: { file: path.join('bench', 'automations.ts'), args: [`${ROLE_FLAG}drivers`] }, readyTimeoutMs: 30_000, logTailOnTimeout: true });
}

/** Polls the snapshot until every sensor shows the last `n` it was sent; bounded by `timeoutMs`. */
async function waitApplied(side: Side, finalCounts: number[], timeoutMs: number): Promise<{ appliedAt: number; polls: number }> {
  const deadline = Date.now() + timeoutMs;
  let behind = side.sensorIds.length;
  for (let polls = 1; polls <= timeoutMs / 10 && Date.now() < deadline; polls++) {
    const snap = await getJson<{ devices: Record<string, { state: { n?: number } }> }>(side.service, side.session, `${OS_API}/state/snapshot`);
    const seenAt = Date.now();
    behind = side.sensorIds.filter((id, k) => snap.devices[id]?.state.n !== finalCounts[k]).length;
    if (behind === 0) return { appliedAt: seenAt, polls };
    await sleep(10);
  }
  throw new Error(`${side.label}: ${behind} sensors still behind ${timeoutMs} ms after the load`);
}

/** A hub with the home's devices (and, with `automations`, one automation per sensor). */
async function setUpSide(
  ctx: BenchmarkContext,
  s: AutomationSettings,
  started: Started[],
  o: { label: string; prefix: string; nodeArgs: string[]; automations: boolean },
): Promise<Side & { saveSeconds: number | null; discoverSeconds: number; rssAfterDiscovery: number | null; rssAfterSaves: number | null }> {
  const { label, prefix } = o;
  ctx.progress(`starting the ${label} hub (LOG_LEVEL=${ctx.settings.logLevel})...`);
  const service = await startService({ logLevel: ctx.settings.logLevel, nodeArgs: o.nodeArgs });
  const entry: Started = { service };
  started.push(entry);
  ctx.progress(`  ${label} hub pid ${service.pid} at ${service.baseUrl}`);
  const session = await service.login();
  const drivers = await startDrivers(`drivers ${label}`);
  entry.drivers = drivers;
  await drivers.call('connect', { url: `ws://127.0.0.1:${service.port}/driver`, prefix });

  const t0 = performance.now();
  const batch = 500;
  for (const [link, instanceId] of [
    ['sensors', `${prefix}-motion`],
    ['lights', `${prefix}-lights`],
  ] as const) {
    for (let from = 0; from < s.count; from += batch) {
      const n = Math.min(batch, s.count - from);
      await drivers.call('discover', { link, from, n, total: s.count, fireEvery: s.fireEvery }, 120_000);
      let seen = 0;
      const deadline = Date.now() + 120_000;
      for (let i = 0; i < 2400 && Date.now() < deadline; i++) {
        seen = await devicesOfInstance(service, session, instanceId);
        if (seen >= from + n) break;
        await sleep(50);
      }
      if (seen < from + n) throw new Error(`${label}: only ${seen} of ${from + n} ${link} applied after 120 s`);
    }
  }
  const discoverSeconds = (performance.now() - t0) / 1000;
  const byDriverId = await hubIdsByDriverId(service, session);
  const idOf = (driverId: string) => {
    const id = byDriverId.get(driverId);
    if (!id) throw new Error(`${label}: device ${driverId} not listed by GET /devices`);
    return id;
  };
  const sensorIds = Array.from({ length: s.count }, (_, i) => idOf(`${SENSOR_PREFIX}${i}`));
  const lightIds = Array.from({ length: s.count }, (_, i) => idOf(`${LIGHT_PREFIX}${i}`));
  const rssAfterDiscovery = memoryOf(service.pid)?.rssBytes ?? null;
  ctx.progress(`  ${label}: ${s.count} motion sensors + ${s.count} lights discovered in ${discoverSeconds.toFixed(1)} s; RSS ${MiB(rssAfterDiscovery)} MiB`);

  let saveSeconds: number | null = null;
  if (o.automations) {
    const t1 = performance.now();
    let next = 0;
    // Four saves in flight, as a UI or an import might; bounded by the count.
    const worker = async () => {
      for (let i = next++; i < s.count; i = next++) {
        const saved = await postJson<{ id?: string; triggers?: unknown[] }>(service, session, `${OS_API}/programs/save`, {
          name: `Bench motion light ${i}`,
          triggers: [{ type: 'state', deviceIds: [sensorIds[i]], field: 'detected', to: true }],
          steps: [{ type: 'command', deviceId: lightIds[i], command: 'turn_on' }],
          mode: 'single',
        });
        if (typeof saved.id !== 'string' || saved.triggers?.length !== 1) throw new Error(`automation ${i} saved as ${JSON.stringify(saved).slice(0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    saveSeconds = (performance.now() - t1) / 1000;
    ctx.progress(`  ${label}: ${s.count} automations saved in ${saveSeconds.toFixed(1)} s`);
  }
  const rssAfterSaves = o.automations ? (memoryOf(service.pid)?.rssBytes ?? null) : null;
  return { label, service, session, drivers, sensorIds, saveSeconds, discoverSeconds, rssAfterDiscovery, rssAfterSaves };
}

async function run(ctx: BenchmarkContext): Promise<BenchmarkOutcome> {
  const { settings } = ctx;
  const s = automationSettings(ctx);
  const nodeArgs = settings.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`] : [];
  const started: Started[] = [];
  try {
    const reference = await setUpSide(ctx, s, started, { label: REFERENCE, prefix: 'ref', nodeArgs, automations: false });
    const withAutomations = await setUpSide(ctx, s, started, { label: AUTOMATIONS, prefix: 'auto', nodeArgs, automations: true });
    const sides: Record<string, Side> = { [REFERENCE]: reference, [AUTOMATIONS]: withAutomations };
    const otherOf = (label: string) => sides[label === AUTOMATIONS ? REFERENCE : AUTOMATIONS]!;

    const statusOf = (side: Side) => getJson<Status>(side.service, side.session, `${OS_API}/automations/status`);
    const statusBefore = { [AUTOMATIONS]: await statusOf(withAutomations), [REFERENCE]: await statusOf(reference) };
    ctx.progress(`  automations/status: ${AUTOMATIONS} ${JSON.stringify(statusBefore[AUTOMATIONS])}; ${REFERENCE} ${JSON.stringify(statusBefore[REFERENCE])}`);

    const loadParams = (label: string, seconds: number) => ({ seconds, ratePerSecond: s.ratePerSecond, fireEvery: s.fireEvery, expectActions: label === AUTOMATIONS, graceMs: 3000 });
    const loadTimeout = (seconds: number) => (seconds * 3 + 60) * 1000;

    // Warm-up, discarded: each side takes the load once (the first runs on the automations hub).
    if (settings.warmupSeconds > 0) {
      for (const label of [REFERENCE, AUTOMATIONS]) {
        const side = sides[label]!;
        ctx.progress(`  warm-up: ${label}, ${settings.warmupSeconds} s at ${s.ratePerSecond}/s (discarded)`);
        const w = await side.drivers.call<LoadResult>('load', loadParams(label, settings.warmupSeconds), loadTimeout(settings.warmupSeconds));
        await waitApplied(side, w.finalCounts, 60_000);
      }
    }

    const rounds = await inRotation([REFERENCE, AUTOMATIONS], s.rounds, async (label, round): Promise<SideRun> => {
      const side = sides[label]!;
      const other = otherOf(label);
      const participants: Participant[] = [
        { label: 'hub', pid: side.service.pid },
        { label: 'drivers', pid: side.drivers.pid },
        { label: 'idle hub', pid: other.service.pid },
        { label: 'idle drivers', pid: other.drivers.pid },
      ];
      ctx.progress(`  round ${round}/${s.rounds}, ${label}: ${s.seconds} s at ${s.ratePerSecond} updates/s`);
      const r = await undisturbed(ctx, `${label} load`, async (busy) => {
        const m = await measureWindow(
          participants,
          async () => {
            const l = await side.drivers.call<LoadResult>('load', loadParams(label, s.seconds), loadTimeout(s.seconds));
            const applied = await waitApplied(side, l.finalCounts, 60_000);
            return { l, applied };
          },
          busy,
        );
        return { ...m.result, window: m.window };
      });
      const { latencyMs, finalCounts: _finalCounts, ...load } = r.l;
      const absorbSeconds = (r.applied.appliedAt - load.startedAt) / 1000;
      const cpu = r.window.cpuSeconds.hub ?? null;
      const sorted = [...latencyMs].sort((a, b) => a - b);
      return {
        label,
        load,
        latency: { count: sorted.length, p50: pct(sorted, 50), p90: pct(sorted, 90), p99: pct(sorted, 99), max: sorted.at(-1) ?? null },
        latencyMs,
        appliedAt: r.applied.appliedAt,
        polls: r.applied.polls,
        absorbSeconds,
        absorbedPerSecond: load.sent / absorbSeconds,
        lagAfterLastSendMs: r.applied.appliedAt - load.endedAt,
        hubCpuMicrosPerUpdate: cpu === null ? null : (cpu / load.sent) * 1e6,
        hubRssBytes: r.window.rssBytes.hub ?? memoryOf(side.service.pid)?.rssBytes ?? null,
        window: r.window,
        attempts: r.attempts,
        disturbed: r.disturbed,
      };
    });

    // Informative: the capacity with updates that change the watched field and trigger nothing.
    const floods: Record<string, { sent: number; absorbedPerSecond: number; driverSendPerSecond: number; lagAfterLastSendMs: number; hubCpuMicrosPerUpdate: number | null; statusErrors: number; window: WindowFigures }> = {};
    if (s.floodSeconds > 0) {
      for (const label of [AUTOMATIONS, REFERENCE]) {
        const side = sides[label]!;
        ctx.progress(`  flood: ${label}, ${s.floodSeconds} s as fast as the socket takes them (informative)`);
        const m = await measureWindow(
          [
            { label: 'hub', pid: side.service.pid },
            { label: 'drivers', pid: side.drivers.pid },
          ],
          async () => {
            const f = await side.drivers.call<FloodResult>('flood', { seconds: s.floodSeconds }, (s.floodSeconds + 60) * 1000);
            return { f, applied: await waitApplied(side, f.finalCounts, 120_000) };
          },
        );
        const { f, applied } = m.result;
        const cpu = m.window.cpuSeconds.hub ?? null;
        floods[label] = {
          sent: f.sent,
          absorbedPerSecond: f.sent / ((applied.appliedAt - f.startedAt) / 1000),
          driverSendPerSecond: f.sent / f.sendSeconds,
          lagAfterLastSendMs: applied.appliedAt - f.endedAt,
          hubCpuMicrosPerUpdate: cpu === null ? null : (cpu / f.sent) * 1e6,
          statusErrors: f.statusErrors,
          window: m.window,
        };
      }
    }

    const statusAfter = { [AUTOMATIONS]: await statusOf(withAutomations), [REFERENCE]: await statusOf(reference) };
    const list = await getJson<{ automations: { programId: string; enabled: boolean; pause: unknown }[] }>(withAutomations.service, withAutomations.session, `${OS_API}/automations`, 60_000);
    const paused = list.automations.filter((a) => a.pause !== null && a.pause !== undefined).length;
    const disabled = list.automations.filter((a) => !a.enabled).length;

    // ---- report ---------------------------------------------------------------------------------
    const f1 = (n: number | null | undefined) => format.fixed(1)(n ?? null);
    const f3 = (n: number | null | undefined) => format.fixed(3)(n ?? null);
    ctx.print(
      `\n### home: ${format.int(s.count)} motion sensors + ${format.int(s.count)} lights on each hub; ${format.int(s.count)} automations on one (state trigger detected → true, command turn_on to its own light, mode single), saved through POST ${OS_API}/programs/save in ${f1(withAutomations.saveSeconds)} s`,
    );
    ctx.print(
      `load: ${format.int(s.ratePerSecond)} STATE_UPDATEs/s paced, round-robin over the sensors, every one a change of the watched field; 1 in ${s.fireEvery} a change to true (a run: ${format.int(s.ratePerSecond / s.fireEvery)}/s), the rest true → false, false ↔ null; ${s.seconds} s a window, ${s.rounds} rounds, order rotating`,
    );
    const rows = rounds.flatMap((r, i) =>
      r.order.map((label) => {
        const x = r.results[label]!;
        return [
          String(i + 1),
          label,
          format.int(x.load.sent),
          format.int(x.load.achievedPerSecond),
          format.int(x.absorbedPerSecond),
          format.int(x.lagAfterLastSendMs),
          f1(x.hubCpuMicrosPerUpdate),
          format.fixed(2)(x.window.cpuCores.hub ?? null),
          format.fixed(2)(x.window.cpuCores.drivers ?? null),
          format.fixed(2)(x.window.otherCpuCores),
          MiB(x.hubRssBytes),
          label === AUTOMATIONS ? `${x.load.fires}/${x.load.actions}/${x.load.lost}` : '-',
          label === AUTOMATIONS ? f3(x.latency.p50) : '-',
          label === AUTOMATIONS ? f3(x.latency.p90) : '-',
          label === AUTOMATIONS ? f3(x.latency.p99) : '-',
          label === AUTOMATIONS ? f3(x.latency.max) : '-',
        ];
      }),
    );
    ctx.print(
      table(
        ['round', 'hub', 'sent', 'send/s', 'absorbed/s', 'lag ms', 'hub CPU µs/update', 'hub cores', 'drivers cores', 'other cores', 'hub RSS MiB', 'fires/ACTIONs/lost', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
        rows,
      ),
    );
    ctx.print('(absorbed/s: sent / time from the first send until the snapshot showed every sensor\'s last update; latency: the sensors\' driver\'s STATE_UPDATE → the ACTION at the light\'s driver, one process, one clock)');
    for (const r of rounds) for (const [label, x] of Object.entries(r.results)) if (x.disturbed) ctx.print(`warning: round ${rounds.indexOf(r) + 1} ${label}: ${otherNote(x.window, settings.quietMaxBusyCores)}`);

    const autoRuns = rounds.map((r) => r.results[AUTOMATIONS]!).filter(Boolean);
    const refRuns = rounds.map((r) => r.results[REFERENCE]!).filter(Boolean);
    const pooled = autoRuns.flatMap((x) => x.latencyMs).sort((a, b) => a - b);
    const pooledStats = { count: pooled.length, p50: pct(pooled, 50), p90: pct(pooled, 90), p99: pct(pooled, 99), 'p99.9': pct(pooled, 99.9), max: pooled.at(-1) ?? null };
    ctx.print(
      `latency over all ${rounds.length} rounds: ${format.int(pooled.length)} runs, p50 ${f3(pooledStats.p50)} ms, p90 ${f3(pooledStats.p90)} ms, p99 ${f3(pooledStats.p99)} ms, p99.9 ${f3(pooledStats['p99.9'])} ms, max ${f3(pooledStats.max)} ms`,
    );
    const cpuAuto = median(autoRuns.map((x) => x.hubCpuMicrosPerUpdate ?? 0));
    const cpuRef = median(refRuns.map((x) => x.hubCpuMicrosPerUpdate ?? 0));
    ctx.print(`hub CPU per update (medians): ${f1(cpuAuto)} µs with the automations (their runs included) against ${f1(cpuRef)} µs without: +${f1(cpuAuto - cpuRef)} µs`);
    const rssDiffs = rounds.map((r) => {
      const a = r.results[AUTOMATIONS]?.hubRssBytes;
      const b = r.results[REFERENCE]?.hubRssBytes;
      return a === null || a === undefined || b === null || b === undefined ? null : a - b;
    });
    const rssDiff = median(rssDiffs.filter((d): d is number => d !== null));
    ctx.print(
      `hub RSS: with the automations ${autoRuns.map((x) => MiB(x.hubRssBytes)).join(' ')} MiB, without ${refRuns.map((x) => MiB(x.hubRssBytes)).join(' ')} MiB (per round); difference per round ${rssDiffs.map((d) => (d === null ? '-' : (d / 1e6).toFixed(1))).join(' ')} MB`,
    );
    ctx.print(
      `hub RSS during setup: ${REFERENCE} ${MiB(reference.rssAfterDiscovery)} MiB after discovery; ${AUTOMATIONS} ${MiB(withAutomations.rssAfterDiscovery)} MiB after discovery, ${MiB(withAutomations.rssAfterSaves)} MiB right after the ${format.int(s.count)} saves`,
    );
    ctx.print(
      `automations/status: ${AUTOMATIONS} before ${JSON.stringify(statusBefore[AUTOMATIONS])}, after ${JSON.stringify(statusAfter[AUTOMATIONS])}; ${REFERENCE} ${JSON.stringify(statusAfter[REFERENCE])}; ${paused} paused, ${disabled} disabled of ${list.automations.length}`,
    );
    if (s.floodSeconds > 0) {
      ctx.print(`\n### informative: flood of updates that change the watched field and trigger nothing (false ↔ null), ${s.floodSeconds} s as fast as the socket takes them`);
      ctx.print(
        table(
          ['hub', 'sent', 'driver send/s', 'absorbed/s', 'lag ms', 'hub CPU µs/update', 'hub cores', 'drivers cores', 'other cores', 'status errors'],
          [AUTOMATIONS, REFERENCE].map((label) => {
            const x = floods[label]!;
            return [label, format.int(x.sent), format.int(x.driverSendPerSecond), format.int(x.absorbedPerSecond), format.int(x.lagAfterLastSendMs), f1(x.hubCpuMicrosPerUpdate), format.fixed(2)(x.window.cpuCores.hub ?? null), format.fixed(2)(x.window.cpuCores.drivers ?? null), format.fixed(2)(x.window.otherCpuCores), String(x.statusErrors)];
          }),
        ),
      );
      const fa = floods[AUTOMATIONS]!;
      const fr = floods[REFERENCE]!;
      ctx.print(`flood ratio (information, one run each): ${(fa.absorbedPerSecond / fr.absorbedPerSecond).toFixed(2)}×`);
    }

    // ---- targets --------------------------------------------------------------------------------
    const problems = (x: SideRun): string | null => {
      const p: string[] = [];
      if (x.load.statusErrors > 0) p.push(`${x.load.statusErrors} driver status errors (${x.load.lastStatusError})`);
      if (x.load.lost > 0) p.push(`${x.load.lost} of ${x.load.fires} runs' ACTIONs not seen within 3 s`);
      if (x.load.achievedPerSecond < s.ratePerSecond * 0.97) p.push(`the drivers sent ${format.int(x.load.achievedPerSecond)}/s, not ${s.ratePerSecond}/s`);
      return p.length > 0 ? `${x.label}: ${p.join('; ')}` : null;
    };
    const offTarget = [
      ...(s.count !== AUTOMATIONS_TARGETS.automations ? [`${s.count} automations, not ${AUTOMATIONS_TARGETS.automations}`] : []),
      ...(s.ratePerSecond !== AUTOMATIONS_TARGETS.ratePerSecond ? [`${s.ratePerSecond} updates/s, not ${AUTOMATIONS_TARGETS.ratePerSecond}`] : []),
    ];
    const armedOk = statusAfter[AUTOMATIONS].armed === s.count && statusAfter[AUTOMATIONS].indexedFields >= s.count && paused === 0;
    const notArmed = armedOk ? [] : [`automations not all armed and indexed (armed ${statusAfter[AUTOMATIONS].armed}, indexedFields ${statusAfter[AUTOMATIONS].indexedFields}, paused ${paused})`];

    const ingest: TargetResult = { kind: 'ratio', ...ratioResult(AUTOMATIONS_TARGETS.ingest, rounds, (x) => x.absorbedPerSecond, problems) };
    const latencyRounds: Round<{ p99: number | null; problem: string | null }>[] = [
      { order: [AUTOMATIONS], results: { [AUTOMATIONS]: { p99: pooledStats.p99, problem: autoRuns.map(problems).find((p) => p !== null) ?? (pooled.length === 0 ? 'no run was measured' : null) } } },
    ];
    const latency: TargetResult = { kind: 'absolute', ...absoluteResult(AUTOMATIONS_TARGETS.latencyP99, latencyRounds, (x) => x.p99, (x) => x.problem), perRound: autoRuns.map((x) => x.latency.p99 ?? NaN) };
    for (const t of [ingest, latency]) {
      const extra = [...offTarget, ...notArmed];
      if (extra.length > 0) Object.assign(t, { verdict: 'FAIL', reasons: [...t.reasons, ...extra] });
    }
    const rssOk = rssDiffs.some((d) => d !== null) && rssDiff <= AUTOMATIONS_TARGETS.maxExtraRssBytes && offTarget.length === 0 && armedOk;
    const rssLine =
      `${rssOk ? 'PASS' : 'FAIL'}  hub RSS with the automations − without: ${(rssDiff / 1e6).toFixed(1)} MB (${MiB(rssDiff)} MiB; median of the rounds: ` +
      `${MiB(median(autoRuns.map((x) => x.hubRssBytes ?? 0)))} vs ${MiB(median(refRuns.map((x) => x.hubRssBytes ?? 0)))} MiB) (target ≤ 50 MB)` +
      ([...offTarget, ...notArmed].length > 0 ? ` — ${[...offTarget, ...notArmed].join('; ')}` : '');
    const indexLine = `${armedOk ? 'OK' : 'FAIL'}    index: GET ${OS_API}/automations/status armed ${statusAfter[AUTOMATIONS].armed}, indexedFields ${statusAfter[AUTOMATIONS].indexedFields} (device × field pairs in the index), trackedFields ${statusAfter[AUTOMATIONS].trackedFields}; reference armed ${statusAfter[REFERENCE].armed}, indexedFields ${statusAfter[REFERENCE].indexedFields}`;
    ctx.print('');
    ctx.print(indexLine);
    ctx.print(targetLine(ingest));
    ctx.print(targetLine(latency));
    ctx.print(rssLine);

    const passed = ingest.verdict === 'PASS' && latency.verdict === 'PASS' && rssOk && armedOk;
    return {
      passed,
      results: {
        targets: { ingest, latency, rss: { diffBytes: rssDiff, perRound: rssDiffs, limitBytes: AUTOMATIONS_TARGETS.maxExtraRssBytes, verdict: rssOk ? 'PASS' : 'FAIL' } },
        settings: s,
        setup: {
          saveSeconds: withAutomations.saveSeconds,
          discoverSeconds: { [AUTOMATIONS]: withAutomations.discoverSeconds, [REFERENCE]: reference.discoverSeconds },
          rssBytes: { [REFERENCE]: { afterDiscovery: reference.rssAfterDiscovery }, [AUTOMATIONS]: { afterDiscovery: withAutomations.rssAfterDiscovery, afterSaves: withAutomations.rssAfterSaves } },
        },
        status: { before: statusBefore, after: statusAfter, paused, disabled },
        latencyPooled: pooledStats,
        hubCpuMicrosPerUpdate: { [AUTOMATIONS]: cpuAuto, [REFERENCE]: cpuRef },
        rounds: rounds.map((r) => ({ order: r.order, results: Object.fromEntries(Object.entries(r.results).map(([k, v]) => [k, { ...v, latencyMs: undefined }])) })),
        floods,
      },
    };
  } finally {
    for (const side of started.reverse()) {
      await side.drivers?.stop();
      await reportIfExited(side.service, ctx.progress);
      ctx.progress(`stopping the hub (pid ${side.service.pid})...`);
      await side.service.stop();
    }
  }
}

export const automationsBenchmark: Benchmark = {
  name: 'automations',
  description: '1,000 automations (state trigger on a motion sensor → its light) under 500 state updates/s: ingest against the same hub without them, STATE_UPDATE → ACTION latency, RSS over the reference',
  run,
};

// This file is also the benchmark's drivers, in a child process of their own.
const role = process.argv.find((a) => a.startsWith(ROLE_FLAG))?.slice(ROLE_FLAG.length);
if (role === 'drivers') serveDrivers();
