import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { appRoutes } from './routes.js';
import type { AppApiOptions } from './index.js';

/**
 * Routes whose request is empty by definition also take a JSON content type with no bytes
 * (clients that always send `Content-Type: application/json`), which Fastify otherwise refuses
 * as EMPTY_JSON_BODY. Registered in its own scope, so no other route relaxes its rule.
 */
function acceptEmptyJson(scope: FastifyInstance): void {
  const json = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text === '') return done(null, undefined);
    json(request, text, done);
  });
}

/** `/integration/player/*`: the signed-in user's player roster. */
export const appPlayerRoutes: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  await app.register(async (scope) => {
    acceptEmptyJson(scope);
    appRoutes(scope, hub, base)('POST', '/integration/player/device/added-devices', hub.ops.players.roster, {
      message: 'Players assigned to you.',
      data: 'players',
    });
  });
};
