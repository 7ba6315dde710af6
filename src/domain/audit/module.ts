import type { Clock } from '../../platform/clock.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { OperationRegistry } from '../../platform/operations.js';
import type { DomainEventBus } from '../events.js';
import { AuditTrail, type AuditRepository } from './audit-trail.js';
import { auditOperations } from './operations.js';

export interface AuditModuleDeps {
  repository: AuditRepository;
  operations: OperationRegistry;
  events: DomainEventBus;
  clock: Clock;
  log: ModuleLog;
}

/** The audit trail: admins' changes, observed at the registry, and failed sign-ins, from the event bus. */
export function auditModule({ repository, operations, events, clock, log }: AuditModuleDeps) {
  const trail = new AuditTrail(repository, clock, log);
  let stopObserving: (() => void) | undefined;
  return defineModule({
    name: 'audit',
    needs: ['storage'],
    trail,
    operations: { audit: auditOperations(trail) },
    async start() {
      stopObserving = operations.observeChanges(trail.onCall);
      events.on(trail, 'auth.login_failed', ({ username, clientAddress, at }) =>
        trail.record({ at, actor: null, action: 'auth.login_failed', ok: false, target: { username }, clientAddress }),
        { origin: 'local' },
      );
    },
    async stop() {
      stopObserving?.();
      events.removeOwner(trail);
      await trail.settled();
    },
  });
}
