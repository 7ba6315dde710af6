import type { FastifyPluginAsync } from 'fastify';
import type { AppApiOptions } from './index.js';
import { appRoutes } from './routes.js';

/** `/devices/*`: the devices the caller sees, and commands to them (CONTRACT device command semantics). */
export const appDeviceRoutes: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  const { list, get, command } = hub.ops.devices;
  const route = appRoutes(app, hub, base);
  route('GET', '/devices', list, { message: 'Devices.', data: 'devices' });
  route('GET', '/devices/:id', get, { message: 'Device.' });
  route('POST', '/devices/:id/command', command, { message: 'Command executed.' });
};
