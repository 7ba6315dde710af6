import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { Hub } from '../../hub.js';
import type { AdminPanelKit } from '../contract.js';
import { csrfField, html } from '../../surfaces/http/web/html.js';
import type { ZwaveStatusSchema } from './operations.js';

type ZwaveStatus = Static<typeof ZwaveStatusSchema>;
interface Settings {
  settings: Array<{ key: string; variable: string; label: string; description: string; value: string | null; setBy: 'environment' | 'admin' | null }>;
}

const BACK = '/admin/panel/zwave';

function stateText(s: ZwaveStatus): string {
  switch (s.state) {
    case 'running':
      return `Running on ${s.port ?? '?'} (home id ${s.homeId ?? '?'})`;
    case 'starting':
      return s.requirements?.state === 'installing' ? 'Installing zwave-js (the first time only)…' : `Opening ${s.port ?? 'the controller'}…`;
    case 'failed':
      return `Not running: ${s.error ?? 'the controller did not open'}. It is tried again by itself.`;
    case 'standby':
      return `Standing by: ${s.holder ?? 'another instance'} runs Z-Wave for the cluster`;
    default:
      return 'Off: set the controller port below.';
  }
}

/** A node's status in words: a dead node does not answer the controller, and its devices are offline. */
const NODE_STATUS: Record<string, string> = { alive: 'answering', awake: 'awake', asleep: 'asleep (wakes up by itself)', dead: 'dead: not answering', unknown: 'not yet known' };

/** `Node 4`, and its name when it has one of its own. */
function nodeTitle(n: ZwaveStatus['nodes'][number]): string {
  const plain = `Node ${String(n.nodeId)}`;
  return n.name && n.name !== plain ? `${plain} · ${n.name}` : plain;
}

