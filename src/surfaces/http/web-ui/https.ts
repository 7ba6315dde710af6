import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { HttpsStatus } from '../../../adapters/https/https-service.js';
import type { Hub } from '../../../hub.js';
import { ErrorBody } from '../errors.js';
import { httpErrors } from '../failures.js';
import { html, type Html } from '../web/html.js';
import { bindPage } from '../web/pages.js';
import { HOME_AREA } from './area.js';
import { CA_DOWNLOAD, httpsUrlOf } from './https-notice.js';

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
    build: async (ctx) => httpsBody(ctx.request, hub.https.service.status()),
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
