import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Deletes all but the newest `keep` rows of an append-only log by its ascending id. It finds the
 * cut-off id through the primary key and deletes below it, so it costs the rows it removes; a
 * `not in (newest keep)` cost a scan and a set of `keep` ids on every prune.
 */
export async function keepNewestRows(db: Kysely<Database>, table: 'audit_log' | 'activity_log', keep: number): Promise<number> {
  const cutoff = await db.selectFrom(table).select('id').orderBy('id', 'desc').limit(1).offset(keep).executeTakeFirst();
  if (!cutoff) return 0;
  const result = await db.deleteFrom(table).where('id', '<=', cutoff.id).executeTakeFirst();
  return Number(result.numDeletedRows);
}
