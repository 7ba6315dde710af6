import { sql, type Kysely, type Migration } from 'kysely';
import { numberedKey, onPostgres } from './portable.js';

/**
 * What several instances on one database coordinate through: who is alive (heartbeats), who runs
 * what (leases), and cluster messages too large for a NOTIFY (the outbox). SQLite has them too
 * (one migration history for both engines) and leaves them empty: one process owns its file.
 */
export const m0005Cluster: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('cluster_instances')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
      .addColumn('info', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('cluster_leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('cluster_outbox')
      .addColumn('id', 'integer', numberedKey(db))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .execute();
    if (onPostgres(db)) {
      // The Socket.IO PostgreSQL adapter's table for broadcasts over NOTIFY's size limit (its documented shape).
      await sql`create table if not exists socket_io_attachments (id bigserial unique, created_at timestamptz default now(), payload bytea)`.execute(db);
    }
  },
};
