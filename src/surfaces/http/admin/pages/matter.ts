import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { Hub } from '../../../../hub.js';
import type { MatterStatusSchema } from '../../../../domain/matter/operations.js';
import { csrfField, html } from '../../web/html.js';
import { qrImage } from '../../web/qr.js';
import { adminForm, bindPage } from '../panel-kit.js';

type MatterStatus = Static<typeof MatterStatusSchema>;

const BACK = '/admin/panel/matter';

/** Matter: on or off, pairing (QR code and manual code), the ecosystems paired, the devices bridged. */
export function matterPage(app: FastifyInstance, hub: Hub): void {
  const { matter } = hub.ops;
  bindPage(app, hub, {
    url: '/panel/matter',
    title: 'Matter',
    summary: 'Admin panel: the Matter bridge: turn it on, pair it (QR code), the ecosystems paired, the devices bridged.',
    async build({ call, csrf }) {
      const s = await call<MatterStatus>(matter.status);
      const toggle = html`<form method="post" action="/admin/panel/matter/settings">${csrfField(csrf)}<input type="hidden" name="enabled" value="${s.enabled ? 'false' : 'true'}"><button${s.setBy === 'environment' ? ' disabled' : ''}>${s.enabled ? 'Turn the bridge off' : 'Turn the bridge on'}</button>${s.setBy === 'environment' ? html` <small class="muted">MATTER is set in the environment, which decides.</small>` : ''}</form>`;
      const state =
        s.state === 'running'
          ? `Running on UDP port ${s.port}`
          : s.state === 'standby'
            ? `Standing by: ${s.holder ?? 'another instance'} runs the bridge for the cluster`
            : s.state === 'failed'
              ? `Not running: ${s.error ?? 'it failed to start'}`
              : s.state === 'starting'
                ? 'Starting (loading Matter takes a few seconds)'
                : 'Off';
      const pairing = s.pairing
        ? html`<section aria-labelledby="pair"><h2 id="pair">Pair</h2>
<p>In Apple Home, Google Home, Alexa or SmartThings: add a device, then scan this code or type the number.</p>
<img src="${await qrImage(s.pairing.qrPairingCode)}" width="220" height="220" alt="Matter pairing QR code; manual code ${s.pairing.manualPairingCode}" data-qr="${s.pairing.qrPairingCode}">
<p>Manual pairing code: <strong data-manual-code>${s.pairing.manualPairingCode.replace(/^(\d{4})(\d{3})(\d{4})$/, '$1-$2-$3')}</strong></p></section>`
        : '';
      return html`
<section aria-labelledby="bridge"><h2 id="bridge">Bridge</h2>
<p data-matter-state="${s.state}">${state}</p>
${toggle}</section>
${pairing}
${
  s.state === 'running'
    ? html`<section aria-labelledby="fabrics"><h2 id="fabrics">Paired ecosystems</h2>
${s.fabrics.length === 0 ? html`<p class="muted">None yet.</p>` : ''}
<ul>${s.fabrics.map(
        (f) => html`<li data-fabric="${String(f.fabricIndex)}">${f.ecosystem ?? (f.label || `Fabric ${f.fabricIndex}`)}${f.ecosystem && f.label ? html` <small class="muted">${f.label}</small>` : ''}
<form method="post" action="/admin/panel/matter/fabrics/${String(f.fabricIndex)}/remove" style="display:inline">${csrfField(csrf)}<button class="secondary" aria-label="Remove ${f.ecosystem ?? f.label}">Remove</button></form></li>`,
      )}</ul>
${s.commissioned ? html`<form method="post" action="/admin/panel/matter/commissioning">${csrfField(csrf)}<button>Open commissioning window</button> <small class="muted">Lets another ecosystem pair the bridge for 15 minutes.</small></form>` : ''}</section>
<section aria-labelledby="bridged"><h2 id="bridged">Devices on the bridge</h2>
<table><thead><tr><th scope="col">Device</th><th scope="col">Matter device type</th><th scope="col">Endpoint</th></tr></thead><tbody>${s.devices.map(
        (d) => html`<tr><td>${d.name}</td><td>${d.deviceType}</td><td>${d.endpoint === null ? '—' : String(d.endpoint)}</td></tr>`,
      )}</tbody></table>
${s.unmapped.length > 0 ? html`<p class="muted">Left out (no Matter device type for their class): ${s.unmapped.map((u) => `${u.name} (${u.deviceClass})`).join(', ')}.</p>` : ''}</section>`
    : ''
}`;
    },
  });
  adminForm(app, hub, {
    url: '/panel/matter/settings',
    summary: 'Admin panel form: turn the Matter bridge on or off.',
    operation: matter.settings,
    input: (f) => ({ json: { enabled: f.enabled === 'true' } }),
    back: () => BACK,
    done: (r) => ((r as MatterStatus).enabled ? 'The Matter bridge is starting.' : 'The Matter bridge is off.'),
  });
  adminForm(app, hub, {
    url: '/panel/matter/commissioning',
    summary: 'Admin panel form: open a Matter commissioning window.',
    operation: matter.openCommissioning,
    input: () => ({ json: {} }),
    back: () => BACK,
    done: () => 'Commissioning window open for 15 minutes: pair the bridge with the code below.',
  });
  adminForm(app, hub, {
    url: '/panel/matter/fabrics/:fabricIndex/remove',
    summary: 'Admin panel form: unpair an ecosystem from the Matter bridge.',
    operation: matter.removeFabric,
    input: (_f, p) => ({ json: {}, text: { params: { fabricIndex: p.fabricIndex } } }),
    back: () => BACK,
    done: () => 'Ecosystem removed from the bridge.',
  });
}
