import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { HttpsStatus } from '../../../adapters/https/https-service.js';
import type { Hub } from '../../../hub.js';
import { ErrorBody } from '../errors.js';
import { httpErrors } from '../failures.js';
import { csrfField, html, type Html } from '../web/html.js';
import { bindAreaForm, bindPage } from '../web/pages.js';
import { HOME_AREA } from './area.js';
import { CA_DOWNLOAD, HTTPS_PAGE, httpsUrlOf } from './https-notice.js';

const HTTPS_SETTINGS = '/os/https/settings';

/**
 * HTTPS for the household's browsers (docs/https.md): `/os/https` says what it gives, hands out
 * the local CA's certificate (`/os/https/ca.crt`) with the steps to trust it on each system, and
 * links to the same page over HTTPS. Plain HTTP keeps working; a browser on it gets a notice on
 * every household page (plainHttpNotice) rather than a redirect, which before the CA is trusted
 * would only show a certificate warning.
 */

const STEPS = html`<h2>Trust the hub on each device</h2>
<p>Download the certificate on the device itself, then:</p>
<details><summary>iPhone and iPad</summary><ol>
<li>Open <a href="${CA_DOWNLOAD}">the certificate</a> in Safari and allow the download of the configuration profile.</li>
<li>Settings → General → VPN &amp; Device Management: tap the profile and Install.</li>
<li>Settings → General → About → Certificate Trust Settings: turn on full trust for “Home Control Service local CA”.</li></ol></details>
<details><summary>Android</summary><ol>
<li>Download <a href="${CA_DOWNLOAD}">the certificate</a>.</li>
<li>Settings → Security → More security settings → Encryption &amp; credentials → Install a certificate → CA certificate (names differ between makers: search Settings for “CA certificate”).</li>
<li>Choose the downloaded file and confirm.</li></ol></details>
<details><summary>Mac</summary><ol>
<li>Download <a href="${CA_DOWNLOAD}">the certificate</a> and open it: Keychain Access adds it to the login keychain.</li>
<li>Double-click “Home Control Service local CA”, open Trust, and set “When using this certificate” to Always Trust.</li></ol></details>
<details><summary>Windows</summary><ol>
<li>Download <a href="${CA_DOWNLOAD}">the certificate</a> and open it, then Install Certificate.</li>
<li>Choose “Place all certificates in the following store”, Browse, “Trusted Root Certification Authorities”, and finish.</li>
<li>Restart the browser. Firefox keeps its own list: Settings → Privacy &amp; Security → Certificates → View Certificates → Authorities → Import.</li></ol></details>`;

/** For administrators: "always use HTTPS" for the web pages, offered once HTTPS serves. */
function alwaysHttpsForm(status: HttpsStatus & { alwaysHttps: boolean }, csrf: string): Html {
  if (status.state !== 'serving' && !status.alwaysHttps) return html``;
  return html`<h2>Always use HTTPS</h2>
<form method="post" action="${HTTPS_SETTINGS}" class="settings-form">${csrfField(csrf)}
<p class="muted">Once every device of the home trusts the hub, browsers that open a page over plain HTTP can be sent to HTTPS. Apps and scripts on the API are never sent anywhere, and this page and the certificate stay on plain HTTP for a new device.</p>
<label><input type="checkbox" name="alwaysHttps" value="true"${status.alwaysHttps ? html` checked` : ''}> Always use HTTPS for the web pages</label>
<p><button>Save</button></p></form>`;
}

function httpsBody(request: FastifyRequest, status: HttpsStatus): Html {
  const link = status.state === 'serving' && status.port !== null ? httpsUrlOf(request, status.port, '/os/') : undefined;
  const state =
    status.state === 'serving'
      ? request.protocol === 'https'
        ? html`<p class="ok">This page is on a secure connection.</p>`
        : html`<p>HTTPS is on: <a href="${link}">${link}</a>.</p>`
      : status.state === 'failed'
        ? html`<p class="bad">HTTPS is not serving: ${status.lastError ?? 'it failed'}. Plain HTTP goes on.</p>`
        : status.state === 'off'
          ? html`<p>HTTPS is turned off on this hub (<code>HTTPS_PORT=off</code>).</p>`
          : html`<p>HTTPS is starting.</p>`;
  const cert = status.certificate;
  return html`<p>Over HTTPS, browsers let the household app be installed, send notifications and share their position; on plain HTTP they do not. Plain HTTP keeps working.</p>
${state}
${cert?.source === 'local-ca'
  ? html`<p>The hub signs its own certificate with a certificate authority of its own, made on this hub. A device trusts the hub once it has that authority's certificate:
<a href="${CA_DOWNLOAD}" download="home-control-ca.crt">download the certificate</a>.</p>
${status.caFingerprint256 ? html`<p class="muted">Its fingerprint (SHA-256), to compare with what the device shows: <code class="fingerprint">${status.caFingerprint256}</code></p>` : ''}
${STEPS}`
  : cert?.source === 'files'
    ? html`<p>The hub uses the certificate its administrator gave it (${cert.issuer.split('\n').find((l) => l.startsWith('CN=')) ?? cert.issuer}); there is nothing to install.</p>`
    : ''}`;
}

export function httpsPage(app: FastifyInstance, hub: Hub): void {
  bindPage(app, hub, HOME_AREA, {
    url: '/https',
    title: 'Secure connection',
    summary: 'Web UI: HTTPS on this hub, the local CA to download, and the steps to trust it on iPhone, Android, Mac and Windows.',
    build: async (ctx) => {
      const status = hub.https.service.status();
      if (ctx.role !== 'admin') return httpsBody(ctx.request, status);
      const withSetting = await ctx.call<HttpsStatus & { alwaysHttps: boolean }>(hub.ops.https.status);
      return html`${httpsBody(ctx.request, status)}${alwaysHttpsForm(withSetting, ctx.csrf)}`;
    },
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/https/settings',
    summary: 'Web UI form: "always use HTTPS" for the web pages, on or off (administrators).',
    operation: hub.ops.https.settings,
    input: (f) => ({ json: { alwaysHttps: f.alwaysHttps === 'true' } }),
    back: () => HTTPS_PAGE,
    done: (r) => ((r as { alwaysHttps: boolean }).alwaysHttps ? 'Browsers on plain HTTP now go to HTTPS.' : 'Plain HTTP pages stay on plain HTTP.'),
  });
  // Public: a CA certificate is no secret, and a phone downloads it before it signs in anywhere.
  app.get(
    '/https/ca.crt',
    {
      config: { access: 'public' },
      schema: {
        tags: [HOME_AREA.tag],
        summary: "The local CA's certificate (PEM), to install on a device so that it trusts the hub's HTTPS.",
        produces: ['application/x-x509-ca-cert'],
        response: { 200: { type: 'string', description: 'The certificate, PEM.' }, '4xx': ErrorBody },
      },
    },
    async (_request, reply) => {
      const status = hub.https.service.status();
      if (status.state === 'off' || status.certificate?.source === 'files') throw httpErrors.LOCAL_CA_UNAVAILABLE();
      const pem = await hub.https.service.caCertificatePem();
      return reply.type('application/x-x509-ca-cert').header('content-disposition', 'attachment; filename="home-control-ca.crt"').header('cache-control', 'no-cache').send(pem);
    },
  );
}
