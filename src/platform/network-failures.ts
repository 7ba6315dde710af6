/**
 * Why talking to a device over the network failed, decided in one place for every adapter (the
 * Roku, Android TV, Cast, MPD and iTach clients, the media bridge's callbacks):
 *
 * - `unreachable`: no connection, or it broke before an answer (refused, no route, reset, name
 *   not resolved);
 * - `timeout`: no (complete) answer within the bound;
 * - `rejected`: the device (or the hub on its behalf) refused what was asked: bad parameters, a
 *   refusal in the device's own protocol;
 * - `unsupported`: the device or the integration has no such command.
 *
 * An error that is none of these (the device answered with its own failure, a malformed answer)
 * has no network cause: `networkFailureOf` answers undefined and callers report it as the device's
 * error. The built-in integrations turn a cause into the driver manager's action failure
 * (`src/domain/drivers/builtin.ts`, `ACTION_FAILURE`).
 */
export type NetworkFailure = 'unreachable' | 'timeout' | 'rejected' | 'unsupported';

/** Socket and resolver error codes that mean the peer cannot be reached (or dropped the connection). */
export const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);

/** Codes that mean the peer did not answer in time (the OS's or a library's time-out). */
export const TIMEOUT_CODES: ReadonlySet<string> = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** What each code says of the peer, for messages ("127.0.0.1:4998 refused the connection"). */
const CODE_MEANINGS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'refused the connection',
  EHOSTUNREACH: 'is unreachable (no route to host)',
  ENETUNREACH: 'is unreachable (network unreachable)',
  ENETDOWN: 'is unreachable (network down)',
  EHOSTDOWN: 'is down',
  ECONNRESET: 'reset the connection',
  ECONNABORTED: 'aborted the connection',
  EPIPE: 'closed the connection',
  ENOTFOUND: 'could not be resolved',
  EAI_AGAIN: 'could not be resolved',
  EADDRNOTAVAIL: 'address is not available',
  ETIMEDOUT: 'timed out',
};

/**
 * A failure that says its cause itself: thrown by an integration for what it refuses (`rejected`,
 * `unsupported`), or by whoever already knows the cause.
 */
export class NetworkFailureError extends Error {
  override readonly name = 'NetworkFailureError';
  constructor(
    readonly networkFailure: NetworkFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A refusal of what was asked (parameters, a state the device is not in): `rejected`. */
export const rejected = (message: string) => new NetworkFailureError('rejected', message);
/** No such command: `unsupported`. */
export const unsupported = (message: string) => new NetworkFailureError('unsupported', message);

/** The system error code an error carries, its own or its cause's (fetch wraps the socket's error in `cause`). */
export function errorCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The cause a socket or resolver error code means, or undefined when it means neither. */
export function networkFailureOfCode(code: string | undefined): 'unreachable' | 'timeout' | undefined {
  if (code === undefined) return undefined;
  if (TIMEOUT_CODES.has(code)) return 'timeout';
  if (UNREACHABLE_CODES.has(code)) return 'unreachable';
  return undefined;
}

/** What a code says of the peer, in words; `failed (<code>)` for a code without a meaning here. */
export function describeNetworkCode(code: string): string {
  return CODE_MEANINGS[code] ?? `failed (${code})`;
}

/**
 * The cause of a caught error: what an error that knows its cause says (`networkFailure`, which
 * the adapters' typed errors carry), a time-out or abort, a system error code; undefined when the
 * error has no network cause.
 */
export function networkFailureOf(err: unknown): NetworkFailure | undefined {
  if (err && typeof err === 'object' && 'networkFailure' in err) {
    const told = (err as { networkFailure?: unknown }).networkFailure;
    if (told === 'unreachable' || told === 'timeout' || told === 'rejected' || told === 'unsupported') return told;
    if (told === undefined) return undefined;
  }
  const name = err instanceof Error || (err && typeof err === 'object' && 'name' in err) ? (err as { name?: unknown }).name : undefined;
  // AbortSignal.timeout() aborts with a TimeoutError; a bound that aborts a request reports so too.
  if (name === 'TimeoutError' || name === 'AbortError') return 'timeout';
  return networkFailureOfCode(errorCode(err));
}

/** A caught error's message (the error itself when it is no Error). */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
