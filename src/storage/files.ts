import { INTEGRATIONS } from '../integrations/index.js';
import { integrationDataFolders } from '../integrations/host.js';
/** The SQLite database's file name under DATA_DIR. */
export const DATABASE_FILE = 'hub.sqlite';

/** The database copies backups hold: an SQLite file, or a logical export (logical-dump.ts). */
export const COPY_FILES = ['database.sqlite', 'database.jsonl'] as const;

/** Where a validated restore waits for the restart that applies it: the backups module stages it there. */
export { PENDING_RESTORE_DIR } from '../domain/backups/backup-service.js';

/**
 * Where a copy the storage imports row by row waits after the restart (restore.ts moves it there,
 * with `kept-in`: where the replaced state goes; logical-dump.ts imports it).
 */
export const RESTORE_IMPORT_DIR = 'restore-import';

/**
 * Folders of DATA_DIR that hold state a backup carries and a restore puts back, beside the
 * database and the drivers folder: the Matter bridge's fabrics, keys and endpoint numbers, and
 * the folders each integration declares (the Z-Wave network cache).
 */
export const STATE_FOLDERS: readonly string[] = ['matter', ...integrationDataFolders(INTEGRATIONS)];
