import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Hub } from '../../../hub.js';
import { DomainError } from '../../../platform/errors.js';
import { callerOf, SESSION_COOKIE } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { formFields } from '../web/forms.js';
import { html, page } from '../web/html.js';
import { HOME_AREA, householdCredential } from './area.js';
import { nextWithin } from '../web/pages.js';

const nextPath = (value: unknown) => nextWithin(HOME_AREA, value);

export function signInPage(next: string, problem?: string): string {
  return page({
    title: 'Sign in',
    area: 'Home',
    ...(problem ? { flash: { kind: 'error' as const, text: problem } } : {}),
    body: html`<section><form method="post" action="/os/login"><input type="hidden" name="next" value="${next}">
<label>Username <input name="username" autocomplete="username" required autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button>Sign in</button></form></section>`,
  });
}

/**
 * Signing in to the household UI: `auth.login` (the login limiter counts its failures), then the
 * App API's session cookie (HttpOnly, SameSite=Lax, path /), so the UI and the App API share it.
 */
export function householdSessionRoutes(app: FastifyInstance, hub: Hub): void {
  app.get(
    '/login',
    {
      config: { access: 'public' },
      schema: { tags: ['web-ui'], summary: 'The household sign-in page.', security: [], produces: ['text/html'], response: { 200: Type.String(), '4xx': ErrorBody } },
    },
    async (request, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(signInPage(nextPath((request.query as Record<string, unknown>).next))),
  );
  app.post(
    '/login',
    {
      config: { access: 'public' },
      validatorCompiler: () => () => true,
      schema: {
        tags: ['web-ui'],
        summary: 'Sign in to the household UI (form): sets the session cookie and goes to the page asked for.',
        security: [],
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object({ username: Type.String(), password: Type.String(), next: Type.Optional(Type.String()) }),
        response: { 303: Type.Null(), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const fields = formFields(request);
      const next = nextPath(fields.next);
      try {
        const issued = (await hub.operations.invoke(hub.ops.auth.login.name, { json: { username: fields.username, password: fields.password } }, callerOf(request, () => undefined))) as {
          accessToken: string;
          expiresIn: number;
        };
        reply.setCookie(SESSION_COOKIE, issued.accessToken, { httpOnly: true, sameSite: 'lax', path: '/', maxAge: issued.expiresIn });
        return reply.redirect(next, 303);
      } catch (err) {
        if (!(err instanceof DomainError) || err.kind === 'internal') throw err;
        request.failureCode = err.code;
        if (err.retryAfterSeconds) reply.header('retry-after', String(err.retryAfterSeconds));
        const status = { rate_limited: 429, invalid: 400, forbidden: 403 }[err.kind as string] ?? 401;
        return reply.code(status).type('text/html; charset=utf-8').send(signInPage(next, err.message));
      }
    },
  );
  app.post(
    '/logout',
    {
      config: { access: 'authenticated' },
      validatorCompiler: () => () => true,
      schema: { tags: ['web-ui'], summary: 'Sign out: ends the session.', consumes: ['application/x-www-form-urlencoded'], response: { 303: Type.Null(), '4xx': ErrorBody, '5xx': ErrorBody } },
    },
    async (request, reply) => {
      await hub.operations.invoke(hub.ops.auth.logout.name, {}, callerOf(request, householdCredential));
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return reply.redirect('/os/login', 303);
    },
  );
}
