import type { FastifyPluginAsync } from 'fastify';
import type { AppApiOptions } from './index.js';
import { appRoutes } from './routes.js';

/**
 * `/integration/*`: the hub's integrations and drivers, for admins; remote controllers, for every
 * account (each sees and decides within its own reach, docs/remote.md). `/integration/player/*` is
 * the player roster's.
 */
export const appIntegrationRoutes: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  const route = appRoutes(app, hub, base);
  route('GET', '/integration', hub.ops.integrations.integrations, { message: 'Integrations.', data: 'integrations' });
  route('GET', '/integration/drivers', hub.ops.drivers.list, { message: 'Drivers.' });
  const remotes = hub.ops.remotes;
  route('GET', '/integration/remotes', remotes.list, { message: 'Paired remotes.', data: 'remotes' });
  route('DELETE', '/integration/remotes/:id', remotes.revoke, { message: 'Remote unpaired.' });
  route('GET', '/integration/remotes/pairing', remotes.pairingList, { message: 'Remotes asking to pair.', data: 'requests' });
  route('POST', '/integration/remotes/pairing/:requestId/confirm', remotes.pairingConfirm, { message: 'Remote paired.' });
  route('POST', '/integration/remotes/pairing/:requestId/reject', remotes.pairingReject, { message: 'Pairing refused.' });
};
