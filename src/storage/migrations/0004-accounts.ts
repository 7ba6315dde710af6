import type { Kysely, Migration } from 'kysely';

export const m0004Accounts: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('users').addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0)).execute();

    await db.schema
      .createTable('invites')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('code_hash', 'text', (c) => c.notNull().unique())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('note', 'text')
      // User ids without a foreign key: an invite's history outlives the accounts it names.
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addColumn('used_by', 'text')
      .addColumn('revoked_at', 'bigint')
      .execute();
  },
};
