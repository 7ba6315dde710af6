import { PostgresAdapter, type ColumnDefinitionBuilder, type Kysely } from 'kysely';

/** The migrations run on both engines; where their SQL differs, they ask which one they run on. */
export const onPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * An integer key the database numbers: SQLite's `integer primary key autoincrement` (never reuses
 * a number), PostgreSQL's identity column.
 */
export const numberedKey = (db: Kysely<unknown>) => (c: ColumnDefinitionBuilder) =>
  onPostgres(db) ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement();
