import type { FastifyPluginAsync } from 'fastify';
import { OS_API_SCOPE } from '../../../domain/auth/model.js';
import { authenticationHook } from '../authenticate.js';
import { contractErrorBody, notFoundHandler } from '../error-handler.js';
import { authRoutes } from './auth.js';
import { deviceRoutes, driverRoutes, stateRoutes } from './devices.js';
import { homeRoutes } from './home.js';
import { programRoutes } from './programs.js';
import { stateStreamRoute } from '../../sse/state-stream.js';
import type { OsApiOptions } from './options.js';

export const OS_API_BASES = ['/app/os', '/api/os', '/v1/os'] as const;

/**
 * The OS API, defined once. It is registered under each of its three base paths; every route
 * needs an `os_api_admin` bearer token unless it opts out with `access: 'public'`.
 */
export const osApi: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base, stateStreams }) => {
  // Its own 404 answer, or unknown /app/os paths would get the App API's envelope.
  app.setNotFoundHandler(notFoundHandler(contractErrorBody));
  app.addHook('onRequest', authenticationHook(hub.auth, { scope: OS_API_SCOPE }));
  const options = { hub, base, stateStreams };
  await app.register(authRoutes, options);
  await app.register(deviceRoutes, options);
  await app.register(stateRoutes, options);
  await app.register(driverRoutes, options);
  await app.register(homeRoutes, options);
  await app.register(programRoutes, options);
  await app.register(stateStreamRoute, options);
};
