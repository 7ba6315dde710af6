import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../../hub.js';
import type { CallInput } from '../../../../platform/operations.js';
import { defined, file, text, type UploadedFile } from '../../web/forms.js';
import { csrfField, html, type Html } from '../../web/html.js';
import { adminForm, adminSecretForm, bindPage } from '../panel-kit.js';

interface PropertySchema {
  type: 'string' | 'number' | 'integer' | 'boolean';
  title?: string;
  description?: string;
  default?: string | number | boolean;
  required?: boolean;
  secret?: boolean;
  enum?: Array<string | number>;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

interface LocalDriver {
  driverKey: string;
  name?: string;
  version?: string;
  file: string;
  driverType: string | null;
  status: string;
  pid?: number;
  restarts: number;
  lastError?: string;
  error?: string;
  missingSettings?: string[];
  recentStderr?: string[];
  properties: Record<string, PropertySchema>;
}

interface Connected {
  driverKey: string;
  instanceId: string;
  transport: string;
  connectedAt: number;
  devices: number;
  address?: string;
}

interface DriverToken {
  id: string;
  driverKey: string;
  label: string | null;
  createdBy: string | null;
  createdAt: number;
  connected: number;
}

interface InstalledPackage {
  version?: string;
  installedAt?: number;
  installLog?: string;
  previous?: { version?: string };
}

const BACK = '/admin/panel/drivers';

/** One input per setup property, typed from the manifest. */
function propertyField(key: string, name: string, schema: PropertySchema, value: unknown): Html {
  const id = `setting-${key}-${name}`;
  const label = schema.title ?? name;
  const help = schema.description ? html`<small class="muted">${schema.description}</small>` : '';
  const current = value ?? schema.default;
  if (schema.type === 'boolean') {
    return html`<label for="${id}"><input type="hidden" name="${name}" value="false"><input id="${id}" type="checkbox" name="${name}" value="true"${current === true ? html` checked` : ''}> ${label}</label>${help}`;
  }
  if (schema.enum) {
    return html`<label for="${id}">${label}${schema.required ? ' *' : ''}</label><select id="${id}" name="${name}"><option value="">(none)</option>${schema.enum.map(
      (o) => html`<option${String(o) === String(current ?? '') ? html` selected` : ''}>${String(o)}</option>`,
    )}</select>${help}`;
  }
  const type = schema.secret ? 'password' : schema.type === 'string' ? 'text' : 'number';
  return html`<label for="${id}">${label}${schema.required ? ' *' : ''}</label><input id="${id}" name="${name}" type="${type}"${schema.type === 'number' ? html` step="any"` : ''}${
    schema.minimum !== undefined ? html` min="${schema.minimum}"` : ''
  }${schema.maximum !== undefined ? html` max="${schema.maximum}"` : ''}${schema.maxLength !== undefined ? html` maxlength="${schema.maxLength}"` : ''}${schema.required ? html` required` : ''} value="${
    current === undefined || current === null ? '' : String(current)
  }" autocomplete="off">${help}`;
}

/** Form text back into the manifest's types: the settings operation validates them. */
function settingsValues(properties: Record<string, PropertySchema>, fields: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const raw = fields[name];
    const last = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (last === undefined || last === '') continue;
    if (schema.type === 'boolean') values[name] = last === 'true' || last === true;
    else if (schema.type === 'number' || schema.type === 'integer') values[name] = Number.isFinite(Number(last)) ? Number(last) : last;
    else values[name] = last;
  }
  return values;
}

/** The upload's files as the install operation takes them: one archive, or loose files by their names. */
function uploadInput(fields: Record<string, unknown>): CallInput {
  const archive = file(fields, 'package');
  const loose = ['manifest', 'driver', 'dependencies'].map((name) => file(fields, name)).filter((f): f is UploadedFile => f !== undefined);
  if (archive && loose.length === 0) return { json: { archive: archive.data.toString('base64') } };
  if (!archive && loose.length > 0) return { json: { files: loose.map((f) => ({ path: path.posix.basename(f.filename.replace(/\\/g, '/')) || 'unnamed', content: f.data.toString('base64') })) } };
  // Neither or both: the operation names the problem.
  return { json: archive ? { archive: archive.data.toString('base64'), files: [] } : {} };
}

