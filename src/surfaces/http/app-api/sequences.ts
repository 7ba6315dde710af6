import type { FastifyPluginAsync } from 'fastify';
import type { AppApiOptions } from './index.js';
import { appRoutes } from './routes.js';

/** `/sequences/*`: the legacy name of macros. Every account lists, reads and runs them; admins save and delete them. */
export const appSequenceRoutes: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.home;
  const route = appRoutes(app, hub, base);
  route('GET', '/sequences', ops.listMacros, { message: 'Sequences.', data: 'macros' });
  route('POST', '/sequences', ops.saveMacro, { message: 'Sequence saved.' });
  route('GET', '/sequences/:id', ops.getMacro, { message: 'Sequence.' });
  route('DELETE', '/sequences/:id', ops.removeMacro, { message: 'Sequence removed.' });
  route('POST', '/sequences/:id/run', ops.runMacro, { message: 'Sequence run.' });
};
