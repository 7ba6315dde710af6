import type { Kysely } from 'kysely';
import type { ActivityEntry, ActivityQuery, ActivityRepository, NewActivityEntry } from '../../domain/activity/activity-log.js';
import type { Database } from '../schema.js';
import { keepNewestRows } from './newest-rows.js';

/** The activity log in `activity_log`: what is filtered on as columns (actor, operation, subject), the rest as JSON. */
export class KyselyActivityRepository implements ActivityRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** One statement for the batch: one transaction, so one flush to disk however many entries. */
  async insert(entries: ReadonlyArray<NewActivityEntry>): Promise<void> {
    if (entries.length === 0) return;
    const rows = entries.map(({ at, actor, operation, subject, ...rest }) => ({ at, actor, operation, subject: subject ?? null, detail: JSON.stringify(rest) }));
    await this.db.insertInto('activity_log').values(rows).execute();
  }

  async query(q: ActivityQuery): Promise<{ entries: ActivityEntry[]; hasMore: boolean }> {
    let query = this.db.selectFrom('activity_log').selectAll();
    if (q.before !== undefined) query = query.where('id', '<', q.before);
    if (q.actor) query = query.where('actor', '=', q.actor);
    if (q.subject) query = query.where('subject', '=', q.subject);
    // A prefix as a range (no LIKE, whose wildcards `_` and `%` operation names could hold).
    if (q.operation) query = query.where('operation', '>=', q.operation).where('operation', '<', `${q.operation}\uffff`);
    const rows = await query.orderBy('id', 'desc').limit(q.limit + 1).execute();
    const entries = rows.slice(0, q.limit).map((r) => ({
      id: Number(r.id),
      at: Number(r.at),
      actor: r.actor,
      operation: r.operation,
      ...(r.subject !== null ? { subject: r.subject } : {}),
      ...(JSON.parse(r.detail) as Omit<ActivityEntry, 'id' | 'at' | 'actor' | 'operation' | 'subject'>),
    }));
    return { entries, hasMore: rows.length > q.limit };
  }

  prune(keep: number): Promise<number> {
    return keepNewestRows(this.db, 'activity_log', keep);
  }
}
