import { Type } from 'typebox';
import { ADMIN_ACCOUNT, defineOperation } from '../../platform/operations.js';
import type { BackupService } from './backup-service.js';

const BackupName = Type.String({ pattern: '^hcs-backup-[0-9]{8}-[0-9]{6}(-[0-9]+)?(-scheduled)?$', maxLength: 50 });
const BackupInfo = Type.Object({
  name: BackupName,
  bytes: Type.Integer(),
  createdAt: Type.Integer({ description: 'Epoch ms.' }),
  sha256: Type.String(),
  file: Type.String({ description: 'Where the archive is on the hub.' }),
  scheduled: Type.Boolean({ description: 'Taken by the schedule (BACKUP_SCHEDULE) and subject to its retention (BACKUP_KEEP, BACKUP_KEEP_DAYS); backups taken on request are kept until removed.' }),
});
const Schedule = Type.Union([
  Type.Object({
    cron: Type.String({ description: 'BACKUP_SCHEDULE: a cron pattern.' }),
    keep: Type.Integer({ description: 'BACKUP_KEEP: scheduled backups kept, newest first.' }),
    keepDays: Type.Integer({ description: 'BACKUP_KEEP_DAYS: scheduled backups older than this are deleted.' }),
    nextAt: Type.Union([Type.Integer(), Type.Null()], { description: 'When the next scheduled backup is due (epoch ms).' }),
  }),
  Type.Null(),
]);

export function backupOperations(backups: BackupService) {
  return {
    create: defineOperation({
      name: 'backups.create',
      summary: 'Take a backup now: the database (an online, consistent copy) and the drivers folder, as one .tar.gz kept under DATA_DIR/backups.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: BackupInfo,
      async handler() {
        return backups.create();
      },
    }),
    list: defineOperation({
      name: 'backups.list',
      summary: 'The backups kept on this hub, newest first, and the schedule with its retention (null when none is set).',
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ backups: Type.Array(BackupInfo), schedule: Schedule }),
      async handler() {
        return { backups: await backups.list(), schedule: backups.scheduleInfo() };
      },
    }),
    get: defineOperation({
      name: 'backups.get',
      summary: 'One kept backup.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ name: BackupName }),
      output: BackupInfo,
      async handler({ name }) {
        return backups.get(name);
      },
    }),
    remove: defineOperation({
      name: 'backups.remove',
      summary: 'Delete a kept backup.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ name: BackupName }),
      output: BackupInfo,
      async handler({ name }) {
        return backups.remove(name);
      },
    }),
    restore: defineOperation({
      name: 'backups.restore',
      summary: 'Restore a backup: validated in full, then the service restarts into it (answers before the restart). A bad archive changes nothing.',
      description:
        'Refused with 400 BACKUP_INVALID (not a backup, a path escape or link, a damaged database), 409 BACKUP_SCHEMA_NEWER (made by a newer hub) or 413 BACKUP_TOO_LARGE. The replaced database and drivers folder are kept under DATA_DIR/backups/pre-restore-<time>/.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ archive: Type.String({ pattern: '^[A-Za-z0-9+/]*={0,2}$', description: 'The backup (.tar.gz), base64.' }) }, { additionalProperties: false }),
      output: Type.Object({
        restoring: Type.Literal(true),
        restartScheduled: Type.Boolean({ description: 'False when this process cannot restart itself: the restore applies at the next start.' }),
        backup: Type.Object({ format: Type.Literal(1), createdAt: Type.Integer(), hubVersion: Type.String(), migrations: Type.Array(Type.String()) }),
      }),
      async handler({ archive }) {
        return backups.restore(Buffer.from(archive, 'base64'));
      },
    }),
  };
}
