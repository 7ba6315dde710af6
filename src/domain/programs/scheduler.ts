/**
 * Program timers: when each one fires next, firing on the injected timers, and what happens
 * across restarts.
 *
 * - Times of daily and cron timers come from croner (computation only; croner never runs a
 *   timer here), in the timer's zone, else `defaultTimezone`, else the process's zone. A daily
 *   "HH:MM" with weekdays is the cron pattern "MM HH * * <weekdays>".
 * - Interval timers keep their phase: the next fire is the first `lastFire + k·everyMs` that is
 *   still ahead; when never fired, `now + everyMs`.
 * - Firing records the fire time (`store.recordFire`) BEFORE calling `fire`, so a crash right
 *   after cannot make the restarted service fire the same slot again. (If recording fails, the
 *   error is logged and the fire still happens.)
 * - After a restart (`start`), the next fire is the first slot after max(now, last fire) (a slot
 *   at exactly `now` that has not fired yet still fires). Slots missed while the service was down
 *   are not replayed, except with `catchUp: true`: then ONE catch-up fire happens during `start`
 *   when at least one slot fell between the last fire (or, never fired, the `since` the caller
 *   passes, e.g. when the timer was saved) and now; `fire` receives the latest missed slot as
 *   `scheduledAt`. `schedule` (a timer saved while running) never catches up.
 * - Waits are armed in chunks of at most `maxWaitMs` (1 h) and re-checked on each wake, so no
 *   timer exceeds 2^31-1 ms and a clock set back is noticed within the hour.
 * - DST: croner resolves local times; a daily time that does not exist on a spring-forward day
 *   (02:30 in Europe/Berlin on the last Sunday of March) fires ONCE that day, at the first valid
 *   time after the gap (03:30 local); a time that occurs twice on the fall-back day fires once.
 */
import { Cron } from 'croner';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import { nextSunEvent, previousSunEvent, type HomeLocation } from '../automations/sun.js';
import type { SunEvent, Trigger } from './automation-model.js';
import type { Timer } from './model.js';

/** A sun trigger as the scheduler arms it: the event with its offset, at the home location. */
export interface SunSchedule {
  kind: 'sun';
  event: SunEvent;
  offsetMs: number;
  enabled: boolean;
  catchUp?: boolean;
}

/** What the scheduler fires: a program timer (daily, cron, interval, at) or a sun event. */
export type Schedule = Timer | SunSchedule;

/**
 * The key a time or sun trigger is armed and its fires recorded under: `<program>#<trigger id or
 * index>`; the time trigger "timer" (a timer of before triggers) keeps the program's own id, so
 * the fires recorded then still count.
 */
export function scheduleKey(programId: string, trigger: Trigger, index: number): string {
  return trigger.type === 'time' && trigger.id === 'timer' ? programId : `${programId}#${trigger.id ?? String(index)}`;
}

export interface FireStore {
  lastFire(programId: string): Promise<number | undefined>;
  recordFire(programId: string, at: number): Promise<void>;
  /**
   * Records a fire at `at` of the slot due at `scheduledAt` unless a fire later than
   * `scheduledAt - toleranceMs` is recorded already (another instance sharing the store fired
   * this slot): true when this caller fires it. Absent, every fire is this process's own.
   */
  claimFire?(programId: string, scheduledAt: number, at: number, toleranceMs: number): Promise<boolean>;
}

export interface SchedulerLogger {
  error(obj: unknown, msg: string): void;
}

export interface SchedulerDeps {
  clock: Clock;
  timers: Timers;
  store: FireStore;
  /** Starts the program's run; must not throw (a throw is logged). */
  fire(programId: string, scheduledAt: number): void;
  log?: SchedulerLogger;
  /** Zone of daily/cron timers without one (default: the process's zone): the home's. */
  defaultTimezone?: string | (() => string | undefined);
  /** The home's location, for sun schedules (none set: they do not fire). */
  location?: () => HomeLocation | undefined;
  /** Longest single wait on `timers` (default 1 h). */
  maxWaitMs?: number;
}

export interface ScheduledProgram {
  id: string;
  timer: Schedule | null | undefined;
  /** When the timer was set (e.g. the program's updatedAt); the catch-up reference for a timer that never fired. */
  since?: number;
}

interface Entry {
  timer: Schedule;
  next?: number;
  handle?: TimerHandle;
}

const HOUR = 3_600_000;
const MAX_CATCH_UP_SCAN = 10_000;

export class ProgramScheduler {
  private readonly entries = new Map<string, Entry>();
  /** Last fire per program as known here (the store may lag while a record is in flight). */
  private readonly lastFires = new Map<string, number>();
  private readonly crons = new Map<string, Cron>();
  private readonly maxWaitMs: number;
  private stopped = false;

