/**
 * Sun event times for automations (`sun` triggers and conditions, docs/automations.md), computed
 * with suncalc. Pure functions: no clock, no timers, no files; the caller passes the instants.
 *
 * suncalc 2 follows Meeus and agrees with the U.S. Naval Observatory's tables to their whole-minute
 * rounding (1.9 ran up to ~3 minutes late, mourner/suncalc#164). Its `getTimes(date, …)` answers
 * for the solar day whose transit (solar noon) is nearest `date` (whatever its README's "the solar
 * day containing `date`" suggests), in UTC instants, with `null` for an event that does not happen
 * that day. An automation means the event of a local calendar day in the home's time zone, so we
 * resolve that day with `Intl.DateTimeFormat`, ask suncalc at local noon of it (and of the days
 * either side, for events that cross local midnight, as sunsets do past the Arctic circle in
 * early summer) and keep only the instants whose local date is that day.
 */
import { getTimes } from 'suncalc';
import type { SunEvent } from '../programs/automation-model.js';

export type { SunEvent };

export interface HomeLocation {
  latitude: number;
  longitude: number;
  /** An IANA time zone, e.g. `Europe/Oslo`. */
  timezone: string;
  /** Metres above the horizon; lowers the horizon a little (suncalc's `height`). */
  elevation?: number;
}

export interface SunWindow {
  after?: { event: SunEvent; offsetMs?: number };
  before?: { event: SunEvent; offsetMs?: number };
}

/** How far `nextSunEvent` and `previousSunEvent` look, in local days. */
const SEARCH_DAYS = 400;
const HOUR_MS = 3_600_000;

/** A local calendar day. */
interface LocalDay {
  year: number;
  month: number;
  day: number;
}

/** Formatters are costly to build and immutable: one per time zone. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      calendar: 'gregory',
      numberingSystem: 'latn',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      hourCycle: 'h23',
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** The local wall-clock fields of instant `at` in `timezone`. */
function wallClock(at: number, timezone: string): LocalDay & { hour: number; minute: number; second: number } {
  const fields: Record<string, string> = {};
  for (const part of formatterFor(timezone).formatToParts(at)) fields[part.type] = part.value;
  const year = Number(fields.year);
  return {
    year: fields.era === 'BC' || fields.era === 'B' ? 1 - year : year,
    month: Number(fields.month),
    day: Number(fields.day),
    hour: Number(fields.hour),
    minute: Number(fields.minute),
    second: Number(fields.second),
  };
}

function localDayOf(at: number, timezone: string): LocalDay {
  const { year, month, day } = wallClock(at, timezone);
  return { year, month, day };
}

function sameDay(a: LocalDay, b: LocalDay): boolean {
  return a.year === b.year && a.month === b.month && a.day === b.day;
}

