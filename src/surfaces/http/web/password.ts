import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Hub } from '../../../hub.js';
import { DomainError } from '../../../platform/errors.js';
import { callerOf } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { formFields, wantsHtml } from './forms.js';
import { html, page } from './html.js';
import { nextWithin, sessionCsrf, type WebArea } from './pages.js';

function passwordPage(area: WebArea, options: { csrf: string; next: string; forced: boolean; problem?: { field?: string; text: string } }): string {
  const fieldError = (field: string) => (options.problem?.field === field ? html`<span class="field-error" id="${field}-error">${options.problem.text}</span>` : '');
  const described = (field: string) => (options.problem?.field === field ? html` aria-invalid="true" aria-describedby="${field}-error"` : '');
  return page({
    title: 'Choose a password',
    area: area.name,
    ...(options.problem && !options.problem.field ? { flash: { kind: 'error' as const, text: options.problem.text } } : {}),
    body: html`<section>${options.forced ? html`<p>This account still has the password the hub made up when it first started. Choose your own to go on.</p>` : ''}
<form method="post" action="${area.passwordUrl}"><input type="hidden" name="_csrf" value="${options.csrf}"><input type="hidden" name="next" value="${options.next}">
<label for="currentPassword">Current password</label><input id="currentPassword" name="currentPassword" type="password" autocomplete="current-password" required${described('currentPassword')}>${fieldError('currentPassword')}
<label for="newPassword">New password (at least 8 characters)</label><input id="newPassword" name="newPassword" type="password" autocomplete="new-password" minlength="8" required${described('newPassword')}>${fieldError('newPassword')}
<label for="repeatPassword">New password again</label><input id="repeatPassword" name="repeatPassword" type="password" autocomplete="new-password" minlength="8" required${described('repeatPassword')}>${fieldError('repeatPassword')}
<p><button>Save the new password</button></p></form></section>`,
  });
}

/**
 * `<area>/password`: a person changes their own password (`auth.change_password`). A page of the
 * area sends an account that still has the hub's generated password here first (see bindPage).
 * On success the new session replaces the area's cookie and the browser goes on where it was
 * going.
 */
export function bindPasswordPage(app: FastifyInstance, hub: Hub, area: WebArea): void {
  const path = area.passwordUrl.slice(area.passwordUrl.indexOf('/', 1));
  app.get(
    path,
    {
      config: { access: 'authenticated' },
      schema: {
        tags: [area.tag],
        summary: 'Choose a new password (asked first when the account still has the generated one).',
        produces: ['text/html'],
        querystring: Type.Object({ next: Type.Optional(Type.String({ maxLength: 500 })) }),
        response: { 200: Type.String(), 303: Type.Null(), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      let me: { mustChangePassword: boolean };
      try {
        me = (await hub.operations.invoke(hub.ops.auth.me.name, {}, callerOf(request, area.credential))) as { mustChangePassword: boolean };
      } catch (err) {
        if (wantsHtml(request) && err instanceof DomainError && err.kind === 'unauthenticated') return reply.redirect(`${area.signInUrl}?next=${encodeURIComponent(area.passwordUrl)}`, 303);
        throw err;
      }
      const next = nextWithin(area, (request.query as { next?: string }).next);
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(passwordPage(area, { csrf: sessionCsrf(request, area.cookie), next, forced: me.mustChangePassword }));
    },
  );
  app.post(
    path,
    {
      config: { access: 'authenticated' },
      validatorCompiler: () => () => true,
      schema: {
        tags: [area.tag],
        summary: 'Change one\'s own password (form: currentPassword, newPassword, repeatPassword): the new session replaces the cookie.',
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object({ _csrf: Type.Optional(Type.String()) }, { additionalProperties: true }),
        response: { 204: Type.Null({ description: 'Changed (a client that does not ask for HTML; the cookie holds the new session).' }), 303: Type.Null(), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const fields = formFields(request);
      const next = nextWithin(area, fields.next);
      const csrf = sessionCsrf(request, area.cookie);
      // The page answers a browser with the form again; any other client gets the CONTRACT error.
      const browser = wantsHtml(request);
      const again = (problem: { field?: string; text: string }, code: string) => {
        request.failureCode = code;
        return reply.code(400).type('text/html; charset=utf-8').send(passwordPage(area, { csrf, next, forced: false, problem }));
      };
      if (browser && typeof fields.newPassword === 'string' && fields.newPassword !== fields.repeatPassword) {
        return again({ field: 'repeatPassword', text: 'The two new passwords differ.' }, 'PASSWORDS_DIFFER');
      }
      try {
        const issued = (await hub.operations.invoke(
          hub.ops.auth.changePassword.name,
          { json: { currentPassword: fields.currentPassword, newPassword: fields.newPassword } },
          callerOf(request, area.credential),
        )) as { accessToken: string; expiresIn: number };
        reply.setCookie(area.cookie, issued.accessToken, { httpOnly: true, sameSite: 'lax', path: '/', maxAge: issued.expiresIn });
        if (!browser) return reply.code(204).send();
        return reply.redirect(`${next}${next.includes('?') ? '&' : '?'}done=${encodeURIComponent('Your new password is saved.')}`, 303);
      } catch (err) {
        if (!browser || !(err instanceof DomainError) || err.kind !== 'invalid') throw err;
        const detail = Array.isArray(err.details) ? (err.details[0] as { field?: string; message?: string } | undefined) : undefined;
        const field = detail?.field?.replace(/^\//, '');
        return again({ ...(field === 'currentPassword' || field === 'newPassword' ? { field } : {}), text: err.message }, err.code);
      }
    },
  );
}
