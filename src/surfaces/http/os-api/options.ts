import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { Operation } from '../../../platform/operations.js';
import { bindOperation, type RouteBinding } from '../bind-operation.js';

export interface OsApiOptions {
  hub: Hub;
  /** Prefix this instance is mounted under; keeps OpenAPI operation ids apart. */
  base: string;
}

export function operationIdFor(base: string, name: string): string {
  const slug = base.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '');
  return `${slug}.${name}`;
}

/** A binder for one OS API route group: same tags, operation ids named after the base. */
export function osRoutes(app: FastifyInstance, base: string, tags: string[]) {
  return (method: RouteBinding<Operation>['method'], url: string, operation: Operation, extra: Partial<RouteBinding<Operation>> = {}) =>
    bindOperation(app, { method, url, operation, tags, operationId: operationIdFor(base, operation.name), ...extra });
}
