import cookie from '@fastify/cookie';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from 'typebox';
import type { Hub } from '../../hub.js';
import { DomainError } from '../../platform/errors.js';
import { adminApi } from './admin/index.js';
import { APP_API_BASES, appApi } from './app-api/index.js';
import { contractErrorBody, errorHandler, notFoundHandler } from './error-handler.js';
import { ErrorBody } from './errors.js';
import { debugApi, type RouteEntry } from './debug/index.js';
import { OS_API_BASES, osApi } from './os-api/index.js';
import { StateStreamClients } from '../sse/state-stream.js';
import type { FeedFanout } from '../realtime/feed-fanout.js';
import { REMOTE_BASES, remoteApi } from './remote/index.js';
import { createDefsHoister } from './openapi-defs.js';
import { OneLinePerRequest, requestChildLogger } from './request-log.js';
import { validatorCompiler } from './validation.js';
import { webUi } from './web-ui/index.js';
import './types.js';

export interface HttpSurface {
  app: FastifyInstance;
  routes: RouteEntry[];
}

/** Route families whose routes need credentials unless they opt out. */
const GUARDED_PREFIXES = [...OS_API_BASES, ...APP_API_BASES, ...REMOTE_BASES, '/admin'];

const Health = Type.Object({ status: Type.String(), waitingFor: Type.Optional(Type.Array(Type.String())) });

/**
 * The REST surface: one Fastify instance with every route family as a plugin under its prefix,
 * the CONTRACT error body everywhere but the App API, and the OpenAPI document built from the
 * routes' TypeBox schemas.
 */
export async function buildHttpSurface(hub: Hub, version: string, fanout: FeedFanout): Promise<HttpSurface> {
  const app = Fastify({
    loggerInstance: hub.log as FastifyBaseLogger,
    logController: new OneLinePerRequest(hub.config.slowRequestMs),
    childLoggerFactory: requestChildLogger,
    bodyLimit: hub.config.bodyLimitBytes,
    forceCloseConnections: true,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    trustProxy: false,
  });
  app.setValidatorCompiler(validatorCompiler);
  const routes: RouteEntry[] = [];
  app.addHook('onRoute', (route) => {
    if (route.url === '*' || route.url.includes('*')) return;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      const guarded = GUARDED_PREFIXES.some((prefix) => route.url.startsWith(prefix));
      routes.push({ method, url: route.url, access: route.config?.access ?? (guarded ? 'authenticated' : 'public') });
    }
  });

  // One hook for every request: the request id header, and 503 until the hub has started.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (hub.readiness.ready || request.routeOptions.config?.servesBeforeReady || request.url.startsWith('/docs')) return done();
    done(new DomainError('unavailable', 'NOT_READY', 'The hub is starting; try again shortly.', { waitingFor: hub.readiness.waitingFor }, 1));
  });

  app.setErrorHandler(errorHandler(contractErrorBody));
  app.setNotFoundHandler(notFoundHandler(contractErrorBody));
  // JSON is the only body the API speaks; anything else is 415, not a string to validate.
  app.removeContentTypeParser('text/plain');
  // Global: the App API, the web UI and /admin all accept the session cookie.
  await app.register(cookie);
  const defs = createDefsHoister();
  await app.register(swagger, {
    transform: ({ schema, url }) => ({ schema: defs.transformSchema(schema), url }),
    transformObject: (documentObject) => {
      const document = (documentObject as { openapiObject: Parameters<typeof defs.addTo>[0] }).openapiObject;
      defs.addTo(document);
      return document as never;
    },
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Home Control Service',
        version,
        description: 'Home-automation hub API. The OS API is mounted under /app/os, /api/os and /v1/os; the legacy App API under /app and /api.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Access token from POST {base}/auth/login.' },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  app.addSchema(ErrorBody);
  await app.register(swaggerUi, { routePrefix: '/docs' });

  app.get('/openapi.json', { config: { access: 'public', servesBeforeReady: true }, schema: { hide: true } }, async () => app.swagger());

  const publicSchema = (summary: string) => ({
    config: { access: 'public' as const, servesBeforeReady: true },
    schema: { tags: ['health'], summary, security: [], response: { 200: Health, 503: Health } },
  });
  app.get('/healthz', publicSchema('Liveness: 200 once the HTTP server is up.'), async () => ({ status: 'ok' }));
  app.get('/readyz', publicSchema('Readiness: 200 when storage and drivers are initialised, 503 before.'), async (_request, reply) => {
    if (hub.readiness.ready) return { status: 'ready' };
    return reply.code(503).send({ status: 'starting', waitingFor: hub.readiness.waitingFor });
  });

  const stateStreams = new StateStreamClients(fanout, hub.log);
  for (const base of OS_API_BASES) await app.register(osApi, { prefix: base, hub, base, stateStreams });
  for (const base of APP_API_BASES) await app.register(appApi, { prefix: base, hub, base });
  for (const base of REMOTE_BASES) await app.register(remoteApi, { prefix: base, hub, base });
  await app.register(adminApi, { prefix: '/admin', hub, version });
  await app.register(webUi, { prefix: '/os', hub });
  if (hub.config.isDevelopment) await app.register(debugApi, { prefix: '/dev', hub, routes });

  return { app, routes };
}
