/**
 * `npm run bench -- soak [--minutes N]`: N minutes (default 10) of mixed household traffic against
 * the real hub process, watching its memory and descriptors for leaks and its answers for errors.
 *
 * Traffic (all to 127.0.0.1, every client in a bench agent process, every loop paced by timers and
 * bounded in count and time):
 * - 4 WebSocket bench drivers with 50 devices each send 500 STATE_UPDATEs/s in total
 *   (bench/agents/driver.ts `rate`) and answer every ACTION at once;
 * - 50 device commands/s through `POST /app/os/devices/:id/command` (bench/agents/soak-traffic.ts);
 * - 20 SSE clients of the state stream and 20 Socket.IO clients of `/socket/hub-protocol`, a quarter
 *   of each disconnecting and reconnecting every 10 s (bench/agents/soak-streams.ts);
 * - polls every second: 2 REST clients `GET /app/os/devices/:id`, 3 hub-protocol clients
 *   `GET_DEVICE_STATE`;
 * - `GET /healthz` every 100 ms from an agent of its own.
 *
 * Every 10 s the harness samples the hub's VmRSS and open descriptors (/proc) and its heap (from
 * `GET /metrics`, with a metrics token). The targets are checked on the whole run and on the
 * samples after the settle point (3 minutes, or the first third of a shorter run).
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startAgent, type AgentHandle } from './lib/agent.js';
import type { Benchmark, BenchmarkContext, BenchmarkOutcome } from './lib/benchmark.js';
import { OS, discoverDevices, hubIdsByDriverId, reportIfExited, startBenchDriver } from './lib/hub-setup.js';
import { waitForQuiet } from './lib/load.js';
import { cpuSecondsOf, memoryOf } from './lib/proc.js';
import { format, table } from './lib/report.js';
import { UsageError } from './lib/settings.js';
import { startService, type ServiceHandle, type Session } from './lib/service.js';
import { measureWindow, openFds, openFileLimits, otherNote, type Participant } from './lib/window.js';

/** The household the soak plays. */
export const SOAK_PLAN = {
  defaultMinutes: 10,
  drivers: 4,
  devicesPerDriver: 50,
  updatesPerSecond: 500,
  commandsPerSecond: 50,
  command: 'toggle',
  sseClients: 20,
  socketIoClients: 20,
  /** Share of the stream clients of each kind that disconnect and reconnect every `churnEverySeconds`. */
  churnFraction: 0.25,
  churnEverySeconds: 10,
  restPollers: 2,
  hubPollers: 3,
  pollIntervalMs: 1000,
  healthIntervalMs: 100,
  sampleEverySeconds: 10,
  /** Samples from here on (or from the first third of a shorter run) are fitted. */
  settleSeconds: 180,
  /** Below this share of a requested rate, the load generator says it could not keep it. */
  minRateShare: 0.95,
} as const;

/** The hub's default TELEMETRY_MAX_ENTRIES (src/config.ts): readings kept per device. */
const TELEMETRY_MAX_ENTRIES = 500;

export const SOAK_TARGETS = {
  /** HTTP answers with a 5xx status, from every client (commands, polls, /healthz, SSE connects, /metrics). */
  max5xx: 0,
  minCommandOkShare: 0.999,
  healthP99Ms: 200,
  /** Least-squares slope of VmRSS over the samples after the settle point, MB (10^6 bytes) per hour. */
  maxRssSlopeMBPerHour: 20,
  /** Open descriptors: last sample minus the sample at the settle point. */
  maxFdGrowth: 5,
  /** ... and the fitted line may move by less than this many descriptors across the fitted samples. */
  maxFdDrift: 1,
} as const;

/** `BENCH_SOAK_MINUTES` (bench/run.ts sets it from `--minutes N`): 0.5 to 1440, whole 10-s steps. */
export function soakSeconds(): number {
  const raw = process.env.BENCH_SOAK_MINUTES;
  if (raw === undefined || raw.trim() === '') return SOAK_PLAN.defaultMinutes * 60;
  const minutes = Number(raw);
  if (!Number.isFinite(minutes) || minutes < 0.5 || minutes > 1440) throw new UsageError(`--minutes (BENCH_SOAK_MINUTES) must be a number of minutes between 0.5 and 1440, got "${raw}"`);
  return Math.max(30, Math.round((minutes * 60) / SOAK_PLAN.sampleEverySeconds) * SOAK_PLAN.sampleEverySeconds);
}

interface Sample {
  /** Seconds since the traffic started. */
  t: number;
  rssBytes: number | null;
  fds: number | null;
  heapUsedBytes: number | null;
  heapTotalBytes: number | null;
  externalBytes: number | null;
  serviceCpuSeconds: number | null;
  /** hcs_state_updates_total: state changes the hub absorbed so far. */
  stateUpdates: number | null;
  /** hcs_clients by surface. */
  sseClients: number | null;
  hubProtocolClients: number | null;
  commandsOk: number | null;
  commandsSent: number | null;
  healthP99Ms: number | null;
  healthMaxMs: number | null;
  metricsStatus: number | null;
}

