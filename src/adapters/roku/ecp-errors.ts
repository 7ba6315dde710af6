import type { FailureKind } from '../../platform/errors.js';
import type { NetworkFailure } from '../../platform/network-failures.js';

/**
 * Why an ECP request failed, in terms a caller can act on:
 * - `unreachable`: no connection (refused, no route, reset before an answer);
 * - `timeout`: no complete answer within the client's time-out;
 * - `http_status`: the device answered with a non-2xx status (`status` says which; 403 is the
 *   Host-header check or a "Limited" ECP setting, 404 an unknown app or path);
 * - `malformed`: the answer is not the XML (or image) ECP promises, or is too large;
 * - `invalid_request`: the hub refused to send it (unknown key, app id that is no path segment).
 */
export type RokuEcpFailure = 'unreachable' | 'timeout' | 'http_status' | 'malformed' | 'invalid_request';

/** The failure kind a domain catalogue raises for each ECP failure (kinds map to HTTP statuses). */
const KIND_BY_FAILURE: Readonly<Record<RokuEcpFailure, FailureKind>> = {
  unreachable: 'upstream_failed',
  timeout: 'timeout',
  http_status: 'upstream_failed',
  malformed: 'upstream_failed',
  invalid_request: 'invalid',
};

/**
 * A failed ECP request. The adapter has no error catalogue of its own: the media domain that
 * will own Roku players (issue 11) raises its catalogued codes from `failure`, `status` and
 * `kind`, so the codes clients see are decided once, where the routes are.
 */
export class RokuEcpError extends Error {
  override readonly name = 'RokuEcpError';
  readonly kind: FailureKind;

  constructor(
    readonly failure: RokuEcpFailure,
    message: string,
    readonly request: { host: string; port: number; method: string; path: string },
    /** The device's HTTP status, for `http_status`. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.kind = KIND_BY_FAILURE[failure];
  }

  /**
   * The failure's cause (platform/network-failures.ts): no connection, no answer, a request the
   * hub or the device refused (404: no such app or path; 501: no such command); a device that
   * answered with its own trouble (another status, a malformed answer) has none.
   */
  get networkFailure(): NetworkFailure | undefined {
    switch (this.failure) {
      case 'unreachable':
      case 'timeout':
        return this.failure;
      case 'invalid_request':
        return 'rejected';
      case 'http_status':
        return this.status === 404 ? 'rejected' : this.status === 501 ? 'unsupported' : undefined;
      default:
        return undefined;
    }
  }
}
