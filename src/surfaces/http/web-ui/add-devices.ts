import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import { text } from '../web/forms.js';
import { csrfField, html, type Html } from '../web/html.js';
import { bindAreaForm, bindPage } from '../web/pages.js';
import { HOME_AREA } from './area.js';
import { CLIENT_SCRIPT } from './client-assets.js';

interface Endpoint {
  id: string;
  kind: string;
  name: string;
  label: string | null;
  enabled: boolean;
  host: string;
  port: number;
  model: string | null;
  present: boolean;
  paired: boolean;
}

const KIND_WORDS: Record<string, string> = { roku: 'Roku', androidtv: 'Android TV', cast: 'Google Cast', dlna: 'Media renderer (DLNA)', bridge: 'Bridge' };

const nameOf = (e: Endpoint) => e.label ?? e.name;
const needsPairing = (e: Endpoint) => e.kind === 'androidtv' && !e.paired;

function statusOf(e: Endpoint): string {
  if (!e.enabled) return 'Not added';
  return needsPairing(e) ? 'Added; needs pairing' : 'Added';
}

/** The id of an endpoint's "Pair…" button, where focus goes back when its pairing dialog closes. */
const pairButtonId = (e: Endpoint) => `pair-start-${e.id}`;

/**
 * The pairing dialog: open while an Android TV shows its code (the page's `?pair=` says which).
 * Drawn open, so that it works without the page script; the script makes it modal
 * (`data-modal`, client/home.ts): the page behind leaves the tab order, Escape closes it, focus
 * goes back to the endpoint's "Pair…" button and the address drops `?pair=`.
 */
function pairingDialog(endpoint: Endpoint, csrf: string): Html {
  return html`<dialog open data-modal data-return-focus="${pairButtonId(endpoint)}" data-close-url="/os/add" aria-labelledby="pair-title" class="card"><h2 id="pair-title">Pair ${nameOf(endpoint)}</h2>
<p>The TV now shows a code of 6 letters and digits. Type it here.</p>
<form method="post" action="/os/add/pair/finish">${csrfField(csrf)}<input type="hidden" name="endpointId" value="${endpoint.id}">
<label for="pair-code">Code shown on the TV</label><input id="pair-code" name="code" required pattern="[0-9A-Fa-f]{6}" maxlength="6" autocomplete="off" autocapitalize="characters" autofocus>
<p class="buttons"><button>Pair</button><a href="/os/add">Cancel</a></p></form></dialog>`;
}

/**
 * Adding things, for administrators: the media endpoints discovery found (SSDP and mDNS: Rokus,
 * Android TVs, Google Cast receivers, media renderers), to add to the home or take out of it, a
 * new search, and the Android TV pairing with the code the TV shows.
 */
