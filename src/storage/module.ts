import type { HubModule, ModuleLog, NoOperations } from '../platform/module.js';
import type { Storage } from './database.js';

export interface StorageModule extends HubModule<NoOperations> {
  readonly storage: Storage;
  /** Migration names applied to the database, once started. */
  readonly appliedMigrations: readonly string[];
}

/** The database: migrated first, closed last. */
export function storageModule(storage: Storage, log: ModuleLog): StorageModule {
  let applied: string[] = [];
  return {
    name: 'storage',
    needs: [],
    operations: {},
    storage,
    get appliedMigrations() {
      return applied;
    },
    async start() {
      applied = await storage.migrate();
      log.info({ engine: storage.engine, database: storage.location, migrations: applied.length }, 'storage ready');
    },
    async stop() {
      await storage.close();
    },
  };
}
