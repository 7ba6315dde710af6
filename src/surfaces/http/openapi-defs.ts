/**
 * Shapes the OpenAPI document @fastify/swagger builds from the routes, so that it is valid and
 * Redocly's recommended rules find no error, without the routes knowing about it:
 * - recursive schemas' `$defs` (program steps) are hoisted into `components.schemas` and their
 *   `#/$defs/X` pointers rewritten to `#/components/schemas/X`;
 * - shared schemas (the error bodies) are referenced from `components.schemas` instead of being
 *   repeated inline in every operation;
 * - every operation has an `operationId` and a 4XX answer: transport failures (414, 405, 400 on a
 *   dot segment) can answer any route, in the error body of its surface;
 * - a path a plugin mounts at its prefix is written without the trailing slash;
 * - paths that one concrete path can fit both of (`/programs/runs/{runId}` and
 *   `/programs/{id}/runs`) say in their descriptions which one the router picks.
 */

interface JsonSchemaLike {
  $id?: string;
}

interface RouteSchema {
  operationId?: string;
  hide?: boolean;
  produces?: string[];
  response?: Record<string, unknown>;
  [key: string]: unknown;
}

interface PathItem {
  description?: string;
  [method: string]: unknown;
}

export interface OpenApiDocument {
  paths?: Record<string, PathItem>;
  components?: { schemas?: Record<string, unknown> };
}

const FAILURE = 'Failure, in the error body of this surface.';

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** `/admin/users` + GET → `admin.users.get`: only for routes that do not name their operation. */
function derivedOperationId(method: string, url: string): string {
  const parts = url
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? `by_${segment.slice(1)}` : segment.replace(/[^A-Za-z0-9_]+/g, '_')));
  return [...parts, method.toLowerCase()].join('.');
}

const isParameter = (segment: string) => segment.startsWith('{');

/**
 * Whether some concrete path fits both templated paths, and which one the router picks for it:
 * at the first segment where one is literal and the other a parameter, the literal wins.
 */
function overlap(a: string[], b: string[]): { winner: 'a' | 'b'; example: string } | undefined {
  if (a.length !== b.length) return undefined;
  let winner: 'a' | 'b' | undefined;
  const example: string[] = [];
  for (const [i, sa] of a.entries()) {
    const sb = b[i]!;
    const literalA = !isParameter(sa);
    const literalB = !isParameter(sb);
    if (literalA && literalB && sa !== sb) return undefined;
    if (literalA !== literalB) winner ??= literalA ? 'a' : 'b';
    example.push(literalA ? sa : sb);
  }
  return winner ? { winner, example: example.join('/') } : undefined;
}

/** Notes on both path items when a concrete path fits two of them, and which one answers it. */
function describeAmbiguousPaths(paths: Record<string, PathItem>): void {
  const methodsOf = (item: PathItem) => Object.keys(item).filter((key) => HTTP_METHODS.has(key));
  const entries = Object.entries(paths).map(([path, item]) => ({ path, item, segments: path.split('/'), methods: methodsOf(item) }));
  for (const [i, a] of entries.entries()) {
    for (const b of entries.slice(i + 1)) {
      const found = overlap(a.segments, b.segments);
      if (!found) continue;
      const winner = found.winner === 'a' ? a : b;
      // Without a method in common, the router's per-method trees never see both.
      const shared = a.methods.filter((m) => b.methods.includes(m)).map((m) => m.toUpperCase());
      if (shared.length === 0) continue;
      const note = (other: string) =>
        `A path such as \`${found.example}\` also fits \`${other}\`: for ${shared.join(', ')} the router sends it to ` +
        `\`${winner.path}\`, since a literal segment takes precedence over a parameter.`;
      addNote(a.item, note(b.path));
      addNote(b.item, note(a.path));
    }
  }
}

function addNote(item: PathItem, note: string): void {
  if (item.description?.includes(note)) return;
  item.description = item.description ? `${item.description}\n\n${note}` : note;
}

export function createDocumentShaper(options: {
  /** Shared schemas by `$id`: written once in `components.schemas`, referenced elsewhere. */
  components: object[];
  /** The error body a route answers 4XX with when its schema does not say. */
  errorBodyFor(url: string): object;
}) {
  const hoisted: Record<string, unknown> = {};
  const shared = new Set(options.components.map((schema) => (schema as JsonSchemaLike).$id).filter((id): id is string => id !== undefined));

  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== 'object') return node;
    const id = (node as JsonSchemaLike).$id;
    // Resolved by @fastify/swagger against the schemas added with `addSchema`.
    if (typeof id === 'string' && shared.has(id)) return { $ref: `${id}#` };
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$defs' && value && typeof value === 'object') {
        for (const [name, def] of Object.entries(value)) hoisted[name] ??= rewrite(def);
        continue;
      }
      out[key] = key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/') ? `#/components/schemas/${value.slice(8)}` : rewrite(value);
    }
    return out;
  };

  return {
    /** @fastify/swagger's `transform`: one route's schema and URL. */
    transformRoute({ schema, url, route }: { schema: unknown; url: string; route: { method: string | string[] } }): { schema: RouteSchema; url: string } {
      const original = (schema ?? {}) as RouteSchema;
      const method = [route.method].flat()[0] ?? 'GET';
      const asJson = (body: unknown) => ({ description: FAILURE, content: { 'application/json': { schema: body } } });
      const responses: Record<string, unknown> = { ...original.response };
      if (!Object.keys(responses).some((status) => status.startsWith('4'))) responses['4xx'] = asJson(options.errorBodyFor(url));
      // A route that `produces` HTML or images still fails in JSON.
      if (original.produces) {
        for (const [status, body] of Object.entries(responses)) {
          if (/^[45]/.test(status) && !(body as { content?: unknown }).content) responses[status] = asJson(body);
        }
      }
      const shaped = rewrite({
        ...original,
        operationId: original.operationId ?? derivedOperationId(method, url),
        ...(original.hide ? {} : { response: responses }),
      }) as RouteSchema;
      return { schema: shaped, url: url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url };
    },
    /** @fastify/swagger's `transformObject`: the whole document, once built. */
    transformDocument<T extends OpenApiDocument>(document: T): T {
      document.components ??= {};
      document.components.schemas = { ...hoisted, ...document.components.schemas };
      if (document.paths) describeAmbiguousPaths(document.paths);
      return document;
    },
  };
}
