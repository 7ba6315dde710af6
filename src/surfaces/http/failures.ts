import { defineErrors } from '../../platform/errors.js';

/**
 * Failures of the HTTP surface itself: the exchange (framing, URL, method, body encoding), before
 * any operation runs, and a hub still starting. They never reach the hub protocol.
 */
export const httpErrors = defineErrors({
  NOT_READY: ['unavailable', 'The hub is starting; try again shortly.'],
  ROUTE_NOT_FOUND: ['not_found', 'No route {method} {path}.'],
  LOCAL_CA_UNAVAILABLE: ['not_found', "This hub serves no certificate of its own CA: HTTPS is off, or it serves the administrator's certificate."],
  METHOD_NOT_ALLOWED: ['invalid', 'This path does not accept the method; the Allow header lists those it does.'],
  URI_TOO_LONG: ['invalid', '{part} is longer than the service accepts.'],
  DOT_SEGMENT_IN_PATH: ['invalid', "The path has a '.' or '..' segment; the service does not resolve them: send the resolved path."],
  BAD_URL: ['invalid', 'The URL is not valid: a percent-encoded sequence is malformed.'],
  HEADERS_TOO_LARGE: ['invalid', 'The request headers are larger than the service accepts.'],
  MALFORMED_REQUEST: ['invalid', 'The request is not valid HTTP.'],
  REQUEST_TIMEOUT: ['timeout', 'The request did not arrive in time.'],
  BODY_TOO_LARGE: ['invalid', 'The request body is larger than the service accepts.'],
  UPLOAD_TOO_LARGE: ['invalid', '{what} is larger than the service accepts (DRIVER_UPLOAD_MAX_BYTES and the upload limits).'],
  UNSUPPORTED_MEDIA_TYPE: ['invalid', 'Send the body as application/json.'],
  INVALID_CONTENT_LENGTH: ['invalid', 'The Content-Length header does not match the body.'],
  EMPTY_JSON_BODY: ['invalid', 'The body is declared as JSON but is empty.'],
  MALFORMED_JSON: ['invalid', 'The body is not valid JSON.'],
  METRICS_LOOPBACK_ONLY: ['forbidden', 'Metrics are served to callers on this machine only (METRICS_ACCESS=loopback).'],
  CSRF_TOKEN_INVALID: ['forbidden', 'A change signed in by the session cookie came from another site, or with a wrong CSRF token: send the session\'s token (header x-csrf-token or form field _csrf).'],
});

/** HTTP says more precisely than the failure kind what went wrong with these exchanges. */
export const HTTP_STATUS_BY_CODE: ReadonlyMap<string, number> = new Map([
  [httpErrors.METHOD_NOT_ALLOWED.code, 405],
  [httpErrors.REQUEST_TIMEOUT.code, 408],
  [httpErrors.BODY_TOO_LARGE.code, 413],
  [httpErrors.UPLOAD_TOO_LARGE.code, 413],
  // Domain failures HTTP has a precise status for.
  ['DRIVER_PACKAGE_TOO_LARGE', 413],
  ['BACKUP_TOO_LARGE', 413],
  ['PROMPT_TOO_LONG', 413],
  [httpErrors.URI_TOO_LONG.code, 414],
  [httpErrors.UNSUPPORTED_MEDIA_TYPE.code, 415],
  [httpErrors.HEADERS_TOO_LARGE.code, 431],
]);
