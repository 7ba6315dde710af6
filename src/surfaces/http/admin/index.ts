import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import { bindOperation, operationIdFor } from '../bind-operation.js';
import { requestCredential } from '../credentials.js';

/** Admin panel API: admin accounts, by bearer token or the App API session cookie. */
export const adminApi: FastifyPluginAsync<{ hub: Hub }> = async (app, { hub }) => {
  const credential = requestCredential({ admits: ['os_api_admin'], cookie: true });
  const route = (url: string, operation: Parameters<typeof bindOperation>[2]['operation']) =>
    bindOperation(app, hub.operations, { method: 'GET', url, operation, credential, tags: ['admin'], operationId: operationIdFor('/admin', operation.name) });
  route('/users', hub.ops.auth.listUsers);
  route('/system', hub.ops.system.info);
};
