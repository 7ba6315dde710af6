import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

/** Media players and playback endpoints (docs/media.md). */
export const mediaRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.media;
  const route = osRoutes(app, hub, base, ['media']);
  route('GET', '/media/players', ops.players);
  route('POST', '/media/players/:id/command', ops.command);
  route('GET', '/media-services/endpoints', ops.endpoints);
  route('POST', '/media-services/endpoints/discover', ops.discover);
  route('POST', '/media-services/endpoints/update', ops.updateEndpoint);
  route('POST', '/media-services/endpoints/cast/pair/start', ops.pairStart);
  route('POST', '/media-services/endpoints/cast/pair/finish', ops.pairFinish);
  route('POST', '/media-services/bridge/endpoints/register', ops.registerBridge);
};
