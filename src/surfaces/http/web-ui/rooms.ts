import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { PendingPairing } from '../../../domain/remotes/pairing.js';
import { defined, text } from '../web/forms.js';
import { csrfField, html, type Html } from '../web/html.js';
import { bindAreaForm, bindPage } from '../web/pages.js';
import { HOME_AREA } from './area.js';
import { pairingSection } from './remotes.js';

interface Space {
  id: string;
  name: string;
}

interface ParamSchema {
  type?: string;
  title?: string;
  enum?: Array<string | number>;
  minimum?: number;
  maximum?: number;
  required?: boolean;
}

interface Device {
  id: string;
  name: string;
  commands: Array<{ name: string; label?: string; params?: Record<string, unknown> }>;
}

interface DeviceState {
  state: Record<string, unknown>;
  online: boolean;
}

interface Overview {
  spaces: Array<{ space: Space; sources: Array<{ id: string; label: string; active: boolean }>; devices: Array<{ device: Device; state: DeviceState }> }>;
  unplaced: Array<{ device: Device; state: DeviceState }>;
}

/** A command's params as inputs: the driver's JSON-Schema-like description, or a manifest's property set. */
function paramFields(deviceId: string, command: string, params: Record<string, unknown> | undefined): Html[] {
  if (!params) return [];
  const props = (params.properties && typeof params.properties === 'object' ? params.properties : params) as Record<string, ParamSchema>;
  const required = new Set(Array.isArray(params.required) ? (params.required as string[]) : []);
  return Object.entries(props)
    .filter(([, schema]) => schema && typeof schema === 'object')
    .map(([name, schema]) => {
      const id = `p-${deviceId}-${command}-${name}`;
      const label = schema.title ?? name;
      const needed = required.has(name) || schema.required === true;
      // The field's name carries the param's type, so the form comes back typed: `p.<name>:<type>`.
      const field = `p.${name}:${schema.type ?? 'string'}`;
      if (schema.enum) return html`<label for="${id}">${label}</label><select id="${id}" name="${field}">${schema.enum.map((v) => html`<option>${String(v)}</option>`)}</select>`;
      if (schema.type === 'boolean') return html`<label for="${id}"><input id="${id}" type="checkbox" name="${field}" value="true"> ${label}</label>`;
      const numeric = schema.type === 'number' || schema.type === 'integer';
      return html`<label for="${id}">${label}</label><input id="${id}" name="${field}" type="${numeric ? 'number' : 'text'}"${schema.type === 'number' ? html` step="any"` : ''}${
        schema.minimum !== undefined ? html` min="${schema.minimum}"` : ''
      }${schema.maximum !== undefined ? html` max="${schema.maximum}"` : ''}${needed ? html` required` : ''}>`;
    });
}

/** A form's `p.<name>:<type>` fields as the command's params, typed as the form said. */
function paramsOf(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(fields)) {
    if (!key.startsWith('p.') || raw === '' || raw === undefined) continue;
    const [name, type] = key.slice(2).split(':') as [string, string | undefined];
    if (type === 'boolean') out[name] = raw === 'true';
    else if ((type === 'number' || type === 'integer') && typeof raw === 'string' && Number.isFinite(Number(raw))) out[name] = Number(raw);
    else out[name] = raw;
  }
  return out;
}

const stateText = (value: unknown) => (value === null || value === undefined ? '—' : typeof value === 'object' ? JSON.stringify(value) : String(value));

function deviceCard(device: Device, view: DeviceState, csrf: string): Html {
  const state = view.state;
  return html`<article class="card" data-device="${device.id}" aria-labelledby="dev-${device.id}">
<h3 id="dev-${device.id}">${device.name} <span class="badge ${view.online ? 'online' : 'offline'}" data-online>${view.online ? 'online' : 'offline'}</span></h3>
<dl class="state">${Object.entries(state).map(([k, v]) => html`<div><dt>${k}</dt><dd data-state-key="${k}">${stateText(v)}</dd></div>`)}</dl>
${device.commands.map(
  (c) => html`<form method="post" action="/os/devices/${device.id}/command" class="row">${csrfField(csrf)}<input type="hidden" name="command" value="${c.name}">
${paramFields(device.id, c.name, c.params)}<button aria-label="${c.label ?? c.name} (${device.name})">${c.label ?? c.name}</button></form>`,
)}</article>`;
}

