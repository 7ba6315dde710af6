/**
 * How a route is listed in the route table (`/dev/routes`, the route-guard test). Credentials are
 * checked by the operation registry; `stream` routes are SSE endpoints that take `accessToken`.
 */
export type RouteAccess = 'public' | 'authenticated' | 'stream';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** Answers while the hub is still starting (health, docs); every other route answers 503 then. */
    servesBeforeReady?: boolean;
    /** Statuses that are an ordinary answer of the route, not a failure (readiness: 503 while starting); logged at `info`. */
    ordinaryStatuses?: readonly number[];
    /** The activity log records every call of the route's operation (a device command, a scene run): its successful answers need no line at `info` too. */
    journaled?: boolean;
  }
  interface FastifyRequest {
    /** Error code of the answer, for the one log line of the request. */
    failureCode?: string;
  }
}