interface TallyFigures {
  sent: number;
  ok: number;
  failed: number;
  unanswered: number;
  maxInFlight: number;
  statusCodes: Record<string, number>;
  failures: Record<string, number>;
  latencyMs: { mean: number | null; p50: number | null; p90: number | null; p99: number | null; 'p99.9': number | null; max: number | null };
  pacing: { due: number; fired: number; seconds: number; achievedPerSecond: number; maxBehind: number; maxTimerLateMs: number } | null;
}

interface Interval {
  sent: number;
  ok: number;
  failed: number;
  inFlight: number;
  answered: number;
  p99Ms: number | null;
  maxMs: number | null;
}

interface RateResult {
  sent: number;
  achievedPerSecond: number;
  maxBehindMessages: number;
  startedAt: number;
  endedAt: number;
}

interface DriverStats {
  actionsAnswered: number;
  statusErrors: number;
  lastStatusError?: string;
}

interface StreamKind {
  clients: number;
  churnClients: number;
  openNow: number;
  connects: number;
  connectFailures: number;
  connectFailureReasons: Record<string, number>;
  statusCodes: Record<string, number>;
  resumes: number;
  connectMs: { p50: number | null; p99: number | null; max: number | null };
  events: Record<string, number>;
  unexpectedCloses: number;
  unexpectedCloseReasons: string[];
}

interface StreamReport {
  churnCycles: number;
  sse: StreamKind;
  socketio: StreamKind;
  sseStateDelayMs: { p50: number | null; p99: number | null; 'p99.9': number | null; max: number | null };
}

interface Fit {
  /** Samples fitted, from `fromT` to `toT` seconds. */
  samples: number;
  fromT: number;
  toT: number;
  /** Units of y per second. */
  slope: number;
  intercept: number;
  /** Standard error of the slope (null below 3 samples). */
  slopeStdError: number | null;
}

/** Least-squares line through (x, y). */
export function fitLine(points: { x: number; y: number }[]): Fit | null {
  const n = points.length;
  if (n < 2) return null;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const p of points) {
    sxx += (p.x - mx) ** 2;
    sxy += (p.x - mx) * (p.y - my);
  }
  if (sxx === 0) return null;
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  const residual = points.reduce((a, p) => a + (p.y - (intercept + slope * p.x)) ** 2, 0);
  return {
    samples: n,
    fromT: points[0]!.x,
    toT: points[n - 1]!.x,
    slope,
    intercept,
    slopeStdError: n > 2 ? Math.sqrt(residual / (n - 2) / sxx) : null,
  };
}

/** The value of a Prometheus sample `name{labels} value` (the first matching line), or null. */
function metric(text: string, name: string, labels?: string): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (labels === undefined ? !rest.startsWith(' ') : !rest.startsWith(`{${labels}}`)) continue;
    const value = Number(rest.slice(rest.lastIndexOf(' ') + 1));
    return Number.isFinite(value) ? value : null;
  }
  return null;
}

/** Bytes of the files under `dir` (at most 10,000 entries looked at). */
function dirBytes(dir: string): number | null {
  let total = 0;
  let seen = 0;
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      if (++seen > 10_000) return;
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile()) total += fs.statSync(p).size;
    }
  };
  try {
    walk(dir);
    return total;
  } catch {
    return null;
  }
}

const MB = (bytes: number | null | undefined, digits = 1) => (bytes === null || bytes === undefined ? '-' : (bytes / 1e6).toFixed(digits));
const ms = (n: number | null | undefined, digits = 1) => (n === null || n === undefined ? '-' : n.toFixed(digits));
const clock = (t: number) => {
  const whole = Math.round(t);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
};

/** Sums the 5xx entries of status-code tallies. */
function fiveHundreds(...codes: Record<string, number>[]): { total: number; byCode: Record<string, number> } {
  const byCode: Record<string, number> = {};
  let total = 0;
  for (const c of codes) {
    for (const [code, n] of Object.entries(c)) {
      if (/^5\d\d$/.test(code)) {
        byCode[code] = (byCode[code] ?? 0) + n;
        total += n;
      }
    }
  }
  return { total, byCode };
}

