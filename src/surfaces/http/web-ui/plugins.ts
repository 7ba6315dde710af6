import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Hub } from '../../../hub.js';
import { DomainError } from '../../../platform/errors.js';
import type { Operation } from '../../../platform/operations.js';
import { callerOf } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { formFields, text, wantsHtml, withFlash } from '../web/forms.js';
import { csrfField, html, page, type Html } from '../web/html.js';
import { bindAreaForm, bindPage, optionalPart, sessionCsrf } from '../web/pages.js';
import { bindHomeKitForms, homekitSection } from '../web/homekit-section.js';
import { configFromFields, fieldErrorsFromAjv, renderSchemaForm, type FieldErrors, type PluginSchemaFile } from '../web/schema-form.js';
import { HOME_AREA, householdCredential } from './area.js';
import { CLIENT_SCRIPT } from './client-assets.js';

interface Plugin {
  name: string;
  installed: boolean;
  version?: string;
  description?: string;
  enabled: boolean;
  hasConfigSchema: boolean;
  configBlocks: number;
}

interface Importable {
  accessoryId: string;
  name: string;
  characteristics: Array<{ key: string }>;
}

const configUrl = (name: string) => `/os/plugins/config?plugin=${encodeURIComponent(name)}`;

/** A part of the page the accessory hub may not offer right now (off, Homebridge starting, the registry out of reach): said in words. */
const orUnavailable = <T>(work: () => Promise<T>) => optionalPart(work, (err) => !['internal', 'unauthenticated', 'forbidden'].includes(err.kind));

function pluginRow(p: Plugin, csrf: string): Html {
  const post = (action: string, label: string, cls = 'secondary') =>
    html`<form method="post" action="/os/plugins/${action}">${csrfField(csrf)}<input type="hidden" name="pluginId" value="${p.name}"><button class="${cls}" aria-label="${label} ${p.name}">${label}</button></form>`;
  return html`<tr data-plugin="${p.name}"><td>${p.name}${p.description ? html`<br><span class="muted">${p.description}</span>` : ''}</td><td>${p.version ?? ''}</td><td>${p.enabled ? 'Enabled' : 'Disabled'}</td>
<td><div class="buttons">${p.hasConfigSchema ? html`<a href="${configUrl(p.name)}" aria-label="Configure ${p.name}">Configure${p.configBlocks === 0 ? ' (not set up yet)' : ''}</a>` : ''}
${p.enabled ? post('disable', 'Disable') : post('enable', 'Enable')}
<details><summary>Uninstall…</summary>${post('uninstall', 'Uninstall', 'danger')}</details></div></td></tr>`;
}

/**
 * Homebridge plugins, for administrators (config-ui-x is the model): the installed ones (enable,
 * disable, uninstall, configure in a form made from their config.schema.json), install by name
 * with npm's output shown as it comes, a registry search, and Homebridge's accessories to import
 * into a room.
 */
