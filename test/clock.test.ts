/**
 * The injected clock: ManualClock's intervals (every due time fires, in order with timeouts, and
 * a callback may clear its own interval) and `every`, the periodic task runner the hub modules
 * use for clean-ups.
 */
import { describe, expect, it } from 'vitest';
import { every, ManualClock, systemTimers, type TimerHandle } from '../src/platform/clock.js';

describe('ManualClock intervals', () => {
  it('fires an interval once per period, keeping its phase, interleaved with timeouts', () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    clock.setInterval(() => fired.push(`tick@${clock.now()}`), 1000);
    clock.setTimeout(() => fired.push(`once@${clock.now()}`), 2500);
    clock.advance(999);
    expect(fired).toEqual([]);
    clock.advance(3001);
    expect(fired).toEqual(['tick@1000', 'tick@2000', 'once@2500', 'tick@3000', 'tick@4000']);
    expect(clock.now()).toBe(4000);
    expect(clock.pendingTimers).toBe(1);
  });

  it('stops when cleared, from outside or from its own callback', () => {
    const clock = new ManualClock(0);
    let outside = 0;
    const handle = clock.setInterval(() => outside++, 100);
    let inside = 0;
    const self: TimerHandle = clock.setInterval(() => {
      inside++;
      if (inside === 3) clock.clearInterval(self);
    }, 100);
    clock.advance(250);
    clock.clearInterval(handle);
    clock.advance(1000);
    expect(outside).toBe(2);
    expect(inside).toBe(3);
    expect(clock.pendingTimers).toBe(0);
  });

  it('refuses to skip timers: more than 100,000 due in one advance throws', () => {
    const clock = new ManualClock(0);
    clock.setInterval(() => {}, 1);
    expect(() => clock.advance(200_000)).toThrow(/more than 100000 timers/);
  });
});

describe('every', () => {
  it('runs the task each period and reports failures without stopping', async () => {
    const clock = new ManualClock(0);
    const errors: unknown[] = [];
    let runs = 0;
    const stop = every(
      clock,
      60_000,
      async () => {
        runs++;
        if (runs === 2) throw new Error('disk full');
      },
      (err) => errors.push(err),
    );
    await clock.advanceAsync(3 * 60_000, 60_000);
    expect(runs).toBe(3);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('disk full');
    stop();
    await clock.advanceAsync(5 * 60_000, 60_000);
    expect(runs).toBe(3);
    expect(clock.pendingTimers).toBe(0);
  });

  it('catches a task that throws synchronously', () => {
    const clock = new ManualClock(0);
    const errors: unknown[] = [];
    every(clock, 10, () => {
      throw new Error('sync');
    }, (err) => errors.push(err));
    clock.advance(30);
    expect(errors).toHaveLength(3);
  });

  it('system timers do not keep the process alive', () => {
    const handle = systemTimers.setInterval(() => {}, 1000) as NodeJS.Timeout;
    expect(handle.hasRef()).toBe(false);
    systemTimers.clearInterval(handle);
  });
});
