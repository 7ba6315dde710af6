import { defineModule } from '../../platform/module.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { DriverManager } from '../drivers/driver-manager.js';
import type { StateAuthority } from '../state/state-authority.js';
import { debugOperations } from './operations.js';

/** Development tools over the hub's insides; their routes are mounted only when NODE_ENV=development. */
export function debugModule(deps: { registry: DeviceRegistry; state: StateAuthority; drivers: DriverManager; config: Record<string, unknown> }) {
  return defineModule({
    name: 'debug',
    needs: ['devices'],
    operations: { debug: debugOperations(deps.registry, deps.state, deps.drivers, deps.config) },
  });
}
