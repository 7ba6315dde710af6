import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { Hub } from '../../../../hub.js';
import type { MqttStatusSchema } from '../../../../domain/mqtt/operations.js';
import { text } from '../../web/forms.js';
import { csrfField, html } from '../../web/html.js';
import { adminForm, bindPage } from '../panel-kit.js';

type MqttStatus = Static<typeof MqttStatusSchema>;

const BACK = '/admin/panel/mqtt';
const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const when = (ms: number | null | undefined) => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) : '—');

/** MQTT: the link to the broker, what discovery imported, the configs it rejected and why, and the embedded broker's users. */
export function mqttPage(app: FastifyInstance, hub: Hub): void {
  const { mqtt } = hub.ops;
  bindPage(app, hub, {
    url: '/panel/mqtt',
    title: 'MQTT',
    summary: 'Admin panel: the MQTT link, imported devices, rejected discovery configs and the embedded broker\'s users.',
    async build({ call, csrf }) {
      const s = await call<MqttStatus>(mqtt.status);
      if (!s.enabled) {
        return html`<p>MQTT is off. Set <code>MQTT_URL</code> to your broker (<code>mqtt://user:pass@host:1883</code>) or to <code>embedded</code> for the hub's own broker, and restart the hub. The hub's docs/mqtt.md says how to point Zigbee2MQTT, Tasmota and ESPHome at it.</p>`;
      }
      const c = s.connection;
      const users = s.mode === 'embedded' ? (await call<{ users: Array<{ username: string; createdAt: number }> }>(mqtt.listUsers)).users : [];
      const d = s.discovery;
      return html`
<section aria-labelledby="link"><h2 id="link">Connection</h2>
<dl>
<dt>Broker</dt><dd>${s.broker ?? '—'}${s.embedded ? html` · ${s.embedded.clients} client${s.embedded.clients === 1 ? '' : 's'} connected` : ''}</dd>
<dt>State</dt><dd data-connected="${String(c?.connected ?? false)}">${
        s.role === 'standby'
          ? `Standing by: ${s.holder ?? 'another instance'} runs the MQTT link for the cluster`
          : c?.connected
            ? `Connected since ${when(c.since)}`
            : `Not connected${c?.lastError ? `: ${c.lastError}` : ''}${c?.nextAttemptAt ? ` (next try ${when(c.nextAttemptAt)})` : ''}`
      }</dd>
${s.embedded?.error ? html`<dt>Embedded broker</dt><dd role="alert">${s.embedded.error}</dd>` : ''}
<dt>Reconnects</dt><dd>${String(c?.reconnects ?? 0)}</dd>
<dt>Exposed devices</dt><dd>${s.exposure.enabled ? `${s.exposure.devices} under ${s.exposure.baseTopic}/…` : 'Off (MQTT_EXPOSE=on publishes the hub\'s devices)'}</dd>
</dl></section>
<section aria-labelledby="found"><h2 id="found">Discovered</h2>
<p>${count(d?.devices ?? 0, 'hub device')} (${count(d?.entities ?? 0, 'entity', 'entities')}, ${count(d?.buttons ?? 0, 'button')}) from ${count(d?.physicalDevices.length ?? 0, 'physical device')} under <code>${d?.prefix ?? ''}/</code>; ${count(d?.messages ?? 0, 'message')} read, ${String(d?.dropped ?? 0)} dropped as too large, ${String(d?.unreadable ?? 0)} unreadable; ${count(d?.disabled ?? 0, 'entity', 'entities')} left out as disabled by their integration.</p>
${
  d && d.physicalDevices.length > 0
    ? html`<table><thead><tr><th scope="col">Device</th><th scope="col">Maker and model</th><th scope="col">Hub devices</th></tr></thead><tbody>${d.physicalDevices.map(
        (p) => html`<tr><td>${p.name ?? p.key}</td><td>${[p.manufacturer, p.model].filter(Boolean).join(' ') || '—'}</td><td>${String(p.entities.length)}</td></tr>`,
      )}</tbody></table>`
    : ''
}</section>
<section aria-labelledby="rejected"><h2 id="rejected">Rejected configs</h2>
${
  s.rejected.length === 0
    ? html`<p class="muted">None.</p>`
    : html`<table><thead><tr><th scope="col">Topic</th><th scope="col">Why</th><th scope="col">When</th></tr></thead><tbody>${s.rejected.map(
        (r) => html`<tr data-rejected="${r.topic}"><td><code>${r.topic}</code></td><td>${r.reason}</td><td>${when(r.at)}</td></tr>`,
      )}</tbody></table>`
}</section>
${
  s.mode === 'embedded'
    ? html`<section aria-labelledby="users"><h2 id="users">Broker users</h2>
<p class="muted">Devices and dashboards sign in to the hub's broker with these (port ${String(s.embedded?.port ?? '')}).</p>
${users.length === 0 ? html`<p class="muted">None yet: no device can connect until you add one.</p>` : ''}
<ul>${users.map(
        (u) => html`<li data-mqtt-user="${u.username}">${u.username} <small class="muted">since ${when(u.createdAt)}</small>
<form method="post" action="/admin/panel/mqtt/users/${u.username}/remove" style="display:inline">${csrfField(csrf)}<button class="secondary" aria-label="Remove ${u.username}">Remove</button></form></li>`,
      )}</ul>
<form method="post" action="/admin/panel/mqtt/users">${csrfField(csrf)}
<label>Username <input name="username" required maxlength="64" pattern="[A-Za-z0-9._@-]+" autocomplete="off"></label>
<label>Password <input name="password" type="password" required minlength="8" maxlength="200" autocomplete="new-password"></label>
<button>Add user</button></form></section>`
    : ''
}`;
    },
  });
  adminForm(app, hub, {
    url: '/panel/mqtt/users',
    summary: 'Admin panel form: add a user of the embedded MQTT broker.',
    operation: mqtt.createUser,
    input: (f) => ({ json: { username: text(f, 'username') ?? '', password: text(f, 'password') ?? '' } }),
    back: () => BACK,
    done: (r) => `MQTT user ${(r as { username: string }).username} added.`,
  });
  adminForm(app, hub, {
    url: '/panel/mqtt/users/:username/remove',
    summary: 'Admin panel form: remove a user of the embedded MQTT broker.',
    operation: mqtt.removeUser,
    input: (_f, p) => ({ json: {}, text: { params: { username: p.username } } }),
    back: () => BACK,
    done: (r) => `MQTT user ${(r as { username: string }).username} removed.`,
  });
}
