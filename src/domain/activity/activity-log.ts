import { BatchedLog, maskField, maskInput, type BatchStore, type BatchedLogWarnings } from '../../platform/batched-log.js';
import type { Clock, Timers } from '../../platform/clock.js';
import type { CallRecord } from '../../platform/operations.js';

/**
 * One use of the home: "Living room lamp, turn_on, by anna". Home Assistant's logbook is the
 * model: what happened to what, by whom, and whether it worked.
 */
export interface ActivityEntry {
  id: number;
  at: number;
  /** The account that acted (username), or null for a call without one. */
  actor: string | null;
  /** The operation (`devices.command`, `scenes.run`, `remote.key.press`). */
  operation: string;
  /** The id of what it acted on (a device, a scene, a program), when the call named one. */
  subject?: string;
  /** Its name when the call was made. */
  subjectName?: string;
  /**
   * The same call repeated (same account, operation, subject, input and outcome) within the
   * second the entry waited to be written: how many times, and when the last one was.
   */
  count?: number;
  lastAt?: number;
  ok: boolean;
  /** The failure's code when it failed. */
  code?: string;
  /** The input (the command and its parameters), secrets masked and long values cut. */
  input?: unknown;
  clientAddress?: string;
}

export type NewActivityEntry = Omit<ActivityEntry, 'id'>;

export interface ActivityQuery {
  limit: number;
  /** Entries older than this id (paging). */
  before?: number;
  actor?: string;
  /** Entries about this device, scene or program. */
  subject?: string;
  /** Entries whose operation starts with this. */
  operation?: string;
}

export interface ActivityRepository extends BatchStore<NewActivityEntry> {
  query(q: ActivityQuery): Promise<{ entries: ActivityEntry[]; hasMore: boolean }>;
}

/** The name of a device, scene or program by its id, now. */
export type SubjectNames = (id: string) => string | undefined;

/**
 * Kept: the newest 50,000 entries (a month of a busy household's commands). Written once a
 * second at most (a steady 10,000 commands a second cost one transaction a second, not one per
 * turn) and at once when 500 wait; at most 20,000 wait.
 */
export const ACTIVITY_FLUSH_MS = 1000;
const ACTIVITY_LOG_OPTIONS = { what: 'activity entries', keep: 50_000, pruneEvery: 1000, maxBatch: 500, maxQueued: 20_000 } as const;

/**
 * A call repeated while its entry waits is counted on it: a runaway automation or a held-down
 * key is one line "×300", and cannot push a month of history out of the log in a minute.
 */
const REPEATS = {
  keyOf: (e: NewActivityEntry) => `${e.actor}\u0000${e.operation}\u0000${e.subject ?? ''}\u0000${e.ok}\u0000${e.code ?? ''}\u0000${inputKey(e.input)}`,
  merge(waiting: NewActivityEntry, repeat: NewActivityEntry) {
    waiting.count = (waiting.count ?? 1) + 1;
    waiting.lastAt = repeat.at;
  },
};

/** Input keys that name the call's subject, in the order they are looked for. */
const SUBJECT_KEYS = ['id', 'deviceId', 'sceneId', 'programId', 'presetId', 'macroId', 'remoteId', 'playerId'] as const;

/**
 * The input's part of a repeat's key: equal exactly when the inputs' JSON is. A flat input (the
 * usual command: `{command: "toggle"}`) is keyed by its names and typed values, cheaper than
 * `JSON.stringify` on every recorded call; anything else (nested values, a NUL that would make
 * the flat form ambiguous, a number JSON writes as null) by its JSON. The prefixes keep the two
 * forms apart.
 */