  constructor(private readonly deps: SchedulerDeps) {
    this.maxWaitMs = Math.max(1000, Math.min(deps.maxWaitMs ?? HOUR, 2 ** 31 - 1));
  }

  /**
   * The first fire time strictly after `after`, or undefined (disabled, a pattern with no
   * further date, or one croner rejects — logged). Interval timers: the first `lastFire + k·everyMs` (k ≥ 1) after `after`, or
   * `after + everyMs` without a last fire.
   */
  nextFireAt(timer: Schedule, after: number, lastFire?: number): number | undefined {
    if (!timer.enabled) return undefined;
    if (timer.kind === 'sun') {
      const location = this.deps.location?.();
      return location ? nextSunEvent(timer.event, timer.offsetMs, after, location) : undefined;
    }
    if (timer.kind === 'at') {
      // Once: the moment, if it is still ahead.
      const at = this.cron(timer).nextRun(new Date(after));
      return at ? at.getTime() : undefined;
    }
    if (timer.kind === 'interval') {
      if (lastFire === undefined) return after + timer.everyMs;
      const first = lastFire + timer.everyMs;
      if (first > after) return first;
      const k = Math.floor((after - lastFire) / timer.everyMs) + 1;
      return lastFire + k * timer.everyMs;
    }
    try {
      const next = this.cron(timer).nextRun(new Date(after));
      return next ? next.getTime() : undefined;
    } catch (e) {
      // Only a timer that skipped validation gets here (e.g. an unknown zone in stored data).
      this.deps.log?.error({ err: e, timer }, 'timer pattern cannot be evaluated; it will not fire');
      return undefined;
    }
  }

  /** (Re)arms one program's timer; none or a disabled one just unschedules it. */
  async schedule(programId: string, timer: Schedule | null | undefined): Promise<void> {
    await this.arrange(programId, timer, false);
  }

  unschedule(programId: string): void {
    const entry = this.entries.get(programId);
    if (entry) this.deps.timers.clearTimeout(entry.handle);
    this.entries.delete(programId);
  }

  /** Arms every program's timer after a (re)start, with at most one catch-up fire each. */
  async start(programs: ScheduledProgram[]): Promise<void> {
    this.stopped = false;
    await Promise.all(programs.map((p) => this.arrange(p.id, p.timer, true, p.since)));
  }

  /** Clears every timer; a fire being recorded is dropped. */
  stop(): void {
    this.stopped = true;
    for (const id of [...this.entries.keys()]) this.unschedule(id);
  }

  /** When the program's timer fires next, if it is armed. */
  nextFire(programId: string): number | undefined {
    return this.entries.get(programId)?.next;
  }

  // ---------------------------------------------------------------------------------------------

  /** Every armed schedule's key. */
  keys(): string[] {
    return [...this.entries.keys()];
  }

  private cron(timer: Extract<Timer, { kind: 'daily' | 'cron' | 'at' }>): Cron {
    const pattern =
      timer.kind === 'cron'
        ? timer.expression.trim()
        : timer.kind === 'at'
          ? (timer.at.length === 16 ? `${timer.at}:00` : timer.at)
          : `${Number(timer.time.slice(3, 5))} ${Number(timer.time.slice(0, 2))} * * ${timer.weekdays?.length ? [...timer.weekdays].sort((a, b) => a - b).join(',') : '*'}`;
    const fallback = this.deps.defaultTimezone;
    const timezone = timer.timezone ?? (typeof fallback === 'function' ? fallback() : fallback);
    const key = `${pattern}|${timezone ?? ''}`;
    let cron = this.crons.get(key);
    if (!cron) {
      cron = new Cron(pattern, { paused: true, ...(timezone ? { timezone } : {}) });
      this.crons.set(key, cron);
    }
    return cron;
  }

  private async arrange(programId: string, timer: Schedule | null | undefined, atStart: boolean, since?: number): Promise<void> {
    this.unschedule(programId);
    if (!timer || !timer.enabled) return;
    const entry: Entry = { timer };
    this.entries.set(programId, entry);
    let stored: number | undefined;
    try {
      stored = await this.deps.store.lastFire(programId);
    } catch (e) {
      this.deps.log?.error({ err: e, programId }, 'could not read the last timer fire');
    }
    if (this.entries.get(programId) !== entry) return; // superseded or unscheduled meanwhile
    const known = this.lastFires.get(programId);
    const last = stored === undefined ? known : known === undefined ? stored : Math.max(stored, known);
    if (last !== undefined) this.lastFires.set(programId, last);

    if (atStart && timer.catchUp) {
      const missed = this.latestMissed(timer, last ?? since, last, this.deps.clock.now());
      if (missed !== undefined) {
        await this.fireNow(programId, entry, missed);
        return; // fireNow arms the next one
      }
    }
    this.arm(programId, entry);
  }

