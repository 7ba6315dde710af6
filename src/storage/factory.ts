import type { Storage } from './database.js';
import { openPostgresStorage } from './postgres.js';
import { openSqliteStorage } from './sqlite.js';

/**
 * The storage factory: `DATABASE_URL=postgres://…` selects PostgreSQL, unset keeps the embedded
 * SQLite file under DATA_DIR. Opening connects nothing yet; `migrate()` is the first query.
 */
export function openStorage(options: { dataDir: string; databaseUrl?: string | undefined; poolSize?: number }): Storage {
  return options.databaseUrl ? openPostgresStorage(options.databaseUrl, options.dataDir, options.poolSize) : openSqliteStorage(options.dataDir);
}
