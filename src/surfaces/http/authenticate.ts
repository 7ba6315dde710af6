import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import type { AuthService } from '../../domain/auth/auth-service.js';
import type { TokenKind } from '../../domain/auth/model.js';
import { forbidden, unauthenticated } from '../../platform/errors.js';

export const SESSION_COOKIE = 'hcs_session';

export interface AuthPolicy {
  /** Scope a principal must hold; undefined accepts any authenticated user. */
  scope?: string;
  /** Whether the App API session cookie is accepted in place of a bearer header. */
  acceptCookie?: boolean;
}

function bearerOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

function queryTokenOf(request: FastifyRequest): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.accessToken;
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * The one authentication hook of a route family. Every route of the family is authenticated
 * unless its config opts out with `access: 'public'`; SSE routes (`access: 'stream'`) also take
 * a stream token in the `accessToken` query parameter, which no other route accepts.
 */
export function authenticationHook(auth: AuthService, policy: AuthPolicy): onRequestHookHandler {
  // Callback style, not async: this runs on every request and needs no promise.
  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
    const access = request.routeOptions.config.access ?? 'authenticated';
    // Unknown routes answer 404 whoever asks; the route table is public in /openapi.json anyway.
    if (access === 'public' || request.is404) return done();
    let token: string | undefined;
    let kinds: TokenKind[] = ['access'];
    if (access === 'stream') {
      token = queryTokenOf(request) ?? bearerOf(request);
      kinds = ['access', 'stream'];
    } else {
      token = bearerOf(request) ?? (policy.acceptCookie ? request.cookies?.[SESSION_COOKIE] : undefined);
    }
    if (!token) return done(unauthenticated('AUTH_REQUIRED', 'Send an access token: Authorization: Bearer <token>.'));
    const principal = auth.authenticate(token, kinds);
    if (!principal) return done(unauthenticated('INVALID_TOKEN', 'The access token is unknown, expired or revoked.'));
    if (policy.scope && principal.scope !== policy.scope) {
      return done(forbidden('INSUFFICIENT_SCOPE', `This API needs a token with scope ${policy.scope}.`));
    }
    request.principal = principal;
    done();
  };
}
