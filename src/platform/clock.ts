/**
 * Time source for everything that expires, schedules or rate-limits, and the timers that wait
 * for it. Injected so that tests move time forward instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export type TimerHandle = { readonly id: number } | NodeJS.Timeout;

export interface Timers {
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
  /** Calls `fn` every `ms` until cleared; the first call is `ms` from now. */
  setInterval(fn: () => void, ms: number): TimerHandle;
  clearInterval(handle: TimerHandle | undefined): void;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Node's timers, unreferenced: a pending hub timer never keeps the process alive by itself. */
export const systemTimers: Timers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (handle) => {
    if (handle) clearTimeout(handle as NodeJS.Timeout);
  },
  setInterval: (fn, ms) => {
    const t = setInterval(fn, ms);
    t.unref?.();
    return t;
  },
  clearInterval: (handle) => {
    if (handle) clearInterval(handle as NodeJS.Timeout);
  },
};

/**
 * Runs `task` every `ms` on `timers` (a periodic clean-up, for instance); a task that throws or
 * rejects is reported to `onError` and runs again at the next tick. Returns the function that
 * stops it.
 */
export function every(timers: Timers, ms: number, task: () => Promise<unknown> | void, onError: (err: unknown) => void): () => void {
  const handle = timers.setInterval(() => {
    try {
      Promise.resolve(task()).catch(onError);
    } catch (err) {
      onError(err);
    }
  }, ms);
  return () => timers.clearInterval(handle);
}

/**
 * A clock that only moves when told to, with timers that fire as it passes their due time;
 * for tests and simulations.
 */
export class ManualClock implements Clock, Timers {
  /** `every` is set for intervals: firing one re-arms it `every` ms after the time it was due. */
  private readonly pending = new Map<number, { due: number; fn: () => void; every?: number }>();
  private nextId = 1;

  constructor(private current = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.pending.set(id, { due: this.current + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle && 'id' in handle && typeof handle.id === 'number') this.pending.delete(handle.id);
  }

  setInterval(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    // At least 1 ms apart, as Node does: a zero interval would fire forever within one advance.
    const every = Math.max(1, ms);
    this.pending.set(id, { due: this.current + every, fn, every });
    return { id };
  }

  clearInterval(handle: TimerHandle | undefined): void {
    this.clearTimeout(handle);
  }

  /**
   * Moves time forward, firing due timers in order (and timers they set, if due); an interval
   * fires once for every time it falls due. Throws rather than skip timers when more than 100,000
   * fall due in one call (advance in steps, or make the interval longer).
   */
  advance(ms: number): void {
    const target = this.current + ms;
    for (let fired = 0; ; fired++) {
      let nextId: number | undefined;
      let next: { due: number; fn: () => void; every?: number } | undefined;
      for (const [id, t] of this.pending) if (t.due <= target && (!next || t.due < next.due)) [nextId, next] = [id, t];
      if (!next || nextId === undefined) break;
      if (fired >= 100_000) throw new Error(`ManualClock.advance(${ms}): more than 100000 timers fell due; advance in smaller steps`);
      // Re-armed before it runs, under the same id, so that the callback can clear it.
      if (next.every) this.pending.set(nextId, { ...next, due: next.due + next.every });
      else this.pending.delete(nextId);
      this.current = Math.max(this.current, next.due);
      next.fn();
    }
    this.current = target;
  }

  /** Advances in steps, letting promises settle between them (for async code behind timers). */
  async advanceAsync(ms: number, stepMs = ms): Promise<void> {
    let left = ms;
    while (left > 0) {
      const step = Math.min(stepMs, left);
      this.advance(step);
      left -= step;
      for (let i = 0; i < 10; i++) await Promise.resolve();
      await new Promise((r) => setImmediate(r));
    }
  }

  set(epochMs: number): void {
    this.current = epochMs;
  }

  get pendingTimers(): number {
    return this.pending.size;
  }
}
