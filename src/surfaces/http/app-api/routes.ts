import type { TObject, TSchema } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { Operation } from '../../../platform/operations.js';
import { objectPart } from '../../../platform/schema-parts.js';
import { bindOperation, operationIdFor, type RouteBinding } from '../bind-operation.js';
import { requestCredential } from '../credentials.js';
import { Envelope, FailureEnvelope, ok } from './envelope.js';

/** appAuth: any account's token, as a bearer header or the session cookie (CONTRACT). */
export const appCredential = requestCredential({ admits: ['os_api_admin', 'app'], cookie: true });

export const APP_API_TAGS = ['app-api'];

export interface AppRouteOptions extends Partial<RouteBinding<Operation>> {
  /** The envelope's `message` on success. */
  message: string;
  /**
   * A field of the operation's result that becomes `data` on its own (list routes answer an
   * array in `data`, where the OS API answers `{devices: [...]}`).
   */
  data?: string;
}

function fieldSchema(output: TSchema, field: string): TSchema {
  const props = (objectPart(output).object as TObject).properties as Record<string, TSchema>;
  const schema = props[field];
  if (!schema) throw new Error(`${field} is not a field of the operation's output`);
  return schema;
}

/**
 * A binder for one App API route group: the operation is the OS API's twin, bound with the App
 * API's credential (session cookie or bearer) and its answer wrapped in the envelope
 * `{status, message, data}`; failures take the envelope form in the plugin's error handler.
 */
export function appRoutes(app: FastifyInstance, hub: Hub, base: string) {
  return (method: RouteBinding<Operation>['method'], url: string, operation: Operation, { message, data, ...extra }: AppRouteOptions) =>
    bindOperation(app, hub.operations, {
      method,
      url,
      operation,
      tags: APP_API_TAGS,
      credential: appCredential,
      operationId: operationIdFor(base, operation.name),
      errorSchema: FailureEnvelope,
      respond: {
        schema: Envelope(data ? fieldSchema(operation.output, data) : operation.output),
        shape: data ? (result) => ok(message, (result as Record<string, unknown>)[data]) : (result) => ok(message, result),
      },
      ...extra,
    });
}
