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

/**
 * Go's `net/http` CrossOriginProtection (Go 1.25), which ASP.NET Core's CSRF protection follows:
 * a browser says where a request comes from, so refuse what it marks as another site's; a
 * request with neither header is not a browser page's (a native app, curl), so it cannot be a
 * cross-site forgery. Scripts cannot set either header.
 * - `Sec-Fetch-Site` present: only `same-origin` or `none` (typed by the user) pass;
 * - else `Origin` present: its host must be the request's `Host` (scheme aside, as in Go: behind
 *   a proxy that terminates TLS the schemes differ);
 * - else: pass.
 */
function notCrossOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  const host = request.headers.host?.toLowerCase();
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).host;
  } catch {
    originHost = undefined;
  }
  return host !== undefined && originHost !== undefined && originHost !== '' && originHost === host;
}

export interface CsrfGuardOptions {
  /**
   * Admit without the token what Go's CrossOriginProtection admits (see notCrossOrigin): for an
   * API whose clients are native apps and scripts that cannot read the token from a page — the
   * App API's mobile clients send the cookie and nothing else. A token that is presented must
   * still be the right one.
   */
  crossOriginProtection?: boolean;
}

/**
 * A preHandler for a route family signed in by a session cookie: a state-changing request that
 * relies on the cookie (no bearer header) must carry the session's CSRF token (or, with
 * `crossOriginProtection`, not be marked by the browser as another site's), or it is refused with
 * 403 before anything runs. A bearer header is not ambient authority, so it needs none.
 */
export function csrfGuard(cookieName: string, { crossOriginProtection = false }: CsrfGuardOptions = {}): preHandlerAsyncHookHandler {
  return async (request) => {
    // Signing in relies on no cookie (a public route reads none), so there is nothing to forge.
    if (SAFE_METHODS.has(request.method) || bearerOf(request) || request.routeOptions.config?.access === 'public') return;
    const session = request.cookies?.[cookieName];
    if (!session) return;
    const token = presented(request);
    const admitted = token ? sameToken(token, csrfTokenFor(session)) : crossOriginProtection && notCrossOrigin(request);
    if (!admitted) throw httpErrors.CSRF_TOKEN_INVALID();
  };
}
