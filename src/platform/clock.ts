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
}

export const systemClock: Clock = { now: () => Date.now() };

export const systemTimers: Timers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (handle) => {
    if (handle) clearTimeout(handle as NodeJS.Timeout);
  },
};

/**
 * A clock that only moves when told to, with timers that fire as it passes their due time;
 * for tests and simulations.
 */
export class ManualClock implements Clock, Timers {
  private readonly pending = new Map<number, { due: number; fn: () => void }>();
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

  /** Moves time forward, firing due timers in order (and timers they set, if due). */
  advance(ms: number): void {
    const target = this.current + ms;
    for (let guard = 0; guard < 100_000; guard++) {
      let nextId: number | undefined;
      let next: { due: number; fn: () => void } | undefined;
      for (const [id, t] of this.pending) if (t.due <= target && (!next || t.due < next.due)) [nextId, next] = [id, t];
      if (!next || nextId === undefined) break;
      this.pending.delete(nextId);
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