/** The Z-Wave page: the controller port, inclusion and exclusion (the S2 PIN and DSK), and every node with its status and repairs. */
export function bindAdminPage({ bindPage, adminForm }: AdminPanelKit, app: FastifyInstance, hub: Hub): void {
  const op = (name: string) => hub.operations.get(name);
  bindPage(app, hub, {
    url: '/panel/zwave',
    title: 'Z-Wave',
    summary: 'Admin panel: the Z-Wave controller, inclusion and exclusion (with the S2 PIN), and every node with its status, interview stage and repairs.',
    async build({ call, csrf }) {
      const s = await call<ZwaveStatus>(op('zwave.status'));
      const settings = await call<Settings>(op('zwave.settings.get'));
      const port = settings.settings.find((x) => x.key === 'port');
      const portForm =
        port?.setBy === 'environment'
          ? html`<p>Controller port: <code>${port.value ?? ''}</code> <small class="muted">${port.variable} is set in the environment, which decides.</small></p>`
          : html`<form method="post" action="/admin/panel/zwave/settings" class="row">${csrfField(csrf)}<div><label for="zwave-port">Controller port</label>
<input id="zwave-port" aria-describedby="zwave-port-hint" name="port" value="${port?.value ?? ''}" placeholder="/dev/serial/by-id/… or tcp://host:port" autocomplete="off"></div>
<button>Save</button></form><p class="muted" id="zwave-port-hint"><small>A serial port (<code>/dev/serial/by-id/…</code>) or <code>tcp://host:port</code>. Empty turns Z-Wave off.</small></p>`;
      const running = s.state === 'running';
      const inclusion = !running
        ? ''
        : s.inclusion.mode === 'idle'
          ? html`<form method="post" action="/admin/panel/zwave/inclusion" style="display:inline">${csrfField(csrf)}<button>Add a device</button></form>
<form method="post" action="/admin/panel/zwave/exclusion" style="display:inline">${csrfField(csrf)}<button class="secondary">Remove a device</button></form>
${s.inclusion.last ? html`<p class="muted">Last added: node ${String(s.inclusion.last.nodeId)} (security ${s.inclusion.last.security}).</p>` : ''}`
          : html`<p role="status" data-inclusion="${s.inclusion.mode}">${s.inclusion.mode === 'including' ? 'Adding: press the button on the device (see its manual).' : 'Removing: press the button on the device.'}</p>
${
  s.inclusion.pinRequested
    ? html`<form method="post" action="/admin/panel/zwave/pin">${csrfField(csrf)}<p>The device asks for its PIN. Check that its DSK reads <strong data-dsk>xxxxx${s.inclusion.dsk ?? ''}</strong>, then type the first five digits from its label.</p>
<label for="zwave-pin">PIN</label> <input id="zwave-pin" name="pin" inputmode="numeric" pattern="[0-9]{5}" maxlength="5" required autocomplete="off"> <button>Confirm</button></form>`
    : ''
}
<form method="post" action="/admin/panel/zwave/stop">${csrfField(csrf)}<button class="secondary">Stop</button></form>`;
      const nodes = running
        ? html`<section aria-labelledby="nodes"><h2 id="nodes">Nodes</h2>
${s.nodes.length === 0 ? html`<p class="muted">No devices yet.</p>` : ''}
<ul class="plain">${s.nodes.map(
            (n) => html`<li data-node="${String(n.nodeId)}"><div style="flex:1 1 16rem"><strong>${nodeTitle(n)}</strong>${n.manufacturer ? html` <small class="muted">${n.manufacturer}</small>` : ''}
<span class="badge ${n.status === 'dead' ? 'offline' : 'online'}">${NODE_STATUS[n.status] ?? n.status}</span>
<br><small class="muted">Interview: ${n.interviewStage}</small>
<br>${n.devices.map((d) => `${d.name} (${d.deviceClass})`).join(', ') || html`<span class="muted">No devices</span>`}</div>
<div class="buttons"><form method="post" action="/admin/panel/zwave/nodes/${String(n.nodeId)}/reinterview">${csrfField(csrf)}<button class="secondary" aria-label="Interview node ${String(n.nodeId)} again">Re-interview</button></form>
<form method="post" action="/admin/panel/zwave/nodes/${String(n.nodeId)}/heal">${csrfField(csrf)}<button class="secondary" aria-label="Rebuild the routes of node ${String(n.nodeId)}">Heal</button></form>
${n.status === 'dead' ? html`<form method="post" action="/admin/panel/zwave/nodes/${String(n.nodeId)}/remove">${csrfField(csrf)}<button aria-label="Remove failed node ${String(n.nodeId)}">Remove</button></form>` : ''}</div></li>`,
          )}</ul></section>`
        : '';
      return html`<section aria-labelledby="controller"><h2 id="controller">Controller</h2>
<p data-zwave-state="${s.state}">${stateText(s)}</p>
${portForm}
${inclusion}</section>
${nodes}`;
    },
  });
  adminForm(app, hub, {
    url: '/panel/zwave/settings',
    summary: 'Admin panel form: the Z-Wave controller port (empty turns Z-Wave off).',
    operation: op('zwave.settings.set'),
    input: (f) => ({ json: { values: { port: typeof f.port === 'string' && f.port.trim() !== '' ? f.port : null } } }),
    back: () => BACK,
    done: () => 'Saved: Z-Wave uses the new port now.',
  });
  adminForm(app, hub, {
    url: '/panel/zwave/inclusion',
    summary: 'Admin panel form: start including a Z-Wave device.',
    operation: op('zwave.inclusion.start'),
    input: () => ({ json: {} }),
    back: () => BACK,
    done: () => 'Adding: press the button on the device.',
  });
  adminForm(app, hub, {
    url: '/panel/zwave/exclusion',
    summary: 'Admin panel form: start excluding a Z-Wave device.',
    operation: op('zwave.exclusion.start'),
    input: () => ({ json: {} }),
    back: () => BACK,
    done: () => 'Removing: press the button on the device.',
  });
  adminForm(app, hub, {
    url: '/panel/zwave/stop',
    summary: 'Admin panel form: stop the Z-Wave inclusion or exclusion.',
    operation: op('zwave.inclusion.stop'),
    input: () => ({ json: {} }),
    back: () => BACK,
    done: () => 'Stopped.',
  });
  adminForm(app, hub, {
    url: '/panel/zwave/pin',
    summary: 'Admin panel form: the PIN of the S2 device being included.',
    operation: op('zwave.inclusion.pin'),
    input: (f) => ({ json: { pin: f.pin } }),
    back: () => BACK,
    done: () => 'PIN sent: the device finishes joining.',
  });
  for (const [action, name, done] of [
    ['reinterview', 'zwave.nodes.reinterview', () => 'The node is interviewed again; its stage shows below.'],
    ['heal', 'zwave.nodes.heal', (r: unknown) => ((r as { ok?: boolean }).ok ? 'Its routes were rebuilt.' : 'The controller could not rebuild its routes: the node did not answer.')],
    ['remove', 'zwave.nodes.remove_failed', () => 'The failed node was removed.'],
  ] as const) {
    adminForm(app, hub, {
      url: `/panel/zwave/nodes/:nodeId/${action}`,
      summary: `Admin panel form: ${action} a Z-Wave node.`,
      operation: op(name),
      input: (_f, p) => ({ json: {}, text: { params: { nodeId: p.nodeId ?? '' } } }),
      back: () => BACK,
      done: (r) => done(r),
    });
  }
}
