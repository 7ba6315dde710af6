import type { FastifyPluginAsync } from 'fastify';
import type { AppApiOptions } from './index.js';
import { appRoutes } from './routes.js';

/** `/zones` and `/action-maps`: the listings, narrowed to the caller's devices. */
export const appHomeRoutes: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  const route = appRoutes(app, hub, base);
  route('GET', '/zones', hub.ops.home.listZones, { message: 'Zones.', data: 'zones' });
  route('GET', '/action-maps', hub.ops.home.listActionMaps, { message: 'Action maps.', data: 'actionMaps' });
};
