import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

export const authRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const { login, me, streamToken, logout, changePassword } = hub.ops.auth;
  const route = osRoutes(app, hub, base, ['auth']);
  route('POST', '/auth/login', login);
  route('GET', '/auth/me', me);
  route('POST', '/auth/stream-token', streamToken);
  route('POST', '/auth/logout', logout);
  route('POST', '/auth/password', changePassword);
};
