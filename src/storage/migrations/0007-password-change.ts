import type { Kysely, Migration } from 'kysely';

/**
 * An account whose password the hub generated (the first admin, when ADMIN_PASSWORD is not set)
 * is asked to choose its own at the next sign-in (docs/accounts.md).
 */
export const m0007PasswordChange: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('users')
      .addColumn('must_change_password', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
