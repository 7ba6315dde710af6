/**
 * The one back-off of the hub: how long to wait before trying again after a run of failures.
 * Exponential (`initialMs`, times `factor` per further failure) up to `maxMs`, and without
 * jitter, so that a test with a ManualClock knows to the millisecond when the next try is due.
 * Whoever waits does so on the injected `Timers`; this only says how long.
 */
export interface BackoffPolicy {
  /** The wait after the first failure (ms). */
  initialMs: number;
  /** The longest wait, however many failures (ms). */
  maxMs: number;
  /** How much each further failure multiplies the wait (default 2). */
  factor?: number;
}

/** The wait after the `failures`-th failure in a row (1 for the first); 0 when there was none. */
export function backoffDelay(policy: BackoffPolicy, failures: number): number {
  if (failures <= 0) return 0;
  const initial = Math.max(0, policy.initialMs);
  const max = Math.max(initial, policy.maxMs);
  const factor = Math.max(1, policy.factor ?? 2);
  // Capped before it can overflow: the exponent stops growing once the cap is passed.
  let delay = initial;
  for (let i = 1; i < failures && delay < max; i++) delay *= factor;
  return Math.min(delay, max);
}

/**
 * A run of failures and the wait each one earns: `fail()` counts one and answers how long to
 * wait before the next try, `succeed()` ends the run (the next failure waits `initialMs` again).
 */
export class Backoff {
  private count = 0;

  constructor(private readonly policy: BackoffPolicy) {}

  /** Failures in a row so far. */
  get failures(): number {
    return this.count;
  }

  /** Counts a failure; answers the wait before the next try. */
  fail(): number {
    this.count++;
    return backoffDelay(this.policy, this.count);
  }

  /** The wait the next failure would earn, without counting it. */
  peek(): number {
    return backoffDelay(this.policy, this.count + 1);
  }

  succeed(): void {
    this.count = 0;
  }
}
