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
  insert(entry: Omit<AuditEntry, 'id'>): Promise<void>;
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
 * records); bounded to the newest 20,000 entries.
 */
export class AuditTrail {
  private inserts = 0;
  private pending: Promise<unknown> = Promise.resolve();

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
    this.pending = this.pending
      .then(async () => {
        await this.repository.insert(entry);
        if (++this.inserts % PRUNE_EVERY === 0) await this.repository.prune(MAX_ENTRIES);
      })
      .catch((err: unknown) => this.log.warn({ err, action: entry.action }, 'audit entry could not be written'));
  }

  /** Waits for entries still being written (a read right after a change sees it). */
  async settled(): Promise<void> {
    await this.pending;
  }

  async query(q: AuditQuery): Promise<{ entries: AuditEntry[]; hasMore: boolean }> {
    await this.settled();
    return this.repository.query(q);
  }
}
