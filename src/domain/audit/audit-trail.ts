import type { Clock } from '../../platform/clock.js';
import type { CallRecord } from '../../platform/operations.js';

export interface AuditEntry {
  id: number;
  at: number;
  /** The account that acted (username), or null for an anonymous attempt. */
  actor: string | null;
  /** The operation (`users.create`) or event (`auth.login_failed`). */
  action: string;
  ok: boolean;
  code?: string;
  /** What it acted on: the call's path parameters (`{id}`, `{driverKey}`). */
  target?: Record<string, unknown>;
  /** The input, secrets masked and long values cut. */
  input?: unknown;
  clientAddress?: string;
  requestId?: string;
}

export interface AuditQuery {
  limit: number;
  /** Entries older than this id (paging). */
  before?: number;
  /** Entries whose action starts with this. */
  action?: string;
  actor?: string;
}

export interface AuditRepository {
  /** Writes a batch of entries in one transaction. */
  insert(entries: ReadonlyArray<Omit<AuditEntry, 'id'>>): Promise<void>;
  query(q: AuditQuery): Promise<{ entries: AuditEntry[]; hasMore: boolean }>;
  /** Keeps the newest `keep` entries. */
  prune(keep: number): Promise<number>;
}

export interface AuditLog {
  warn(obj: object, msg: string): void;
}

const SECRET = /pass(word)?|secret|token|key$|code$/i;
const MAX_TEXT = 200;
const MAX_ENTRIES = 20_000;
const PRUNE_EVERY = 200;
/** Entries written in one transaction at most. */
const MAX_BATCH = 500;
/** Entries waiting to be written at most; past this the oldest waiting ones are dropped (and counted in the log). */
const MAX_QUEUED = 10_000;

/** An input as it may be kept: secrets masked, long text and big uploads cut to a note of their size. */
export function maskInput(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length > MAX_TEXT ? `[${value.length} characters]` : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth > 3) return '[…]';
  if (Array.isArray(value)) return value.length > 20 ? `[${value.length} items]` : value.map((v) => maskInput(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET.test(k) && v !== undefined && v !== null ? '********' : maskInput(v, depth + 1);
  return out;
}

/**
 * What administrators changed, and who tried to sign in and failed: every call a surface marked
 * as a change, made by an admin account, is written here with its outcome (success or the
 * failure's code). Written behind the answer (an audit write never slows or fails the call it
 * records), in batches: the entries of one turn of the event loop, and of the turns while a batch
 * was being written, go in one transaction, so a burst of commands costs one disk flush rather
 * than one each. Bounded to the newest 20,000 entries.
 */
export class AuditTrail {
  private inserts = 0;
  private readonly queue: Array<Omit<AuditEntry, 'id'>> = [];
  private writing: Promise<void> | undefined;
  private dropped = 0;

  constructor(
    private readonly repository: AuditRepository,
    private readonly clock: Clock,
    private readonly log: AuditLog,
  ) {}

  /** The registry's observer: records admins' changes. */
  readonly onCall = (record: CallRecord): void => {
    if (record.principal?.role !== 'admin') return;
    this.record({
      at: this.clock.now(),
      actor: record.principal.username,
      action: record.operation,
      ok: record.ok,
      ...(record.code ? { code: record.code } : {}),
      ...(record.target ? { target: record.target } : {}),
      ...(record.input !== undefined ? { input: maskInput(record.input) } : {}),
      clientAddress: record.caller.clientAddress,
      requestId: record.caller.requestId,
    });
  };

  record(entry: Omit<AuditEntry, 'id'>): void {
    if (this.queue.length >= MAX_QUEUED) {
      this.queue.shift();
      this.dropped++;
    }
    this.queue.push(entry);
    this.writing ??= this.writeQueued();
  }

  private async writeQueued(): Promise<void> {
    try {
      // The rest of this turn's calls join the batch (a turn, not a time: no clock involved).
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          await this.repository.insert(batch);
          const before = this.inserts;
          this.inserts += batch.length;
          if (Math.floor(this.inserts / PRUNE_EVERY) > Math.floor(before / PRUNE_EVERY)) await this.repository.prune(MAX_ENTRIES);
        } catch (err) {
          this.log.warn({ err, entries: batch.length, firstAction: batch[0]?.action }, 'audit entries could not be written');
        }
      }
      if (this.dropped > 0) {
        this.log.warn({ dropped: this.dropped }, `${this.dropped} audit entries were dropped: more than ${MAX_QUEUED} waited to be written`);
        this.dropped = 0;
      }
    } finally {
      this.writing = undefined;
    }
  }

  /** Waits for entries still being written (a read right after a change sees it). */
  async settled(): Promise<void> {
    for (let rounds = 0; this.writing && rounds < 100; rounds++) await this.writing;
  }

  async query(q: AuditQuery): Promise<{ entries: AuditEntry[]; hasMore: boolean }> {
    await this.settled();
    return this.repository.query(q);
  }
}
