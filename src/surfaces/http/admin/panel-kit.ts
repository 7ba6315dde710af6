import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Hub } from '../../../hub.js';
import { DomainError } from '../../../platform/errors.js';
import type { CallInput, Operation } from '../../../platform/operations.js';
import { ADMIN_COOKIE, callerOf } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { csrfTokenFor } from '../web/csrf.js';
import { bindForm, wantsHtml, type FormAction } from '../web/forms.js';
import { flashOf, html, page, type Html } from '../web/html.js';
import { adminCredential } from './credential.js';

export const PANEL_NAV = [
  { href: '/admin/', label: 'System' },
  { href: '/admin/panel/users', label: 'Users' },
  { href: '/admin/panel/drivers', label: 'Drivers' },
  { href: '/admin/panel/ir', label: 'IR devices' },
  { href: '/admin/panel/logs', label: 'Logs' },
  { href: '/admin/panel/backups', label: 'Backups' },
];

/** What a page's builder gets: the operations under the signed-in admin's credential, and the page's CSRF token. */
export interface PageContext {
  request: FastifyRequest;
  call<T = unknown>(operation: Operation, input?: CallInput | Record<string, unknown>): Promise<T>;
  csrf: string;
  username: string;
}

function asCallInput(input: CallInput | Record<string, unknown> | undefined): CallInput {
  if (!input) return { json: {} };
  if ('json' in input || 'text' in input) return input as CallInput;
  return { json: input };
}

/** The CSRF token of the request's session; a bearer-only API client has no session and needs none. */
export function sessionCsrf(request: FastifyRequest): string {
  const session = request.cookies?.[ADMIN_COOKIE];
  return session ? csrfTokenFor(session) : '';
}

export interface PageRoute {
  url: string;
  title: string;
  summary: string;
  build(ctx: PageContext): Promise<Html>;
  script?: string;
}

/**
 * An admin panel page: signed in as an admin (the registry checks the session through `auth.me`
 * under the admin credential, which admits only admin accounts), else a browser is sent to the
 * sign-in page (303) and an API client gets the CONTRACT error (401/403).
 */
export function bindPage(app: FastifyInstance, hub: Hub, route: PageRoute): void {
  app.get(
    route.url,
    {
      config: { access: 'authenticated' },
      schema: {
        tags: ['admin'],
        summary: route.summary,
        produces: ['text/html'],
        querystring: Type.Object({ done: Type.Optional(Type.String()), error: Type.Optional(Type.String()) }, { additionalProperties: true }),
        response: { 200: Type.String({ description: 'HTML page.' }), 303: Type.Null({ description: 'To the sign-in page.' }), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const caller = callerOf(request, adminCredential);
      let me: { username: string };
      try {
        me = (await hub.operations.invoke(hub.ops.auth.me.name, {}, caller)) as { username: string };
      } catch (err) {
        if (wantsHtml(request) && err instanceof DomainError && err.kind === 'unauthenticated') {
          return reply.redirect(`/admin/login?next=${encodeURIComponent(request.url)}`, 303);
        }
        if (wantsHtml(request) && err instanceof DomainError && err.kind === 'forbidden') {
          request.failureCode = err.code;
          return reply
            .code(403)
            .type('text/html; charset=utf-8')
            .send(page({ title: 'Administrators only', area: 'Admin', body: html`<p>This account is not an administrator. <a href="/admin/login">Sign in as one</a>.</p>` }));
        }
        throw err;
      }
      const csrf = sessionCsrf(request);
      const ctx: PageContext = {
        request,
        csrf,
        username: me.username,
        call: async <T>(operation: Operation, input?: CallInput | Record<string, unknown>) => (await hub.operations.invoke(operation.name, asCallInput(input), caller)) as T,
      };
      const body = await route.build(ctx);
      const flash = flashOf(request.query);
      reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
      return page({
        title: route.title,
        area: 'Admin',
        nav: [...PANEL_NAV],
        current: route.url,
        csrf,
        ...(flash ? { flash } : {}),
        body: html`${body}<form method="post" action="/admin/logout" class="row"><input type="hidden" name="_csrf" value="${csrf}"><span class="muted">Signed in as ${me.username}</span><button class="secondary">Sign out</button></form>`,
        ...(route.script ? { script: route.script } : {}),
      });
    },
  );
}

/** A form of the admin panel (tag `admin`, the admin credential). */
export function adminForm(app: FastifyInstance, hub: Hub, action: FormAction): void {
  bindForm(app, hub.operations, adminCredential, ['admin'], action);
}
