import { Type } from 'typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../../platform/errors.js';
import { objectPart } from '../../../platform/schema-parts.js';
import { SESSION_COOKIE, bearerOf, callerOf } from '../credentials.js';
import { CSRF_HEADER, csrfTokenFor } from '../web/csrf.js';
import { Envelope, ok } from './envelope.js';
import { APP_API_SCOPES, appRoutes } from './routes.js';
import type { AppApiOptions } from './index.js';

const CsrfToken = Type.String({
  description: `The session cookie's CSRF token: a change (POST, PUT, PATCH, DELETE) signed in by the cookie alone sends it in the \`${CSRF_HEADER}\` header, unless nothing marks it as another site's (\`Sec-Fetch-Site\` other than same-origin or none, or an \`Origin\` whose host is not the request's \`Host\`): then 403 CSRF_TOKEN_INVALID. A token that is sent must be right. Bearer calls need none.`,
});

const SessionAnswer = Envelope(
  Type.Object({ token: Type.String(), tokenType: Type.Literal('Bearer'), expiresIn: Type.Integer(), scope: Type.String(), csrfToken: CsrfToken }),
);

/** The answer of an operation that issues an access token: the token and the cookie's CSRF token in `data`, and the session cookie. */
function startsSession(message: string) {
  return {
    schema: SessionAnswer,
    shape(result: unknown, _request: FastifyRequest, reply: FastifyReply) {
      const issued = result as { accessToken: string; expiresIn: number; scope: string };
      reply.setCookie(SESSION_COOKIE, issued.accessToken, {
        httpOnly: true,
        sameSite: 'lax',
        path: '/',
        maxAge: issued.expiresIn,
      });
      return ok(message, { token: issued.accessToken, tokenType: 'Bearer', expiresIn: issued.expiresIn, scope: issued.scope, csrfToken: csrfTokenFor(issued.accessToken) });
    },
  };
}

/** `/auth/*`: sign-in and registration set the session cookie as well as answering the token; sign-out ends both. */
export const appAuthRoutes: FastifyPluginAsync<AppApiOptions> = async (app, { hub, base }) => {
  const { login, logout, me, register, changePassword } = hub.ops.auth;
  const route = appRoutes(app, hub, base);
  const cookieOnly = (request: FastifyRequest) => {
    const token = request.cookies?.[SESSION_COOKIE];
    return token ? { token, admits: APP_API_SCOPES } : undefined;
  };

  route('POST', '/auth/login', login, { message: 'Logged in.', respond: startsSession('Logged in.') });
  route('POST', '/auth/register', register, { message: 'Registered.', respond: startsSession('Registered.'), successStatus: 201 });
  // Every session of the account ends with the old password; the caller's new one comes back as at sign-in.
  route('POST', '/auth/password', changePassword, { message: 'Password changed.', respond: startsSession('Password changed.') });

  route('POST', '/auth/logout', logout, {
    message: 'Logged out.',
    respond: {
      schema: Envelope(Type.Null()),
      // The bearer token was presented and revoked; a session cookie sent beside it holding another
      // token is ended too (the same operation, presenting the cookie), so logout ends both.
      async shape(_result, request, reply) {
        const cookieToken = request.cookies?.[SESSION_COOKIE];
        if (cookieToken && cookieToken !== bearerOf(request)) {
          await hub.operations.invoke(logout.name, {}, callerOf(request, cookieOnly)).catch((err: unknown) => {
            // Already expired or revoked: nothing is left to end.
            if (!(err instanceof DomainError)) throw err;
          });
        }
        reply.clearCookie(SESSION_COOKIE, { path: '/' });
        return ok('Logged out.', null);
      },
    },
  });

  // Signed in by the cookie alone, the principal comes with the cookie's CSRF token: a client that
  // lost the sign-in answer (a page reloaded) learns it again. Another site cannot read the answer.
  route('GET', '/auth/me', me, {
    message: 'Current user.',
    respond: {
      schema: Envelope(Type.Object({ ...objectPart(me.output).object.properties, csrfToken: Type.Optional(CsrfToken) })),
      shape(result, request) {
        const cookieToken = request.cookies?.[SESSION_COOKIE];
        const viaCookie = cookieToken && !bearerOf(request);
        return ok('Current user.', viaCookie ? { ...(result as object), csrfToken: csrfTokenFor(cookieToken) } : result);
      },
    },
  });
};
