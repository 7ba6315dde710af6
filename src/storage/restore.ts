import fs from 'node:fs';
import path from 'node:path';
import { DATABASE_FILE } from './database.js';

/** Must match the backups module's staging folder. */
const PENDING = 'restore-pending';

/**
 * Applies a restore staged by the backups module, before the database is opened: the current
 * database (with its WAL) and drivers folder move to `DATA_DIR/backups/pre-restore-<time>/`, the
 * staged ones take their places. Returns where the replaced state went, or undefined when no
 * restore was waiting. Every step is a rename on one disk.
 */
export function applyPendingRestore(dataDir: string, driversDir: string, now = Date.now()): { keptIn: string } | undefined {
  const pending = path.join(dataDir, PENDING);
  if (!fs.existsSync(path.join(pending, 'database.sqlite'))) return undefined;
  const keptIn = path.join(dataDir, 'backups', `pre-restore-${new Date(now).toISOString().replace(/[-:.]/g, '')}`);
  fs.mkdirSync(keptIn, { recursive: true });
  for (const suffix of ['', '-wal', '-shm']) {
    const file = path.join(dataDir, `${DATABASE_FILE}${suffix}`);
    if (fs.existsSync(file)) fs.renameSync(file, path.join(keptIn, `${DATABASE_FILE}${suffix}`));
  }
  if (fs.existsSync(driversDir)) fs.renameSync(driversDir, path.join(keptIn, 'drivers'));
  fs.renameSync(path.join(pending, 'database.sqlite'), path.join(dataDir, DATABASE_FILE));
  fs.mkdirSync(path.dirname(driversDir), { recursive: true });
  if (fs.existsSync(path.join(pending, 'drivers'))) fs.renameSync(path.join(pending, 'drivers'), driversDir);
  else fs.mkdirSync(driversDir, { recursive: true });
  fs.rmSync(pending, { recursive: true, force: true });
  return { keptIn };
}
