import { Type } from 'typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Hub } from '../../../hub.js';
import { SESSION_COOKIE, requestCredential } from '../credentials.js';
import { errorHandler, notFoundHandler } from '../error-handler.js';
import { Envelope, FailureEnvelope, envelopeFailure, ok } from './envelope.js';
import { bindOperation, operationIdFor } from '../bind-operation.js';

export const APP_API_BASES = ['/app', '/api'] as const;

export interface AppApiOptions {
  hub: Hub;
  base: string;
}

/**
 * The legacy App API: the same operations as the OS API, answered in the `{status, message,
 * data}` envelope; requests present the session cookie or a bearer token of any account.
 */
export const appApi: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  app.setErrorHandler(errorHandler(envelopeFailure));
  app.setNotFoundHandler(notFoundHandler(envelopeFailure));

  const { login, logout, me } = hub.ops.auth;
  const tags = ['app-api'];
  // Any account's token, as a bearer header or the session cookie (appAuth).
  const credential = requestCredential({ admits: ['os_api_admin', 'app'], cookie: true });

  bindOperation(app, hub.operations, {
    credential,
    method: 'POST',
    url: '/auth/login',
    operation: login,
    tags,
    operationId: operationIdFor(base, login.name),
    errorSchema: FailureEnvelope,
    respond: {
      schema: Envelope(
        Type.Object({ token: Type.String(), tokenType: Type.Literal('Bearer'), expiresIn: Type.Integer(), scope: Type.String() }),
      ),
      shape(result, _request: FastifyRequest, reply: FastifyReply) {
        const issued = result as { accessToken: string; expiresIn: number; scope: string };
        reply.setCookie(SESSION_COOKIE, issued.accessToken, {
          httpOnly: true,
          sameSite: 'lax',
          path: '/',
          maxAge: issued.expiresIn,
        });
        return ok('Logged in.', { token: issued.accessToken, tokenType: 'Bearer', expiresIn: issued.expiresIn, scope: issued.scope });
      },
    },
  });

  bindOperation(app, hub.operations, {
    credential,
    method: 'POST',
    url: '/auth/logout',
    operation: logout,
    tags,
    operationId: operationIdFor(base, logout.name),
    errorSchema: FailureEnvelope,
    respond: {
      schema: Envelope(Type.Null()),
      shape(_result, _request, reply) {
        reply.clearCookie(SESSION_COOKIE, { path: '/' });
        return ok('Logged out.', null);
      },
    },
  });

  bindOperation(app, hub.operations, {
    credential,
    method: 'GET',
    url: '/auth/me',
    operation: me,
    tags,
    operationId: operationIdFor(base, me.name),
    errorSchema: FailureEnvelope,
    respond: { schema: Envelope(me.output), shape: (result) => ok('Current user.', result) },
  });
};
