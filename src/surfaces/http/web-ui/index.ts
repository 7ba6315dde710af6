import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import { DomainError } from '../../../platform/errors.js';
import type { PendingPairing } from '../../../domain/remotes/pairing.js';
import { bindOperation } from '../bind-operation.js';
import { callerOf, requestCredential } from '../credentials.js';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Home Control</title>
<style>body{font:16px system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}
input,button{font:inherit;padding:.4rem;margin:.2rem 0;display:block}.err{color:#b00}
.pairing button{display:inline-block;margin-right:.5rem}.code{font:bold 1.6rem ui-monospace,monospace;letter-spacing:.2rem}</style></head>
<body>${body}</body></html>`;

const loginForm = page(
  'Sign in',
  `<h1>Home Control</h1><form id="login"><label>Username <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button>Sign in</button><p class="err" id="err"></p></form>
<script>
document.getElementById('login').addEventListener('submit', async (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  const r = await fetch('/app/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: f.get('username'), password: f.get('password') }) });
  const body = await r.json();
  if (body.status) location.reload(); else document.getElementById('err').textContent = body.message;
});
</script>`,
);

/** Remotes waiting to pair (with the code each must match, for an admin), and the buttons that decide. */
function pairingSection(requests: PendingPairing[]): string {
  const items = requests.map(
    (r) => `<li class="pairing" data-request="${escape(r.requestId)}"><b>${escape(r.name)}</b>${r.kind ? ` (${escape(r.kind)})` : ''} from ${escape(r.clientAddress)}
${r.code ? `<div class="code">${escape(r.code)}</div>` : ''}<small>until ${escape(r.expiresAt)}</small><br>
<button data-decide="confirm">Confirm</button><button data-decide="reject">Reject</button></li>`,
  );
  return `<h2>Remotes asking to pair</h2>${items.length === 0 ? '<p>None right now.</p>' : `<ul>${items.join('')}</ul>`}
<p><a href="">Refresh</a></p>
<script>
for (const button of document.querySelectorAll('[data-decide]')) button.addEventListener('click', async () => {
  const id = button.closest('[data-request]').dataset.request;
  await fetch('/os/remotes/pairing/' + encodeURIComponent(id) + '/' + button.dataset.decide,
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  location.reload();
});
</script>`;
}

/**
 * Server-rendered web UI. The session is the App API cookie: without a valid one the page is the
 * sign-in form, with one it is the hub's overview.
 */
export const webUi: FastifyPluginAsync<{ hub: Hub }> = async (app, { hub }) => {
  // The household's session: the App API cookie (a bearer header works too, for scripts).
  const sessionCredential = requestCredential({ admits: ['os_api_admin', 'app'], cookie: true });
  app.get(
    '/',
    {
      config: { access: 'public' },
      schema: {
        tags: ['web-ui'],
        summary: 'Web UI home: the overview when signed in, else the sign-in form.',
        security: [],
        produces: ['text/html'],
        response: { 200: Type.String({ description: 'HTML page.' }) },
      },
    },
    async (request, reply) => {
      reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
      let principal: { username: string };
      try {
        principal = (await hub.operations.invoke(hub.ops.auth.me.name, {}, callerOf(request, sessionCredential))) as { username: string };
      } catch (err) {
        if (err instanceof DomainError && (err.kind === 'unauthenticated' || err.kind === 'forbidden')) return loginForm;
        throw err;
      }
      const { requests } = (await hub.operations.invoke(hub.ops.remotes.pairingList.name, {}, callerOf(request, sessionCredential))) as { requests: PendingPairing[] };
      return page(
        'Overview',
        `<h1>Home Control</h1><p>Signed in as <b>${escape(principal.username)}</b>.</p>
<ul><li>Status: ${hub.readiness.ready ? 'ready' : `starting (${escape(hub.readiness.waitingFor.join(', '))})`}</li>
<li><a href="/docs">API reference</a> · <a href="/openapi.json">OpenAPI document</a></li></ul>
${pairingSection(requests)}
<button onclick="fetch('/app/auth/logout',{method:'POST'}).then(()=>location.reload())">Sign out</button>`,
      );
    },
  );

  // The page's buttons: the OS API takes no session cookie, so the same operations are bound here with the session.
  const decisions = { confirm: hub.ops.remotes.pairingConfirm, reject: hub.ops.remotes.pairingReject };
  for (const [decision, operation] of Object.entries(decisions)) {
    bindOperation(app, hub.operations, {
      method: 'POST',
      url: `/remotes/pairing/:requestId/${decision}`,
      operation,
      credential: sessionCredential,
      tags: ['web-ui'],
      operationId: `os.${operation.name}`,
    });
  }
};
