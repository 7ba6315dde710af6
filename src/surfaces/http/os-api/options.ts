import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { StateStreamClients } from '../../sse/state-stream-clients.js';
import type { Operation } from '../../../platform/operations.js';
import { bindOperation, operationIdFor, type RouteBinding } from '../bind-operation.js';
import { requestCredential, streamCredential } from '../credentials.js';

export { operationIdFor };

export interface OsApiOptions {
  hub: Hub;
  /** Prefix this instance is mounted under; keeps OpenAPI operation ids apart. */
  base: string;
  /** The state streams open under any base (one set, shared by the three bases). */
  stateStreams: StateStreamClients;
}

/** The OS API takes `os_api_admin` bearer tokens (CONTRACT); its streams also stream tokens. */
export const OS_API_CREDENTIALS = { admits: ['os_api_admin'] } as const;
export const osApiCredential = requestCredential(OS_API_CREDENTIALS);
export const osApiStreamCredential = streamCredential(OS_API_CREDENTIALS);

/** A binder for one OS API route group: same tags, operation ids named after the base. */
export function osRoutes(app: FastifyInstance, hub: Hub, base: string, tags: string[]) {
  return (method: RouteBinding<Operation>['method'], url: string, operation: Operation, extra: Partial<RouteBinding<Operation>> = {}) =>
    bindOperation(app, hub.operations, { method, url, operation, tags, credential: osApiCredential, operationId: operationIdFor(base, operation.name), ...extra });
}
