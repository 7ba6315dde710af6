import { STATUS_CODES } from 'node:http';
import { Type, type Static } from 'typebox';
import type { FastifyError } from 'fastify';
import { DomainError, type FailureKind } from '../../platform/errors.js';

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

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function fieldOf(context: string | undefined, issue: ValidationIssue): string {
  const path = (issue.instancePath ?? '').split('/').filter(Boolean).join('.');
  const missing = typeof issue.params?.missingProperty === 'string' ? issue.params.missingProperty : undefined;
  const extra = typeof issue.params?.additionalProperty === 'string' ? issue.params.additionalProperty : undefined;
  return [context, path, missing ?? extra].filter(Boolean).join('.');
}

type TransportFailure = Pick<HttpFailure, 'status' | 'code' | 'message'>;

/**
 * Failures of the HTTP exchange itself (framing, URL, method, body encoding), before any
 * operation runs: Fastify's own errors by their FST_ERR_* code, and the service's checks.
 */
export const TRANSPORT_FAILURES = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'BODY_TOO_LARGE', message: 'The request body is larger than the service accepts.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'INVALID_CONTENT_LENGTH', message: 'The Content-Length header does not match the body.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'EMPTY_JSON_BODY', message: 'The body is declared as JSON but is empty.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'MALFORMED_JSON', message: 'The body is not valid JSON.' },
  FST_ERR_BAD_URL: { status: 400, code: 'BAD_URL', message: 'The URL is not valid: a percent-encoded sequence is malformed.' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: 'URI_TOO_LONG', message: 'A path segment of the URL is longer than the service accepts.' },
  URI_TOO_LONG: { status: 414, code: 'URI_TOO_LONG', message: 'The URL is longer than the service accepts.' },
  HEADERS_TOO_LARGE: { status: 431, code: 'HEADERS_TOO_LARGE', message: 'The request headers are larger than the service accepts.' },
  REQUEST_TIMEOUT: { status: 408, code: 'REQUEST_TIMEOUT', message: 'The request did not arrive in time.' },
  MALFORMED_REQUEST: { status: 400, code: 'MALFORMED_REQUEST', message: 'The request is not valid HTTP.' },
  DOT_SEGMENT: {
    status: 400,
    code: 'DOT_SEGMENT_IN_PATH',
    message: "The path has a '.' or '..' segment; the service does not resolve them: send the resolved path.",
  },
  METHOD_NOT_ALLOWED: { status: 405, code: 'METHOD_NOT_ALLOWED', message: 'This path does not accept the method; the Allow header lists those it does.' },
} as const satisfies Record<string, TransportFailure>;

/** A transport failure raised by the service's own checks (hooks), answered like any failure. */
export class TransportError extends Error {
  constructor(
    readonly failure: TransportFailure,
    readonly details?: unknown,
  ) {
    super(failure.message);
    this.name = 'TransportError';
  }
}

/** `Not Found` → `NOT_FOUND`: a code for a client error that has no entry of its own. */
const codeOfStatus = (status: number) => (STATUS_CODES[status] ?? 'Bad Request').toUpperCase().replace(/[^A-Z0-9]+/g, '_');

/** Maps anything thrown while serving a request to its HTTP answer. */
export function toHttpFailure(err: unknown): HttpFailure {
  if (err instanceof DomainError) {
    return {
      status: STATUS_BY_KIND[err.kind],
      code: err.code,
      message: err.message,
      details: err.details,
      retryAfterSeconds: err.retryAfterSeconds,
      unexpected: err.kind === 'internal' && !err.logged,
    };
  }
  if (err instanceof TransportError) return { ...err.failure, details: err.details, unexpected: false };
  const fe = err as Partial<FastifyError> & { validation?: ValidationIssue[]; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    const details = fe.validation.map((issue) => ({ field: fieldOf(fe.validationContext, issue), message: issue.message ?? 'is invalid' }));
    const first = details[0];
    return {
      status: 400,
      code: 'VALIDATION_FAILED',
      message: first ? `${first.field || fe.validationContext || 'request'} ${first.message}` : 'The request is invalid.',
      details,
      unexpected: false,
    };
  }
  const known = fe.code && Object.hasOwn(TRANSPORT_FAILURES, fe.code) ? TRANSPORT_FAILURES[fe.code as keyof typeof TRANSPORT_FAILURES] : undefined;
  if (known) return { ...known, unexpected: false };
  if (err instanceof SyntaxError && typeof fe.statusCode === 'number' && fe.statusCode === 400) {
    return { status: 400, code: 'MALFORMED_JSON', message: 'The body is not valid JSON.', unexpected: false };
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    // Other framework-level client errors (a plugin's 403, an aborted body): keep the status, name it plainly.
    return { status: fe.statusCode, code: codeOfStatus(fe.statusCode), message: fe.message ?? 'The request is invalid.', unexpected: false };
  }
  return { status: 500, code: 'INTERNAL_ERROR', message: 'The service failed to handle the request; the request id identifies it in the log.', unexpected: true };
}
