import { defineModule } from '../../platform/module.js';
import { systemOperations, type SystemFacts } from './operations.js';

/** Facts about this hub process (version, resources, readiness) for the admin panel. */
export function systemModule(facts: SystemFacts) {
  return defineModule({
    name: 'system',
    needs: [],
    operations: { system: systemOperations(facts) },
  });
}
