import path from 'node:path';
import { defineModule } from '../../platform/module.js';
import { HomebridgeSupervisor, type AccessoryHubDeps } from './homebridge.js';
import { accessoryHubOperations } from './operations.js';

/**
 * The accessory hub (docs/accessory-hub.md): a managed Homebridge. Off (`install` absent), its
 * status says so and its other operations answer 503. Started in the background: Homebridge's own
 * start takes seconds and never holds up the hub's.
 */
export function accessoryHubModule(deps: (Omit<AccessoryHubDeps, 'dir'> & { dataDir: string }) | { off: true }) {
  const homebridge = 'off' in deps ? undefined : new HomebridgeSupervisor({ ...deps, dir: path.join(deps.dataDir, 'accessory-hub') });
  return defineModule({
    name: 'accessory-hub',
    needs: [],
    homebridge,
    operations: { accessoryHub: accessoryHubOperations(homebridge) },
    async start() {
      await homebridge?.start();
    },
    async stop() {
      await homebridge?.stop();
    },
  });
}
