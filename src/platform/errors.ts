/**
 * Domain failures carry a kind (what went wrong, in the caller's terms) and a stable code.
 * Surfaces translate the kind into their own vocabulary (HTTP status, hub protocol `ok:false`);
 * the domain never speaks HTTP.
 */
export type FailureKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'unprocessable'
  | 'rate_limited'
  | 'upstream_failed'
  | 'unavailable'
  | 'timeout';

export class DomainError extends Error {
  constructor(
    readonly kind: FailureKind,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** Seconds after which a retry may succeed (rate limiting, unavailability). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalid = (code: string, message: string, details?: unknown) =>
  new DomainError('invalid', code, message, details);
export const notFound = (code: string, message: string, details?: unknown) =>
  new DomainError('not_found', code, message, details);
export const conflict = (code: string, message: string, details?: unknown) =>
  new DomainError('conflict', code, message, details);
export const unauthenticated = (code: string, message: string) =>
  new DomainError('unauthenticated', code, message);
export const forbidden = (code: string, message: string) => new DomainError('forbidden', code, message);
export const unprocessable = (code: string, message: string, details?: unknown) =>
  new DomainError('unprocessable', code, message, details);
