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

/**
 * Names of the `{placeholders}` of a message template. Braces around text with a space in it
 * (`{contentType: "image/…"}`) are the message's own, as at run time, where a name is a word.
 */
type PlaceholderNames<S extends string> = S extends `${string}{${infer P}}${infer Rest}`
  ? (P extends `${string} ${string}` ? never : P) | PlaceholderNames<Rest>
  : never;
/** The values of a template's placeholders; a template without any needs none. */
type ParamArgs<S extends string> = [PlaceholderNames<S>] extends [never] ? [params?: Record<string, never>] : [params: Record<PlaceholderNames<S>, string | number>];

type CatalogueEntry = readonly [FailureKind, string];

/** A failure as a result records it, when an operation reports it rather than throwing it. */
export interface FailureInfo<C extends string = string> {
  code: C;
  message: string;
}

/** Every catalogued code's kind, whichever module catalogued it. */
const KIND_BY_CODE = new Map<string, FailureKind>();

/**
 * A failure that was recorded as `{code, message}` (a step of a macro, one target of an intent)
 * raised again as an error of its catalogued kind, so that an operation whose action failed
 * fails as a whole with what went wrong.
 */
export function failureOf(recorded: FailureInfo | undefined, details?: unknown): DomainError {
  if (!recorded) return errors.ACTION_FAILED({}, { details });
  return new DomainError(KIND_BY_CODE.get(recorded.code) ?? 'unprocessable', recorded.code, recorded.message, details);
}

/** A failure as it travels between processes (another instance of a cluster). */
export interface WireFailure {
  kind: FailureKind;
  code: string;
  message: string;
  details?: unknown;
  retryAfterSeconds?: number;
}

/** A failure for the wire, and back: the error raised again is the one that was raised there. */
export const wireFailure = {
  from: (e: DomainError): WireFailure => ({ kind: e.kind, code: e.code, message: e.message, details: e.details, ...(e.retryAfterSeconds !== undefined ? { retryAfterSeconds: e.retryAfterSeconds } : {}) }),
  revive: (w: WireFailure): DomainError => new DomainError(w.kind, w.code, w.message, w.details, w.retryAfterSeconds),
};

/** One code of a catalogue: raises it (`factory(params, options)`) or records it (`factory.info(params)`). */
export interface ErrorFactory<S extends string = string, C extends string = string> {
  (...args: [...ParamArgs<S>, options?: FailureOptions]): DomainError;
  /** The failure as a result records it, without raising it. */
  info(...args: ParamArgs<S>): FailureInfo<C>;
  readonly code: C;
  readonly kind: FailureKind;
  /** The message, with `{placeholders}` filled from the parameters. */
  readonly template: S;
}

/** Fills a message template's `{placeholders}`; one without a parameter stays as written. */
function fillTemplate(template: string, params: Record<string, string | number> = {}): string {
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, key: string) => (Object.hasOwn(params, key) ? String(params[key]) : whole));
}

/**
 * Builds an error catalogue: one entry per code with its failure kind and message template,
 * in the manner of Fastify's `lib/errors.js`. Throw sites name a code and fill its template;
 * they never spell a code as a string, so a code means one thing everywhere. A code is
 * catalogued once, by the module that owns it; others import that catalogue.
 */
export function defineErrors<const C extends Record<string, CatalogueEntry>>(catalogue: C): { readonly [K in keyof C & string]: ErrorFactory<C[K][1], K> } {
  const factories: Record<string, ErrorFactory> = {};
  for (const [code, [kind, template]] of Object.entries(catalogue)) {
    if (KIND_BY_CODE.has(code)) throw new Error(`error code ${code} is catalogued twice`);
    KIND_BY_CODE.set(code, kind);
    const raise = (params?: Record<string, string | number>, options: FailureOptions = {}) =>
      new DomainError(kind, code, fillTemplate(template, params), options.details, options.retryAfterSeconds, options);
    factories[code] = Object.assign(raise, {
      info: (params?: Record<string, string | number>): FailureInfo => ({ code, message: fillTemplate(template, params) }),
      code,
      kind,
      template,
    }) as ErrorFactory;
  }
  return factories as { readonly [K in keyof C & string]: ErrorFactory<C[K][1], K> };
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
