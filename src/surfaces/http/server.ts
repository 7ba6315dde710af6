import { webhookRoutes } from './webhooks.js';
import { CREDENTIALS_CHANGED } from '../../domain/events.js';
import { randomUUID } from 'node:crypto';
import { constants as zlibConstants } from 'node:zlib';
import compress from '@fastify/compress';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from 'typebox';
import type { Hub } from '../../hub.js';
import { adminApi } from './admin/index.js';
import { APP_API_BASES, appApi } from './app-api/index.js';
import { FailureEnvelope, envelopeFailure } from './app-api/envelope.js';
import { clientErrorHandler, contractErrorBody, errorHandler, frameworkErrorHandler, notFoundHandler, type FormatterForPath } from './error-handler.js';
import { ErrorBody } from './errors.js';
import { httpErrors } from './failures.js';
import { debugApi, type RouteEntry } from './debug/index.js';
import { OS_API_BASES, osApi } from './os-api/index.js';
import { StateStreamClients } from '../sse/state-stream.js';
import type { FeedFanout } from '../realtime/feed-fanout.js';
import { REMOTE_BASES, remoteApi } from './remote/index.js';
import { LazySchemas } from './lazy-compile.js';
import { createDocumentShaper, type OpenApiDocument } from './openapi-defs.js';
import { OneLinePerRequest, requestChildLogger } from './request-log.js';
import { MAX_PARAM_LENGTH, RouteMethods, urlProblem } from './request-guards.js';
import { webUi } from './web-ui/index.js';
import fp from 'fastify-plugin';
import { metricsRoute } from './metrics.js';
import './types.js';
import type { TimerHandle } from '../../platform/clock.js';

export interface HttpSurface {
  app: FastifyInstance;
  routes: RouteEntry[];
  /** Route schemas compile on first use (start-up time); this compiles them all now. */
  compileAllSchemas(): void;
}

/** Route families whose routes need credentials unless they opt out. */
/** Requests held while the hub starts; past this, further ones are answered 503 at once. */
const MAX_HELD_WHILE_STARTING = 1000;
const GUARDED_PREFIXES = [...OS_API_BASES, ...APP_API_BASES, ...REMOTE_BASES, '/admin'];

const underBase = (path: string, base: string) => path === base || path.startsWith(`${base}/`) || path.startsWith(`${base}?`);

/** The App API answers in its envelope, every other path (the OS API under /app/os too) in the CONTRACT body. */
const isAppApiPath = (path: string) => APP_API_BASES.some((base) => underBase(path, base)) && !OS_API_BASES.some((base) => underBase(path, base));
const errorBodyFor: FormatterForPath = (path) => (isAppApiPath(path) ? envelopeFailure : contractErrorBody);

/**
 * What is compressed: text (HTML, CSS, JS, JSON, metrics) and JSON/XML media types; never
 * `text/event-stream` (an event must reach the client when it is written, not when a compressor
 * block fills; the streams also hijack the reply, so they skip the hook anyway), nor what is
 * compressed already (images but SVG, .tar.gz downloads, octet streams).
 */
const COMPRESSIBLE = /^(?:text\/(?!event-stream)[\w.+-]+|application\/(?:[\w.-]+\+)?(?:json|xml|javascript)|image\/svg\+xml)\s*(?:;|$)/i;

const Health = Type.Object({ status: Type.String(), waitingFor: Type.Optional(Type.Array(Type.String())) });

/**
 * The REST surface: one Fastify instance with every route family as a plugin under its prefix,
 * the CONTRACT error body everywhere but the App API, and the OpenAPI document built from the
 * routes' TypeBox schemas.
 */
