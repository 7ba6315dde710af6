import type { BenchmarkContext } from './benchmark.js';
import { measure, type Measurement, type MeasureTarget } from './load.js';
import { format, median, type Verdict } from './report.js';

/**
 * A target stated as a ratio against a reference measured in the same run: `subject`'s figure
 * at least (`atLeast`) or at most (`atMost`) `limit` × `reference`'s. Every target of issue 9
 * is one, because these cores also carry the load generator: a ratio of two figures measured
 * side by side moves much less with the machine's load than either figure does.
 */
export interface RatioTarget {
  /** What is compared, e.g. "req/s" or "p99". */
  figure: string;
  subject: string;
  reference: string;
  bound: 'atLeast' | 'atMost';
  limit: number;
}

export interface RatioResult extends RatioTarget {
  /** Median of the per-round ratios: each round's two sides ran back to back. */
  ratio: number;
  perRound: number[];
  /** The sides' figures of the median-ratio round, for printing side by side. */
  subjectValue: number;
  referenceValue: number;
  verdict: Verdict;
  reasons: string[];
}

/** A target stated as a fixed bound on one figure (p50 < 0.5 ms). */
export interface AbsoluteTarget {
  figure: string;
  subject: string;
  bound: 'below';
  limit: number;
  unit: string;
}

export interface AbsoluteResult extends AbsoluteTarget {
  /** Median over the rounds. */
  value: number;
  perRound: number[];
  verdict: Verdict;
  reasons: string[];
}

export type TargetResult = (RatioResult & { kind: 'ratio' }) | (AbsoluteResult & { kind: 'absolute' });

/** A run's figures per subject label, in the order they were measured. */
export interface Round<T> {
  order: string[];
  results: Record<string, T>;
}

/**
 * Measures every subject once per round, never two at once, for `rounds` rounds. The order
 * rotates by one each round, so that no subject always profits from (or pays for) its place.
 */
export async function inRotation<T>(labels: string[], rounds: number, measureOne: (label: string, round: number) => Promise<T>): Promise<Round<T>[]> {
  const all: Round<T>[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = labels.map((_, i) => labels[(i + round) % labels.length]!);
    const results: Record<string, T> = {};
    for (const label of order) results[label] = await measureOne(label, round + 1);
    all.push({ order, results });
  }
  return all;
}

/**
 * The ratio target over the rounds. `value` reads a side's figure (null: not measured). `clean`
 * says whether a round's sides had no failed requests; a dirty round fails the target.
 */
export function ratioResult<T>(target: RatioTarget, rounds: Round<T>[], value: (m: T) => number | null, clean: (m: T) => string | null = () => null): RatioResult {
  const perRound: { ratio: number; subject: number; reference: number }[] = [];
  const reasons: string[] = [];
  for (const r of rounds) {
    const s = r.results[target.subject];
    const ref = r.results[target.reference];
    if (s === undefined || ref === undefined) continue;
    const sv = value(s);
    const rv = value(ref);
    if (sv !== null && rv !== null && rv > 0) perRound.push({ ratio: sv / rv, subject: sv, reference: rv });
    for (const problem of [clean(s), clean(ref)]) if (problem !== null && !reasons.includes(problem)) reasons.push(problem);
  }
  const ratio = median(perRound.map((p) => p.ratio));
  const mid = perRound.reduce<(typeof perRound)[number] | undefined>((best, p) => (best === undefined || Math.abs(p.ratio - ratio) < Math.abs(best.ratio - ratio) ? p : best), undefined);
  if (perRound.length === 0) reasons.push('not measured');
  else if (target.bound === 'atLeast' ? ratio < target.limit : ratio > target.limit) reasons.push(`ratio ${ratio.toFixed(2)} ${target.bound === 'atLeast' ? '<' : '>'} ${target.limit.toFixed(2)}`);
  return {
    ...target,
    ratio,
    perRound: perRound.map((p) => p.ratio),
    subjectValue: mid?.subject ?? 0,
    referenceValue: mid?.reference ?? 0,
    verdict: reasons.length === 0 ? 'PASS' : 'FAIL',
    reasons,
  };
}

