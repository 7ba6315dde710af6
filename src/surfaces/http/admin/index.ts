import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import { OS_API_SCOPE } from '../../../domain/auth/model.js';
import { authenticationHook } from '../authenticate.js';
import { ErrorBody } from '../errors.js';

const UserRecord = Type.Object({
  id: Type.String(),
  username: Type.String(),
  role: Type.String(),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
});

const SystemInfo = Type.Object({
  version: Type.String(),
  nodeVersion: Type.String(),
  uptimeSeconds: Type.Number(),
  rssBytes: Type.Integer(),
  dataDir: Type.String(),
  migrations: Type.Array(Type.String()),
  ready: Type.Boolean(),
  waitingFor: Type.Array(Type.String()),
});

/** Admin panel API: admin users only, by bearer token or the App API session cookie. */
export const adminApi: FastifyPluginAsync<{ hub: Hub; version: string }> = async (app, { hub, version }) => {
  app.addHook('onRequest', authenticationHook(hub.auth, { scope: OS_API_SCOPE, acceptCookie: true }));
  const common = { tags: ['admin'], response: { '4xx': ErrorBody } };

  app.get(
    '/users',
    { schema: { ...common, summary: 'Accounts of this hub.', response: { ...common.response, 200: Type.Object({ users: Type.Array(UserRecord) }) } } },
    async () => ({ users: await hub.auth.listUsers() }),
  );

  app.get(
    '/system',
    { schema: { ...common, summary: 'Version, resources and readiness of this hub.', response: { ...common.response, 200: SystemInfo } } },
    async () => ({
      version,
      nodeVersion: process.version,
      uptimeSeconds: Math.round(process.uptime()),
      rssBytes: process.memoryUsage().rss,
      dataDir: hub.config.dataDir,
      migrations: hub.appliedMigrations,
      ready: hub.readiness.ready,
      waitingFor: hub.readiness.waitingFor,
    }),
  );
};
