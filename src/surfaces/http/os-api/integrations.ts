import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

/** Each integration built from its folder (src/integrations): its settings routes and its own, as it declares them, tagged with its name. */
export const integrationRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  for (const integration of hub.integrations) {
    const route = osRoutes(app, hub, base, [integration.definition.name]);
    for (const r of integration.routes) route(r.method, r.url, r.operation, r.successStatus ? { successStatus: r.successStatus } : {});
  }
};
