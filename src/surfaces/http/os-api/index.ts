import type { FastifyPluginAsync } from 'fastify';
import { contractErrorBody, notFoundHandler } from '../error-handler.js';
import { activityRoutes } from './activity.js';
import { authRoutes } from './auth.js';
import { deviceRoutes, driverRoutes, stateRoutes } from './devices.js';
import { accessoryHubRoutes } from './accessory-hub.js';
import { aiRoutes } from './ai.js';
import { fleetRoutes } from './fleet.js';
import { homeRoutes } from './home.js';
import { releaseRoutes } from './releases.js';
import { mediaRoutes } from './media.js';
import { httpsRoutes } from './https.js';
import { matterRoutes } from './matter.js';
import { mqttRoutes } from './mqtt.js';
import { integrationRoutes } from './integrations.js';
import { programRoutes } from './programs.js';
import { remoteRoutes } from './remotes.js';
import { stateStreamRoute } from '../../sse/state-stream.js';
import type { OsApiOptions } from './options.js';

export const OS_API_BASES = ['/app/os', '/api/os', '/v1/os'] as const;

/**
 * The OS API, defined once. It is registered under each of its three base paths; its routes
 * present the request's bearer token to the operation registry, which admits `os_api_admin`
 * tokens to operations that are not public.
 */
export const osApi: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base, stateStreams }) => {
  // Its own 404 answer, or unknown /app/os paths would get the App API's envelope.
  app.setNotFoundHandler(notFoundHandler(contractErrorBody));
  const options = { hub, base, stateStreams };
  await app.register(authRoutes, options);
  await app.register(deviceRoutes, options);
  await app.register(stateRoutes, options);
  await app.register(driverRoutes, options);
  await app.register(homeRoutes, options);
  await app.register(programRoutes, options);
  await app.register(remoteRoutes, options);
  await app.register(mediaRoutes, options);
  await app.register(fleetRoutes, options);
  await app.register(releaseRoutes, options);
  await app.register(accessoryHubRoutes, options);
  await app.register(aiRoutes, options);
  await app.register(activityRoutes, options);
  await app.register(mqttRoutes, options);
  await app.register(matterRoutes, options);
  await app.register(httpsRoutes, options);
  await app.register(integrationRoutes, options);
  await app.register(stateStreamRoute, options);
};
