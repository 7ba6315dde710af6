import type { Kysely } from 'kysely';
import type { AuditEntry, AuditQuery, AuditRepository } from '../../domain/audit/audit-trail.js';
import type { Database } from '../schema.js';
import { keepNewestRows } from './newest-rows.js';

/** The audit trail in `audit_log`: the action and actor as columns (filtered on), the rest as JSON. */
export class KyselyAuditRepository implements AuditRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** One statement for the batch: one transaction, so one flush to disk however many entries. */
  async insert(entries: ReadonlyArray<Omit<AuditEntry, 'id'>>): Promise<void> {
    if (entries.length === 0) return;
    const rows = entries.map(({ at, actor, action, ...rest }) => ({ at, actor, action, detail: JSON.stringify(rest) }));
    await this.db.insertInto('audit_log').values(rows).execute();
  }

  async query(q: AuditQuery): Promise<{ entries: AuditEntry[]; hasMore: boolean }> {
    let query = this.db.selectFrom('audit_log').selectAll();
    if (q.before !== undefined) query = query.where('id', '<', q.before);
    // A prefix as a range (no LIKE, whose wildcards `_` and `%` op names could hold).
    if (q.action) query = query.where('action', '>=', q.action).where('action', '<', `${q.action}\uffff`);
    if (q.actor) query = query.where('actor', '=', q.actor);
    const rows = await query.orderBy('id', 'desc').limit(q.limit + 1).execute();
    const entries = rows.slice(0, q.limit).map((r) => ({ id: Number(r.id), at: Number(r.at), actor: r.actor, action: r.action, ...(JSON.parse(r.detail ?? '{}') as Omit<AuditEntry, 'id' | 'at' | 'actor' | 'action'>) }));
    return { entries, hasMore: rows.length > q.limit };
  }

  prune(keep: number): Promise<number> {
    return keepNewestRows(this.db, 'audit_log', keep);
  }
}
