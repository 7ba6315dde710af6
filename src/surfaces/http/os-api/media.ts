import type { FastifyPluginAsync } from 'fastify';
import { mediaControllerStreamRoute } from '../../sse/media-controller-stream.js';
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

  const music = hub.ops.music;
  const musicRoute = osRoutes(app, hub, base, ['music']);
  musicRoute('GET', '/media-controller/state', music.controllerState);
  musicRoute('POST', '/media-controller/control', music.controllerControl);
  await app.register(mediaControllerStreamRoute, { hub, base });
  musicRoute('GET', '/media-services/status', music.status);
  musicRoute('POST', '/media-services/status', music.statusQuery);
  musicRoute('GET', '/media-services/players', music.players);
  musicRoute('POST', '/media-services/search', music.search);
  musicRoute('POST', '/media-services/play', music.play);
  musicRoute('POST', '/media-services/command', music.command);
  musicRoute('POST', '/media-services/transfer', music.transfer);
  musicRoute('GET', '/media-services/queue/:targetId', music.queue);
};