export function pluginsPage(app: FastifyInstance, hub: Hub): void {
  const { accessoryHub: ops, home } = hub.ops;
  bindPage(app, hub, HOME_AREA, {
    url: '/plugins',
    title: 'Plugins',
    summary: 'Web UI (administrators): Homebridge plugins to install, search, enable, disable, uninstall and configure; accessories to import into a room.',
    async build({ call, csrf, role, request }) {
      if (role !== 'admin') return html`<p class="muted">Only administrators manage plugins.</p>`;
      const q = (request.query as { q?: string }).q?.trim() ?? '';
      const [plugins, importable, spaces, found] = await Promise.all([
        orUnavailable(() => call<{ plugins: Plugin[] }>(ops.list)),
        orUnavailable(() => call<{ accessories: Importable[] }>(ops.importable)),
        call<{ spaces: Array<{ id: string; name: string }> }>(home.listSpaces),
        q ? orUnavailable(() => call<{ results: Array<{ name: string; version: string; description?: string }> }>(ops.search, { json: { q } })) : Promise.resolve(undefined),
      ]);
      if ('problem' in plugins) return html`<p class="flash error" role="alert">${plugins.problem}</p>`;
      const appleHome = await homekitSection(hub, { call, csrf }, '/os/plugins/homekit');
      const installed = plugins.value.plugins.filter((p) => p.installed);
      const installForm = (name: string, label: string) =>
        html`<form method="post" action="/os/plugins/install" class="row install">${csrfField(csrf)}<input type="hidden" name="pluginId" value="${name}"><button aria-label="${label}">Install</button></form>`;
      return html`${appleHome}<section aria-labelledby="installed"><h2 id="installed">Installed</h2>${installed.length === 0 ? html`<p class="muted">No plugins yet.</p>` : ''}
${installed.length > 0 ? html`<div class="scroll" tabindex="0"><table><thead><tr><th>Plugin</th><th>Version</th><th>State</th><th></th></tr></thead><tbody>${installed.map((p) => pluginRow(p, csrf))}</tbody></table></div>` : ''}</section>
<section aria-labelledby="install"><h2 id="install">Install a plugin</h2>
<form method="post" action="/os/plugins/install" class="row install">${csrfField(csrf)}<label for="install-name">Plugin name</label><input id="install-name" name="pluginId" required placeholder="homebridge-…" pattern="(@[a-z0-9._~-]+/)?homebridge-[a-z0-9._~-]+"><label for="install-version">Version (blank: the latest)</label><input id="install-version" name="version"><button>Install</button></form>
<pre id="plugin-progress" aria-live="polite" aria-label="Install progress" hidden></pre>
<form method="get" action="/os/plugins" class="row" role="search"><label for="search-q">Search the registry</label><input id="search-q" name="q" value="${q}"><button class="secondary">Search</button></form>
${found === undefined ? '' : 'problem' in found
        ? html`<p class="flash error" role="alert">Search is not available: ${found.problem}</p>`
        : found.value.results.length === 0
          ? html`<p class="muted">No plugin matches "${q}".</p>`
          : html`<ul class="plain" aria-label="Search results">${found.value.results.map(
              (r) => html`<li><span><b>${r.name}</b> ${r.version}${r.description ? html` — <span class="muted">${r.description}</span>` : ''}</span>${installForm(r.name, `Install ${r.name}`)}</li>`,
            )}</ul>`}</section>
<section aria-labelledby="import"><h2 id="import">Accessories to import</h2>
<form method="post" action="/os/plugins/import/resync">${csrfField(csrf)}<button class="secondary">Look again</button></form>${'problem' in importable
        ? html`<p class="muted">${importable.problem}</p>`
        : importable.value.accessories.length === 0
          ? html`<p class="muted">Every accessory Homebridge serves is imported.</p>`
          : html`<ul class="plain">${importable.value.accessories.map(
              (a) => html`<li data-accessory="${a.accessoryId}"><span><b>${a.name}</b> <span class="muted">(${a.characteristics.map((c) => c.key).join(', ')})</span></span>
<form method="post" action="/os/plugins/import/${a.accessoryId}" class="row">${csrfField(csrf)}<label for="room-${a.accessoryId}">Room for ${a.name}</label><select id="room-${a.accessoryId}" name="spaceId"><option value="">No room</option>${spaces.spaces.map(
                (s) => html`<option value="${s.id}">${s.name}</option>`,
              )}</select><button aria-label="Import ${a.name}">Import</button></form></li>`,
            )}</ul>`}</section>`;
    },
    scriptUrl: CLIENT_SCRIPT,
  });

  const onPlugin = (action: 'enable' | 'disable' | 'uninstall', operation: Operation, done: (name: string) => string) =>
    bindAreaForm(app, hub, HOME_AREA, {
      url: `/plugins/${action}`,
      summary: `Web UI form: ${action} a Homebridge plugin (\`pluginId\`).`,
      operation,
      input: (f) => ({ json: { pluginId: text(f, 'pluginId') } }),
      back: () => '/os/plugins',
      done: (_r, f) => done(String(f.pluginId)),
    });
  onPlugin('enable', ops.enable, (name) => `${name} is enabled; Homebridge restarted.`);
  onPlugin('disable', ops.disable, (name) => `${name} is disabled; Homebridge restarted.`);
  onPlugin('uninstall', ops.uninstall, (name) => `${name} is uninstalled.`);
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/plugins/install',
    summary: 'Web UI form: install a Homebridge plugin with npm (`pluginId`, optional `version`); npm\'s output comes on /os/events as `plugin_progress`.',
    operation: ops.install,
    input: (f) => ({ json: { pluginId: text(f, 'pluginId'), ...(text(f, 'version') ? { version: text(f, 'version') } : {}) } }),
    back: () => '/os/plugins',
    done: (_r, f) => `${String(f.pluginId)} is installed.`,
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/plugins/import/resync',
    summary: "Web UI form: read Homebridge's accessories again (a plugin just configured serves new ones).",
    operation: ops.resyncImportable,
    input: () => ({ json: {} }),
    back: () => '/os/plugins',
    done: (r) => {
      const n = (r as { accessories: unknown[] }).accessories.length;
      return n === 1 ? '1 accessory to import.' : `${n} accessories to import.`;
    },
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/plugins/import/:accessoryId',
    summary: 'Web UI form: import a Homebridge accessory as hub devices, into a room (`spaceId`) or none.',
    operation: ops.importAccessory,
    input: (f, p) => ({ json: { accessoryId: p.accessoryId, ...(text(f, 'spaceId') ? { spaceId: text(f, 'spaceId') } : {}) } }),
    back: () => '/os/plugins',
    done: (r) => `${(r as { name: string }).name} is imported.`,
  });
  bindHomeKitForms(hub, (action) => bindAreaForm(app, hub, HOME_AREA, { ...action, url: action.url.replace(/^\/os/, '') }), '/os/plugins/homekit', '/os/plugins');
  configPage(app, hub);
}

