import type { Clock } from '../../platform/clock.js';
import { BatchedLog, maskInput, type BatchStore, type BatchedLogWarnings } from '../../platform/batched-log.js';
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

export interface AuditRepository extends BatchStore<Omit<AuditEntry, 'id'>> {
  query(q: AuditQuery): Promise<{ entries: AuditEntry[]; hasMore: boolean }>;
}

export type AuditLog = BatchedLogWarnings;

/** Kept: the newest 20,000 entries, written at the end of each turn, at most 500 a transaction, at most 10,000 waiting. */
const AUDIT_LOG_OPTIONS = { what: 'audit entries', keep: 20_000, pruneEvery: 200, maxBatch: 500, maxQueued: 10_000, wait: 'turn' } as const;


/**
 * What administrators changed, and who tried to sign in and failed: every call a surface marked
 * as a change, made by an admin account, is written here with its outcome (success or the
 * failure's code), unless its operation uses the home rather than administers it (a device
 * command, a scene run: the activity log has those, for every account). Written behind the
 * answer (an audit write never slows or fails the call it records), in batches of one turn each
 * (`BatchedLog`): a configuration change acknowledged to an admin is on disk a turn later, with
 * SQLite's full durability. Bounded to the newest 20,000 entries.
 */
export class AuditTrail {
  private readonly entries: BatchedLog<Omit<AuditEntry, 'id'>>;

  constructor(
    private readonly repository: AuditRepository,
    private readonly clock: Clock,
    log: AuditLog,
  ) {
    this.entries = new BatchedLog(repository, AUDIT_LOG_OPTIONS, log);
  }

  /** The registry's observer: records admins' changes. */
  readonly onCall = (record: CallRecord): void => {
    if (record.principal?.role !== 'admin' || record.journal === 'activity') return;
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
    this.entries.record(entry);
  }

  /** Waits for entries still being written (a read right after a change sees it). */
  settled(): Promise<void> {
    return this.entries.settled();
  }

  async query(q: AuditQuery): Promise<{ entries: AuditEntry[]; hasMore: boolean }> {
    await this.settled();
    return this.repository.query(q);
  }
}
