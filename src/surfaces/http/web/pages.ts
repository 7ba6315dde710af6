import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Hub } from '../../../hub.js';
import { DomainError } from '../../../platform/errors.js';
import type { CallInput, Operation } from '../../../platform/operations.js';
import { callerOf, type CredentialReader } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { csrfTokenFor } from './csrf.js';
import { bindForm, wantsHtml, type FormAction } from './forms.js';
import { flashOf, html, page, type Html, type NavLink } from './html.js';

/** A web surface's pages: who signs them in, where, and what they look like. */
export interface WebArea {
  /** Banner and title part: "Admin", "Home". */
  name: string;
  /** OpenAPI tag of its routes. */
  tag: string;
  credential: CredentialReader;
  /** The session cookie (its token makes the CSRF token). */
  cookie: string;
  /** Where a browser without a session goes (`?next=` is added). */
  signInUrl: string;
  signOutUrl: string;
  /** Where a person changes their password (asked first while it is the generated one). */
  passwordUrl: string;
  nav: NavLink[];
  /** Links shown to administrators only (the household pages link to the admin panel). */
  adminNav?: NavLink[];
  /** Its web app manifest, when it can be installed as an app. */
  manifest?: string;
  /** A notice above every page of the area, when it has one for this request (the household's "not on HTTPS"). */
  notice?(request: FastifyRequest, hub: Hub): Html | undefined;
}

/** What a page's builder gets: the operations under the signed-in account's credential, and the page's CSRF token. */
export interface PageContext {
  request: FastifyRequest;
  call<T = unknown>(operation: Operation, input?: CallInput | Record<string, unknown>): Promise<T>;
  csrf: string;
  username: string;
  role: string;
}

export interface PageRoute {
  url: string;
  title: string;
  summary: string;
  build(ctx: PageContext): Promise<Html>;
  script?: string;
  /** A script file the page loads (deferred), besides or instead of `script`. */
  scriptUrl?: string;
}

function asCallInput(input: CallInput | Record<string, unknown> | undefined): CallInput {
  if (!input) return { json: {} };
  if ('json' in input || 'text' in input) return input as CallInput;
  return { json: input };
}

/**
 * Where a browser may be sent after a form of the area (`next`): a path of the area itself, with
 * an optional query, never another site (no open redirect); else the area's first page.
 */
export function nextWithin(area: Pick<WebArea, 'nav'>, value: unknown): string {
  const home = area.nav[0]?.href ?? '/';
  return typeof value === 'string' && value.startsWith(home) && /^\/[A-Za-z0-9/_-]*(\?[^\s]*)?$/.test(value) ? value : home;
}

/**
 * A part of a page that may be missing for a reason worth saying rather than failing the page
 * (the account's role does not reach it, the accessory hub is off): the failures `tolerated`
 * accepts become `{problem}`, every other one is thrown.
 */
export async function optionalPart<T>(work: () => Promise<T>, tolerated: (err: DomainError) => boolean): Promise<{ value: T } | { problem: string }> {
  try {
    return { value: await work() };
  } catch (err) {
    if (err instanceof DomainError && tolerated(err)) return { problem: err.message };
    throw err;
  }
}

/** The CSRF token of the request's session, or '' for a bearer-only client (which needs none). */
export function sessionCsrf(request: FastifyRequest, cookie: string): string {
  const session = request.cookies?.[cookie];
  return session ? csrfTokenFor(session) : '';
}

/**
 * A page of a web surface: signed in through `auth.me` under the area's credential (the registry
 * decides who is admitted), else a browser is sent to the sign-in page (303) and an API client
 * gets the CONTRACT error (401/403).
 */
export function bindPage(app: FastifyInstance, hub: Hub, area: WebArea, route: PageRoute): void {
  app.get(
    route.url,
    {
      config: { access: 'authenticated' },
      schema: {
        tags: [area.tag],
        summary: route.summary,
        produces: ['text/html'],
        querystring: Type.Object({ done: Type.Optional(Type.String()), error: Type.Optional(Type.String()) }, { additionalProperties: true }),
        response: { 200: Type.String({ description: 'HTML page.' }), 303: Type.Null({ description: 'To the sign-in page.' }), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const caller = callerOf(request, area.credential);
      let me: { username: string; role: string; mustChangePassword: boolean };
      try {
        me = (await hub.operations.invoke(hub.ops.auth.me.name, {}, caller)) as { username: string; role: string; mustChangePassword: boolean };
      } catch (err) {
        if (wantsHtml(request) && err instanceof DomainError && err.kind === 'unauthenticated') {
          return reply.redirect(`${area.signInUrl}?next=${encodeURIComponent(request.url)}`, 303);
        }
        if (wantsHtml(request) && err instanceof DomainError && err.kind === 'forbidden') {
          request.failureCode = err.code;
          return reply
            .code(403)
            .type('text/html; charset=utf-8')
            .send(page({ title: 'Not for this account', area: area.name, body: html`<p>This account may not use these pages. <a href="${area.signInUrl}">Sign in with another</a>.</p>` }));
        }
        throw err;
      }
      // The password the hub generated at first start is replaced before anything else.
      if (me.mustChangePassword && wantsHtml(request)) return reply.redirect(`${area.passwordUrl}?next=${encodeURIComponent(request.url.split('?')[0]!)}`, 303);
      const csrf = sessionCsrf(request, area.cookie);
      const ctx: PageContext = {
        request,
        csrf,
        username: me.username,
        role: me.role,
        call: async <T>(operation: Operation, input?: CallInput | Record<string, unknown>) => (await hub.operations.invoke(operation.name, asCallInput(input), caller)) as T,
      };
      const body = await route.build(ctx);
      const notice = area.notice?.(request, hub);
      const flash = flashOf(request.query);
      reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
      return page({
        title: route.title,
        area: area.name,
        nav: me.role === 'admin' && area.adminNav ? [...area.nav, ...area.adminNav] : area.nav,
        ...(area.manifest ? { manifest: area.manifest } : {}),
        current: request.routeOptions.url ?? route.url,
        csrf,
        ...(flash ? { flash } : {}),
        body: html`${notice ?? ''}${body}<form method="post" action="${area.signOutUrl}" class="row"><input type="hidden" name="_csrf" value="${csrf}"><span class="muted">Signed in as ${me.username}</span><button class="secondary">Sign out</button></form>`,
        ...(route.script ? { script: route.script } : {}),
        ...(route.scriptUrl ? { scriptUrl: route.scriptUrl } : {}),
      });
    },
  );
}

/** A form of a web surface, under its credential and tag. */
export function bindAreaForm(app: FastifyInstance, hub: Hub, area: WebArea, action: FormAction): void {
  bindForm(app, hub.operations, area.credential, [area.tag], action);
}
