import type { FastifyPluginAsync } from 'fastify';
import type { AppApiOptions } from './index.js';
import { appRoutes } from './routes.js';

/** `/media-services/*`: the music services' operations, in the envelope (the OS API's, bound once more). */
export const appMediaRoutes: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.music;
  const route = appRoutes(app, hub, base);
  route('GET', '/media-services/status', ops.status, { message: 'Music services.' });
  route('POST', '/media-services/status', ops.statusQuery, { message: 'Music services.' });
  route('GET', '/media-services/players', ops.players, { message: 'Music players.', data: 'players' });
  route('POST', '/media-services/search', ops.search, { message: 'Search results.', data: 'items' });
  route('POST', '/media-services/play', ops.play, { message: 'Playing.' });
  route('POST', '/media-services/command', ops.command, { message: 'Command sent.' });
  route('POST', '/media-services/transfer', ops.transfer, { message: 'Playback moved.' });
  route('GET', '/media-services/queue/:targetId', ops.queue, { message: 'Queue.' });
};
