import type { FastifyPluginAsync } from 'fastify';
import type { AppApiOptions } from './index.js';
import { appRoutes } from './routes.js';

/** `/room/*`: the spaces the caller sees, their devices and remote sources. */
export const appRoomRoutes: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.home;
  const route = appRoutes(app, hub, base);
  route('GET', '/room', ops.listSpaces, { message: 'Rooms.', data: 'spaces' });
  route('GET', '/room/:id', ops.getSpace, { message: 'Room.' });
  route('GET', '/room/:id/devices', ops.spaceDevices, { message: 'Devices in the room.', data: 'devices' });
  route('GET', '/room/:id/sources', ops.remoteSources, { message: 'Remote sources of the room.', data: 'sources' });
  // The OS API takes sourceId from the path; here it comes in the body, for the same operation.
  route('POST', '/room/:id/activate', ops.activateSource, { message: 'Source activated.' });
};