/** The configuration form of one plugin, made from its config.schema.json; the hub's check (ajv) answers at the field. */
function configPage(app: FastifyInstance, hub: Hub): void {
  const { accessoryHub: ops } = hub.ops;
  const render = (plugin: string, file: PluginSchemaFile, config: Record<string, unknown>, csrf: string, errors?: FieldErrors, problem?: string) =>
    page({
      title: `Configure ${plugin}`,
      area: HOME_AREA.name,
      nav: HOME_AREA.nav,
      csrf,
      ...(problem ? { flash: { kind: 'error' as const, text: problem } } : {}),
      body: html`<p><a href="/os/plugins">Back to the plugins</a></p><section><form method="post" action="/os/plugins/config" class="schema-form">${csrfField(csrf)}<input type="hidden" name="plugin" value="${plugin}">
${renderSchemaForm(file, config, errors ? { errors } : {})}<p><button>Save and restart Homebridge</button></p></form></section>`,
    });
  const schemaFor = async (plugin: string, caller: ReturnType<typeof callerOf>) => (await hub.operations.invoke(ops.configSchema.name, { json: { pluginId: plugin } }, caller)) as PluginSchemaFile;
  const guard = async (request: FastifyRequest, reply: FastifyReply, work: () => Promise<unknown>) => {
    try {
      return await work();
    } catch (err) {
      if (wantsHtml(request) && err instanceof DomainError && err.kind === 'unauthenticated') return reply.redirect(`${HOME_AREA.signInUrl}?next=/os/plugins`, 303);
      if (wantsHtml(request) && err instanceof DomainError && err.kind !== 'internal') return reply.redirect(withFlash('/os/plugins', 'error', err.message), 303);
      throw err;
    }
  };
  const schema = (summary: string) => ({ tags: [HOME_AREA.tag], summary, produces: ['text/html'], response: { 200: Type.String(), 303: Type.Null(), '4xx': ErrorBody, '5xx': ErrorBody } });
  app.get('/plugins/config', { config: { access: 'authenticated' }, schema: { ...schema("A plugin's configuration form, made from its config.schema.json."), querystring: Type.Object({ plugin: Type.String({ minLength: 1, maxLength: 214 }) }) } }, async (request, reply) =>
    guard(request, reply, async () => {
      const caller = callerOf(request, householdCredential);
      const plugin = (request.query as { plugin: string }).plugin;
      const [file, current] = await Promise.all([schemaFor(plugin, caller), hub.operations.invoke(ops.currentConfig.name, { json: { pluginId: plugin } }, caller) as Promise<{ config: Record<string, unknown> }>]);
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(render(plugin, file, current.config, sessionCsrf(request, HOME_AREA.cookie)));
    }),
  );
  app.post(
    '/plugins/config',
    {
      config: { access: 'authenticated' },
      validatorCompiler: () => () => true,
      schema: { ...schema("Save a plugin's configuration form (`plugin` and its `cfg.*` fields): checked against its schema, written to config.json, Homebridge restarted."), consumes: ['application/x-www-form-urlencoded'], body: Type.Object({}, { additionalProperties: true }) },
    },
    async (request, reply) =>
      guard(request, reply, async () => {
        const caller = callerOf(request, householdCredential);
        const fields = formFields(request);
        const plugin = text(fields, 'plugin') ?? '';
        const file = await schemaFor(plugin, caller);
        const config = configFromFields(file, fields);
        try {
          await hub.operations.invoke(ops.configure.name, { json: { pluginId: plugin, ...config } }, caller);
        } catch (err) {
          if (!(err instanceof DomainError) || err.code !== 'INVALID_PLUGIN_CONFIG' || !wantsHtml(request)) throw err;
          // The form again, as posted, with the hub's reason beside its field.
          request.failureCode = err.code;
          const fromDetails = Array.isArray(err.details)
            ? Object.fromEntries((err.details as Array<{ field?: string; message?: string }>).filter((d) => d.field && d.message).map((d) => [d.field!.replace(/^body\.?/, ''), d.message!]))
            : {};
          const errors = { ...fieldErrorsFromAjv(err.message), ...fromDetails };
          return reply.code(400).type('text/html; charset=utf-8').send(render(plugin, file, config, sessionCsrf(request, HOME_AREA.cookie), errors, err.message));
        }
        return reply.redirect(withFlash('/os/plugins', 'done', `${plugin} is configured; Homebridge restarted.`), 303);
      }),
  );
}
