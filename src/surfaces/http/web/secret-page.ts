import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Hub } from '../../../hub.js';
import { DomainError } from '../../../platform/errors.js';
import { callerOf } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { formFields, wantsHtml, withFlash, type FormAction } from './forms.js';
import { html, page, type Html } from './html.js';
import { sessionCsrf, type WebArea } from './pages.js';

/** What the one-time page of a new secret says. */
export interface Revealed {
  /** The page's title: "New driver token". */
  title: string;
  /** What the secret is called in a sentence: "the token", "the code". */
  noun: string;
  /** The secret itself, shown once. */
  secret: string;
  /** A sentence or two above it: what it is for, where it goes. */
  about: Html;
}

/** A form that creates a secret (a driver token, an invite code): its page shows the secret instead of a `done` message. */
export interface SecretFormAction extends Omit<FormAction, 'done' | 'doneUrl'> {
  /** The page after success, from the operation's result and the form's fields. */
  reveal(result: unknown, fields: Record<string, unknown>): Revealed;
  /** The link back (its text): "Back to the drivers". */
  backLabel: string;
}

/**
 * Copy button (progressive enhancement: without JavaScript the value is selectable text). The
 * Clipboard API needs a secure context, and the hub is often on plain HTTP, so it falls back to
 * selecting the text and `execCommand('copy')`, and says so when even that is refused.
 */
const COPY_SCRIPT = `
(function () {
  var value = document.getElementById('secret-value');
  var button = document.getElementById('secret-copy');
  var status = document.getElementById('secret-copied');
  if (!value || !button || !status) return;
  button.hidden = false;
  function select() {
    var range = document.createRange();
    range.selectNodeContents(value);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    var copied = false;
    try { copied = document.execCommand('copy'); } catch (e) { copied = false; }
    status.textContent = copied ? 'Copied.' : 'Selected: press Ctrl+C (or Command-C) to copy.';
  }
  button.addEventListener('click', function () {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(value.textContent || '').then(function () { status.textContent = 'Copied.'; }, select);
    } else select();
  });
})();
`;

/**
 * A form whose operation creates a secret that is shown once (the hub keeps only its hash). It
 * runs like `bindForm`, except that a browser is not redirected with the outcome in the query,
 * which would put the secret in the URL, the history and the logs: the POST's own answer is the
 * page that shows it (200, `Cache-Control: no-store`, `Referrer-Policy: no-referrer`), with a copy
 * button and a link back. Nothing is stored to show it again; a reload posts the form again and
 * so issues another one. A failure still redirects (303) back with `?error=` (no secret exists
 * then), and an API client gets the result as JSON, as from any form.
 */
export function bindSecretForm(app: FastifyInstance, hub: Hub, area: WebArea, action: SecretFormAction): void {
  app.route({
    method: 'POST',
    url: action.url,
    config: { access: 'authenticated' },
    validatorCompiler: () => () => true,
    schema: {
      summary: action.summary,
      description: `A form of the web panel: runs operation \`${action.operation.name}\`. A browser (Accept: text/html) gets the page that shows the new secret once (200, \`Cache-Control: no-store\`; the secret is never in a URL), or on failure is redirected (303) back to its page with \`error\` in the query; other clients get the result as JSON.`,
      tags: [area.tag],
      consumes: action.consumes ?? ['application/x-www-form-urlencoded', 'application/json'],
      produces: ['text/html', 'application/json'],
      body: Type.Object({ _csrf: Type.Optional(Type.String({ description: 'The CSRF token of the session (or header x-csrf-token).' })) }, { additionalProperties: true }),
      response: {
        200: Type.Union([Type.Object({ ok: Type.Literal(true), result: Type.Unknown() }), Type.String({ description: 'HTML page showing the secret once.' })]),
        303: Type.Null({ description: 'Back to the page, with the error.' }),
        '4xx': ErrorBody,
        '5xx': ErrorBody,
      },
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const params = (request.params ?? {}) as Record<string, string>;
      const fields = formFields(request);
      const browser = wantsHtml(request);
      const caller = callerOf(request, area.credential);
      let result: unknown;
      try {
        result = await hub.operations.invoke(action.operation.name, action.input(fields, params), caller);
      } catch (err) {
        if (!browser || !(err instanceof DomainError) || err.kind === 'unauthenticated' || err.kind === 'internal') throw err;
        request.failureCode = err.code;
        const detail = Array.isArray(err.details) && err.details.length > 0 ? ` (${(err.details as Array<{ field?: string; message?: string }>).map((d) => [d.field, d.message].filter(Boolean).join(' ')).join('; ')})` : '';
        return reply.redirect(withFlash(action.back(params, fields), 'error', `${err.message}${detail}`), 303);
      }
      if (!browser) return { ok: true as const, result };
      const me = (await hub.operations.invoke(hub.ops.auth.me.name, {}, caller)) as { username: string; role: string };
      const back = action.back(params, fields);
      const shown = action.reveal(result, fields);
      const csrf = sessionCsrf(request, area.cookie);
      const notice = area.notice?.(request, hub);
      const body = html`${notice ?? ''}<section aria-labelledby="secret-heading" data-secret-once>
<h2 id="secret-heading">Copy ${shown.noun} now</h2>
${shown.about}
<pre id="secret-value" class="fingerprint">${shown.secret}</pre>
<p class="row"><button type="button" id="secret-copy" hidden>Copy</button> <span id="secret-copied" class="muted" role="status"></span></p>
<p class="muted">This is the only time ${shown.noun} is shown: the hub keeps only its hash, and this page is not stored. Reloading it would post the form again and issue another one.</p>
<p><a href="${back}">${action.backLabel}</a></p></section>
<form method="post" action="${area.signOutUrl}" class="row"><input type="hidden" name="_csrf" value="${csrf}"><span class="muted">Signed in as ${me.username}</span><button class="secondary">Sign out</button></form>`;
      reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      return page({
        title: shown.title,
        area: area.name,
        nav: me.role === 'admin' && area.adminNav ? [...area.nav, ...area.adminNav] : area.nav,
        ...(area.manifest ? { manifest: area.manifest } : {}),
        current: back.split('?')[0]!,
        csrf,
        body,
        script: COPY_SCRIPT,
      });
    },
  });
}