function inputKey(input: unknown): string {
  if (input === undefined) return '';
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return `j${JSON.stringify(input)}`;
  let key = 'f';
  for (const name of Object.keys(input)) {
    const value = (input as Record<string, unknown>)[name];
    // JSON leaves such keys out.
    if (value === undefined) continue;
    if (name.includes('\u0000')) return `j${JSON.stringify(input)}`;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return `j${JSON.stringify(input)}`;
      key += `${name}\u0000s${value}\u0000`;
    } else if (typeof value === 'number' && Number.isFinite(value)) key += `${name}\u0000n${value}\u0000`;
    else if (typeof value === 'boolean') key += `${name}\u0000${value ? 't' : 'f'}\u0000`;
    else if (value === null) key += `${name}\u0000z\u0000`;
    else return `j${JSON.stringify(input)}`;
  }
  return key;
}

function subjectIn(source: unknown): string | undefined {
  if (!source || typeof source !== 'object') return undefined;
  for (const key of SUBJECT_KEYS) {
    const value = (source as Record<string, unknown>)[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

/** The path parameters first, then the input (two calls rather than a loop over a new array per call). */
function subjectOf(record: CallRecord): string | undefined {
  return subjectIn(record.target) ?? subjectIn(record.input);
}

/**
 * The activity log: every call of an operation that uses the home (the operations marked
 * `journal: 'activity'`: device commands, scene and program runs, key presses, media controls),
 * from every account and every surface, with its outcome. It is the household's history, not
 * the admins' audit trail, and costs the command path nothing but a push: entries are written
 * behind the answers, at most once a second (`BatchedLog`). An orderly stop writes what waits;
 * a kill -9 or a power cut loses at most the last second of entries, never a configuration
 * change (those are in the audit trail, written at the end of their turn).
 */
export class ActivityLog {
  private readonly entries: BatchedLog<NewActivityEntry>;

  constructor(
    private readonly repository: ActivityRepository,
    private readonly clock: Clock,
    timers: Timers,
    log: BatchedLogWarnings,
    private readonly names: SubjectNames = () => undefined,
  ) {
    this.entries = new BatchedLog(repository, { ...ACTIVITY_LOG_OPTIONS, wait: { ms: ACTIVITY_FLUSH_MS, timers }, coalesce: REPEATS }, log);
  }

  /** The registry's observer: records every call of an activity operation. */
  readonly onCall = (record: CallRecord): void => {
    if (record.journal !== 'activity') return;
    const subject = subjectOf(record);
    const subjectName = subject === undefined ? undefined : this.names(subject);
    const input = record.input === undefined ? undefined : activityInput(record.input);
    // Field by field in one fixed order (the order the entry's JSON has always had), rather than
    // a spread of a throwaway object per optional field: the same entry, cheaper on every command.
    const entry: NewActivityEntry = { at: this.clock.now(), actor: record.principal?.username ?? null, operation: record.operation } as NewActivityEntry;
    if (subject !== undefined) entry.subject = subject;
    if (subjectName !== undefined) entry.subjectName = subjectName;
    entry.ok = record.ok;
    if (record.code) entry.code = record.code;
    if (input !== undefined) entry.input = input;
    entry.clientAddress = record.caller.clientAddress;
    this.entries.record(entry);
  };

  /** Entries recorded and not written yet. */
  get waiting(): number {
    return this.entries.waiting;
  }

  /** Writes what waits now (a read right after a command sees it; a stop loses nothing). */
  settled(): Promise<void> {
    return this.entries.settled();
  }

  async query(q: ActivityQuery): Promise<{ entries: ActivityEntry[]; hasMore: boolean }> {
    await this.settled();
    return this.repository.query(q);
  }
}

/**
 * The input without the subject's id (kept in `subject`), masked; undefined when nothing is left.
 * One pass that copies and masks at once: the same result as masking a copy without the subject
 * keys (`maskInput(rest)`), without making the copy and its entry arrays first.
 */
function activityInput(input: unknown): unknown {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return maskInput(input);
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(input)) {
    const value = (input as Record<string, unknown>)[key];
    if (value === undefined || (SUBJECT_KEYS as readonly string[]).includes(key)) continue;
    out ??= {};
    out[key] = maskField(key, value);
  }
  return out;
}