export function absoluteResult<T>(target: AbsoluteTarget, rounds: Round<T>[], value: (m: T) => number | null, clean: (m: T) => string | null = () => null): AbsoluteResult {
  const values: number[] = [];
  const reasons: string[] = [];
  for (const r of rounds) {
    const s = r.results[target.subject];
    if (s === undefined) continue;
    const v = value(s);
    if (v !== null) values.push(v);
    const problem = clean(s);
    if (problem !== null && !reasons.includes(problem)) reasons.push(problem);
  }
  const v = median(values);
  if (values.length === 0) reasons.push('not measured');
  else if (v >= target.limit) reasons.push(`${v.toFixed(3)} ${target.unit} ≥ ${target.limit} ${target.unit}`);
  return { ...target, value: v, perRound: values, verdict: reasons.length === 0 ? 'PASS' : 'FAIL', reasons };
}

const figureText = (value: number, figure: string) => (/req|\/s|throughput/.test(figure) ? format.int(value) : value.toFixed(3));

/** One line per target: verdict, the service's and the reference's figures side by side, the rounds. */
export function targetLine(t: TargetResult): string {
  if (t.kind === 'ratio') {
    const rounds = t.perRound.length > 1 ? `; rounds ${t.perRound.map((x) => x.toFixed(2)).join(' ')}` : '';
    return (
      `${t.verdict}  ${t.figure}: ${t.subject} ${figureText(t.subjectValue, t.figure)} vs ${t.reference} ${figureText(t.referenceValue, t.figure)} → ` +
      `${t.ratio.toFixed(2)}× (target ${t.bound === 'atLeast' ? '≥' : '≤'} ${t.limit.toFixed(2)}×${rounds})` +
      (t.reasons.length > 0 ? ` — ${t.reasons.join('; ')}` : '')
    );
  }
  const rounds = t.perRound.length > 1 ? `; rounds ${t.perRound.map((x) => x.toFixed(3)).join(' ')}` : '';
  return `${t.verdict}  ${t.figure}: ${t.subject} ${t.value.toFixed(3)} ${t.unit} (target < ${t.limit} ${t.unit}${rounds})` + (t.reasons.length > 0 ? ` — ${t.reasons.join('; ')}` : '');
}

/** "no failed requests" check of an autocannon measurement, for `ratioResult`'s `clean`. */
export function failedRequests(m: Measurement): string | null {
  const bad = m.non2xx + m.errors + m.timeouts;
  return bad > 0 ? `${m.label}: ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts` : null;
}

/**
 * One autocannon measurement (warm-up, then the measured run), repeated while other work on the
 * machine disturbed it (more than BENCH_QUIET_CORES) up to BENCH_RETRIES times; keeps the least
 * disturbed attempt.
 */
export async function measureUndisturbed(ctx: BenchmarkContext, target: MeasureTarget, connections: number): Promise<Measurement & { attempts: number }> {
  const { settings } = ctx;
  const load = {
    connections,
    durationSeconds: settings.durationSeconds,
    warmupSeconds: settings.warmupSeconds,
    quiet: { maxWaitSeconds: settings.quietWaitSeconds, maxBusyCores: settings.quietMaxBusyCores },
  };
  let best: Measurement | undefined;
  let attempts = 0;
  for (let attempt = 0; attempt <= settings.disturbedRetries; attempt++) {
    attempts++;
    const m = await measure(target, load, ctx.progress);
    if (!best || (m.otherCpuCores ?? 0) < (best.otherCpuCores ?? 0)) best = m;
    if ((m.otherCpuCores ?? 0) <= settings.quietMaxBusyCores) break;
    if (attempt < settings.disturbedRetries) ctx.progress(`    other work used ${m.otherCpuCores!.toFixed(2)} cores during that run; repeating it (${attempt + 1}/${settings.disturbedRetries})`);
  }
  return { ...best!, attempts };
}

/** The round whose `value` is the median, per label. */
export function medianRoundOf<T>(rounds: Round<T>[], label: string, value: (m: T) => number): T | undefined {
  const ms = rounds.map((r) => r.results[label]).filter((m): m is T => m !== undefined);
  const mid = median(ms.map(value));
  return ms.reduce<T | undefined>((best, m) => (best === undefined || Math.abs(value(m) - mid) < Math.abs(value(best) - mid) ? m : best), undefined);
}
