import { Type, type TObject, type TSchema } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { Operation, OperationContext } from '../../platform/operations.js';
import { ErrorBody } from './errors.js';

export interface RouteBinding<O extends Operation> {
  method: Extract<HTTPMethods, 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'>;
  url: string;
  operation: O;
  tags?: string[];
  /** Overrides for the OpenAPI document. */
  operationId?: string;
  successStatus?: number;
  /** Shapes the operation's result for this surface (e.g. the App API envelope). */
  respond?: {
    schema: TSchema;
    shape(result: unknown, request: FastifyRequest, reply: FastifyReply): unknown;
  };
  errorSchema?: TSchema;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function pathParams(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
}

function pickProps(schema: TObject, keys: string[]): TObject {
  const props: Record<string, TSchema> = {};
  for (const key of keys) {
    const prop = (schema.properties as Record<string, TSchema>)[key];
    if (!prop) throw new Error(`path parameter :${key} is not a field of the operation's input`);
    props[key] = prop;
  }
  return Type.Object(props);
}

function omitProps(schema: TObject, keys: string[]): TObject {
  const props: Record<string, TSchema> = { ...(schema.properties as Record<string, TSchema>) };
  for (const key of keys) delete props[key];
  const required = (schema.required ?? []).filter((k: string) => !keys.includes(k));
  const { additionalProperties, description } = schema as TObject & { additionalProperties?: boolean; description?: string };
  return { ...Type.Object(props, { additionalProperties, description }), required } as TObject;
}

export function contextOf(request: FastifyRequest): OperationContext {
  return { principal: request.principal, clientAddress: request.ip, requestId: String(request.id) };
}

/**
 * Binds an operation to a route. The route's params, query or body schemas are derived from
 * the operation's input schema (path parameters from the URL, the rest from the query string for
 * GET and from the body otherwise), so that the REST surface cannot drift from the operation.
 */
export function bindOperation<O extends Operation>(app: FastifyInstance, binding: RouteBinding<O>): void {
  const { operation: op, method, url } = binding;
  const params = pathParams(url);
  const rest = omitProps(op.input, params);
  const inBody = BODY_METHODS.has(method);
  const successStatus = binding.successStatus ?? 200;
  const errorSchema = binding.errorSchema ?? ErrorBody;

  app.route({
    method,
    url,
    config: { access: op.access === 'public' ? 'public' : 'authenticated' },
    schema: {
      summary: op.summary,
      description: op.description ?? `Operation \`${op.name}\`.`,
      tags: binding.tags,
      operationId: binding.operationId,
      ...(op.access === 'public' ? { security: [] } : {}),
      ...(params.length > 0 ? { params: pickProps(op.input, params) } : {}),
      ...(inBody ? { body: rest } : { querystring: rest }),
      response: {
        [successStatus]: binding.respond?.schema ?? op.output,
        '4xx': errorSchema,
        '5xx': errorSchema,
      },
    },
    // An absent body means "no fields", so that a bare POST meets the same validation as `{}`.
    preValidation: inBody
      ? async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        }
      : undefined,
    handler: async (request, reply) => {
      const input = { ...(inBody ? (request.body as object) : (request.query as object)), ...(request.params as object) };
      const result = await op.handler(input as never, contextOf(request));
      reply.code(successStatus);
      return binding.respond ? binding.respond.shape(result, request, reply) : result;
    },
  });
}
