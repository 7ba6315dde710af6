import type { Kysely, Migration } from 'kysely';
import { numberedKey } from './portable.js';

/** The household's activity log (docs/activity.md): device commands, scene runs, key presses, by whom. */
export const m0006Activity: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('activity_log')
      .addColumn('id', 'integer', numberedKey(db))
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('actor', 'text')
      .addColumn('operation', 'text', (c) => c.notNull())
      .addColumn('subject', 'text')
      .addColumn('detail', 'text', (c) => c.notNull())
      .execute();
    // "What happened to this lamp": a device's entries, newest first, without a scan.
    await db.schema.createIndex('activity_log_subject').on('activity_log').columns(['subject', 'id']).execute();
  },
};
