import fs from 'node:fs';
import path from 'node:path';
import SQLite, { type SqliteDatabase, type SqliteStatement } from './sqlite-binding.js';
import { Kysely, SqliteDialect } from 'kysely';
import { DATABASE_FILE, engineStorage, type Storage } from './database.js';
import type { Database } from './schema.js';

/**
 * better-sqlite3 behind Kysely, with prepared statements kept by SQL text: Kysely prepares every
 * query anew, which costs more than running it for the small queries a hub makes. (SQLite only:
 * PostgreSQL plans on its server, and `pg` sends each query in one round trip.)
 */
function withStatementCache(sqlite: SqliteDatabase, limit = 256) {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = sqlite.prepare(sql);
        if (cache.size >= limit) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/**
 * Opens (creating when needed) the SQLite database under dataDir. WAL with synchronous=FULL:
 * a commit that returned is on disk, so an acknowledged write survives a kill -9 and a power
 * cut alike. Migrations run in `migrate()`, forward only.
 */
export function openSqliteStorage(dataDir: string): Storage {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, DATABASE_FILE);
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');

  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return engineStorage({
    engine: 'sqlite',
    db,
    location: file,
    dataDir,
    copy: {
      fileName: 'database.sqlite',
      async backupTo(copy: string) {
        await sqlite.backup(copy);
        // One self-contained file: the copy leaves WAL mode (the live database's), so no -wal or -shm goes with it.
        const opened = new SQLite(copy);
        try {
          opened.pragma('journal_mode = DELETE');
          // Rebuilt from its live rows: what the database freed but had not yet overwritten (a
          // value replaced in place, like a bridge token once kept in clear) stays out of the backup.
          opened.exec('VACUUM');
        } finally {
          opened.close();
        }
      },
    },
  });
}
