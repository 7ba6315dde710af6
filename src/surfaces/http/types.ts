import type { Principal } from '../../platform/operations.js';

/** How a route authenticates. `stream` routes are SSE endpoints that take `accessToken` in the query. */
export type RouteAccess = 'public' | 'authenticated' | 'stream';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** Answers while the hub is still starting (health, docs); every other route answers 503 then. */
    servesBeforeReady?: boolean;
  }
  interface FastifyRequest {
    principal?: Principal;
    /** Error code of the answer, for the one log line of the request. */
    failureCode?: string;
  }
}
