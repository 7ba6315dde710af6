import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { DomainEventBus } from '../events.js';
import type { AccessGrants } from './access-grants.js';
import { accessOperations, type AccessTargets } from './operations.js';

export interface AccessModuleDeps extends AccessTargets {
  /**
   * The grants store, built by the composition root before the devices, home and graph modules,
   * whose operations filter by it; this module comes after them, as it checks grants against
   * their spaces and devices.
   */
  grants: AccessGrants;
  events: DomainEventBus;
  log: ModuleLog;
}

/**
 * Who sees what: a user without the admin role sees only the spaces and devices granted to them.
 * Grants follow the accounts and spaces they name: a removed user's grants go, and a removed space
 * leaves every grant.
 */
export function accessModule({ grants, events, log, ...targets }: AccessModuleDeps) {
  const owner = {};
  // The bus does not wait for listeners: a failed write is logged here rather than lost.
  const follow = (what: string, write: Promise<void>) => void write.catch((err: unknown) => log.error({ err }, `access grants did not follow ${what}`));
  return defineModule({
    name: 'access',
    needs: ['storage'],
    grants,
    operations: { access: accessOperations(grants, targets) },
    async start() {
      await grants.load();
      events.on(owner, 'user.removed', (e) => follow('a removed user', grants.userRemoved(e.userId)), { origin: 'local' });
      events.on(owner, 'space.removed', (e) => follow('a removed space', grants.spaceRemoved(e.spaceId)), { origin: 'local' });
    },
    async stop() {
      events.removeOwner(owner);
    },
  });
}