export async function buildHttpSurface(hub: Hub, version: string, fanout: FeedFanout, serverFactory?: FastifyServerFactory): Promise<HttpSurface> {
  const lazySchemas = new LazySchemas();
  const bootId = randomUUID().slice(0, 8);
  let requestCount = 0;
  const app = Fastify({
    ...(serverFactory ? { serverFactory } : {}),
    schemaController: { compilersFactory: { buildSerializer: lazySchemas.serializers() } },
    loggerInstance: hub.log as FastifyBaseLogger,
    logController: new OneLinePerRequest(hub.config.slowRequestMs),
    childLoggerFactory: requestChildLogger,
    bodyLimit: hub.config.bodyLimitBytes,
    forceCloseConnections: true,
    requestIdHeader: 'x-request-id',
    // Unique within the process and across restarts (the boot's own random prefix), without a UUID per request.
    genReqId: () => `${bootId}-${(requestCount++).toString(36)}`,
    trustProxy: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Failures Fastify and Node answer before any route: same error bodies as the routes'.
    frameworkErrors: frameworkErrorHandler(errorBodyFor),
    clientErrorHandler: clientErrorHandler(errorBodyFor, hub.log as FastifyBaseLogger),
  });
  const routes: RouteEntry[] = [];
  const routeMethods = new RouteMethods();
  app.decorate('routeMethods', routeMethods);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      routeMethods.add(method, route.url);
      // A plugin's '/' route answers its prefix with and without the slash; only one is reported.
      if (route.routePath === '' && route.prefixTrailingSlash !== 'no-slash') routeMethods.add(method, `${route.url}/`);
    }
    if (route.url === '*' || route.url.includes('*')) return;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      const guarded = GUARDED_PREFIXES.some((prefix) => route.url.startsWith(prefix));
      routes.push({ method, url: route.url, access: route.config?.access ?? (guarded ? 'authenticated' : 'public') });
    }
  });

  // One hook for every request: the request id header, URLs the service refuses whatever the
  // route (too long, or with dot segments, which are never resolved), and, while the hub starts,
  // the request held until it has (a phone app reconnecting after a restart gets its answer a
  // moment later instead of an error), for up to STARTUP_HOLD_MS; only then 503 NOT_READY.
  const holdMs = hub.config.startupHoldMs;
  const notReady = () => httpErrors.NOT_READY({}, { details: { waitingFor: hub.readiness.waitingFor }, retryAfterSeconds: 1 });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    const refused = urlProblem(request.url);
    if (refused) return done(refused);
    if (hub.readiness.ready || request.routeOptions.config?.servesBeforeReady || request.url.startsWith('/docs')) return done();
    if (holdMs === 0 || hub.readiness.waiting >= MAX_HELD_WHILE_STARTING) return done(notReady());
    let timer: TimerHandle | undefined;
    const gaveUp = new Promise<false>((resolve) => (timer = hub.timers.setTimeout(() => resolve(false), holdMs)));
    void Promise.race([hub.readiness.whenReady().then(() => true as const), gaveUp]).then((ready) => {
      hub.timers.clearTimeout(timer);
      done(ready ? undefined : notReady());
    });
  });

  // Before every route: the plugin adds its hook to each route as it is registered. Brotli at
  // quality 5 (gzip at zlib's default 6): the home page of 200 devices, 389 KB, is 19.5 KB for
  // about 3 ms of one desktop core (quality 4: 24.7 KB, 2 ms; 9: 18.7 KB, 31 ms; 11: 16.6 KB,
  // 620 ms). Request bodies are not decompressed: no client sends them compressed, and the body
  // limit stays a limit on what is read.
  await app.register(compress, {
    encodings: ['br', 'gzip'],
    threshold: 1024,
    customTypes: COMPRESSIBLE,
    brotliOptions: { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } },
    globalDecompression: false,
  });
  app.setErrorHandler(errorHandler(contractErrorBody));
  app.setNotFoundHandler(notFoundHandler(contractErrorBody));
  // JSON is the only body the API speaks; anything else is 415, not a string to validate.
  app.removeContentTypeParser('text/plain');
  const document = createDocumentShaper({
    components: [ErrorBody, FailureEnvelope],
    errorBodyFor: (url) => (isAppApiPath(url) ? FailureEnvelope : ErrorBody),
  });
  await app.register(swagger, {
    transform: (route) => document.transformRoute(route),
    transformObject: (built) => document.transformDocument((built as { openapiObject: OpenApiDocument }).openapiObject) as never,
    openapi: {
      // 3.1: its schemas are JSON Schema 2020-12, so TypeBox's `const`, type lists and numeric
      // `exclusiveMinimum` are written as they are validated, not approximated.
      openapi: '3.1.0',
      info: {
        title: 'Home Control Service',
        version,
        description: 'Home-automation hub API. The OS API is mounted under /app/os, /api/os and /v1/os; the legacy App API under /app and /api.',
      },
      // Relative: the document is served by the hub it describes, at whatever address it was reached.
      servers: [{ url: '/', description: 'This hub.' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Access token from POST {base}/auth/login.' },
        },
      },
      security: [{ bearerAuth: [] }],
      tags: [
        {
          name: 'app-api',
          description:
            'The legacy App API under /app and /api (docs/app-api.md): answers `{status, message, data}`, takes the session cookie of POST /app/auth/login or its token as a bearer, from any account; a user without the admin role sees only the spaces and devices granted to them.',
        },
      ],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  app.addSchema(ErrorBody);
  app.addSchema(FailureEnvelope);
  await app.register(swaggerUi, { routePrefix: '/docs' });

  app.get('/openapi.json', { config: { access: 'public', servesBeforeReady: true }, schema: { hide: true } }, async () => app.swagger());

  const publicSchema = (operationId: string, summary: string, ordinaryStatuses: number[] = []) => ({
    config: { access: 'public' as const, servesBeforeReady: true, ordinaryStatuses },
    schema: { tags: ['health'], operationId, summary, security: [], response: { 200: Health, 503: Health } },
  });
  app.get('/healthz', publicSchema('healthz', 'Liveness: 200 once the HTTP server is up.'), async () => ({ status: 'ok' }));
  // Its 503 says "still starting": an answer, not a failure, so not an error line in the log.
  app.get('/readyz', publicSchema('readyz', 'Readiness: 200 when storage and drivers are initialised, 503 before.', [503]), async (_request, reply) => {
    if (hub.readiness.ready) return { status: 'ready' };
    return reply.code(503).send({ status: 'starting', waitingFor: hub.readiness.waitingFor });
  });

  // The hub's address in a browser opens the household's pages (which send a stranger to sign in).
  app.get(
    '/',
    { config: { access: 'public' }, schema: { tags: ['web-ui'], summary: 'The hub itself: redirects to the household web UI (/os/).', security: [], response: { 302: Type.Null({ description: 'To /os/.' }) } } },
    async (_request, reply) => reply.redirect('/os/', 302),
  );

  const stateStreams = new StateStreamClients(fanout, hub.log);
  for (const event of CREDENTIALS_CHANGED) hub.events.on(stateStreams, event, () => stateStreams.closeRevoked());
  app.addHook('onClose', async () => hub.events.removeOwner(stateStreams));
  // Not encapsulated: its request hook counts every route registered after it.
  await app.register(fp(metricsRoute), { hub });
  for (const base of OS_API_BASES) await app.register(osApi, { prefix: base, hub, base, stateStreams });
  for (const base of APP_API_BASES) await app.register(appApi, { prefix: base, hub, base });
  for (const base of REMOTE_BASES) await app.register(remoteApi, { prefix: base, hub, base });
  await app.register(webhookRoutes, { hub });
  await app.register(adminApi, { prefix: '/admin', hub });
  await app.register(webUi, { prefix: '/os', hub });
  if (hub.config.isDevelopment) await app.register(debugApi, { prefix: '/dev', hub, routes });

  return { app, routes, compileAllSchemas: () => lazySchemas.compileAll() };
}
