import path from 'node:path';

/** Run settings, from BENCH_* environment variables; every benchmark reads them from here. */
export interface BenchSettings {
  /** Measured seconds per run (BENCH_DURATION, default 8). */
  durationSeconds: number;
  /** Discarded warm-up seconds before each measured run (BENCH_WARMUP, default 2; 0 skips). */
  warmupSeconds: number;
  /** Concurrent connections (BENCH_CONNECTIONS, default 50; the targets are defined at 50). */
  connections: number;
  /** Alternating baseline/service rounds per case; the median round is reported (BENCH_ROUNDS, default 1). */
  rounds: number;
  /** LOG_LEVEL of the service (BENCH_LOG_LEVEL, default info, i.e. production request logging). */
  logLevel: string;
  /** Directory for V8 CPU profiles of the service, or undefined (BENCH_CPU_PROF). */
  cpuProfileDir: string | undefined;
  /**
   * Before each measured run, wait up to this many seconds for other work on the machine to
   * stop (BENCH_QUIET_WAIT, default 0: only record the load); quiet means below
   * BENCH_QUIET_CORES busy cores (default 0.25).
   */
  quietWaitSeconds: number;
  quietMaxBusyCores: number;
  /**
   * Measured runs during which other work used more than BENCH_QUIET_CORES are repeated up to
   * this many times (BENCH_RETRIES, default 0); the least disturbed attempt is kept.
   */
  disturbedRetries: number;
  /** Exit non-zero when a target is missed (BENCH_STRICT=1). */
  strict: boolean;
}

/** A bad setting or argument: reported without a stack trace. */
export class UsageError extends Error {
  override name = 'UsageError';
}

function numberFrom(name: string, fallback: number, { min, max, integer }: { min: number; max: number; integer?: boolean }): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw new UsageError(`${name} must be ${integer ? 'a whole number' : 'a number'} between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadSettings(): BenchSettings {
  const logLevel = process.env.BENCH_LOG_LEVEL?.trim() || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new UsageError(`BENCH_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  return {
    durationSeconds: numberFrom('BENCH_DURATION', 8, { min: 1, max: 600, integer: true }),
    warmupSeconds: numberFrom('BENCH_WARMUP', 2, { min: 0, max: 120, integer: true }),
    connections: numberFrom('BENCH_CONNECTIONS', 50, { min: 1, max: 10_000, integer: true }),
    rounds: numberFrom('BENCH_ROUNDS', 1, { min: 1, max: 20, integer: true }),
    logLevel,
    cpuProfileDir: process.env.BENCH_CPU_PROF?.trim() ? path.resolve(process.env.BENCH_CPU_PROF.trim()) : undefined,
    quietWaitSeconds: numberFrom('BENCH_QUIET_WAIT', 0, { min: 0, max: 3600, integer: true }),
    quietMaxBusyCores: numberFrom('BENCH_QUIET_CORES', 0.25, { min: 0, max: 1024 }),
    disturbedRetries: numberFrom('BENCH_RETRIES', 0, { min: 0, max: 10, integer: true }),
    strict: process.env.BENCH_STRICT === '1',
  };
}
