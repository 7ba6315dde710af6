import type { FastifyRequest } from 'fastify';
import type { Credential, Scope, TokenKind } from '../../platform/operations.js';

export const SESSION_COOKIE = 'hcs_session';
/** The admin panel's own session: SameSite=Strict, path /admin. */
export const ADMIN_COOKIE = 'hcs_admin';

/** How a route family reads the credential a request presents; the registry checks it. */
export type CredentialReader = (request: FastifyRequest) => Credential | undefined;

/** The token of an `Authorization: Bearer` header (an HTTP request, or a WebSocket upgrade's). */
export function bearerOf(request: { headers: { authorization?: string | undefined } }): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

function queryTokenOf(request: FastifyRequest): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.accessToken;
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

const STREAM_KINDS: readonly TokenKind[] = ['access', 'stream'];

export interface CredentialRules {
  /** Scopes of the API the family serves (a token audience). */
  admits: readonly Scope[];
  /** Whether a session cookie stands in for a bearer header: `true` for the App API's, or a cookie's name. */
  cookie?: boolean | string;
}

/** A bearer header, or the session cookie where the family takes it. */
export function requestCredential({ admits, cookie }: CredentialRules): CredentialReader {
  return (request) => {
    const cookieName = cookie === true ? SESSION_COOKIE : cookie || undefined;
    const token = bearerOf(request) ?? (cookieName ? request.cookies?.[cookieName] : undefined);
    return token ? { token, admits } : undefined;
  };
}

/**
 * SSE streams: browsers' EventSource cannot send headers, so the token may come in the
 * `accessToken` query parameter, and a short-lived stream token is accepted (CONTRACT).
 */
export function streamCredential({ admits }: CredentialRules): CredentialReader {
  return (request) => {
    const token = queryTokenOf(request) ?? bearerOf(request);
    return token ? { token, kinds: STREAM_KINDS, admits } : undefined;
  };
}

export function callerOf(request: FastifyRequest, credential: CredentialReader) {
  const intent: 'read' | 'change' = request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'change';
  return { credential: credential(request), clientAddress: request.ip, requestId: String(request.id), intent };
}
