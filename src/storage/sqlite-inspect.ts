import fs from 'node:fs';
import SQLite from './sqlite-binding.js';

/** Kysely's migration table, where the applied migrations are named. */
const MIGRATION_TABLE = 'kysely_migration';

/** Opens a database file read-only: the migrations applied to it, and SQLite's integrity check ("ok" when sound). */
export async function inspectSqliteFile(file: string): Promise<{ migrations: string[]; integrity: string }> {
  const header = Buffer.alloc(16);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, header, 0, 16, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (!header.equals(Buffer.from('SQLite format 3\0'))) return { migrations: [], integrity: 'not an SQLite database' };
  const sqlite = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const integrity = (sqlite.pragma('integrity_check', { simple: true }) as string) ?? 'unknown';
    const hasTable = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(MIGRATION_TABLE) !== undefined;
    const names = hasTable ? (sqlite.prepare(`SELECT name FROM ${MIGRATION_TABLE} ORDER BY name`).all() as Array<{ name: string }>).map((r) => r.name) : [];
    return { migrations: names, integrity };
  } finally {
    sqlite.close();
  }
}
