import type { EnvironmentInfo } from './report.js';
import { UsageError, type BenchSettings } from './settings.js';

export interface BenchmarkContext {
  settings: BenchSettings;
  environment: EnvironmentInfo;
  /** Case names (prefixes) given as `<benchmark>:<case>` arguments; empty means all cases. */
  caseFilter: string[];
  /** Progress output (stderr), kept apart from the results on stdout. */
  progress(line: string): void;
  /** Result output (stdout). */
  print(text: string): void;
}

export interface BenchmarkOutcome {
  /** true when every target of the benchmark was met. */
  passed: boolean;
  /** Written as JSON to bench/results/<name>-<timestamp>.json, next to settings and environment. */
  results: Record<string, unknown>;
}

/** The cases whose name starts with one of `filter` (all when it is empty); unknown names are an error. */
export function selectCases<T extends { name: string }>(benchmark: string, cases: T[], filter: string[]): T[] {
  if (filter.length === 0) return cases;
  const unknown = filter.filter((f) => !cases.some((c) => c.name.startsWith(f)));
  if (unknown.length > 0) {
    throw new UsageError(`${benchmark} has no case ${unknown.map((u) => `"${u}"`).join(', ')}; cases: ${cases.map((c) => c.name).join(', ')}`);
  }
  return cases.filter((c) => filter.some((f) => c.name.startsWith(f)));
}

/** One file under bench/ (bench/http.ts, later bench/drivers.ts, bench/sse.ts, ...). */
export interface Benchmark {
  name: string;
  description: string;
  run(ctx: BenchmarkContext): Promise<BenchmarkOutcome>;
}
