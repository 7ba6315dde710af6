import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

/** The household's activity log: what was done to the home, by whom (docs/activity.md). */
export const activityRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const route = osRoutes(app, hub, base, ['activity']);
  route('GET', '/activity', hub.ops.activity.list);
};
