import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { toHttpFailure, type HttpFailure } from './errors.js';
import { httpErrors } from './failures.js';
import { MAX_URL_LENGTH } from './request-guards.js';

export type FailureFormatter = (failure: HttpFailure, request: Pick<FastifyRequest, 'id'>) => unknown;

/** The error body of the surface a path belongs to (the App API has its envelope). */
export type FormatterForPath = (path: string) => FailureFormatter;

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

/**
 * Unknown paths are 404; a known path asked with a method it does not have is 405 with `Allow`
 * (the methods come from the root instance's `routeMethods`).
 */
export function notFoundHandler(format: FailureFormatter) {
  return function notFound(request: FastifyRequest, reply: FastifyReply) {
    const path = request.url.split('?')[0] ?? request.url;
    const routed = request.server.routeMethods?.allowedAt(request.url) ?? [];
    // A route that was found but has nothing at this path (a static file) calls this too: 404.
    const allowed = routed.includes(request.method) ? [] : routed;
    const failure = toHttpFailure(
      allowed.length > 0 ? httpErrors.METHOD_NOT_ALLOWED({}, { details: { allow: allowed } }) : httpErrors.ROUTE_NOT_FOUND({ method: request.method, path }),
    );
    request.failureCode = failure.code;
    if (allowed.length > 0) reply.header('allow', allowed.join(', '));
    return reply.code(failure.status).send(format(failure, request));
  };
}

/**
 * Fastify's `frameworkErrors`: a URL the router cannot take (a malformed percent-escape, a path
 * parameter past `maxParamLength`) is answered before any route or hook, so here the body is
 * chosen by path and the request id header set by hand.
 */
export function frameworkErrorHandler(formatFor: FormatterForPath) {
  return function onFrameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    reply.header('x-request-id', request.id);
    return errorHandler(formatFor(request.url))(err, request, reply);
  };
}

/** `METHOD target` at the start of the bytes Node could not parse, when they start a request. */
function requestTargetOf(raw: unknown): string | undefined {
  // A Buffer at run time, whatever Fastify's type says.
  if (!Buffer.isBuffer(raw)) return undefined;
  const head = raw.subarray(0, MAX_URL_LENGTH + 32).toString('latin1');
  return /^[A-Z]+ (\S+)/.exec(head)?.[1];
}

/**
 * Fastify's `clientErrorHandler`: Node refused the bytes before they became a request (headers
 * past its 16 KiB limit, a malformed request line, a request too slow to arrive). Answers with the
 * same error body as every other failure, then closes the connection, as Node does. Header
 * overflow caused by the request line alone is 414: Node does not say so, but the target can be
 * read back when the request line is in the bytes it refused (a client sends it in one write).
 */
export function clientErrorHandler(formatFor: FormatterForPath, log: FastifyBaseLogger) {
  return function onClientError(err: ConnectionError, socket: Socket) {
    // A reset connection has no one left to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const target = requestTargetOf(err.rawPacket);
    const known = toHttpFailure(
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? httpErrors.REQUEST_TIMEOUT()
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? target !== undefined && target.length > MAX_URL_LENGTH
            ? httpErrors.URI_TOO_LONG({ part: 'The URL' })
            : httpErrors.HEADERS_TOO_LARGE()
          : httpErrors.MALFORMED_REQUEST(),
    );
    const id = randomUUID();
    const body = JSON.stringify(formatFor(target?.split('?')[0] ?? '/')(known, { id }));
    log.debug({ reqId: id, code: known.code, parserError: err.code }, 'client error');
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${known.status} ${STATUS_CODES[known.status]}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${id}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
