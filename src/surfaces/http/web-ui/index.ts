import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import { DomainError } from '../../../platform/errors.js';
import { callerOf, requestCredential } from '../credentials.js';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Home Control</title>
<style>body{font:16px system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}
input,button{font:inherit;padding:.4rem;margin:.2rem 0;display:block}.err{color:#b00}</style></head>
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
      return page(
        'Overview',
        `<h1>Home Control</h1><p>Signed in as <b>${escape(principal.username)}</b>.</p>
<ul><li>Status: ${hub.readiness.ready ? 'ready' : `starting (${escape(hub.readiness.waitingFor.join(', '))})`}</li>
<li><a href="/docs">API reference</a> · <a href="/openapi.json">OpenAPI document</a></li></ul>
<button onclick="fetch('/app/auth/logout',{method:'POST'}).then(()=>location.reload())">Sign out</button>`,
      );
    },
  );
};
