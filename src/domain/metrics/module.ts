import { defineModule } from '../../platform/module.js';
import type { AuthService } from '../auth/auth-service.js';
import { metricsOperations } from './operations.js';

/** Metrics tokens and the scrape's authorization; the surface keeps the counters (docs/metrics.md). */
export function metricsModule(auth: AuthService) {
  return defineModule({ name: 'metrics', needs: ['auth'], operations: { metrics: metricsOperations(auth) } });
}