  /** The latest slot after `ref` and not after `now`, if any. */
  private latestMissed(timer: Schedule, ref: number | undefined, last: number | undefined, now: number): number | undefined {
    if (ref === undefined || ref >= now) return undefined;
    if (timer.kind === 'sun') {
      const location = this.deps.location?.();
      const slot = location ? previousSunEvent(timer.event, timer.offsetMs, now, location) : undefined;
      return slot !== undefined && slot > ref ? slot : undefined;
    }
    if (timer.kind === 'interval') {
      if (ref + timer.everyMs > now) return undefined;
      return ref + Math.floor((now - ref) / timer.everyMs) * timer.everyMs;
    }
    let slot = this.nextFireAt(timer, ref, last);
    if (slot === undefined || slot > now) return undefined;
    for (let i = 0; i < MAX_CATCH_UP_SCAN; i++) {
      const after = this.nextFireAt(timer, slot, last);
      if (after === undefined || after > now) break;
      slot = after;
    }
    return slot;
  }

  /** The next fire from now: after max(now, last fire); a slot exactly at `now` still counts. */
  private upcoming(timer: Schedule, now: number, last: number | undefined): number | undefined {
    if (timer.kind === 'interval' && last === undefined) return this.nextFireAt(timer, now);
    return this.nextFireAt(timer, Math.max(now - 1, last ?? -Infinity), last);
  }

  /** Arms the next fire after `from` (now, or the time of the fire just made). */
  private arm(programId: string, entry: Entry, from = this.deps.clock.now()): void {
    if (this.stopped || this.entries.get(programId) !== entry) return;
    entry.next = this.upcoming(entry.timer, from, this.lastFires.get(programId));
    this.wait(programId, entry);
  }

  private wait(programId: string, entry: Entry): void {
    this.deps.timers.clearTimeout(entry.handle);
    entry.handle = undefined;
    if (entry.next === undefined) return;
    const delay = Math.max(0, Math.min(entry.next - this.deps.clock.now(), this.maxWaitMs));
    entry.handle = this.deps.timers.setTimeout(() => this.wake(programId, entry), delay);
  }

  private wake(programId: string, entry: Entry): void {
    entry.handle = undefined;
    if (this.stopped || this.entries.get(programId) !== entry || entry.next === undefined) return;
    const now = this.deps.clock.now();
    if (now >= entry.next) {
      void this.fireNow(programId, entry, entry.next);
      return;
    }
    // Still ahead: re-check clock-based timers (the wall clock may have been set back).
    // (A sun schedule is re-checked too: the home's location may have moved.)
    if (entry.timer.kind !== 'interval') entry.next = this.upcoming(entry.timer, now, this.lastFires.get(programId));
    this.wait(programId, entry);
  }

  private async fireNow(programId: string, entry: Entry, scheduledAt: number): Promise<void> {
    const at = this.deps.clock.now();
    this.lastFires.set(programId, at);
    entry.next = undefined;
    try {
      const store = this.deps.store;
      if (store.claimFire) {
        // Instances agree on clock slots; an interval's first slot depends on when each armed it,
        // so a fire within half an interval before this slot is taken to be this slot's.
        const tolerance = entry.timer.kind === 'interval' ? Math.floor(entry.timer.everyMs / 2) : 0;
        if (!(await store.claimFire(programId, scheduledAt, at, tolerance))) {
          // Another instance fired this slot: follow its record and wait for the next slot.
          const recorded = await store.lastFire(programId);
          if (recorded !== undefined) this.lastFires.set(programId, recorded);
          this.arm(programId, entry, Math.max(at, recorded ?? at));
          return;
        }
      } else await store.recordFire(programId, at);
    } catch (e) {
      this.deps.log?.error({ err: e, programId }, 'could not record a timer fire; firing anyway');
    }
    // Rescheduled meanwhile: the slot did come due, so it fires, and the new entry arms itself.
    // Unscheduled or stopped meanwhile: dropped.
    if (this.stopped || !this.entries.has(programId)) return;
    try {
      this.deps.fire(programId, scheduledAt);
    } catch (e) {
      this.deps.log?.error({ err: e, programId }, 'timer fire handler failed');
    }
    // From the fire time, not from now: a slot that came due while the fire was being recorded
    // fires at once instead of being skipped.
    this.arm(programId, entry, at);
  }
}
