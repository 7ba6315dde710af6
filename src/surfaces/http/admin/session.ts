import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Hub } from '../../../hub.js';
import { DomainError, errors } from '../../../platform/errors.js';
import { ADMIN_COOKIE, callerOf } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { csrfTokenFor } from '../web/csrf.js';
import { formFields, wantsHtml } from '../web/forms.js';
import { html, page } from '../web/html.js';
import { adminCredential } from './credential.js';
import { ADMIN_AREA } from './panel-kit.js';
import { nextWithin } from '../web/pages.js';

/** Only a path of the panel itself is a place to go back to after signing in (no open redirect). */
const nextPath = (value: unknown) => nextWithin(ADMIN_AREA, value);

function loginPage(next: string, problem?: string): string {
  return page({
    title: 'Sign in',
    area: 'Admin',
    ...(problem ? { flash: { kind: 'error' as const, text: problem } } : {}),
    body: html`<section><form method="post" action="/admin/login">
<input type="hidden" name="next" value="${next}">
<label>Username <input name="username" autocomplete="username" required autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button>Sign in</button></form></section><p class="muted">An administrator account of this hub. Household members use <a href="/os/">the home page</a>.</p>`,
  });
}

const LoginAnswer = Type.Object({
  ok: Type.Literal(true),
  username: Type.String(),
  expiresIn: Type.Integer({ description: 'Seconds the session lasts.' }),
  csrfToken: Type.String({ description: 'Send as header x-csrf-token (or form field _csrf) with every state-changing request signed in by the cookie.' }),
});

/**
 * The admin panel's session: a sign-in form whose success sets `hcs_admin` (HttpOnly,
 * SameSite=Strict, path / (its Socket.IO connections carry it too), expiring with the access token it holds) and sign-out, which
 * revokes that token. Sign-in is `auth.login`, so failures count against the same login limiter.
 */
export function adminSessionRoutes(app: FastifyInstance, hub: Hub): void {
  app.get(
    '/login',
    {
      config: { access: 'public' },
      schema: {
        tags: ['admin'],
        summary: 'The admin sign-in page.',
        security: [],
        produces: ['text/html'],
        querystring: Type.Object({ next: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: true }),
        response: { 200: Type.String({ description: 'HTML page.' }), '4xx': ErrorBody },
      },
    },
    async (request, reply) => {
      reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
      return loginPage(nextPath((request.query as Record<string, unknown>).next));
    },
  );

  app.post(
    '/login',
    {
      config: { access: 'public' },
      validatorCompiler: () => () => true,
      schema: {
        tags: ['admin'],
        summary: 'Sign in to the admin panel: sets the admin session cookie.',
        description:
          'Form or JSON `{username, password}`. An admin account gets the `hcs_admin` cookie (HttpOnly, SameSite=Strict, path /: the panel’s Socket.IO connections carry it too) and, from a browser, a redirect (303) to the panel; an account that is not an administrator 403. Failures count against the login rate limiter (429).',
        security: [],
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: Type.Object({ username: Type.String(), password: Type.String(), next: Type.Optional(Type.String()) }),
        response: { 200: LoginAnswer, 303: Type.Null(), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const fields = formFields(request);
      const next = nextPath(fields.next);
      const caller = callerOf(request, () => undefined);
      try {
        const issued = (await hub.operations.invoke(hub.ops.auth.login.name, { json: { username: fields.username, password: fields.password } }, caller)) as {
          accessToken: string;
          expiresIn: number;
          scope: string;
        };
        if (issued.scope !== 'os_api_admin') {
          // Signed in, but not as an admin: the token is given back at once, never handed out.
          await hub.operations.invoke(hub.ops.auth.logout.name, {}, { ...caller, credential: { token: issued.accessToken } });
          throw errors.ROLE_REQUIRED({ roles: 'admin' });
        }
        reply.setCookie(ADMIN_COOKIE, issued.accessToken, { httpOnly: true, sameSite: 'strict', path: '/', maxAge: issued.expiresIn });
        if (wantsHtml(request)) return reply.redirect(next, 303);
        return { ok: true as const, username: String(fields.username), expiresIn: issued.expiresIn, csrfToken: csrfTokenFor(issued.accessToken) };
      } catch (err) {
        if (!wantsHtml(request) || !(err instanceof DomainError) || err.kind === 'internal') throw err;
        const status = { rate_limited: 429, invalid: 400, forbidden: 403 }[err.kind as string] ?? 401;
        request.failureCode = err.code;
        if (err.retryAfterSeconds) reply.header('retry-after', String(err.retryAfterSeconds));
        const message = err.kind === 'forbidden' ? 'This account is not an administrator.' : err.message;
        return reply.code(status).type('text/html; charset=utf-8').send(loginPage(next, message));
      }
    },
  );

  app.post(
    '/logout',
    {
      config: { access: 'authenticated' },
      validatorCompiler: () => () => true,
      schema: {
        tags: ['admin'],
        summary: 'Sign out of the admin panel: revokes the session and clears its cookie.',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        response: { 200: Type.Object({ ok: Type.Literal(true) }), 303: Type.Null(), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request, reply) => {
      await hub.operations.invoke(hub.ops.auth.logout.name, {}, callerOf(request, adminCredential));
      reply.clearCookie(ADMIN_COOKIE, { path: '/' });
      if (wantsHtml(request)) return reply.redirect('/admin/login', 303);
      return { ok: true as const };
    },
  );
}
