import type { BenchmarkContext } from './benchmark.js';
import { measure, type Measurement, type MeasureTarget } from './load.js';
import { median, ratio, verdictFor, type RatioTarget, type Verdict } from './report.js';

export interface Comparison {
  name: string;
  method: string;
  path: string;
  connections: number;
  /** The round with the median requests/s, per side. */
  baseline: Measurement;
  service: Measurement;
  /** Every round, in the order run. */
  rounds: { order: string[]; baseline: Measurement; service: Measurement }[];
  /** Median service req/s over median baseline req/s. */
  ratio: number;
  target: RatioTarget;
  verdict: Verdict;
  reasons: string[];
  /** Service CPU per request over baseline CPU per request (a load-independent cost ratio). */
  cpuCostFactor: number | null;
  /** Runs during which other work on the machine used more than BENCH_QUIET_CORES. */
  disturbedRuns: string[];
}

/**
 * Measures `target`, repeating a run that other work on the machine disturbed (more than
 * `maxOtherCores`) up to `retries` times; keeps the least disturbed attempt.
 */
async function measureUndisturbed(
  ctx: BenchmarkContext,
  target: MeasureTarget,
  load: Parameters<typeof measure>[1],
  retries: number,
  maxOtherCores: number,
): Promise<Measurement & { attempts: number }> {
  let best: Measurement | undefined;
  let attempts = 0;
  for (let attempt = 0; attempt <= retries; attempt++) {
    attempts++;
    const m = await measure(target, load, ctx.progress);
    if (!best || (m.otherCpuCores ?? 0) < (best.otherCpuCores ?? 0)) best = m;
    if ((m.otherCpuCores ?? 0) <= maxOtherCores) break;
    if (attempt < retries) ctx.progress(`    other work used ${m.otherCpuCores!.toFixed(2)} cores during that run; repeating it (${attempt + 1}/${retries})`);
  }
  return { ...best!, attempts };
}

function medianRound(ms: Measurement[]): Measurement {
  const m = median(ms.map((x) => x.requestsPerSec));
  return ms.reduce((best, x) => (Math.abs(x.requestsPerSec - m) < Math.abs(best.requestsPerSec - m) ? x : best));
}

/**
 * Loads the baseline and the service in turn, never both at once, for `settings.rounds`
 * rounds; odd rounds start with the baseline, even rounds with the service, so that neither
 * always profits from (or pays for) going first.
 */
export async function compareAlternating(
  ctx: BenchmarkContext,
  spec: { name: string; method: 'GET'; path: string; baseline: MeasureTarget; service: MeasureTarget; target: RatioTarget },
): Promise<Comparison> {
  const { settings } = ctx;
  const load = {
    connections: settings.connections,
    durationSeconds: settings.durationSeconds,
    warmupSeconds: settings.warmupSeconds,
    quiet: { maxWaitSeconds: settings.quietWaitSeconds, maxBusyCores: settings.quietMaxBusyCores },
  };
  const rounds: Comparison['rounds'] = [];
  for (let round = 1; round <= settings.rounds; round++) {
    const order = round % 2 === 1 ? [spec.baseline, spec.service] : [spec.service, spec.baseline];
    const results = new Map<string, Measurement>();
    for (const target of order) {
      ctx.progress(
        `  ${spec.name}: round ${round}/${settings.rounds}, ${target.label} (${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s, ${settings.connections} connections)`,
      );
      results.set(target.label, await measureUndisturbed(ctx, target, load, settings.disturbedRetries, settings.quietMaxBusyCores));
    }
    rounds.push({ order: order.map((t) => t.label), baseline: results.get(spec.baseline.label)!, service: results.get(spec.service.label)! });
  }
  const baseline = medianRound(rounds.map((r) => r.baseline));
  const service = medianRound(rounds.map((r) => r.service));
  const r = ratio(service.requestsPerSec, baseline.requestsPerSec);
  const { verdict, reasons } = verdictFor(r, spec.target, rounds.flatMap((x) => [x.baseline, x.service]));
  const cpuCostFactor =
    service.serverCpuMicrosPerRequest !== null && baseline.serverCpuMicrosPerRequest
      ? service.serverCpuMicrosPerRequest / baseline.serverCpuMicrosPerRequest
      : null;
  const disturbedRuns = rounds.flatMap((x, i) =>
    [x.baseline, x.service]
      .filter((m) => (m.otherCpuCores ?? 0) > settings.quietMaxBusyCores)
      .map((m) => `round ${i + 1} ${m.label}: other work used ${m.otherCpuCores!.toFixed(2)} cores`),
  );
  return {
    name: spec.name,
    method: spec.method,
    path: spec.path,
    connections: settings.connections,
    baseline,
    service,
    rounds,
    ratio: r,
    target: spec.target,
    verdict,
    reasons,
    cpuCostFactor,
    disturbedRuns,
  };
}
