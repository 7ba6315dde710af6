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
  route('GET', '/users', hub.ops.auth.listUsers);
  route('GET', '/system', hub.ops.system.info);
  route('GET', '/remotes', hub.ops.remotes.list);
  route('DELETE', '/remotes/:id', hub.ops.remotes.revoke);
};
