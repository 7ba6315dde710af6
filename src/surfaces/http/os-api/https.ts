import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

/** HTTPS beside HTTP (docs/https.md): whether it serves, and its certificate. */
export const httpsRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const admin = osRoutes(app, hub, base, ['https']);
  admin('GET', '/https/status', hub.ops.https.status);
  admin('POST', '/https/settings', hub.ops.https.settings);
};
