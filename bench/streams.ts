import { setTimeout as sleep } from 'node:timers/promises';
import { startAgent, type AgentHandle } from './lib/agent.js';
import type { Benchmark, BenchmarkContext, BenchmarkOutcome } from './lib/benchmark.js';
import { discoverDevices, reportIfExited, startBenchDriver } from './lib/hub-setup.js';
import { memoryOf } from './lib/proc.js';
import { format, table } from './lib/report.js';
import { startService } from './lib/service.js';
import { MiB, measureWindow, openFds, openFileLimits, undisturbed, type Participant, type WindowFigures } from './lib/window.js';

/** Targets of the issue, on this 2-core machine. */
export const STREAMS_TARGETS = {
  /** ≥ 100 updates/s to 1,000 clients (500 SSE + 500 Socket.IO) with nothing lost and p99 < 100 ms... */
  minRatePerSecond: 100,
  clients: 1000,
  maxP99Ms: 100,
  /** ... with the service's RSS under 400 MB (read as 400 × 10^6 bytes). */
  maxRssBytes: 400 * 1000 * 1000,
} as const;

type Kind = 'sse' | 'socketio';

interface KindCollect {
  clients: number;
  complete: number;
  closed: number;
  closeReasons: string[];
  totalReceived: number;
  minReceived: number;
  maxReceived: number;
  histogram: [number, number][];
}

interface RateResult {
  step: number;
  sent: number;
  firstSeq: number;
  lastSeq: number;
  startedAt: number;
  endedAt: number;
  achievedPerSecond: number;
  maxBehindMessages: number;
}

/** Percentile of a sparse [ms, count] histogram. */
function histPercentile(h: [number, number][], p: number): number | null {
  const total = h.reduce((a, [, n]) => a + n, 0);
  if (total === 0) return null;
  const rank = Math.ceil((p / 100) * total);
  let seen = 0;
  for (const [ms, n] of h) {
    seen += n;
    if (seen >= rank) return ms;
  }
  return h[h.length - 1]![0];
}

function mergeHist(hs: [number, number][][]): [number, number][] {
  const m = new Map<number, number>();
  for (const h of hs) for (const [ms, n] of h) m.set(ms, (m.get(ms) ?? 0) + n);
  return [...m.entries()].sort((a, b) => a[0] - b[0]);
}

function split(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0)).filter((n) => n > 0);
}

interface StepFigures {
  rate: number;
  step: number;
  sent: number;
  achievedPerSecond: number;
  kinds: Record<Kind, { clients: number; complete: number; closed: number; closeReasons: string[]; deliveredFraction: number; p50Ms: number | null; p99Ms: number | null; maxMs: number | null }>;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  everythingDelivered: boolean;
  passed: boolean;
  deliveryWaitMs: number;
  window: WindowFigures;
  clientCpuCores: Record<Kind, number>;
  attempts: number;
  disturbed: boolean;
}

