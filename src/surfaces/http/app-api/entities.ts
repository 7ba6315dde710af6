import type { FastifyPluginAsync } from 'fastify';
import type { AppApiOptions } from './index.js';
import { appRoutes } from './routes.js';

/** `/entity/*`: Home Assistant style entities of the caller's devices, and services on them. */
export const appEntityRoutes: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  const { listEntities, getEntity, entityAction } = hub.ops.graph;
  const route = appRoutes(app, hub, base);
  route('GET', '/entity', listEntities, { message: 'Entities.', data: 'entities' });
  route('GET', '/entity/:entityId', getEntity, { message: 'Entity.' });
  route('POST', '/entity/:entityId/action', entityAction, { message: 'Service called.' });
};
