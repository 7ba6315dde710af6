import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { PendingPairing } from '../../../domain/remotes/pairing.js';
import { defined, text } from '../web/forms.js';
import { csrfField, html, type Html } from '../web/html.js';
import { bindAreaForm, bindPage } from '../web/pages.js';
import { HOME_AREA } from './area.js';

interface Space {
  id: string;
  name: string;
}

/** Remotes waiting to pair (with the code each must match, for an admin), and the buttons that decide. */
export function pairingSection(requests: PendingPairing[], csrf: string, spaces: Space[] = []): Html {
  return html`<section aria-labelledby="pairing"><h2 id="pairing">Remotes asking to pair</h2>
${requests.length === 0 ? html`<p>None right now.</p>` : ''}
<ul>${requests.map(
    (r) => html`<li class="pairing" data-request="${r.requestId}"><b>${r.name}</b>${r.kind ? ` (${r.kind})` : ''} from ${r.clientAddress}
${r.code ? html`<div class="code">${r.code}</div>` : ''}<small>until ${r.expiresAt}</small>
<form method="post" action="/os/remotes/pairing/${r.requestId}/confirm" class="row">${csrfField(csrf)}
${spaces.length > 0 ? html`<label>Room <select name="spaceId"><option value="">(none)</option>${spaces.map((s) => html`<option value="${s.id}">${s.name}</option>`)}</select></label>` : ''}
<button>Confirm</button></form>
<form method="post" action="/os/remotes/pairing/${r.requestId}/reject">${csrfField(csrf)}<button class="secondary">Reject</button></form></li>`,
  )}</ul></section>`;
}

/** Pending remote pairings to confirm (in a room) or reject. */
export function remotesPage(app: FastifyInstance, hub: Hub): void {
  const { remotes, home } = hub.ops;
  bindPage(app, hub, HOME_AREA, {
    url: '/remotes',
    title: 'Remotes',
    summary: 'Web UI: remotes waiting to pair.',
    async build({ call, csrf }) {
      const { requests } = await call<{ requests: PendingPairing[] }>(remotes.pairingList);
      const { spaces } = await call<{ spaces: Space[] }>(home.listSpaces);
      return html`${pairingSection(requests, csrf, spaces)}<p class="muted">A remote asks from its own screen; its code shows here (to administrators) and on the remote's request. Confirm it only if you know it.</p>`;
    },
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/remotes/pairing/:requestId/confirm',
    summary: 'Web UI form: confirm a pending remote pairing (optionally into a room, `spaceId`).',
    operation: remotes.pairingConfirm,
    input: (f, p) => ({ json: defined({ spaceId: text(f, 'spaceId'), name: text(f, 'name') }), text: { params: { requestId: p.requestId } } }),
    back: () => '/os/remotes',
    done: () => 'Remote paired.',
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/remotes/pairing/:requestId/reject',
    summary: 'Web UI form: reject a pending remote pairing.',
    operation: remotes.pairingReject,
    input: (_f, p) => ({ json: {}, text: { params: { requestId: p.requestId } } }),
    back: () => '/os/remotes',
    done: () => 'Pairing rejected.',
  });
}
