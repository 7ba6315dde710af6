import type { TimerHandle, Timers } from './clock.js';

export interface WriteBehindOptions<K, T> {
  /** Writes one batch (one transaction, where the repository can). */
  save(batch: T[]): Promise<void>;
  /** What to write for a key now (its latest value), or undefined when there is nothing to. */
  read(key: K): T | undefined;
  keyOf(item: T): K;
  timers: Timers;
  /** A change is written at most this much later. */
  intervalMs: number;
  /** A failed batch: its keys stay dirty and go with the next flush. */
  onError(err: unknown, count: number): void;
}

/**
 * Changes kept in memory and written behind in batches: at most `intervalMs` after the first
 * change, one write at a time, the failed ones again with the next. The timer is armed only while
 * something is dirty, so an idle hub has none running. Used for device state and for the fields
 * automations watch.
 */
export class WriteBehind<K, T> {
  private readonly dirty = new Set<K>();
  private timer: TimerHandle | undefined;
  private flushing: Promise<void> | undefined;
  private started = false;

  constructor(private readonly o: WriteBehindOptions<K, T>) {}

  get pending(): number {
    return this.dirty.size;
  }

  mark(key: K): void {
    this.dirty.add(key);
    this.schedule();
  }

  /** From now on, a change is written at most `intervalMs` later. */
  start(): void {
    this.started = true;
    this.schedule();
  }

  /** Writes everything dirty; safe to call at any time, one write at a time. */
  async flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.dirty.size === 0) return;
    const batch: T[] = [];
    for (const key of this.dirty) {
      const item = this.o.read(key);
      if (item !== undefined) batch.push(item);
    }
    this.dirty.clear();
    this.flushing = this.o.save(batch).then(
      () => undefined,
      (err: unknown) => {
        for (const item of batch) this.dirty.add(this.o.keyOf(item));
        this.o.onError(err, batch.length);
      },
    );
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
  }

  /** Stops the timer and writes what waits. */
  async stop(): Promise<void> {
    this.started = false;
    this.o.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private schedule(): void {
    if (!this.started || this.timer !== undefined || this.dirty.size === 0) return;
    this.timer = this.o.timers.setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.o.intervalMs);
  }
}
