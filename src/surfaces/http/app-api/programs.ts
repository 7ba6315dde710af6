import type { FastifyPluginAsync } from 'fastify';
import type { AppApiOptions } from './index.js';
import { appRoutes } from './routes.js';

/** `/programs/*`: every account lists, reads and runs programs; admins create, update and delete them. */
export const appProgramRoutes: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.programs;
  const route = appRoutes(app, hub, base);
  route('GET', '/programs', ops.list, { message: 'Programs.', data: 'programs' });
  route('POST', '/programs', ops.save, { message: 'Program saved.' });
  route('GET', '/programs/:id', ops.get, { message: 'Program.' });
  route('DELETE', '/programs/:id', ops.remove, { message: 'Program removed.' });
  route('POST', '/programs/:id/run', ops.run, { message: 'Program started.', queryFields: ['wait'] });
};
