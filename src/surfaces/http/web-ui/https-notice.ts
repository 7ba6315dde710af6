import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { HttpsStatus } from '../../../adapters/https/https-service.js';
import { wantsHtml } from '../web/forms.js';
import { html, type Html } from '../web/html.js';

/** The household's HTTPS page and the local CA's certificate (web-ui/https.ts). */
export const HTTPS_PAGE = '/os/https';
export const CA_DOWNLOAD = '/os/https/ca.crt';

/** The same address over HTTPS: the name the browser used, the HTTPS port. */
export function httpsUrlOf(request: FastifyRequest, port: number, pathname: string): string {
  let hostname = 'localhost';
  try {
    hostname = new URL(`http://${request.headers.host ?? 'localhost'}`).hostname;
  } catch {
    // A Host header that is no host: the link names localhost, which is still right on the hub.
  }
  return `https://${hostname}${port === 443 ? '' : `:${port}`}${pathname}`;
}

/** The notice a household page shows over plain HTTP while HTTPS serves. */
export function plainHttpNotice(request: FastifyRequest, status: HttpsStatus): Html | undefined {
  if (request.protocol === 'https' || status.state !== 'serving' || status.port === null) return undefined;
  const here = (request.url.split('?')[0] ?? '/os/').replace(/^\/?/, '/');
  return html`<aside class="https-notice" aria-label="Secure connection"><p><strong>This page is not on a secure connection.</strong> Over HTTPS this browser can install the app, get notifications and share its position.
<a href="${httpsUrlOf(request, status.port, here)}">Open it over HTTPS</a>${status.certificate?.source === 'local-ca' ? html` — first <a href="${HTTPS_PAGE}">let this device trust the hub</a>` : ''}.</p></aside>`;
}


/**
 * "Always use HTTPS" (`https.settings`): a web page asked for over plain HTTP goes to the same
 * page over HTTPS. Only page loads (GET and HEAD that ask for HTML); never the HTTPS page and the CA's download, so
 * that a device that does not trust the CA yet can still fetch it; never API clients.
 */
export function httpsRedirect(hub: Hub): onRequestAsyncHookHandler {
  return async (request, reply) => {
    if (request.protocol === 'https' || (request.method !== 'GET' && request.method !== 'HEAD') || !wantsHtml(request) || !hub.https.redirectsPages()) return;
    const pathname = request.url.split('?')[0] ?? '';
    if (pathname === HTTPS_PAGE || pathname === CA_DOWNLOAD) return;
    const port = hub.https.service.status().port;
    if (port === null) return;
    return reply.redirect(httpsUrlOf(request, port, request.url), 307);
  };
}