/** The UI's home: each room with its devices, their live state and their commands; sources to activate. */
export function roomsPage(app: FastifyInstance, hub: Hub): void {
  const { devices, home, remotes } = hub.ops;
  bindPage(app, hub, HOME_AREA, {
    url: '/',
    title: 'Rooms',
    summary: 'Web UI: rooms with their devices, live state and controls; remotes waiting to pair.',
    async build({ call, csrf }) {
      const overview = await call<Overview>(home.overview);
      const { requests } = await call<{ requests: PendingPairing[] }>(remotes.pairingList);
      const card = ({ device, state }: { device: Device; state: DeviceState }) => deviceCard(device, state, csrf);
      const sections: Html[] = overview.spaces.map(
        ({ space, sources, devices: inSpace }) => html`<section aria-labelledby="space-${space.id}" data-space="${space.id}"><h2 id="space-${space.id}">${space.name}</h2>
${sources.length > 0 ? html`<div class="row" style="display:flex;gap:.4rem;flex-wrap:wrap">${sources.map(
          (s) => html`<form method="post" action="/os/spaces/${space.id}/activate">${csrfField(csrf)}<input type="hidden" name="sourceId" value="${s.id}"><button class="${s.active ? '' : 'secondary'}" aria-pressed="${s.active ? 'true' : 'false'}">${s.label}</button></form>`,
        )}</div>` : ''}
<div class="grid">${inSpace.map(card)}</div>${inSpace.length === 0 ? html`<p class="muted">No devices here.</p>` : ''}</section>`,
      );
      if (overview.unplaced.length > 0) sections.push(html`<section aria-labelledby="space-none"><h2 id="space-none">Not in a room</h2><div class="grid">${overview.unplaced.map(card)}</div></section>`);
      return html`${requests.length > 0 ? pairingSection(requests, csrf) : ''}${sections}${sections.length === 0 ? html`<p>No devices yet.</p>` : ''}
<p class="muted" id="live" role="status" aria-live="polite"></p>`;
    },
    script: LIVE_SCRIPT,
  });

  bindAreaForm(app, hub, HOME_AREA, {
    url: '/devices/:id/command',
    summary: 'Web UI form: send a device a command (`command`, params as `p.<name>` fields).',
    operation: devices.command,
    input: (f, p) => ({ json: defined({ command: text(f, 'command'), params: paramsOf(f) }), text: { params: { id: p.id } } }),
    back: () => '/os/',
    done: (_r, f) => `${String(f.command)}: done.`,
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/spaces/:id/activate',
    summary: "Web UI form: activate one of a room's sources (`sourceId`).",
    operation: home.activateSource,
    input: (f, p) => ({ json: {}, text: { params: { id: p.id, sourceId: text(f, 'sourceId') } } }),
    back: () => '/os/',
    done: (r) => `${(r as { source: { label: string } }).source.label} is on.`,
  });
}

/**
 * Live state: the room page listens to /os/events (the session cookie goes with it) and writes
 * each change into the device's card.
 */
const LIVE_SCRIPT = `
(function () {
  if (!window.EventSource) return;
  var live = document.getElementById('live');
  var source = new EventSource('/os/events');
  source.addEventListener('ready', function () { live.textContent = 'Live: changes appear as they happen.'; });
  source.addEventListener('state', function (e) {
    var change = JSON.parse(e.data);
    var card = document.querySelector('[data-device="' + CSS.escape(change.deviceId) + '"]');
    if (!card) return;
    var list = card.querySelector('dl.state');
    Object.keys(change.changed).forEach(function (key) {
      var value = change.changed[key];
      var text = value === null || value === undefined ? '—' : typeof value === 'object' ? JSON.stringify(value) : String(value);
      var dd = card.querySelector('[data-state-key="' + CSS.escape(key) + '"]');
      if (!dd) {
        var row = document.createElement('div');
        var dt = document.createElement('dt');
        dt.textContent = key;
        dd = document.createElement('dd');
        dd.setAttribute('data-state-key', key);
        row.appendChild(dt); row.appendChild(dd); list.appendChild(row);
      }
      dd.textContent = text;
    });
  });
  source.addEventListener('online', function (e) {
    var change = JSON.parse(e.data);
    var badge = document.querySelector('[data-device="' + CSS.escape(change.deviceId) + '"] [data-online]');
    if (!badge) return;
    badge.textContent = change.online ? 'online' : 'offline';
    badge.className = 'badge ' + (change.online ? 'online' : 'offline');
  });
  source.onerror = function () { live.textContent = 'Reconnecting…'; };
})();`;