function addDays(day: LocalDay, days: number): LocalDay {
  const date = new Date(0);
  date.setUTCFullYear(day.year, day.month - 1, day.day + days);
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

/** The wall-clock fields of `day` at `hour`:00 read as if they were UTC. */
function utcOfWall(day: LocalDay, hour: number): number {
  const date = new Date(0);
  date.setUTCFullYear(day.year, day.month - 1, day.day);
  date.setUTCHours(hour, 0, 0, 0);
  return date.getTime();
}

/** The UTC offset (ms, east positive) of `timezone` at instant `at`. */
function offsetAt(at: number, timezone: string): number {
  const wall = wallClock(at, timezone);
  const date = new Date(0);
  date.setUTCFullYear(wall.year, wall.month - 1, wall.day);
  date.setUTCHours(wall.hour, wall.minute, wall.second, 0);
  return date.getTime() - (at - (((at % 1000) + 1000) % 1000));
}

/** The instant of local noon of `day` (noon is never skipped by a clock change). */
function localNoon(day: LocalDay, timezone: string): number {
  const wall = utcOfWall(day, 12);
  const guess = wall - offsetAt(wall, timezone);
  return wall - offsetAt(guess, timezone);
}

/** The instant of `date`, or undefined for an event that does not happen (suncalc's `null`). */
function validTime(date: Date | null): number | undefined {
  const time = date?.getTime();
  return time !== undefined && Number.isFinite(time) ? time : undefined;
}

function suncalcTime(event: SunEvent, at: number, location: HomeLocation): number | undefined {
  const height = Math.max(0, location.elevation ?? 0);
  const times = getTimes(new Date(at), location.latitude, location.longitude, height);
  return validTime(times[event]);
}

/**
 * The instants of `event` whose local date is `day`, earliest first, with the one suncalc gives
 * for the day's own solar noon as `own` (usually the only one). A neighbouring solar day's event
 * counts when it falls in this local day (a sunset after local midnight, say).
 */
function eventsOnDay(event: SunEvent, day: LocalDay, location: HomeLocation): { own: number | undefined; all: number[] } {
  let own: number | undefined;
  const all: number[] = [];
  for (const shift of [0, -1, 1]) {
    const candidateDay = shift === 0 ? day : addDays(day, shift);
    const time = suncalcTime(event, localNoon(candidateDay, location.timezone), location);
    if (time === undefined || !sameDay(localDayOf(time, location.timezone), day)) continue;
    if (all.some((other) => Math.abs(other - time) < HOUR_MS)) continue;
    if (shift === 0) own = time;
    all.push(time);
  }
  all.sort((a, b) => a - b);
  return { own: own ?? all[0], all };
}

/**
 * The time (ms since epoch) of `event` on the local calendar day (in location.timezone) that
 * contains `dayAt`, or undefined when the sun does not reach it that day (polar day/night).
 * dawn = civil dawn (suncalc `dawn`, sun 6° below the horizon), dusk = civil dusk (suncalc `dusk`).
 */
export function sunEventOn(event: SunEvent, dayAt: number, location: HomeLocation): number | undefined {
  if (!Number.isFinite(dayAt)) return undefined;
  return eventsOnDay(event, localDayOf(dayAt, location.timezone), location).own;
}

/**
 * The first moment strictly after `after` at which `event` + `offsetMs` (signed) happens;
 * searches day by day up to 400 days (polar regions skip days without the event); undefined if
 * none.
 */
export function nextSunEvent(event: SunEvent, offsetMs: number, after: number, location: HomeLocation): number | undefined {
  if (!Number.isFinite(after) || !Number.isFinite(offsetMs)) return undefined;
  // An event of an earlier local day than the one holding `after - offsetMs` is before it.
  const first = localDayOf(after - offsetMs, location.timezone);
  for (let i = 0; i <= SEARCH_DAYS; i += 1) {
    for (const time of eventsOnDay(event, addDays(first, i), location).all) {
      if (time + offsetMs > after) return time + offsetMs;
    }
  }
  return undefined;
}

/**
 * The latest moment at or before `atOrBefore` at which `event` + `offsetMs` happens, same rules
 * (used to catch up an event missed while the hub was down).
 */
export function previousSunEvent(event: SunEvent, offsetMs: number, atOrBefore: number, location: HomeLocation): number | undefined {
  if (!Number.isFinite(atOrBefore) || !Number.isFinite(offsetMs)) return undefined;
  const first = localDayOf(atOrBefore - offsetMs, location.timezone);
  for (let i = 0; i <= SEARCH_DAYS; i += 1) {
    const times = eventsOnDay(event, addDays(first, -i), location).all;
    for (let j = times.length - 1; j >= 0; j -= 1) {
      const time = times[j]! + offsetMs;
      if (time <= atOrBefore) return time;
    }
  }
  return undefined;
}

/**
 * For conditions: true when `at` is at or after (event+offset) of that local day, when `after`
 * is given, and before (event+offset) of that local day, when `before` is given. If both are
 * given and after's time is later than before's (e.g. after sunset, before sunrise), it is a
 * window crossing midnight: true when at >= after-today OR at < before-today. An event that does
 * not happen that day makes its part false (and, with both given, the window: which way it
 * would cross cannot be told without both times).
 */
export function sunWindowHolds(at: number, location: HomeLocation, window: SunWindow): boolean {
  if (!Number.isFinite(at)) return false;
  const day = localDayOf(at, location.timezone);
  const bound = (edge: { event: SunEvent; offsetMs?: number } | undefined): number | undefined => {
    if (!edge) return undefined;
    const time = eventsOnDay(edge.event, day, location).own;
    return time === undefined ? undefined : time + (edge.offsetMs ?? 0);
  };
  const afterTime = bound(window.after);
  const beforeTime = bound(window.before);
  if (window.after && afterTime === undefined) return false;
  if (window.before && beforeTime === undefined) return false;
  const afterHolds = afterTime === undefined || at >= afterTime;
  const beforeHolds = beforeTime === undefined || at < beforeTime;
  if (afterTime !== undefined && beforeTime !== undefined && afterTime > beforeTime) return afterHolds || beforeHolds;
  return afterHolds && beforeHolds;
}
