import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

/** The Matter bridge (docs/matter.md): status and pairing codes, on/off, a commissioning window, unpairing an ecosystem. */
export const matterRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const { matter } = hub.ops;
  const admin = osRoutes(app, hub, base, ['matter']);
  admin('GET', '/matter/status', matter.status);
  admin('POST', '/matter/settings', matter.settings);
  admin('POST', '/matter/commissioning/open', matter.openCommissioning);
  admin('DELETE', '/matter/fabrics/:fabricIndex', matter.removeFabric);
};
