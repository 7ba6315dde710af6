import { Type, type TObject, type TSchema } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaCompiler, HTTPMethods } from 'fastify';
import type { Operation, OperationRegistry } from '../../platform/operations.js';
import { normalizeRefs, objectPart } from '../../platform/schema-parts.js';
import { ErrorBody } from './errors.js';
import { snapshotBytes } from '../snapshot-json.js';
import { callerOf, type CredentialReader } from './credentials.js';

export interface RouteBinding<O extends Operation> {
  method: Extract<HTTPMethods, 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'>;
  url: string;
  operation: O;
  /** Reads the credential the request presents; the registry authenticates and authorizes it. */
  credential: CredentialReader;
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
  /** Input fields a body route takes from the query string instead (flags such as `wait`). */
  queryFields?: string[];
  /** Media types of a success answer that is not JSON. */
  produces?: string[];
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function pathParams(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
}

function pickProps(schema: TObject, keys: string[], keepOptional = false): TObject {
  const props: Record<string, TSchema> = {};
  for (const key of keys) {
    const prop = (schema.properties as Record<string, TSchema>)[key];
    if (!prop) throw new Error(`route field ${key} is not a field of the operation's input`);
    props[key] = prop;
  }
  const picked = Type.Object(props);
  return keepOptional ? ({ ...picked, required: (schema.required ?? []).filter((k: string) => keys.includes(k)) } as TObject) : picked;
}

function omitProps(schema: TObject, keys: string[]): TObject {
  const props: Record<string, TSchema> = { ...(schema.properties as Record<string, TSchema>) };
  for (const key of keys) delete props[key];
  const required = (schema.required ?? []).filter((k: string) => !keys.includes(k));
  const { additionalProperties, description } = schema as TObject & { additionalProperties?: boolean; description?: string };
  return { ...Type.Object(props, { additionalProperties, description }), required } as TObject;
}

function pick(source: unknown, keys: readonly string[]): Record<string, unknown> | undefined {
  if (keys.length === 0 || !source) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of keys) if (Object.hasOwn(source, key)) out[key] = (source as Record<string, unknown>)[key];
  return out;
}

/** OpenAPI operation ids stay unique across the bases a route family is mounted under. */
export function operationIdFor(base: string, name: string): string {
  const slug = base.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '');
  return `${slug}.${name}`;
}

// The route's schemas document it (OpenAPI) and serialise its answer; the input is validated
// once, by the operation registry, with the rules every surface shares.
const validatedByTheRegistry: FastifySchemaCompiler<unknown> = () => () => true;

/**
 * Binds an operation to a route. The route's params, query or body schemas are derived from
 * the operation's input schema (path parameters from the URL, the rest from the query string for
 * GET and from the body otherwise), so that the REST surface cannot drift from the operation;
 * the handler hands the parts to `OperationRegistry.invoke` and shapes what it answers.
 */
export function bindOperation<O extends Operation>(app: FastifyInstance, registry: OperationRegistry, binding: RouteBinding<O>): void {
  const { operation: op, method, url, credential } = binding;
  const params = pathParams(url);
  const input = objectPart(op.input);
  const inBody = BODY_METHODS.has(method);
  const queryFields = inBody ? (binding.queryFields ?? []) : [];
  const rest = input.wrap(omitProps(input.object, [...params, ...queryFields]));
  const flags = queryFields.length > 0 ? pickProps(input.object, queryFields, true) : undefined;
  const successStatus = binding.successStatus ?? 200;
  const errorSchema = binding.errorSchema ?? ErrorBody;
  const routeOnly = [...params, ...queryFields];
  // The last frozen answer's bytes: one per route, so memory stays bounded.
  let lastSnapshot: { body: object; bytes: Buffer } | undefined;

  /** Sends a shaped answer; returns nothing (the reply is sent). */
  const send = (shaped: unknown, reply: FastifyReply): undefined => {
    // A frozen answer is made of shared, unchanging snapshots (the device list, the state
    // snapshot): their JSON is reused, and an identical answer's bytes are written as they are.
    // The response schema's serialiser is bypassed, so the domain must freeze only values
    // whose fields are exactly the schema's (device views and state views are).
    if (shaped !== null && typeof shaped === 'object' && Object.isFrozen(shaped)) {
      if (lastSnapshot?.body !== shaped) lastSnapshot = { body: shaped, bytes: snapshotBytes(shaped) };
      reply.type('application/json; charset=utf-8').send(lastSnapshot.bytes);
      return undefined;
    }
    reply.send(shaped);
    return undefined;
  };
  /** Shapes and sends what the operation answered: at once, unless the binding's shaping is asynchronous. */
  const answer = (result: unknown, request: FastifyRequest, reply: FastifyReply): undefined | Promise<undefined> => {
    reply.code(successStatus);
    const shaped = binding.respond ? binding.respond.shape(result, request, reply) : result;
    return shaped instanceof Promise ? shaped.then((value: unknown) => send(value, reply)) : send(shaped, reply);
  };

  app.route({
    method,
    url,
    config: { access: op.access === 'public' ? 'public' : 'authenticated', ...(op.journal === 'activity' ? { journaled: true } : {}) },
    validatorCompiler: validatedByTheRegistry,
    schema: {
      summary: op.summary,
      description: op.description ?? `Operation \`${op.name}\`.`,
      tags: binding.tags,
      operationId: binding.operationId,
      ...(binding.produces ? { produces: binding.produces } : {}),
      ...(op.access === 'public' ? { security: [] } : {}),
      ...(params.length > 0 ? { params: pickProps(input.object, params) } : {}),
      ...(inBody ? { body: normalizeRefs(rest), ...(flags ? { querystring: flags } : {}) } : { querystring: rest }),
      response: {
        [successStatus]: normalizeRefs(binding.respond?.schema ?? op.output),
        '4xx': errorSchema,
        '5xx': errorSchema,
      },
    },
    // Not an async function: when the operation answers at once, so does the route, in the turn
    // the request arrived (no promise, no microtask before the write).
    handler: (request, reply) => {
      const result = registry.call(
        op.name,
        {
          json: inBody ? request.body : undefined,
          jsonLabel: inBody ? 'body' : 'querystring',
          // Path and query fields come only from where the route declares them: the validator
          // leaves them out of the copy it makes anyway (a second copy here was one per command).
          jsonOmit: inBody ? routeOnly : undefined,
          text: {
            querystring: inBody ? pick(request.query, queryFields) : (request.query as Record<string, unknown>),
            params: params.length > 0 ? (request.params as Record<string, unknown>) : undefined,
          },
        },
        callerOf(request, credential),
      );
      // A reply sent later than the handler's turn is answered by returning the reply itself
      // (Fastify then waits for it to finish). Resolving with nothing instead tells Fastify the
      // handler never sent, and when the send is still in flight (a compressed body is written
      // after zlib's turn) it sends an empty reply over the real one.
      if (result instanceof Promise) return result.then((value) => answer(value, request, reply)).then(() => reply);
      const answered = answer(result, request, reply);
      return answered instanceof Promise ? answered.then(() => reply) : undefined;
    },
  });
}
