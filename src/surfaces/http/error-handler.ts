import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { toHttpFailure, type HttpFailure } from './errors.js';

export type FailureFormatter = (failure: HttpFailure, request: FastifyRequest) => unknown;

export const contractErrorBody: FailureFormatter = (failure, request) => ({
  error: {
    code: failure.code,
    message: failure.message,
    ...(failure.details === undefined ? {} : { details: failure.details }),
    requestId: String(request.id),
  },
});

/**
 * Turns any failure into the surface's error body. Expected failures are recorded on the
 * request's single log line; unexpected ones are logged here once, with the stack, which never
 * leaves the server.
 */
export function errorHandler(format: FailureFormatter) {
  return function handle(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const failure = toHttpFailure(err);
    request.failureCode = failure.code;
    if (failure.unexpected) request.log.error({ err }, 'unhandled error');
    if (failure.status === 401) reply.header('www-authenticate', 'Bearer realm="home-control"');
    if (failure.retryAfterSeconds !== undefined) reply.header('retry-after', String(failure.retryAfterSeconds));
    return reply.code(failure.status).send(format(failure, request));
  };
}

export function notFoundHandler(format: FailureFormatter) {
  return function notFound(request: FastifyRequest, reply: FastifyReply) {
    const failure: HttpFailure = {
      status: 404,
      code: 'ROUTE_NOT_FOUND',
      message: `No route ${request.method} ${request.url.split('?')[0]}.`,
      unexpected: false,
    };
    request.failureCode = failure.code;
    return reply.code(404).send(format(failure, request));
  };
}