/** Local drivers: status, restarts, stderr, manifest errors, setup values, upload, rollback, removal. */
export function driversPage(app: FastifyInstance, hub: Hub): void {
  const { drivers, driverTokens } = hub.ops;
  bindPage(app, hub, {
    url: '/panel/drivers',
    title: 'Drivers',
    summary: 'Admin panel: local drivers and connected driver instances; upload, settings, restart, rollback, removal; driver tokens.',
    async build({ call, csrf }) {
      const { connected, local } = await call<{ connected: Connected[]; local: LocalDriver[] }>(drivers.list);
      const { tokens } = await call<{ tokens: DriverToken[] }>(driverTokens.list);
      const { devices: all } = await call<{ devices: Array<{ id: string; name: string; driverKey: string; online: boolean }> }>(hub.ops.devices.list);
      const cards: Html[] = [];
      for (const d of local) {
        const settings =
          d.status === 'invalid' ? undefined : await call<{ values: Record<string, unknown> }>(drivers.getSettings, { text: { params: { driverKey: d.driverKey } } });
        const pkg = d.status === 'invalid' ? undefined : await call<InstalledPackage>(drivers.describePackage, { text: { params: { driverKey: d.driverKey } } });
        const props = Object.entries(d.properties);
        cards.push(html`<section class="card" data-driver="${d.driverKey}" aria-labelledby="drv-${d.driverKey}">
<h2 id="drv-${d.driverKey}">${d.name ?? d.driverKey} <span class="badge ${d.status}">${d.status}</span></h2>
<p class="muted">${d.driverKey}${d.version ? ` ${d.version}` : ''} · ${d.driverType ?? 'unknown type'} · ${d.file}${d.pid ? ` · pid ${d.pid}` : ''} · ${d.restarts} restarts</p>
${d.error ? html`<p class="flash error">Manifest error: ${d.error}</p>` : ''}
${(() => {
  const mine = all.filter((x) => x.driverKey === d.driverKey);
  return mine.length === 0
    ? html`<p class="muted">No devices reported.</p>`
    : html`<p>Devices: ${mine.map((x, i) => html`${i > 0 ? ', ' : ''}<span class="device">${x.name}</span> <span class="badge ${x.online ? 'online' : 'offline'}">${x.online ? 'online' : 'offline'}</span>`)}</p>`;
})()}
${d.lastError ? html`<p>Last error: ${d.lastError}</p>` : ''}
${d.missingSettings?.length ? html`<p class="flash error">Waiting for settings: ${d.missingSettings.join(', ')}</p>` : ''}
${d.recentStderr?.length ? html`<details><summary>Last stderr lines (${d.recentStderr.length})</summary><pre>${d.recentStderr.join('\n')}</pre></details>` : ''}
${pkg?.installLog ? html`<details><summary>Install log</summary><pre>${pkg.installLog}</pre></details>` : ''}
${
  props.length > 0 && settings
    ? html`<form method="post" action="/admin/panel/drivers/${d.driverKey}/settings">${csrfField(csrf)}<fieldset><legend>Setup</legend>${props.map(([name, schema]) =>
        propertyField(d.driverKey, name, schema, settings.values[name]),
      )}</fieldset><button>Save and restart</button></form>`
    : ''
}
<div class="row" style="display:flex;gap:.5rem;flex-wrap:wrap;margin-top:.5rem">
${d.status !== 'invalid' ? html`<form method="post" action="/admin/panel/drivers/${d.driverKey}/restart">${csrfField(csrf)}<button class="secondary">Restart</button></form>` : ''}
${pkg?.previous ? html`<form method="post" action="/admin/panel/drivers/${d.driverKey}/rollback">${csrfField(csrf)}<button class="secondary">Roll back to ${pkg.previous.version ?? 'the previous version'}</button></form>` : ''}
<form method="post" action="/admin/panel/drivers/${d.driverKey}/remove">${csrfField(csrf)}<button class="danger" aria-label="Remove ${d.driverKey}">Remove</button></form></div>
</section>`);
      }
      return html`
<section aria-labelledby="upload"><h2 id="upload">Install or update a driver</h2>
<form method="post" action="/admin/panel/drivers/upload" enctype="multipart/form-data">${csrfField(csrf)}
<p class="muted">One <code>.zip</code> or <code>.tar.gz</code> package, or a manifest (<code>*.driver.json</code>) with its driver file (and <code>package.json</code> or <code>requirements.txt</code>).</p>
<label>Package archive <input type="file" name="package" accept=".zip,.tar.gz,.tgz,application/zip,application/gzip"></label>
<label>Manifest <input type="file" name="manifest" accept=".json,application/json"></label>
<label>Driver file <input type="file" name="driver" accept=".js,.py,.lua"></label>
<label>Dependencies (package.json or requirements.txt) <input type="file" name="dependencies" accept=".json,.txt"></label>
<button>Upload and install</button></form></section>
<h2>Local drivers</h2>${cards.length === 0 ? html`<p class="muted">None yet.</p>` : cards}
<section aria-labelledby="connected"><h2 id="connected">Connected driver instances</h2><div class="scroll" tabindex="0"><table><thead><tr><th>Driver</th><th>Instance</th><th>Transport</th><th>Devices</th><th>Since</th></tr></thead><tbody>
${connected.map((c) => html`<tr><td>${c.driverKey}</td><td>${c.instanceId}</td><td>${c.transport}${c.address ? ` from ${c.address}` : ''}</td><td>${c.devices}</td><td>${new Date(c.connectedAt).toISOString()}</td></tr>`)}
</tbody></table></div></section>
<section aria-labelledby="driver-tokens"><h2 id="driver-tokens">Driver tokens</h2>
<p class="muted">${
        hub.config.driverAuth === 'token'
          ? 'DRIVER_AUTH=token: a WebSocket driver registers only with a token issued here for its driverKey (as "token" in driver.register, or Authorization: Bearer on the upgrade).'
          : 'DRIVER_AUTH=open: any WebSocket driver may register, and tokens are not checked. Issue them here before switching to DRIVER_AUTH=token.'
      } The token is shown once, when it is created; the hub keeps only its hash.</p>
<form method="post" action="/admin/panel/driver-tokens/create" class="row">${csrfField(csrf)}
<label>driverKey <input name="driverKey" required maxlength="100" autocomplete="off"></label>
<label>Label <input name="label" maxlength="200" autocomplete="off"></label><button>Create token</button></form>
${
  tokens.length === 0
    ? html`<p class="muted">No driver tokens.</p>`
    : html`<div class="scroll" tabindex="0"><table><thead><tr><th>driverKey</th><th>Label</th><th>Created</th><th>Connected now</th><th></th></tr></thead><tbody>
${tokens.map(
  (t) => html`<tr data-driver-token="${t.id}"><td>${t.driverKey}</td><td>${t.label ?? ''}</td><td>${new Date(t.createdAt).toISOString()}${t.createdBy ? ` by ${t.createdBy}` : ''}</td><td>${t.connected}</td>
<td><form method="post" action="/admin/panel/driver-tokens/${t.id}/revoke">${csrfField(csrf)}<button class="danger" aria-label="Revoke the token of ${t.driverKey}${t.label ? ` (${t.label})` : ''}">Revoke</button></form></td></tr>`,
)}</tbody></table></div>`
}</section>`;
    },
  });

  adminForm(app, hub, {
    url: '/panel/drivers/upload',
    summary: 'Admin panel form: upload a driver package (multipart: `package`, or `manifest` + `driver` [+ `dependencies`]).',
    consumes: ['multipart/form-data'],
    operation: drivers.install,
    input: uploadInput,
    back: () => BACK,
    done: (r) => {
      const d = r as { driverKey: string; version?: string; status: string };
      return `Driver ${d.driverKey}${d.version ? ` ${d.version}` : ''} installed (${d.status}).`;
    },
  });
  adminForm(app, hub, {
    url: '/panel/drivers/:driverKey/settings',
    summary: "Admin panel form: a local driver's setup values (the driver restarts).",
    operation: drivers.updateSettings,
    input: (f, p) => {
      const props = hub.localDrivers.list().find((d) => d.driverKey === p.driverKey)?.properties ?? {};
      return { json: { values: settingsValues(props as Record<string, PropertySchema>, f) }, text: { params: { driverKey: p.driverKey } } };
    },
    back: () => BACK,
    done: () => 'Settings saved; the driver restarted.',
  });
  for (const [action, operation, sentence] of [
    ['restart', drivers.restart, 'restarted'],
    ['rollback', drivers.rollback, 'rolled back'],
    ['remove', drivers.remove, 'removed (a rollback restores it)'],
  ] as const) {
    adminForm(app, hub, {
      url: `/panel/drivers/:driverKey/${action}`,
      summary: `Admin panel form: ${action} a local driver.`,
      operation,
      input: (_f, p) => ({ json: {}, text: { params: { driverKey: p.driverKey } } }),
      back: () => BACK,
      done: (r) => `Driver ${(r as { driverKey: string }).driverKey} ${sentence}.`,
    });
  }
  adminSecretForm(app, hub, {
    url: '/panel/driver-tokens/create',
    summary: 'Admin panel form: issue a driver token for a driverKey (shown once, on the page this form answers with).',
    operation: driverTokens.create,
    input: (f) => ({ json: defined({ driverKey: text(f, 'driverKey'), label: text(f, 'label') }) }),
    back: () => BACK,
    backLabel: 'Back to the drivers',
    reveal: (r) => {
      const t = r as { driverKey: string; label?: string | null; token: string };
      return {
        title: 'New driver token',
        noun: 'the token',
        secret: t.token,
        about: html`<p>Token for <strong>${t.driverKey}</strong>${t.label ? html` (${t.label})` : ''}. Copy it into the driver's configuration: it sends it as <code>token</code> in <code>driver.register</code>, or as <code>Authorization: Bearer</code> on the WebSocket upgrade.</p>`,
      };
    },
  });
  adminForm(app, hub, {
    url: '/panel/driver-tokens/:id/revoke',
    summary: 'Admin panel form: revoke a driver token (instances connected with it are closed).',
    operation: driverTokens.revoke,
    input: (_f, p) => ({ json: {}, text: { params: { id: p.id } } }),
    back: () => BACK,
    done: (r) => {
      const t = r as { driverKey: string; disconnected: number };
      return `Token for ${t.driverKey} revoked${t.disconnected > 0 ? `; ${t.disconnected} connected instance${t.disconnected === 1 ? '' : 's'} closed` : ''}.`;
    },
  });
}
