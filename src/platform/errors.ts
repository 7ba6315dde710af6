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
  | 'timeout'
  /** A bug: answered without its details, logged once with its stack where it was caught. */
  | 'internal';

export interface FailureOptions {
  details?: unknown;
  /** Seconds after which a retry may succeed (rate limiting, unavailability). */
  retryAfterSeconds?: number;
  cause?: unknown;
  /** Already logged with its stack where it was caught: surfaces must not log it again. */
  logged?: boolean;
}

export class DomainError extends Error {
  readonly logged: boolean;

  constructor(
    readonly kind: FailureKind,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** Seconds after which a retry may succeed (rate limiting, unavailability). */
    readonly retryAfterSeconds?: number,
    options: Pick<FailureOptions, 'cause' | 'logged'> = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.logged = options.logged ?? false;
  }
}

/** Names of the `{placeholders}` of a message template. */
type PlaceholderNames<S extends string> = S extends `${string}{${infer P}}${infer Rest}` ? P | PlaceholderNames<Rest> : never;
type TemplateParams<S extends string> = [PlaceholderNames<S>] extends [never] ? Record<string, never> : Record<PlaceholderNames<S>, string | number>;

type CatalogueEntry = readonly [FailureKind, string];

/** Every catalogued code's kind, whichever module catalogued it. */
const KIND_BY_CODE = new Map<string, FailureKind>();

/**
 * A failure that was recorded as `{code, message}` (a step of a macro, one target of an intent)
 * raised again as an error of its catalogued kind, so that an operation whose action failed
 * fails as a whole with what went wrong.
 */
export function failureOf(recorded: { code: string; message: string } | undefined, details?: unknown): DomainError {
  if (!recorded) return errors.ACTION_FAILED({}, { details });
  return new DomainError(KIND_BY_CODE.get(recorded.code) ?? 'unprocessable', recorded.code, recorded.message, details);
}

export type ErrorFactory<S extends string> = (params: TemplateParams<S>, options?: FailureOptions) => DomainError;

function fill(template: string, params: Record<string, string | number>): string {
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, key: string) => (Object.hasOwn(params, key) ? String(params[key]) : whole));
}

/**
 * Builds the error catalogue: one entry per code with its failure kind and message template,
 * in the manner of Fastify's `lib/errors.js`. Throw sites name a code and fill its template;
 * they never spell a code as a string, so a code means one thing everywhere.
 */
export function defineErrors<const C extends Record<string, CatalogueEntry>>(catalogue: C): { [K in keyof C & string]: ErrorFactory<C[K][1]> } {
  const factories: Record<string, ErrorFactory<string>> = {};
  for (const [code, [kind, template]] of Object.entries(catalogue)) {
    const known = KIND_BY_CODE.get(code);
    if (known !== undefined && known !== kind) throw new Error(`error code ${code} is catalogued as ${known} and as ${kind}`);
    KIND_BY_CODE.set(code, kind);
    factories[code] = (params, options = {}) =>
      new DomainError(kind, code, fill(template, params as Record<string, string | number>), options.details, options.retryAfterSeconds, options);
  }
  return factories as { [K in keyof C & string]: ErrorFactory<C[K][1]> };
}

/** Failures of the call pipeline itself; each domain module keeps its own catalogue beside it. */
export const errors = defineErrors({
  UNKNOWN_OPERATION: ['not_found', 'No operation named {name}.'],
  AUTH_REQUIRED: ['unauthenticated', 'Send an access token: Authorization: Bearer <token>.'],
  INVALID_TOKEN: ['unauthenticated', 'The access token is unknown, expired or revoked.'],
  INSUFFICIENT_SCOPE: ['forbidden', 'This needs a token with scope {scopes}.'],
  ROLE_REQUIRED: ['forbidden', 'This needs an account with role {roles}.'],
  VALIDATION_FAILED: ['invalid', '{field} {problem}'],
  ACTION_FAILED: ['unprocessable', 'The action failed without saying why.'],
  INTERNAL_ERROR: ['internal', 'The service failed to handle the request; the request id identifies it in the log.'],
});

// Shorthands kept while throw sites move to their module catalogues.
export const invalid = (code: string, message: string, details?: unknown) => new DomainError('invalid', code, message, details);
export const notFound = (code: string, message: string, details?: unknown) => new DomainError('not_found', code, message, details);
export const conflict = (code: string, message: string, details?: unknown) => new DomainError('conflict', code, message, details);
export const unauthenticated = (code: string, message: string) => new DomainError('unauthenticated', code, message);
export const forbidden = (code: string, message: string) => new DomainError('forbidden', code, message);
export const unprocessable = (code: string, message: string, details?: unknown) => new DomainError('unprocessable', code, message, details);
