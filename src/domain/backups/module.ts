import { defineModule } from '../../platform/module.js';
import { BackupService, type BackupServiceDeps } from './backup-service.js';
import { backupOperations } from './operations.js';

/** Backups and restores of the whole hub (database and drivers folder). */
export function backupsModule(deps: BackupServiceDeps) {
  const backups = new BackupService(deps);
  return defineModule({
    name: 'backups',
    needs: ['storage'],
    backups,
    operations: { backups: backupOperations(backups) },
    async start() {
      await backups.startSchedule();
    },
    async stop() {
      backups.stopSchedule();
    },
  });
}