async function issueMetricsToken(service: ServiceHandle, session: Session): Promise<string> {
  const answer = await service.request('/admin/metrics/token', { method: 'POST', headers: { ...session.headers, 'content-type': 'application/json' }, body: '{}' });
  if (answer.status !== 201 && answer.status !== 200) throw new Error(`POST /admin/metrics/token answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  const { token } = JSON.parse(answer.body) as { token?: unknown };
  if (typeof token !== 'string') throw new Error(`POST /admin/metrics/token answered no token: ${answer.body.slice(0, 300)}`);
  return token;
}

async function run(ctx: BenchmarkContext): Promise<BenchmarkOutcome> {
  const { settings } = ctx;
  const P = SOAK_PLAN;
  const seconds = soakSeconds();
  // The heap has not settled while the hub's bounded buffers are still filling: the telemetry
  // history keeps TELEMETRY_MAX_ENTRIES (500) readings per device, full after 500 / (updates per
  // device per second) seconds (200 s here). The settle point is two minutes after that, and never
  // before 3:00 (or the first third of a shorter run).
  const telemetryFullSeconds = TELEMETRY_MAX_ENTRIES / (P.updatesPerSecond / (P.drivers * P.devicesPerDriver));
  const settleSeconds = Math.min(Math.max(P.settleSeconds, Math.ceil((telemetryFullSeconds + 120) / P.sampleEverySeconds) * P.sampleEverySeconds), Math.round(seconds / 3));
  const sampleCount = seconds / P.sampleEverySeconds;
  const devices = P.drivers * P.devicesPerDriver;
  const limits = openFileLimits();
  if (limits.soft !== null && limits.soft < 1024) throw new Error(`ulimit -n is ${limits.soft}; the soak needs about 200 descriptors per process, raise it to at least 1024`);

  // An access token lasts ACCESS_TOKEN_TTL_SECONDS (default 3600): longer runs get one that lasts.
  const env: Record<string, string> = seconds + 600 > 3600 ? { ACCESS_TOKEN_TTL_SECONDS: String(seconds + 1800) } : {};
  const nodeArgs = settings.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`] : [];
  ctx.progress(`starting the service (LOG_LEVEL=${settings.logLevel})...`);
  const service = await startService({ logLevel: settings.logLevel, nodeArgs, env });
  ctx.progress(`  service pid ${service.pid} at ${service.baseUrl}, DATA_DIR ${service.dataDir}`);
  const drivers: AgentHandle[] = [];
  let health: AgentHandle | undefined;
  let traffic: AgentHandle | undefined;
  let streams: AgentHandle | undefined;
  try {
    const session = await service.login();
    const metricsToken = await issueMetricsToken(service, session);

    ctx.progress(`  ${P.drivers} bench drivers, ${P.devicesPerDriver} devices each...`);
    for (let k = 0; k < P.drivers; k++) {
      const instanceId = `bench-soak-${k}`;
      const driver = await startBenchDriver(service, instanceId);
      drivers.push(driver);
      await discoverDevices(service, session, driver, { instanceId, prefix: `soak${k}-`, count: P.devicesPerDriver, category: 'light', commands: ['toggle', 'turn_on', 'turn_off'], state: { on: false } });
    }
    const byDriverId = await hubIdsByDriverId(service, session);
    const driverIds = drivers.map((_, k) => Array.from({ length: P.devicesPerDriver }, (_, i) => `soak${k}-${i}`));
    const hubIds = driverIds.flat().map((id) => byDriverId.get(id));
    if (hubIds.some((id) => id === undefined)) throw new Error(`only ${hubIds.filter((id) => id !== undefined).length} of ${devices} devices are listed by GET ${OS}/devices`);
    // Interleaved, so that consecutive commands go to different drivers.
    const commandTargets = Array.from({ length: devices }, (_, i) => hubIds[(i % P.drivers) * P.devicesPerDriver + Math.floor(i / P.drivers)]!);

    health = await startAgent('soak health probe', 'soak-traffic');
    traffic = await startAgent('soak traffic', 'soak-traffic');
    streams = await startAgent('soak streams', 'soak-streams');
    ctx.progress(`  ${P.sseClients} SSE + ${P.socketIoClients} Socket.IO hub-protocol stream clients...`);
    const opened = await streams.call<{ opened: number; failed: number; errors: string[] }>('open', { baseUrl: service.baseUrl, token: session.accessToken, sse: P.sseClients, socketio: P.socketIoClients, churnFraction: P.churnFraction }, 120_000);
    if (opened.failed > 0) throw new Error(`${opened.failed} stream clients could not connect: ${opened.errors.join('; ')}`);

    const dataDirBytesBefore = dirBytes(service.dataDir);
    const participants: Participant[] = [
      { label: 'service', pid: service.pid },
      ...drivers.map((d, k) => ({ label: `driver${k}`, pid: d.pid })),
      { label: 'health', pid: health.pid },
      { label: 'traffic', pid: traffic.pid },
      { label: 'streams', pid: streams.pid },
    ];

    const sampleOnce = async (t: number): Promise<Sample> => {
      // /proc first: the scrape's own connection must not be counted among the descriptors.
      const mem = memoryOf(service.pid);
      const fds = openFds(service.pid);
      const cpu = cpuSecondsOf(service.pid);
      let text = '';
      let metricsStatus: number | null = null;
      try {
        const answer = await service.request('/metrics', { headers: { authorization: `Bearer ${metricsToken}` }, timeoutMs: 5000 });
        metricsStatus = answer.status;
        if (answer.status === 200) text = answer.body;
      } catch {
        metricsStatus = null;
      }
      const counts = await traffic!.call<Record<string, Interval>>('snapshot', {}, 10_000).catch(() => ({}) as Record<string, Interval>);
      const probe = await health!.call<Record<string, Interval>>('snapshot', {}, 10_000).catch(() => ({}) as Record<string, Interval>);
      return {
        t,
        rssBytes: mem?.rssBytes ?? null,
        fds,
        heapUsedBytes: metric(text, 'hcs_nodejs_heap_size_used_bytes'),
        heapTotalBytes: metric(text, 'hcs_nodejs_heap_size_total_bytes'),
        externalBytes: metric(text, 'hcs_nodejs_external_memory_bytes'),
        serviceCpuSeconds: cpu ?? null,
        stateUpdates: metric(text, 'hcs_state_updates_total'),
        sseClients: metric(text, 'hcs_clients', 'surface="sse"'),
        hubProtocolClients: metric(text, 'hcs_clients', 'surface="socket.io/socket/hub-protocol"'),
        commandsOk: counts.commands?.ok ?? null,
        commandsSent: counts.commands?.sent ?? null,
        healthP99Ms: probe.health?.p99Ms ?? null,
        healthMaxMs: probe.health?.maxMs ?? null,
        metricsStatus,
      };
    };

    const samples: Sample[] = [];
    const churns: { cycle: number; reconnected: number; failed: number; recovered: number; ms: number }[] = [];
    let serviceExited = false;
    ctx.progress(
      `  ${seconds / 60} min: ${P.updatesPerSecond} updates/s over ${devices} devices, ${P.commandsPerSecond} commands/s, ${P.sseClients + P.socketIoClients} stream clients (a quarter reconnecting every ${P.churnEverySeconds} s), ${P.restPollers + P.hubPollers} pollers, /healthz every ${P.healthIntervalMs} ms; settle point ${clock(settleSeconds)}`,
    );
    const busyBefore = (await waitForQuiet({ maxWaitSeconds: settings.quietWaitSeconds, maxBusyCores: settings.quietMaxBusyCores }, ctx.progress)) ?? null;
    const measured = await measureWindow(participants, async () => {
      const perDriver = P.updatesPerSecond / P.drivers;
      const rates = drivers.map((d, k) =>
        d.call<RateResult>('rate', { deviceIds: driverIds[k], ratePerSecond: perDriver, seconds, step: 1 }, (seconds * 3 + 120) * 1000).catch((err: unknown) => ({ error: String(err) })),
      );
      await Promise.all([
        health!.call('probe', { baseUrl: service.baseUrl, intervalMs: P.healthIntervalMs, seconds }),
        traffic!.call('commands', { baseUrl: service.baseUrl, token: session.accessToken, deviceIds: commandTargets, command: P.command, ratePerSecond: P.commandsPerSecond, seconds }),
        traffic!.call('polls', { baseUrl: service.baseUrl, token: session.accessToken, deviceIds: hubIds, restClients: P.restPollers, hubClients: P.hubPollers, intervalMs: P.pollIntervalMs, seconds }),
      ]);
      const t0 = performance.now();
      const elapsed = () => (performance.now() - t0) / 1000;
      const until = async (t: number) => {
        const wait = t0 + t * 1000 - performance.now();
        if (wait > 0) await sleep(wait);
      };
      for (let i = 0; i <= sampleCount; i++) {
        await until(i * P.sampleEverySeconds);
        const s = await sampleOnce(Math.round(elapsed() * 10) / 10);
        samples.push(s);
        const last = samples[samples.length - 2];
        const cpuCores = last && s.serviceCpuSeconds !== null && last.serviceCpuSeconds !== null ? (s.serviceCpuSeconds - last.serviceCpuSeconds) / (s.t - last.t) : null;
        ctx.progress(
          `    ${clock(s.t)}  RSS ${MB(s.rssBytes)} MB  fds ${s.fds ?? '-'}  heap ${MB(s.heapUsedBytes)}/${MB(s.heapTotalBytes)} MB  srv ${format.fixed(2)(cpuCores)} cores  commands ok ${s.commandsOk ?? '-'}/${s.commandsSent ?? '-'}  /healthz p99 ${ms(s.healthP99Ms)} ms`,
        );
        if (!service.child.running()) {
          serviceExited = true;
          break;
        }
        if (i < sampleCount) {
          await until(i * P.sampleEverySeconds + P.churnEverySeconds / 2);
          const c = await streams!.call<(typeof churns)[number]>('churn', {}, 60_000).catch((err: unknown) => ({ cycle: -1, reconnected: 0, failed: -1, recovered: 0, ms: 0, error: String(err) }));
          churns.push(c);
          if (c.failed !== 0) ctx.progress(`    churn ${c.cycle}: ${c.failed} reconnects failed`);
        }
      }
      const trafficFigures = await traffic!.call<Record<string, TallyFigures | { clients: number; disconnects: number; reasons: string[] }>>('finish', { waitMs: 20_000 }, 60_000);
      const healthFigures = await health!.call<Record<string, TallyFigures>>('finish', { waitMs: 10_000 }, 60_000);
      const rateResults = await Promise.all(rates);
      return { trafficFigures, healthFigures, rateResults };
    }, busyBefore);
    const streamReport = await streams.call<StreamReport>('stats', {}, 30_000);
    await streams.call('close', {}, 30_000);
    const driverStats = await Promise.all(drivers.map((d) => d.call<DriverStats>('stats', {}).catch(() => null)));
    const dataDirBytesAfter = dirBytes(service.dataDir);
    let serviceLogBytes: number | null = null;
    try {
      serviceLogBytes = fs.statSync(service.logPath).size;
    } catch {
      // gone
    }
    const { trafficFigures, healthFigures, rateResults } = measured.result;
    const commands = trafficFigures.commands as TallyFigures;
    const restPolls = trafficFigures['rest-polls'] as TallyFigures;
    const hubPolls = trafficFigures['hub-polls'] as TallyFigures;
    const hubSockets = trafficFigures.hubSockets as { clients: number; disconnects: number; reasons: string[] };
    const probe = healthFigures.health as TallyFigures;

    // ---- load actually generated
    const rateOk = rateResults.filter((r): r is RateResult => 'achievedPerSecond' in r);
    const rateErrors = rateResults.filter((r): r is { error: string } => 'error' in r).map((r) => r.error);
    const updatesSent = rateOk.reduce((a, r) => a + r.sent, 0);
    const updatesPerSecond = rateOk.reduce((a, r) => a + r.achievedPerSecond, 0);
    const commandsPerSecond = commands.pacing?.achievedPerSecond ?? 0;
    const first = samples[0];
    const last = samples[samples.length - 1];
    const absorbedPerSecond =
      first && last && first.stateUpdates !== null && last.stateUpdates !== null && last.t > first.t ? (last.stateUpdates - first.stateUpdates) / (last.t - first.t) : null;
    const loadKept = rateErrors.length === 0 && updatesPerSecond >= P.updatesPerSecond * P.minRateShare && commandsPerSecond >= P.commandsPerSecond * P.minRateShare && !serviceExited;

    // ---- targets
    const sseCodes = streamReport.sse.statusCodes;
    const metricsCodes: Record<string, number> = {};
    for (const s of samples) if (s.metricsStatus !== null) metricsCodes[String(s.metricsStatus)] = (metricsCodes[String(s.metricsStatus)] ?? 0) + 1;
    const fives = fiveHundreds(commands.statusCodes, restPolls.statusCodes, probe.statusCodes, sseCodes, metricsCodes);
    const httpAnswers = [commands, restPolls, probe].reduce((a, t) => a + Object.entries(t.statusCodes).filter(([c]) => /^\d{3}$/.test(c)).reduce((b, [, n]) => b + n, 0), 0) + Object.values(sseCodes).reduce((a, n) => a + n, 0) + Object.values(metricsCodes).reduce((a, n) => a + n, 0);
    const commandOkShare = commands.sent === 0 ? 0 : commands.ok / commands.sent;
    const healthP99 = probe.latencyMs.p99;
    const settled = samples.filter((s) => s.t >= settleSeconds - 1);
    const settleSample = settled[0];
    const rssFit = fitLine(settled.filter((s) => s.rssBytes !== null).map((s) => ({ x: s.t, y: s.rssBytes! })));
    const fdFit = fitLine(settled.filter((s) => s.fds !== null).map((s) => ({ x: s.t, y: s.fds! })));
    const heapFit = fitLine(settled.filter((s) => s.heapUsedBytes !== null).map((s) => ({ x: s.t, y: s.heapUsedBytes! })));
    const rssSlopeMBPerHour = rssFit ? (rssFit.slope * 3600) / 1e6 : null;
    const heapSlopeMBPerHour = heapFit ? (heapFit.slope * 3600) / 1e6 : null;
    const fdGrowth = last?.fds !== null && last?.fds !== undefined && settleSample?.fds !== null && settleSample?.fds !== undefined ? last.fds - settleSample.fds : null;
    const fdDrift = fdFit ? fdFit.slope * (fdFit.toT - fdFit.fromT) : null;
    const enoughSamples = settled.length >= 3;

    const targets = [
      {
        name: 'no 5xx answers',
        measured: `${fives.total} of ${format.int(httpAnswers)} HTTP answers${fives.total > 0 ? ` (${Object.entries(fives.byCode).map(([c, n]) => `${n}× ${c}`).join(', ')})` : ''}`,
        target: `= ${SOAK_TARGETS.max5xx}`,
        passed: fives.total <= SOAK_TARGETS.max5xx,
      },
      {
        name: 'commands ok',
        measured: `${(commandOkShare * 100).toFixed(3)} % (${format.int(commands.ok)} of ${format.int(commands.sent)}; ${format.int(commands.failed)} failed, ${commands.unanswered} unanswered)`,
        target: `≥ ${(SOAK_TARGETS.minCommandOkShare * 100).toFixed(1)} %`,
        passed: commands.sent > 0 && commandOkShare >= SOAK_TARGETS.minCommandOkShare,
      },
      {
        name: '/healthz p99',
        measured: `${ms(healthP99, 2)} ms (${format.int(probe.sent)} probes; p50 ${ms(probe.latencyMs.p50, 2)}, p99.9 ${ms(probe.latencyMs['p99.9'], 1)}, max ${ms(probe.latencyMs.max, 1)} ms; ${probe.failed} failed)`,
        target: `< ${SOAK_TARGETS.healthP99Ms} ms`,
        passed: healthP99 !== null && healthP99 < SOAK_TARGETS.healthP99Ms && probe.failed === 0,
      },
      {
        name: 'RSS slope after settling',
        measured:
          rssFit === null
            ? 'not enough samples'
            : `${rssSlopeMBPerHour!.toFixed(1)} MB/h (± ${((rssFit.slopeStdError ?? 0) * 3600 / 1e6).toFixed(1)} standard error; least squares over ${rssFit.samples} samples ${clock(rssFit.fromT)}–${clock(rssFit.toT)}; RSS ${MB(settleSample?.rssBytes ?? null)} → ${MB(last?.rssBytes ?? null)} MB)`,
        target: `< ${SOAK_TARGETS.maxRssSlopeMBPerHour} MB/h`,
        passed: enoughSamples && rssSlopeMBPerHour !== null && rssSlopeMBPerHour < SOAK_TARGETS.maxRssSlopeMBPerHour,
      },
      {
        name: 'file descriptors flat',
        measured:
          fdFit === null && fdGrowth === null
            ? 'not enough samples'
            : `${settleSample?.fds ?? '-'} at ${clock(settleSample?.t ?? 0)} → ${last?.fds ?? '-'} at the end (${fdGrowth !== null && fdGrowth >= 0 ? '+' : ''}${fdGrowth ?? '-'}); fitted line moves ${fdDrift === null ? '0 (flat)' : fdDrift.toFixed(2)} fds over the fitted samples (${fdFit ? ((fdFit.slope * 3600).toFixed(1)) : '0'} fds/h)`,
        target: `last − settle ≤ ${SOAK_TARGETS.maxFdGrowth}, |fitted drift| < ${SOAK_TARGETS.maxFdDrift}`,
        passed: enoughSamples && fdGrowth !== null && fdGrowth <= SOAK_TARGETS.maxFdGrowth && Math.abs(fdDrift ?? 0) < SOAK_TARGETS.maxFdDrift,
      },
    ];
    const targetsPassed = targets.every((t) => t.passed);

    // ---- report
    const w = measured.window;
    const agentCores = (label: string) => format.fixed(2)(w.cpuCores[label] ?? null);
    const driverCores = drivers.reduce((a, _, k) => a + (w.cpuCores[`driver${k}`] ?? 0), 0);
    ctx.print(
      `\n### soak: ${seconds / 60} min of household traffic against one hub (${devices} devices on ${P.drivers} WebSocket drivers, DATA_DIR on disk, LOG_LEVEL=${settings.logLevel})`,
    );
    ctx.print(
      table(
        ['load', 'requested', 'achieved', 'notes'],
        [
          ['state updates/s (drivers)', String(P.updatesPerSecond), format.fixed(1)(updatesPerSecond), `${format.int(updatesSent)} sent; the hub absorbed ${format.fixed(1)(absorbedPerSecond)}/s (hcs_state_updates_total); max behind schedule ${Math.max(0, ...rateOk.map((r) => r.maxBehindMessages))} messages${rateErrors.length ? `; errors: ${rateErrors.join('; ')}` : ''}`],
          ['commands/s (REST)', String(P.commandsPerSecond), format.fixed(1)(commandsPerSecond), `${format.int(commands.sent)} sent; p50 ${ms(commands.latencyMs.p50, 2)} ms, p99 ${ms(commands.latencyMs.p99, 2)} ms, max ${ms(commands.latencyMs.max, 0)} ms; max ${commands.maxInFlight} in flight; timer late ≤ ${ms(commands.pacing?.maxTimerLateMs, 0)} ms`],
          ['/healthz probes/s', String(1000 / P.healthIntervalMs), format.fixed(1)(probe.pacing?.achievedPerSecond ?? null), `timer late ≤ ${ms(probe.pacing?.maxTimerLateMs, 0)} ms`],
          [
            'polls/s',
            String(((P.restPollers + P.hubPollers) * 1000) / P.pollIntervalMs),
            format.fixed(1)((restPolls.sent + hubPolls.sent) / Math.max(1, seconds)),
            `REST GET /devices/:id p99 ${ms(restPolls.latencyMs.p99, 2)} ms (${restPolls.failed} failed); hub-protocol GET_DEVICE_STATE p99 ${ms(hubPolls.latencyMs.p99, 2)} ms (${hubPolls.failed} failed)`,
          ],
          [
            'stream clients',
            `${P.sseClients} SSE + ${P.socketIoClients} SIO`,
            `${streamReport.sse.openNow} + ${streamReport.socketio.openNow} open at the end`,
            `${streamReport.churnCycles} churn cycles; reconnects ok SSE ${streamReport.sse.connects - streamReport.sse.clients} / SIO ${streamReport.socketio.connects - streamReport.socketio.clients}, failed ${streamReport.sse.connectFailures} / ${streamReport.socketio.connectFailures}; closed by the hub ${streamReport.sse.unexpectedCloses} / ${streamReport.socketio.unexpectedCloses}`,
          ],
        ],
      ),
    );
    const stableSse = P.sseClients - streamReport.sse.churnClients;
    ctx.print(
      `streams: SSE received ${format.int(streamReport.sse.events.state ?? 0)} state events (driver send → SSE receipt p50 ${streamReport.sseStateDelayMs.p50 ?? '-'} ms, p99 ${streamReport.sseStateDelayMs.p99 ?? '-'} ms, max ${streamReport.sseStateDelayMs.max ?? '-'} ms), ${format.int(streamReport.sse.events.event ?? 0)} hub events, ${streamReport.sse.resumes} resumes with Last-Event-ID; Socket.IO hub-protocol clients received ${format.int(Object.values(streamReport.socketio.events).reduce((a, n) => a + n, 0))} hub:events; connect (to the first event) p99 SSE ${ms(streamReport.sse.connectMs.p99)} ms, SIO ${ms(streamReport.socketio.connectMs.p99)} ms; ${stableSse} SSE and ${P.socketIoClients - streamReport.socketio.churnClients} SIO clients never reconnect on purpose`,
    );
    if (commands.failed > 0) ctx.print(`command failures: ${Object.entries(commands.failures).map(([k, n]) => `${n}× ${k}`).join('; ')}`);
    for (const [label, t] of [
      ['REST polls', restPolls],
      ['hub-protocol polls', hubPolls],
      ['/healthz', probe],
    ] as [string, TallyFigures][]) {
      if (t.failed > 0) ctx.print(`${label} failures: ${Object.entries(t.failures).map(([k, n]) => `${n}× ${k}`).join('; ')}`);
    }
    if (hubSockets.disconnects > 0) ctx.print(`hub-protocol pollers disconnected ${hubSockets.disconnects} times (${hubSockets.reasons.join('; ')})`);
    for (const kind of ['sse', 'socketio'] as const) {
      const k = streamReport[kind];
      if (k.connectFailures > 0) ctx.print(`${kind} connect failures: ${Object.entries(k.connectFailureReasons).map(([r, n]) => `${n}× ${r}`).join('; ')}`);
      if (k.unexpectedCloses > 0) ctx.print(`${kind} clients closed by the hub: ${k.unexpectedCloseReasons.join('; ')}`);
    }
    const driverErrors = driverStats.reduce((a, d) => a + (d?.statusErrors ?? 0), 0);
    ctx.print(
      `drivers answered ${format.int(driverStats.reduce((a, d) => a + (d?.actionsAnswered ?? 0), 0))} ACTIONs, ${driverErrors} DRIVER_STATUS errors${driverErrors ? ` (${driverStats.find((d) => d?.lastStatusError)?.lastStatusError})` : ''}`,
    );
    ctx.print(
      `CPU over the run: service ${agentCores('service')} cores, drivers ${driverCores.toFixed(2)}, traffic ${agentCores('traffic')}, streams ${agentCores('streams')}, health ${agentCores('health')}, harness ${w.harnessCpuCores.toFixed(2)}; machine busy ${format.fixed(2)(w.machineBusyCores)} of ${ctx.environment.cores} cores; ${otherNote(w, settings.quietMaxBusyCores)}`,
    );
    ctx.print(
      `DATA_DIR ${MB(dataDirBytesBefore)} → ${MB(dataDirBytesAfter)} MB; service log ${MB(serviceLogBytes)} MB; heap used slope after settling ${heapSlopeMBPerHour === null ? '-' : heapSlopeMBPerHour.toFixed(1)} MB/h`,
    );

    ctx.print(`\nhub process every ${P.sampleEverySeconds} s (MB = 10^6 bytes; heap from GET /metrics; rates over the interval before the sample; settle point ${clock(settleSeconds)}):`);
    ctx.print(
      table(
        ['t', 'RSS MB', 'fds', 'heap used MB', 'heap total MB', 'srv cores', 'updates/s', 'commands ok/s', '/healthz p99 ms', 'SSE', 'hub-protocol'],
        samples.map((s, i) => {
          const prev = samples[i - 1];
          const dt = prev ? s.t - prev.t : 0;
          const rate = (a: number | null, b: number | null | undefined) => (prev && a !== null && b !== null && b !== undefined && dt > 0 ? format.fixed(1)((a - b) / dt) : '-');
          return [
            `${clock(s.t)}${settleSample === s ? ' *' : ''}`,
            MB(s.rssBytes),
            String(s.fds ?? '-'),
            MB(s.heapUsedBytes),
            MB(s.heapTotalBytes),
            prev && s.serviceCpuSeconds !== null && prev.serviceCpuSeconds !== null && dt > 0 ? ((s.serviceCpuSeconds - prev.serviceCpuSeconds) / dt).toFixed(2) : '-',
            rate(s.stateUpdates, prev?.stateUpdates),
            rate(s.commandsOk, prev?.commandsOk),
            ms(s.healthP99Ms),
            String(s.sseClients ?? '-'),
            String(s.hubProtocolClients ?? '-'),
          ];
        }),
      ),
    );
    ctx.print(`(* settle point; SSE and hub-protocol: clients the hub counts, hcs_clients — hub-protocol includes the ${P.hubPollers} polling clients)`);
    if (!loadKept) {
      ctx.print(
        `LOAD NOT KEPT: the load generator reached ${updatesPerSecond.toFixed(1)} of ${P.updatesPerSecond} updates/s and ${commandsPerSecond.toFixed(1)} of ${P.commandsPerSecond} commands/s (needs ≥ ${P.minRateShare * 100} % of each)${serviceExited ? '; the service exited during the run' : ''}: the targets below were not measured at the requested load`,
      );
    } else {
      ctx.print(`load kept: ${updatesPerSecond.toFixed(1)} updates/s and ${commandsPerSecond.toFixed(1)} commands/s achieved (≥ ${P.minRateShare * 100} % of the requested rates)`);
    }
    if (seconds < 600) ctx.print(`note: a ${seconds / 60}-minute run fits the slopes over ${Math.round(seconds - settleSeconds)} s only; the targets are meant for the 10-minute run`);
    for (const t of targets) ctx.print(`${t.passed ? 'PASS' : 'FAIL'}  ${t.name}: ${t.measured} (target ${t.target})`);

    return {
      passed: targetsPassed && loadKept,
      results: {
        plan: P,
        targets: SOAK_TARGETS,
        seconds,
        settleSeconds,
        verdicts: targets,
        loadKept,
        load: {
          updatesPerSecondRequested: P.updatesPerSecond,
          updatesPerSecondAchieved: updatesPerSecond,
          updatesSent,
          absorbedPerSecond,
          commandsPerSecondRequested: P.commandsPerSecond,
          commandsPerSecondAchieved: commandsPerSecond,
          drivers: rateResults,
          driverStats,
        },
        http5xx: fives,
        httpAnswers,
        commands,
        health: probe,
        restPolls,
        hubPolls,
        hubSockets,
        streams: streamReport,
        churns,
        fits: { rss: rssFit, fds: fdFit, heapUsed: heapFit, rssSlopeMBPerHour, heapSlopeMBPerHour, fdGrowth, fdDrift },
        series: samples,
        window: w,
        dataDirBytes: { before: dataDirBytesBefore, after: dataDirBytesAfter },
        serviceLogBytes,
        serviceExited,
      },
    };
  } finally {
    for (const a of [streams, traffic, health]) await a?.stop();
    for (const d of drivers) await d.stop();
    await reportIfExited(service, ctx.progress);
    ctx.progress('stopping the service...');
    await service.stop();
  }
}

export const soakBenchmark: Benchmark = {
  name: 'soak',
  description: `${SOAK_PLAN.defaultMinutes} minutes (--minutes N) of mixed household traffic: 500 state updates/s from 200 devices, 50 commands/s, 40 stream clients with reconnects, polls, /healthz every 100 ms; RSS, descriptors and heap every 10 s`,
  run,
};
