import type { Clock, TimerHandle, Timers } from './clock.js';

/**
 * Gathers keys marked in a burst and hands them over once each: on the next turn, or, when the
 * last hand-over was less than `minGapMs` ago (changes keep coming), `minGapMs` after it. A key
 * marked a thousand times between two hand-overs goes once, so a consumer that is costly per key
 * (a HomeKit bridge, a radio) pays per key per turn under a flood, not per change.
 */
export class Coalescer<K> {
  private readonly dirty = new Set<K>();
  private timer: TimerHandle | undefined;
  private lastFlush = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(private readonly o: { timers: Timers; clock: Clock; minGapMs: number; flush: (keys: K[]) => void }) {}

  mark(key: K): void {
    if (this.closed) return;
    this.dirty.add(key);
    if (this.timer) return;
    const wait = Math.max(0, this.lastFlush + this.o.minGapMs - this.o.clock.now());
    this.timer = this.o.timers.setTimeout(() => this.run(), wait);
  }

  /** Drops what is pending and takes no more. */
  close(): void {
    this.closed = true;
    this.o.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.dirty.clear();
  }

  private run(): void {
    this.timer = undefined;
    this.lastFlush = this.o.clock.now();
    const keys = [...this.dirty];
    this.dirty.clear();
    this.o.flush(keys);
  }
}
