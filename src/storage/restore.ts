import fs from 'node:fs';
import path from 'node:path';

/** Must match the backups module's staging folder. */
const PENDING = 'restore-pending';
/** Where a PostgreSQL restore waits for the storage to import it (a folder: the dump and where the replaced state goes). */
export const PENDING_IMPORT = path.join('restore-import', 'database.jsonl');
/** Must match the SQLite storage's file name (database.ts). */
const SQLITE_FILE = 'hub.sqlite';

/**
 * Applies a restore staged by the backups module, before the database is opened. SQLite: the
 * current database (with its WAL) and drivers folder move to `DATA_DIR/backups/pre-restore-<time>/`,
 * the staged ones take their places, every step a rename on one disk. PostgreSQL: the drivers
 * folder is swapped the same way and the logical dump waits in `restore-import/`, which the
 * storage imports in one transaction after migrating (keeping an export of what it replaces).
 * Returns where the replaced state goes, or undefined when no restore was waiting.
 */
export function applyPendingRestore(dataDir: string, driversDir: string, now = Date.now()): { keptIn: string } | undefined {
  const pending = path.join(dataDir, PENDING);
  const sqlite = path.join(pending, 'database.sqlite');
  const dump = path.join(pending, 'database.jsonl');
  if (!fs.existsSync(sqlite) && !fs.existsSync(dump)) return undefined;
  const keptIn = path.join(dataDir, 'backups', `pre-restore-${new Date(now).toISOString().replace(/[-:.]/g, '')}`);
  fs.mkdirSync(keptIn, { recursive: true });
  if (fs.existsSync(sqlite)) {
    for (const suffix of ['', '-wal', '-shm']) {
      const file = path.join(dataDir, `${SQLITE_FILE}${suffix}`);
      if (fs.existsSync(file)) fs.renameSync(file, path.join(keptIn, `${SQLITE_FILE}${suffix}`));
    }
    fs.renameSync(sqlite, path.join(dataDir, SQLITE_FILE));
  } else {
    const target = path.join(dataDir, PENDING_IMPORT);
    fs.rmSync(path.dirname(target), { recursive: true, force: true });
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(path.join(path.dirname(target), 'kept-in'), keptIn);
    fs.renameSync(dump, target);
  }
  if (fs.existsSync(driversDir)) fs.renameSync(driversDir, path.join(keptIn, 'drivers'));
  fs.mkdirSync(path.dirname(driversDir), { recursive: true });
  if (fs.existsSync(path.join(pending, 'drivers'))) fs.renameSync(path.join(pending, 'drivers'), driversDir);
  else fs.mkdirSync(driversDir, { recursive: true });
  fs.rmSync(pending, { recursive: true, force: true });
  return { keptIn };
}
