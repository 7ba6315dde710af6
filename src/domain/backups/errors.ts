import { defineErrors } from '../../platform/errors.js';

export const backupErrors = defineErrors({
  BACKUP_NOT_FOUND: ['not_found', 'No backup {name}.'],
  BACKUP_INVALID: ['invalid', 'The backup cannot be restored: {problem}. Nothing was changed.'],
  BACKUP_TOO_LARGE: ['invalid', 'The backup is larger than {maxBytes} bytes (BACKUP_MAX_BYTES). Nothing was changed.'],
  BACKUP_SCHEMA_NEWER: ['conflict', 'The backup was made by a newer version of the hub (its database has migrations this version does not know: {unknown}). Nothing was changed.'],
  BACKUP_BUSY: ['conflict', 'A backup or restore is running; try again when it is done.'],
});
