import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { Operation } from '../../../platform/operations.js';
import { bindOperation, operationIdFor, type RouteBinding } from '../bind-operation.js';
import { requestCredential } from '../credentials.js';

/** Admin auth: an admin account's bearer token or its App API session cookie. */
export const adminCredential = requestCredential({ admits: ['os_api_admin'], cookie: true });

/** A binder for `/admin` routes: tag `admin`, the admin credential. */
export function adminRoutes(app: FastifyInstance, hub: Hub) {
  return (method: RouteBinding<Operation>['method'], url: string, operation: Operation, extra: Partial<RouteBinding<Operation>> = {}) =>
    bindOperation(app, hub.operations, { method, url, operation, credential: adminCredential, tags: ['admin'], operationId: operationIdFor('/admin', operation.name), ...extra });
}

/** Admin panel API: accounts, paired remotes and the running system. */
export const adminApi: FastifyPluginAsync<{ hub: Hub }> = async (app, { hub }) => {
  const route = adminRoutes(app, hub);
  const { users, invites } = hub.ops;
  route('GET', '/users', users.list);
  route('POST', '/users', users.create, { successStatus: 201 });
  route('GET', '/users/:id', users.get);
  route('POST', '/users/:id', users.update);
  route('POST', '/users/:id/password', users.setPassword);
  route('DELETE', '/users/:id', users.remove);
  route('GET', '/invites', invites.list);
  route('POST', '/invites', invites.create, { successStatus: 201 });
  route('DELETE', '/invites/:id', invites.revoke);
  route('GET', '/users/:id/access', hub.ops.access.get);
  route('POST', '/users/:id/access', hub.ops.access.set);
  route('GET', '/system', hub.ops.system.info);
  const players = hub.ops.players;
  route('GET', '/players', players.list);
  route('POST', '/players', players.save);
  route('GET', '/players/:id', players.get);
  route('DELETE', '/players/:id', players.remove);
  route('POST', '/players/:id/status', players.reportStatus);
  route('GET', '/users/:id/players', players.getAssignments);
  route('POST', '/users/:id/players', players.setAssignments);
  route('GET', '/remotes', hub.ops.remotes.list);
  route('DELETE', '/remotes/:id', hub.ops.remotes.revoke);
};
