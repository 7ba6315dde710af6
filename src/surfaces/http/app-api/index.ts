import cookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import { SESSION_COOKIE } from '../credentials.js';
import { errorHandler, notFoundHandler } from '../error-handler.js';
import { csrfGuard } from '../web/csrf.js';
import { appAuthRoutes } from './auth.js';
import { appDeviceRoutes } from './devices.js';
import { appEntityRoutes } from './entities.js';
import { envelopeFailure } from './envelope.js';
import { appPlayerRoutes } from './players.js';
import { appHomeRoutes } from './home.js';
import { appIntegrationRoutes } from './integrations.js';
import { appMediaRoutes } from './media.js';
import { appProgramRoutes } from './programs.js';
import { appRoomRoutes } from './rooms.js';
import { appSequenceRoutes } from './sequences.js';

export const APP_API_BASES = ['/app', '/api'] as const;

export interface AppApiOptions {
  hub: Hub;
  base: string;
}

/**
 * The legacy App API: the same operations as the OS API, answered in the `{status, message,
 * data}` envelope; requests present the session cookie or a bearer token of any account. A change
 * signed in by the cookie alone carries the session's CSRF token, or is not marked by the browser
 * as another site's (csrfGuard's `crossOriginProtection`, Go's rule): the mobile clients send the
 * cookie and nothing else. Each file binds one prefix of the spec's App API table.
 */
export const appApi: FastifyPluginAsync<AppApiOptions> = async (app, options) => {
  await app.register(cookie);
  app.setErrorHandler(errorHandler(envelopeFailure));
  app.setNotFoundHandler(notFoundHandler(envelopeFailure));
  app.addHook('preHandler', csrfGuard(SESSION_COOKIE, { crossOriginProtection: true }));
  for (const family of [appAuthRoutes, appDeviceRoutes, appEntityRoutes, appRoomRoutes, appIntegrationRoutes, appProgramRoutes, appSequenceRoutes, appHomeRoutes, appPlayerRoutes, appMediaRoutes]) {
    await family(app, options);
  }
};
