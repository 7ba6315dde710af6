import { Type, type TObject, type TSchema } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { Operation } from '../../../platform/operations.js';
import { objectPart } from '../../../platform/schema-parts.js';
import { bindOperation, operationIdFor, type RouteBinding } from '../bind-operation.js';
import { requestCredential } from '../credentials.js';
import { Envelope, FailureEnvelope, ok } from './envelope.js';

/** appAuth: any account's token, as a bearer header or the session cookie (CONTRACT). */
export const APP_API_SCOPES = ['os_api_admin', 'app'] as const;
export const appCredential = requestCredential({ admits: APP_API_SCOPES, cookie: true });

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
 * The success envelope around an operation's output, or around one of its fields. A cyclic output
 * (programs and their recursive steps: `{$defs, $ref}`) keeps its definitions at the top, where
 * the envelope and the `$ref`s inside `data` can both reach them.
 */
function envelopeSchema(output: TSchema, field: string | undefined): TSchema {
  const cyclic = output as TSchema & { $defs?: Record<string, TSchema>; $ref?: string };
  if (cyclic.$defs && typeof cyclic.$ref === 'string') {
    const data = field ? fieldSchema(output, field) : Type.Ref(cyclic.$ref.replace(/^#\/\$defs\//, ''));
    return { $defs: { ...cyclic.$defs, AppEnvelope: Envelope(data) }, $ref: 'AppEnvelope' } as unknown as TSchema;
  }
  return Envelope(field ? fieldSchema(output, field) : output);
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
        schema: envelopeSchema(operation.output, data),
        shape: data ? (result) => ok(message, (result as Record<string, unknown>)[data]) : (result) => ok(message, result),
      },
      ...extra,
    });
}