export function addDevicesPage(app: FastifyInstance, hub: Hub): void {
  const { media } = hub.ops;
  bindPage(app, hub, HOME_AREA, {
    url: '/add',
    title: 'Add devices',
    summary: 'Web UI (administrators): the media endpoints found on the network, to add (and pair) or take out; a new search.',
    async build({ call, csrf, role, request }) {
      if (role !== 'admin') return html`<p class="muted">Only administrators add devices.</p>`;
      const { endpoints } = await call<{ endpoints: Endpoint[] }>(media.endpoints);
      const pairing = (request.query as { pair?: string }).pair;
      const pairingWith = pairing ? endpoints.find((e) => e.id === pairing && needsPairing(e)) : undefined;
      const row = (e: Endpoint) => html`<tr data-endpoint="${e.id}"><td>${nameOf(e)}${e.model ? html`<br><span class="muted">${e.model}</span>` : ''}</td><td>${KIND_WORDS[e.kind] ?? e.kind}</td><td>${e.host}:${e.port}</td>
<td>${e.present ? 'Found in the last search' : 'Not found in the last search'}</td><td data-status>${statusOf(e)}</td><td><div class="buttons">${
        e.enabled
          ? html`${needsPairing(e)
              ? html`<form method="post" action="/os/add/pair/start" class="row">${csrfField(csrf)}<input type="hidden" name="endpointId" value="${e.id}">
<details><summary>Pairing port</summary><label for="port-${e.id}">Pairing port of ${nameOf(e)} (blank: ${e.port + 1})</label><input id="port-${e.id}" name="port" inputmode="numeric" pattern="[0-9]{1,5}"></details>
<button id="${pairButtonId(e)}" aria-label="Pair ${nameOf(e)}">Pair…</button></form>`
              : ''}<form method="post" action="/os/add/endpoints/update">${csrfField(csrf)}<input type="hidden" name="id" value="${e.id}"><input type="hidden" name="enabled" value="false"><button class="secondary" aria-label="Take ${nameOf(e)} out of the home">Take out</button></form>`
          : html`<form method="post" action="/os/add/endpoints/update">${csrfField(csrf)}<input type="hidden" name="id" value="${e.id}"><input type="hidden" name="enabled" value="true"><button aria-label="Add ${nameOf(e)}">Add</button></form>`
      }</div></td></tr>`;
      return html`${pairingWith ? pairingDialog(pairingWith, csrf) : ''}
<section aria-labelledby="search"><h2 id="search">Search the network</h2><p>Rokus, Android and Google TVs, Google Cast speakers and media renderers answer within a few seconds.</p>
<form method="post" action="/os/add/discover">${csrfField(csrf)}<button>Look for devices</button></form></section>
<section aria-labelledby="found"><h2 id="found">Found</h2>${endpoints.length === 0 ? html`<p class="muted">Nothing found yet: look for devices above.</p>` : ''}
${endpoints.length > 0 ? html`<div class="scroll" tabindex="0"><table><thead><tr><th>Name</th><th>Kind</th><th>Address</th><th>Seen</th><th>Status</th><th></th></tr></thead><tbody>${endpoints.map(row)}</tbody></table></div>` : ''}</section>`;
    },
    // The pairing dialog is made modal by the page script.
    scriptUrl: CLIENT_SCRIPT,
  });

  bindAreaForm(app, hub, HOME_AREA, {
    url: '/add/discover',
    summary: 'Web UI form: search the network for media endpoints (media.endpoints.discover).',
    operation: media.discover,
    input: () => ({ json: {} }),
    back: () => '/os/add',
    done: (r) => {
      const { found, new: fresh } = r as { found: unknown[]; new: unknown[] };
      return `Found ${found.length} (${fresh.length} new).`;
    },
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/add/endpoints/update',
    summary: 'Web UI form: add an endpoint to the home (`enabled` true) or take it out (false).',
    operation: media.updateEndpoint,
    input: (f) => ({ json: { id: text(f, 'id'), enabled: text(f, 'enabled') === 'true' } }),
    back: () => '/os/add',
    done: (r) => {
      const e = r as Endpoint;
      return e.enabled ? `${nameOf(e)} is added${needsPairing(e) ? '; pair it to control it' : ''}.` : `${nameOf(e)} is out of the home.`;
    },
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/add/pair/start',
    summary: 'Web UI form: start pairing an Android TV (`endpointId`, optional `port`); the page then asks for the code the TV shows.',
    operation: media.pairStart,
    input: (f) => ({ json: { endpointId: text(f, 'endpointId'), ...(text(f, 'port') ? { port: Number(text(f, 'port')) } : {}) } }),
    back: () => '/os/add',
    doneUrl: (r) => `/os/add?pair=${encodeURIComponent((r as { endpointId: string }).endpointId)}`,
    done: () => 'The TV shows a code now.',
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/add/pair/finish',
    summary: 'Web UI form: finish an Android TV pairing with the code it shows (`endpointId`, `code`).',
    operation: media.pairFinish,
    input: (f) => ({ json: { code: text(f, 'code'), endpointId: text(f, 'endpointId') } }),
    // A wrong code leaves the pairing open: the dialog comes back for another try.
    back: (_p, f) => `/os/add?pair=${encodeURIComponent(String(f.endpointId ?? ''))}`,
    doneUrl: '/os/add',
    done: (r) => `${nameOf((r as { endpoint: Endpoint }).endpoint)} is paired.`,
  });
}