async function run(ctx: BenchmarkContext): Promise<BenchmarkOutcome> {
  const { settings } = ctx;
  const s = settings.streams;
  const totalClients = s.sseClients + s.socketIoClients;
  const limits = openFileLimits();
  const perProcessMax = Math.max(totalClients + 200, Math.ceil(Math.max(s.sseClients, s.socketIoClients) / s.processesPerKind) + 100);
  ctx.progress(`open-file limit (ulimit -n, inherited by every child): soft ${limits.soft} hard ${limits.hard}; the service needs about ${totalClients + 200}`);
  if (limits.soft !== null && limits.soft < perProcessMax) {
    throw new Error(`ulimit -n is ${limits.soft}, below the ${perProcessMax} descriptors one process needs here; raise it (ulimit -n ${Math.min(limits.hard ?? perProcessMax, 65536)}) or lower BENCH_STREAM_SSE/BENCH_STREAM_SOCKETIO`);
  }

  const nodeArgs = settings.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`] : [];
  ctx.progress(`starting the service (LOG_LEVEL=${settings.logLevel})...`);
  const service = await startService({ logLevel: settings.logLevel, nodeArgs });
  ctx.progress(`  service pid ${service.pid} at ${service.baseUrl}`);
  const agents: { kind: Kind; agent: AgentHandle; count: number }[] = [];
  let driver: AgentHandle | undefined;
  try {
    const session = await service.login();
    driver = await startBenchDriver(service, 'bench-streams');
    await discoverDevices(service, session, driver, { instanceId: 'bench-streams', prefix: 'sm-', count: s.devices, category: 'sensor' });
    const driverIds = Array.from({ length: s.devices }, (_, i) => `sm-${i}`);
    const rssIdle = memoryOf(service.pid);

    // Clients: processesPerKind processes per kind, each with its share.
    const plan = (
      [
        ['sse', s.sseClients],
        ['socketio', s.socketIoClients],
      ] as [Kind, number][]
    ).flatMap(([kind, count]) => split(count, s.processesPerKind).map((n) => ({ kind, count: n })));
    for (const p of plan) agents.push({ ...p, agent: await startAgent(`${p.kind} clients`, 'stream-clients') });
    ctx.progress(`  connecting ${s.sseClients} SSE + ${s.socketIoClients} Socket.IO clients in ${agents.length} processes...`);
    const t0 = performance.now();
    const opened = await Promise.all(
      agents.map((a) => a.agent.call<{ opened: number; failed: number; errors: string[]; ms: number }>('open', { baseUrl: service.baseUrl, token: session.accessToken, kind: a.kind, count: a.count }, 300_000)),
    );
    const connectSeconds = (performance.now() - t0) / 1000;
    const failedOpen = opened.reduce((n, o) => n + o.failed, 0);
    if (failedOpen > 0) throw new Error(`${failedOpen} stream clients could not connect: ${opened.flatMap((o) => o.errors).slice(0, 3).join('; ')}`);
    const rssConnected = memoryOf(service.pid);
    const fdsConnected = openFds(service.pid);
    ctx.progress(`  ${totalClients} clients connected in ${connectSeconds.toFixed(1)} s; service RSS ${MiB(rssConnected?.rssBytes)} MiB, ${fdsConnected} open fds`);

    const participants: Participant[] = [
      { label: 'service', pid: service.pid },
      { label: 'driver', pid: driver.pid },
      ...agents.map((a, i) => ({ label: `clients${i}`, pid: a.agent.pid })),
    ];

    // Rising update rates, after a discarded warm-up (JIT, buffers, heap) at 50/s (or the highest
    // configured rate when that is lower).
    let stepNo = 0;
    if (settings.warmupSeconds > 0 && s.rates.length > 0) {
      const step = ++stepNo;
      const warmRate = Math.min(50, Math.max(...s.rates));
      ctx.progress(`  warm-up: ${warmRate} updates/s for ${settings.warmupSeconds} s (discarded)`);
      const sent = await driver.call<RateResult>('rate', { deviceIds: driverIds, ratePerSecond: warmRate, seconds: settings.warmupSeconds, step }, (settings.warmupSeconds * 3 + 60) * 1000);
      for (let i = 0; i < s.graceSeconds * 10 + 1; i++) {
        const prog = await Promise.all(agents.map((a) => a.agent.call<{ clients: number; complete: number }>('progress', { step, expected: sent.sent })));
        if (prog.every((p) => p.complete === p.clients)) break;
        await sleep(100);
      }
    }
    const steps: StepFigures[] = [];
    for (const rate of s.rates) {
      ctx.progress(`  ${rate} updates/s for ${s.stepSeconds} s to ${totalClients} clients...`);
      const r = await undisturbed(ctx, `${rate}/s`, async (busy) => {
        const step = ++stepNo;
        let deliveryWaitMs = 0;
        const m = await measureWindow(
          participants,
          async () => {
            const sent = await driver!.call<RateResult>('rate', { deviceIds: driverIds, ratePerSecond: rate, seconds: s.stepSeconds, step }, (s.stepSeconds * 3 + 60) * 1000);
            // Let the clients receive the rest: until all have everything, at most the grace period.
            const w0 = performance.now();
            for (let i = 0; i < s.graceSeconds * 10 + 1; i++) {
              const prog = await Promise.all(agents.map((a) => a.agent.call<{ clients: number; complete: number }>('progress', { step, expected: sent.sent })));
              if (prog.every((p) => p.complete === p.clients)) break;
              if (performance.now() - w0 > s.graceSeconds * 1000) break;
              await sleep(100);
            }
            deliveryWaitMs = performance.now() - w0;
            return sent;
          },
          busy,
        );
        const collected = await Promise.all(agents.map((a) => a.agent.call<Record<string, KindCollect>>('collect', { step, expected: m.result.sent })));
        return { sent: m.result, collected, window: m.window, deliveryWaitMs };
      });

      const kinds = {} as StepFigures['kinds'];
      const allHists: [number, number][][] = [];
      const clientCpuCores: Record<Kind, number> = { sse: 0, socketio: 0 };
      agents.forEach((a, i) => {
        clientCpuCores[a.kind] += r.window.cpuCores[`clients${i}`] ?? 0;
      });
      for (const kind of ['sse', 'socketio'] as Kind[]) {
        const parts = r.collected.map((c) => c[kind]).filter((x): x is KindCollect => x !== undefined);
        const clients = parts.reduce((n, p) => n + p.clients, 0);
        const hist = mergeHist(parts.map((p) => p.histogram));
        allHists.push(hist);
        kinds[kind] = {
          clients,
          complete: parts.reduce((n, p) => n + p.complete, 0),
          closed: parts.reduce((n, p) => n + p.closed, 0),
          closeReasons: parts.flatMap((p) => p.closeReasons).slice(0, 3),
          deliveredFraction: clients === 0 ? 1 : parts.reduce((n, p) => n + p.totalReceived, 0) / (clients * r.sent.sent),
          p50Ms: histPercentile(hist, 50),
          p99Ms: histPercentile(hist, 99),
          maxMs: hist.length ? hist[hist.length - 1]![0] : null,
        };
      }
      const all = mergeHist(allHists);
      const everythingDelivered = kinds.sse.complete === kinds.sse.clients && kinds.socketio.complete === kinds.socketio.clients;
      const p99 = histPercentile(all, 99);
      const figures: StepFigures = {
        rate,
        step: r.sent.step,
        sent: r.sent.sent,
        achievedPerSecond: r.sent.achievedPerSecond,
        kinds,
        p50Ms: histPercentile(all, 50),
        p99Ms: p99,
        maxMs: all.length ? all[all.length - 1]![0] : null,
        everythingDelivered,
        passed: everythingDelivered && p99 !== null && p99 < STREAMS_TARGETS.maxP99Ms,
        deliveryWaitMs: r.deliveryWaitMs,
        window: r.window,
        clientCpuCores,
        attempts: r.attempts,
        disturbed: r.disturbed,
      };
      steps.push(figures);
      ctx.progress(
        `    delivered SSE ${(kinds.sse.deliveredFraction * 100).toFixed(2)} %, Socket.IO ${(kinds.socketio.deliveredFraction * 100).toFixed(2)} %; p99 ${p99} ms; service ${format.fixed(2)(r.window.cpuCores.service ?? null)} cores`,
      );
      const closed = kinds.sse.closed + kinds.socketio.closed;
      if (closed > totalClients * 0.1) {
        ctx.progress(`    ${closed} clients were disconnected; not going higher`);
        break;
      }
    }

    for (const a of agents) await a.agent.stop();
    const rssAfterStreams = memoryOf(service.pid);

    // Report.
    ctx.print(`\n### state updates to ${s.sseClients} SSE + ${s.socketIoClients} Socket.IO clients (${agents.length} client processes, ${s.devices} devices, ${s.stepSeconds} s per step)`);
    ctx.print(
      `connect: ${totalClients} clients in ${connectSeconds.toFixed(1)} s; service RSS ${MiB(rssIdle?.rssBytes)} MiB before, ${MiB(rssConnected?.rssBytes)} MiB connected; ${fdsConnected} open fds (ulimit -n soft ${limits.soft})`,
    );
    ctx.print(
      table(
        ['updates/s', 'sent', 'SSE delivered', 'SSE complete', 'SIO delivered', 'SIO complete', 'p50 ms', 'p99 ms', 'max ms', 'SSE p99', 'SIO p99', 'srv cores', 'srv RSS MiB', 'SSE clients cores', 'SIO clients cores', 'driver cores', 'other cores', 'verdict'],
        steps.map((x) => [
          String(x.rate),
          format.int(x.sent),
          `${(x.kinds.sse.deliveredFraction * 100).toFixed(2)} %`,
          `${x.kinds.sse.complete}/${x.kinds.sse.clients}`,
          `${(x.kinds.socketio.deliveredFraction * 100).toFixed(2)} %`,
          `${x.kinds.socketio.complete}/${x.kinds.socketio.clients}`,
          String(x.p50Ms ?? '-'),
          String(x.p99Ms ?? '-'),
          String(x.maxMs ?? '-'),
          String(x.kinds.sse.p99Ms ?? '-'),
          String(x.kinds.socketio.p99Ms ?? '-'),
          format.fixed(2)(x.window.cpuCores.service ?? null),
          MiB(x.window.rssBytes.service),
          x.clientCpuCores.sse.toFixed(2),
          x.clientCpuCores.socketio.toFixed(2),
          format.fixed(2)(x.window.cpuCores.driver ?? null),
          format.fixed(2)(x.window.otherCpuCores),
          `${x.passed ? 'ok' : 'FAIL'}${x.disturbed ? ' (disturbed)' : ''}`,
        ]),
      ),
    );
    for (const x of steps) {
      const closed = x.kinds.sse.closed + x.kinds.socketio.closed;
      if (closed > 0) ctx.print(`${x.rate}/s: ${closed} clients disconnected (${[...x.kinds.sse.closeReasons, ...x.kinds.socketio.closeReasons].join('; ')})`);
      if (x.achievedPerSecond < x.rate * 0.95) ctx.print(`${x.rate}/s: the driver only reached ${x.achievedPerSecond.toFixed(0)}/s`);
    }
    ctx.print(`peak service RSS over the run: ${MiB(rssAfterStreams?.peakRssBytes)} MiB`);
    let highest: number | null = null;
    for (const x of steps) {
      if (!x.passed) break;
      highest = x.rate;
    }
    const atTarget = steps.find((x) => x.rate === STREAMS_TARGETS.minRatePerSecond);
    const rssAtTarget = atTarget?.window.rssBytes.service ?? null;
    const fullSize = totalClients >= STREAMS_TARGETS.clients;
    const streamsPassed = highest !== null && highest >= STREAMS_TARGETS.minRatePerSecond && rssAtTarget !== null && rssAtTarget < STREAMS_TARGETS.maxRssBytes && fullSize;
    ctx.print(
      `highest rate with everything delivered to every client and p99 < ${STREAMS_TARGETS.maxP99Ms} ms (every step up to it passing): ${highest === null ? 'none' : `${highest} updates/s`}; service RSS at ${STREAMS_TARGETS.minRatePerSecond}/s: ${rssAtTarget === null ? '-' : (rssAtTarget / 1e6).toFixed(0)} MB → ${streamsPassed ? 'PASS' : 'FAIL'} (target ≥ ${STREAMS_TARGETS.minRatePerSecond}/s to ${STREAMS_TARGETS.clients} clients, RSS < 400 MB)${fullSize ? '' : ' [fewer clients than the target condition]'}`,
    );

    return {
      passed: streamsPassed,
      results: {
        targets: STREAMS_TARGETS,
        clients: { sse: s.sseClients, socketio: s.socketIoClients, processes: agents.length, connectSeconds, openFdsConnected: fdsConnected, openFileLimits: limits },
        rssBytes: { idle: rssIdle?.rssBytes ?? null, connected: rssConnected?.rssBytes ?? null, afterStreams: rssAfterStreams?.rssBytes ?? null, peak: rssAfterStreams?.peakRssBytes ?? null },
        steps,
        highestPassingRate: highest,
        streamsPassed,
      },
    };
  } finally {
    for (const a of agents) await a.agent?.stop();
    await driver?.stop();
    await reportIfExited(service, ctx.progress);
    ctx.progress('stopping the service...');
    await service.stop();
  }
}

export const streamsBenchmark: Benchmark = {
  name: 'streams',
  description: 'state updates at rising rates to 500 SSE + 500 Socket.IO clients (delivery, latency, CPU, RSS)',
  run,
};
