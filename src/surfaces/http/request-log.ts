import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One log line per request — id, method, route, status, duration and the error code when it
 * failed — instead of Fastify's two. Query strings are left out: SSE clients carry tokens there.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    logRequest(request, reply.statusCode, reply.elapsedTime, error);
  }
}

/** The request's one line; also written by surfaces that take the reply over (SSE, at close). */
export function logRequest(request: FastifyRequest, status: number, elapsedMs: number, error?: Error | null): void {
  const line = {
    method: request.method,
    route: request.routeOptions.url ?? null,
    path: request.url.split('?')[0],
    status,
    durationMs: Math.round(elapsedMs * 100) / 100,
    ...(request.failureCode ? { code: request.failureCode } : {}),
  };
  if (error) request.log.error({ ...line, err: error }, 'request');
  else request.log.info(line, 'request');
}
