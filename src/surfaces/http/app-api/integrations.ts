import type { FastifyPluginAsync } from 'fastify';
import type { AppApiOptions } from './index.js';
import { appRoutes } from './routes.js';

/** `/integration/*`: the hub's integrations and drivers, for admins (`/integration/player/*` is the player roster's). */
export const appIntegrationRoutes: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  const route = appRoutes(app, hub, base);
  route('GET', '/integration', hub.ops.integrations.integrations, { message: 'Integrations.', data: 'integrations' });
  route('GET', '/integration/drivers', hub.ops.drivers.list, { message: 'Drivers.' });
};
