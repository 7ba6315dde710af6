import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from '../platform/atomic-file.js';
import { DATABASE_FILE, PENDING_RESTORE_DIR, RESTORE_IMPORT_DIR, STATE_FOLDERS } from './files.js';

/**
 * Applies a restore staged by the backups module, before the database is opened. An SQLite copy
 * on SQLite: the current database (with its WAL), drivers folder and state folders (STATE_FOLDERS) move to
 * `DATA_DIR/backups/pre-restore-<time>/`, the staged ones take their places, every step a rename
 * on one disk. Otherwise (PostgreSQL, or a copy of the other engine): the drivers folder is
 * swapped the same way and the copy waits in `restore-import/`, which the storage imports in one
 * transaction after migrating (keeping an export of what it replaces). Returns where the
 * replaced state goes, or undefined when no restore was waiting.
 */
export function applyPendingRestore(dataDir: string, driversDir: string, engine: 'sqlite' | 'postgres', now = Date.now()): { keptIn: string } | undefined {
  const pending = path.join(dataDir, PENDING_RESTORE_DIR);
  const sqlite = path.join(pending, 'database.sqlite');
  const dump = path.join(pending, 'database.jsonl');
  if (!fs.existsSync(sqlite) && !fs.existsSync(dump)) return undefined;
  const keptIn = path.join(dataDir, 'backups', `pre-restore-${new Date(now).toISOString().replace(/[-:.]/g, '')}`);
  fs.mkdirSync(keptIn, { recursive: true });
  if (engine === 'sqlite' && fs.existsSync(sqlite)) {
    for (const suffix of ['', '-wal', '-shm']) {
      const file = path.join(dataDir, `${DATABASE_FILE}${suffix}`);
      if (fs.existsSync(file)) fs.renameSync(file, path.join(keptIn, `${DATABASE_FILE}${suffix}`));
    }
    fs.renameSync(sqlite, path.join(dataDir, DATABASE_FILE));
  } else {
    const importDir = path.join(dataDir, RESTORE_IMPORT_DIR);
    fs.rmSync(importDir, { recursive: true, force: true });
    fs.mkdirSync(importDir, { recursive: true });
    // A torn marker would stop the next start (the import reads where to keep the replaced rows from it).
    writeFileAtomicSync(path.join(importDir, 'kept-in'), keptIn);
    const copy = fs.existsSync(dump) ? dump : sqlite;
    fs.renameSync(copy, path.join(importDir, path.basename(copy)));
  }
  if (fs.existsSync(driversDir)) fs.renameSync(driversDir, path.join(keptIn, 'drivers'));
  fs.mkdirSync(path.dirname(driversDir), { recursive: true });
  if (fs.existsSync(path.join(pending, 'drivers'))) fs.renameSync(path.join(pending, 'drivers'), driversDir);
  else fs.mkdirSync(driversDir, { recursive: true });
  // The other state folders (the Matter bridge's): the backup's when it holds one.
  // A backup without one (taken before the bridge was paired) leaves the current one in place:
  // restoring it must not unpair the household's ecosystems.
  for (const name of STATE_FOLDERS) {
    if (!fs.existsSync(path.join(pending, name))) continue;
    const current = path.join(dataDir, name);
    if (fs.existsSync(current)) fs.renameSync(current, path.join(keptIn, name));
    fs.renameSync(path.join(pending, name), current);
  }
  fs.rmSync(pending, { recursive: true, force: true });
  return { keptIn };
}
