import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { bearerOf } from '../credentials.js';
import { httpErrors } from '../failures.js';

export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_FIELD = '_csrf';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The CSRF token of a cookie session: a hash of the session token, so it is bound to the session,
 * needs no storage and ends with it. A page the session renders embeds it; another site can
 * neither read the HttpOnly cookie nor the page, so it cannot make one (OWASP's "signed
 * double-submit" with the session as the secret).
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHash('sha256').update('hcs-csrf\0').update(sessionToken).digest('base64url');
}

function presented(request: FastifyRequest): string | undefined {
  const header = request.headers[CSRF_HEADER];
  if (typeof header === 'string' && header.length > 0) return header;
  const body = request.body as Record<string, unknown> | undefined;
  let field = body && typeof body === 'object' ? body[CSRF_FIELD] : undefined;
  // A multipart form's field (@fastify/multipart, attachFieldsToBody) is an object holding its value.
  if (field && typeof field === 'object' && (field as { type?: unknown }).type === 'field') field = (field as { value?: unknown }).value;
  return typeof field === 'string' && field.length > 0 ? field : undefined;
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The origin the request was sent to, `scheme://host[:port]` from its Host header. */
function ownOrigin(request: FastifyRequest): string | undefined {
  const host = request.headers.host;
  return host ? `${request.protocol}://${host.toLowerCase()}` : undefined;
}

/**
 * Whether the browser says a page of this very origin sent the request. `Sec-Fetch-Site` decides
 * where it is sent (the browser computes it from the real URLs, so it holds behind a proxy that
 * terminates TLS too); otherwise `Origin`, which must equal the request's own origin exactly.
 * Neither header: nothing vouches for the request. Scripts cannot set either header.
 */
function fromOwnOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  const origin = request.headers.origin;
  return origin !== undefined && origin === ownOrigin(request);
}

export interface CsrfGuardOptions {
  /**
   * Also admit, without the token, a request the browser marks as sent by a page of the same
   * origin (`Sec-Fetch-Site: same-origin`, or an `Origin` equal to the request's own): for an
   * API whose clients are scripts that cannot read the token from a page. A token that is
   * presented must still be the right one.
   */
  sameOrigin?: boolean;
}

/**
 * A preHandler for a route family signed in by a session cookie: a state-changing request that
 * relies on the cookie (no bearer header) must carry the session's CSRF token (or, with
 * `sameOrigin`, come from a page of the same origin), or it is refused with 403 before anything
 * runs. A bearer header is not ambient authority, so it needs none.
 */
export function csrfGuard(cookieName: string, { sameOrigin = false }: CsrfGuardOptions = {}): preHandlerAsyncHookHandler {
  return async (request) => {
    // Signing in relies on no cookie (a public route reads none), so there is nothing to forge.
    if (SAFE_METHODS.has(request.method) || bearerOf(request) || request.routeOptions.config?.access === 'public') return;
    const session = request.cookies?.[cookieName];
    if (!session) return;
    const token = presented(request);
    const admitted = token ? sameToken(token, csrfTokenFor(session)) : sameOrigin && fromOwnOrigin(request);
    if (!admitted) throw httpErrors.CSRF_TOKEN_INVALID();
  };
}
