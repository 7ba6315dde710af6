import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

/** MQTT (docs/mqtt.md): the link's status with the rejected discovery configs, and the embedded broker's users. */
export const mqttRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const { mqtt } = hub.ops;
  const admin = osRoutes(app, hub, base, ['mqtt']);
  admin('GET', '/mqtt/status', mqtt.status);
  admin('GET', '/mqtt/users', mqtt.listUsers);
  admin('POST', '/mqtt/users', mqtt.createUser, { successStatus: 201 });
  admin('DELETE', '/mqtt/users/:username', mqtt.removeUser);
};
