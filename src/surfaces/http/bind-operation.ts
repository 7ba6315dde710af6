import { Type, type TObject, type TSchema } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { Operation, OperationContext } from '../../platform/operations.js';
import { ErrorBody } from './errors.js';
import { snapshotJson } from '../snapshot-json.js';

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
  /** Input fields a body route takes from the query string instead (flags such as `wait`). */
  queryFields?: string[];
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const inBodyMethod = (method: string) => BODY_METHODS.has(method);

function pathParams(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
}

/**
 * TypeBox names cyclic definitions by `$id` and bare `$ref`s ("Step"); JSON Schema tools resolve
 * those against ids that then clash between routes. Rewrites them as `#/$defs/Step` pointers,
 * without the ids, in a copy.
 */
export function normalizeRefs<T>(schema: T): T {
  const defs = (schema as { $defs?: Record<string, unknown> })?.$defs;
  if (!defs) return schema;
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$id' && typeof value === 'string' && Object.hasOwn(defs, value)) continue;
      out[key] = key === '$ref' && typeof value === 'string' && Object.hasOwn(defs, value) ? `#/$defs/${value}` : walk(value);
    }
    return out;
  };
  return walk(schema) as T;
}

/**
 * The object an input schema describes, and how to put a narrowed copy of it back: a cyclic
 * schema (`{$defs, $ref}`, used by recursive step lists) keeps its definitions around the part.
 */
function objectPart(schema: TSchema): { object: TObject; wrap(part: TObject): TSchema } {
  const cyclic = schema as TSchema & { $defs?: Record<string, TSchema>; $ref?: string };
  if (cyclic.$defs && typeof cyclic.$ref === 'string') {
    const name = cyclic.$ref.replace(/^#\/\$defs\//, '');
    const object = cyclic.$defs[name] as TObject | undefined;
    if (!object?.properties) throw new Error(`cyclic input schema ${name} does not describe an object`);
    return { object, wrap: (part) => ({ ...cyclic, $defs: { ...cyclic.$defs, [name]: part } }) as TSchema };
  }
  if (!(schema as TObject).properties) throw new Error('an operation input must be an object schema');
  return { object: schema as TObject, wrap: (part) => part };
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

/** OpenAPI operation ids stay unique across the bases a route family is mounted under. */
export function operationIdFor(base: string, name: string): string {
  const slug = base.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '');
  return `${slug}.${name}`;
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
  const input = objectPart(op.input);
  const queryFields = inBodyMethod(method) ? (binding.queryFields ?? []) : [];
  const rest = input.wrap(omitProps(input.object, [...params, ...queryFields]));
  const flags = queryFields.length > 0 ? pickProps(input.object, queryFields, true) : undefined;
  const inBody = BODY_METHODS.has(method);
  const successStatus = binding.successStatus ?? 200;
  const errorSchema = binding.errorSchema ?? ErrorBody;
  // The last frozen answer's bytes: one per route, so memory stays bounded.
  let lastSnapshot: { body: object; bytes: Buffer } | undefined;

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
      ...(params.length > 0 ? { params: pickProps(input.object, params) } : {}),
      ...(inBody ? { body: normalizeRefs(rest), ...(flags ? { querystring: flags } : {}) } : { querystring: rest }),
      response: {
        [successStatus]: normalizeRefs(binding.respond?.schema ?? op.output),
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
      const fromBody = inBody ? { ...(request.body as Record<string, unknown>) } : undefined;
      // Path and query fields come only from where the route declares them.
      if (fromBody) for (const key of [...params, ...queryFields]) delete fromBody[key];
      const input = {
        ...(fromBody ?? (request.query as object)),
        ...(flags ? (request.query as object) : {}),
        ...(request.params as object),
      };
      const result = await op.handler(input as never, contextOf(request));
      reply.code(successStatus);
      const body = binding.respond ? binding.respond.shape(result, request, reply) : result;
      // A frozen answer is made of shared, unchanging snapshots (the device list, the state
      // snapshot): their JSON is reused, and an identical answer's bytes are written as they are.
      // The response schema's serialiser is bypassed, so the domain must freeze only values
      // whose fields are exactly the schema's (device views and state views are).
      if (body !== null && typeof body === 'object' && Object.isFrozen(body)) {
        if (lastSnapshot?.body !== body) lastSnapshot = { body, bytes: Buffer.from(snapshotJson(body)) };
        return reply.type('application/json; charset=utf-8').send(lastSnapshot.bytes);
      }
      return body;
    },
  });
}
