import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

/** The accessory hub (docs/accessory-hub.md): the managed Homebridge and its accessories. */
export const accessoryHubRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const { accessoryHub } = hub.ops;
  const route = osRoutes(app, hub, base, ['accessory-hub']);
  route('GET', '/accessory-hub/status', accessoryHub.status);
  route('POST', '/accessory-hub/resync', accessoryHub.resync);
  route('POST', '/accessory-hub/settings', accessoryHub.settings);
  route('GET', '/accessory-hub/accessories', accessoryHub.accessories);
};
