import { STATUS_CODES } from 'node:http';
import { Type, type Static } from 'typebox';
import type { FastifyError } from 'fastify';
import { DomainError, errors, type FailureKind } from '../../platform/errors.js';
import { validationFailure, type ValidationIssue } from '../../platform/input-validation.js';
import { HTTP_STATUS_BY_CODE, httpErrors } from './failures.js';

/** CONTRACT.md error body, with the request id added so a user's report can be traced. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable SNAKE_CASE code.' }),
      message: Type.String({ description: 'Human sentence.' }),
      details: Type.Optional(Type.Unknown()),
      requestId: Type.Optional(Type.String()),
    }),
  },
  { $id: 'ErrorBody', description: 'Error body of every REST surface except the App API.' },
);
export type ErrorBody = Static<typeof ErrorBody>;

const STATUS_BY_KIND: Record<FailureKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  rate_limited: 429,
  upstream_failed: 502,
  unavailable: 503,
  timeout: 504,
  internal: 500,
};

export interface HttpFailure {
  status: number;
  code: string;
  message: string;
  details?: unknown;
  retryAfterSeconds?: number;
  /** A failure we did not expect: logged with its stack, answered without it. */
  unexpected: boolean;
}

/** The status a failure is answered with: its kind's, unless HTTP has a more precise one for its code. */
export function httpStatusOf(failure: Pick<DomainError, 'kind' | 'code'>): number {
  return HTTP_STATUS_BY_CODE.get(failure.code) ?? STATUS_BY_KIND[failure.kind];
}

/** Fastify's own errors, by their FST_ERR_* code, as the service's failures. */
const FASTIFY_FAILURES: Record<string, () => DomainError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => httpErrors.BODY_TOO_LARGE(),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => httpErrors.UNSUPPORTED_MEDIA_TYPE(),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => httpErrors.INVALID_CONTENT_LENGTH(),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => httpErrors.EMPTY_JSON_BODY(),
  FST_ERR_CTP_INVALID_JSON_BODY: () => httpErrors.MALFORMED_JSON(),
  FST_ERR_BAD_URL: () => httpErrors.BAD_URL(),
  FST_ERR_MAX_PARAM_LENGTH: () => httpErrors.URI_TOO_LONG({ part: 'A path segment of the URL' }),
  // @fastify/multipart's limits (an upload's file size, its number of files, fields or parts).
  FST_REQ_FILE_TOO_LARGE: () => httpErrors.UPLOAD_TOO_LARGE({ what: 'A file of the upload' }),
  FST_FILES_LIMIT: () => httpErrors.UPLOAD_TOO_LARGE({ what: 'The number of files' }),
  FST_FIELDS_LIMIT: () => httpErrors.UPLOAD_TOO_LARGE({ what: 'The number of fields' }),
  FST_PARTS_LIMIT: () => httpErrors.UPLOAD_TOO_LARGE({ what: 'The number of parts' }),
  FST_PROTO_VIOLATION: () => httpErrors.MALFORMED_REQUEST(),
  FST_INVALID_MULTIPART_CONTENT_TYPE: () => httpErrors.UNSUPPORTED_MEDIA_TYPE(),
};

/** `Not Found` → `NOT_FOUND`: a code for a client error that has no entry of its own. */
const codeOfStatus = (status: number) => (STATUS_CODES[status] ?? 'Bad Request').toUpperCase().replace(/[^A-Z0-9]+/g, '_');

/** Maps anything thrown while serving a request to its HTTP answer. */
export function toHttpFailure(err: unknown): HttpFailure {
  if (err instanceof DomainError) {
    return {
      status: httpStatusOf(err),
      code: err.code,
      message: err.message,
      details: err.details,
      retryAfterSeconds: err.retryAfterSeconds,
      unexpected: err.kind === 'internal' && !err.logged,
    };
  }
  const fe = err as Partial<FastifyError> & { validation?: ValidationIssue[]; validationContext?: string };
  // Routes that are not operations (the SSE stream's query) are still validated by Fastify.
  if (Array.isArray(fe.validation)) return toHttpFailure(validationFailure(fe.validationContext ?? 'request', fe.validation));
  const fastifyFailure = fe.code && Object.hasOwn(FASTIFY_FAILURES, fe.code) ? FASTIFY_FAILURES[fe.code] : undefined;
  if (fastifyFailure) return toHttpFailure(fastifyFailure());
  if (err instanceof SyntaxError && typeof fe.statusCode === 'number' && fe.statusCode === 400) return toHttpFailure(httpErrors.MALFORMED_JSON());
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    // Other framework-level client errors (a plugin's 403, an aborted body): keep the status, name it plainly.
    return { status: fe.statusCode, code: codeOfStatus(fe.statusCode), message: fe.message ?? 'The request is invalid.', unexpected: false };
  }
  return toHttpFailure(errors.INTERNAL_ERROR());
}
