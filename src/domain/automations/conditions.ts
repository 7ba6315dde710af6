/**
 * Automation conditions evaluated with a result for each (the trace shows which one failed and
 * what it read). `and` stops at the first false, `or` at the first true, as people read them.
 */
import type { Condition, ConditionResult } from '../programs/automation-model.js';
import { inRange, matches } from './fields.js';
import { sunWindowHolds, type HomeLocation, type SunWindow } from './sun.js';

export interface ConditionContext {
  now: number;
  read(deviceId: string, field: string): unknown;
  /** Since when the field holds its value (the tracker's record), if known. */
  since(deviceId: string, field: string): number | undefined;
  /** The home's location, for sun conditions; undefined when none is set. */
  location: HomeLocation | undefined;
  /** The home's time zone, for time windows without their own. */
  timezone: string | undefined;
  /** The id of the trigger that started the run, for `trigger` conditions. */
  triggerId?: string;
  /** A device's name for the details (its id when absent). */
  name?(deviceId: string): string;
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const formatters = new Map<string, Intl.DateTimeFormat>();

/** Minutes since local midnight and the weekday (0 = Sunday) of `at` in `timezone`. */
export function localClock(at: number, timezone: string | undefined): { minutes: number; weekday: number } {
  const zone = timezone ?? 'UTC';
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', hour: '2-digit', minute: '2-digit', weekday: 'short' });
    formatters.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  return { minutes: Number(parts.hour) * 60 + Number(parts.minute), weekday: WEEKDAYS.indexOf(parts.weekday ?? 'Sun') };
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const show = (v: unknown) => (v === undefined ? 'nothing' : JSON.stringify(v));

function heldFor(ctx: ConditionContext, deviceId: string, field: string, forMs: number | undefined): { ok: boolean; detail: string } {
  if (!forMs) return { ok: true, detail: '' };
  const since = ctx.since(deviceId, field);
  if (since === undefined) return { ok: false, detail: ', for an unknown time' };
  const held = ctx.now - since;
  return { ok: held >= forMs, detail: `, for ${Math.round(held / 1000)} s of the ${Math.round(forMs / 1000)} s needed` };
}

function evaluate(condition: Condition, path: string, ctx: ConditionContext, out: ConditionResult[]): boolean {
  const record = (result: boolean, detail?: string) => {
    out.push({ path, type: condition.type, result, ...(detail ? { detail } : {}) });
    return result;
  };
  switch (condition.type) {
    case 'and': {
      const ok = condition.conditions.every((c, i) => evaluate(c, `${path}.conditions.${i}`, ctx, out));
      return record(ok);
    }
    case 'or': {
      const ok = condition.conditions.some((c, i) => evaluate(c, `${path}.conditions.${i}`, ctx, out));
      return record(ok);
    }
    case 'not': {
      const ok = !condition.conditions.some((c, i) => evaluate(c, `${path}.conditions.${i}`, ctx, out));
      return record(ok);
    }
    case 'state': {
      const value = ctx.read(condition.deviceId, condition.field);
      const is = matches(value, condition.is);
      const held = is ? heldFor(ctx, condition.deviceId, condition.field, condition.forMs) : { ok: false, detail: '' };
      return record(is && held.ok, `${ctx.name?.(condition.deviceId) ?? condition.deviceId} ${condition.field} is ${show(value)}${is ? held.detail : `, not ${show(condition.is)}`}`);
    }
    case 'numeric': {
      const value = ctx.read(condition.deviceId, condition.field);
      const inside = inRange(value, condition);
      const held = inside ? heldFor(ctx, condition.deviceId, condition.field, condition.forMs) : { ok: false, detail: '' };
      const range = [condition.above !== undefined ? `above ${condition.above}` : '', condition.below !== undefined ? `below ${condition.below}` : ''].filter(Boolean).join(' and ');
      return record(inside && held.ok, `${ctx.name?.(condition.deviceId) ?? condition.deviceId} ${condition.field} is ${show(value)}${inside ? held.detail : `, not ${range}`}`);
    }
    case 'time': {
      const { minutes, weekday } = localClock(ctx.now, condition.timezone ?? ctx.timezone);
      const after = condition.after === undefined ? undefined : minutesOf(condition.after);
      const before = condition.before === undefined ? undefined : minutesOf(condition.before);
      let inWindow: boolean;
      if (after !== undefined && before !== undefined && after > before) inWindow = minutes >= after || minutes < before;
      else inWindow = (after === undefined || minutes >= after) && (before === undefined || minutes < before);
      const onDay = !condition.weekdays || condition.weekdays.includes(weekday);
      const hhmm = `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
      return record(inWindow && onDay, `local time ${hhmm} on ${WEEKDAYS[weekday]}`);
    }
    case 'sun': {
      if (!ctx.location) return record(false, 'no home location is set (home settings)');
      const window: SunWindow = {};
      if (condition.after) window.after = condition.after;
      if (condition.before) window.before = condition.before;
      return record(sunWindowHolds(ctx.now, ctx.location, window));
    }
    case 'trigger':
      return record(ctx.triggerId === condition.id, `started by ${ctx.triggerId ?? 'no trigger'}`);
  }
}

/** Whether all hold, with each result in order (the first that failed ends the list). */
export function evaluateConditions(conditions: readonly Condition[], ctx: ConditionContext, prefix = ''): { passed: boolean; results: ConditionResult[] } {
  const results: ConditionResult[] = [];
  const passed = conditions.every((c, i) => evaluate(c, prefix ? `${prefix}.${i}` : String(i), ctx, results));
  return { passed, results };
}

/** Every (device, field) conditions read, nested ones included. */
export function conditionFields(conditions: readonly Condition[], visit: (deviceId: string, field: string) => void): void {
  for (const c of conditions) {
    if (c.type === 'and' || c.type === 'or' || c.type === 'not') conditionFields(c.conditions, visit);
    else if (c.type === 'state' || c.type === 'numeric') visit(c.deviceId, c.field);
  }
}
