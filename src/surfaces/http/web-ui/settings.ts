import type { HomeSettings } from '../../../domain/home/settings.js';
import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Hub } from '../../../hub.js';
import { DomainError } from '../../../platform/errors.js';
import type { Operation } from '../../../platform/operations.js';
import { callerOf } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { formFields, num, text, wantsHtml, withFlash } from '../web/forms.js';
import { csrfField, html, page, type Html } from '../web/html.js';
import { bindAreaForm, bindPage, sessionCsrf } from '../web/pages.js';
import { HOME_AREA } from './area.js';

/**
 * The home's settings (`/os/settings`: name, location, time zone, units; members read them) and
 * the first-run onboarding (`/os/welcome`): the same questions, then the ways to bring devices
 * in, and "finish" or "skip for now" ends it (`home.settings.update` with `onboarded: true`).
 * While it is not done and the hub has no device yet, an administrator who opens the home page
 * is sent to it (`welcomeFirst`, a hook of the home page). Every form works without JavaScript;
 * a few lines of script add "Use this browser's position".
 */


const FIELDS = ['name', 'latitude', 'longitude', 'elevation', 'timezone', 'units'] as const;
type FieldName = (typeof FIELDS)[number];
/** A form's values as text: what the settings are, or what was sent. */
type Values = Record<FieldName, string>;

interface Problem {
  field?: FieldName;
  text: string;
}

const LABELS: Record<FieldName, string> = { name: 'Name', latitude: 'Latitude', longitude: 'Longitude', elevation: 'Elevation', timezone: 'Time zone', units: 'Units' };
const isField = (name: string): name is FieldName => (FIELDS as readonly string[]).includes(name);

/** An operation without input, under the household session of the request. */
const ask = async <T>(hub: Hub, request: FastifyRequest, operation: Operation) => (await hub.operations.invoke(operation.name, {}, callerOf(request, HOME_AREA.credential))) as T;

const SETTINGS = '/os/settings';
const WELCOME = '/os/welcome';
const WELCOME_DEVICES = '/os/welcome/devices';

const STYLE = html`<style>
.settings-form fieldset{border:1px solid var(--line);border-radius:.5rem;padding:.4rem .9rem .8rem;margin:.8rem 0;min-width:0}
.settings-form legend{font-weight:650;padding:0 .3rem}
.settings-form input:not([type=radio]),.settings-form select{width:100%;max-width:24rem}
.settings-form [aria-invalid=true]{border:2px solid var(--bad)}
.hint{font-size:.9rem;color:var(--muted);margin:.15rem 0 .45rem}
.coords{display:flex;flex-wrap:wrap;gap:.2rem 1rem}.coords>div{flex:1 1 9rem;max-width:16rem;min-width:0}
.locate{display:flex;flex-wrap:wrap;gap:.4rem .8rem;align-items:center;margin:.6rem 0 .2rem}.locate .hint{margin:0}
.actions{display:flex;flex-wrap:wrap;gap:.6rem 1rem;align-items:center;margin:.9rem 0 .2rem}.actions form{margin:0}
.step{font-size:.95rem;color:var(--muted);margin:0 0 .4rem}
.ways ul{padding-left:1.2rem;margin:.3rem 0}.ways li{margin:.5rem 0}.ways>h2:first-child{margin-top:.3rem}
</style>`;

/**
 * "Use this browser's position": shown only where the script runs and the browser has
 * geolocation; it fills the two fields, which work as well typed by hand.
 */
const LOCATE_SCRIPT = `
(function () {
  var button = document.getElementById('locate');
  var status = document.getElementById('locate-status');
  if (!button || !status || !('geolocation' in navigator)) return;
  button.hidden = false;
  button.addEventListener('click', function () {
    if (!window.isSecureContext) {
      status.textContent = 'This page is not served over HTTPS, so the browser does not share its position: type the two numbers instead.';
      return;
    }
    button.disabled = true;
    status.textContent = 'Asking the browser for its position…';
    navigator.geolocation.getCurrentPosition(function (p) {
      document.getElementById('latitude').value = p.coords.latitude.toFixed(4);
      document.getElementById('longitude').value = p.coords.longitude.toFixed(4);
      button.disabled = false;
      status.textContent = 'Filled in from this browser (to about ' + Math.max(1, Math.round(p.coords.accuracy)) + ' m). Save to keep it.';
    }, function (e) {
      button.disabled = false;
      status.textContent = (e.code === 1 ? 'The browser was not allowed to share its position' : 'The browser could not tell its position') + ': type the two numbers instead.';
    }, { timeout: 15000, maximumAge: 600000 });
  });
})();`;

// ---------------------------------------------------------------------------------------------
// Values and problems
// ---------------------------------------------------------------------------------------------

const numberText = (n: number | null) => (n === null ? '' : String(n));

function valuesOf(s: HomeSettings): Values {
  return { name: s.name, latitude: numberText(s.latitude), longitude: numberText(s.longitude), elevation: numberText(s.elevation), timezone: s.timezone, units: s.units };
}

/** What was sent, over what the settings are (a field the form did not send keeps its value). */
function valuesSent(fields: Record<string, unknown>, current: HomeSettings): Values {
  const values = valuesOf(current);
  for (const name of FIELDS) {
    const v = fields[name];
    if (typeof v === 'string') values[name] = v.slice(0, 200);
  }
  return values;
}

/**
 * The change a form asks for: the fields it sent. An empty latitude, longitude or elevation is
 * null (no location); an empty name is sent as it is, so that the hub says why it is refused.
 */
function changeFrom(fields: Record<string, unknown>): Record<string, unknown> {
  const change: Record<string, unknown> = {};
  if ('name' in fields) change.name = typeof fields.name === 'string' ? fields.name.trim() : fields.name;
  for (const name of ['latitude', 'longitude', 'elevation'] as const) if (name in fields) change[name] = num(fields, name) ?? null;
  for (const name of ['timezone', 'units'] as const) {
    const value = text(fields, name);
    if (value !== undefined) change[name] = value;
  }
  return change;
}

const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const sentence = (s: string) => (/[.!?)]$/.test(s) ? s : `${s}.`);

/** The validator's phrases of the fields here, in words. */
const PHRASES: Array<[RegExp, string]> = [
  [/^must be <= (.+)$/, 'must be at most $1'],
  [/^must be >= (.+)$/, 'must be at least $1'],
  [/^must be number$/, 'must be a number'],
  [/^must NOT have fewer than 1 characters$/, 'must not be empty'],
  [/^must NOT have more than (\d+) characters$/, 'must be at most $1 characters long'],
];
const inWords = (name: FieldName, said: string) => (name === 'units' && /^must be equal to/.test(said) ? 'must be metric or imperial' : PHRASES.reduce((s, [from, to]) => s.replace(from, to), said));

/**
 * Which field a 400 is about, and what to say at it: INVALID_HOME_SETTING names the field in its
 * details and says "<field>: <problem>"; VALIDATION_FAILED's first detail is `body.<field>` and
 * "must be …".
 */
function problemOf(err: DomainError): Problem {
  const details = err.details;
  const first = (Array.isArray(details) ? details[0] : details) as { field?: unknown; message?: unknown } | undefined;
  const path = typeof first?.field === 'string' ? first.field : '';
  const name = path.replace(/^body\./, '').split('.')[0] ?? '';
  if (!isField(name)) return { text: sentence(err.message) };
  const said = typeof first?.message === 'string' && Array.isArray(details) ? first.message : err.message.replace(new RegExp(`^${name}:\\s*`), '');
  return { field: name, text: sentence(/^must\b/.test(said) ? `${LABELS[name]} ${inWords(name, said)}` : capitalised(said)) };
}

// ---------------------------------------------------------------------------------------------
// The form's parts
// ---------------------------------------------------------------------------------------------

/** The attributes that tie a control to its hint and its error, and the error itself. */
function marks(problem: Problem | undefined, name: FieldName, hint?: string): { attrs: Html; error: Html } {
  const bad = problem?.field === name;
  const described = [hint, bad ? `${name}-error` : undefined].filter(Boolean).join(' ');
  return {
    attrs: html`${described ? html` aria-describedby="${described}"` : ''}${bad ? html` aria-invalid="true" autofocus` : ''}`,
    error: bad ? html`<span class="field-error" id="${name}-error">${problem.text}</span>` : html``,
  };
}

const ZONES = Intl.supportedValuesOf('timeZone');
const ZONE_GROUPS = (() => {
  const groups = new Map<string, string[]>();
  for (const zone of ZONES) {
    const region = zone.includes('/') ? zone.slice(0, zone.indexOf('/')) : 'Other';
    groups.set(region, [...(groups.get(region) ?? []), zone]);
  }
  return [...groups];
})();
const zoneWords = (zone: string) => (zone.includes('/') ? zone.slice(zone.indexOf('/') + 1) : zone).replace(/_/g, ' ').replace(/\//g, ' / ');

/** The time zones `Intl` knows, by region, with UTC first and the current one selected (kept even when the list lacks it). */
function zoneSelect(current: string, problem: Problem | undefined): Html {
  const m = marks(problem, 'timezone', 'timezone-hint');
  const listed = current === 'UTC' || ZONES.includes(current);
  const option = (zone: string, words = zoneWords(zone)) => html`<option value="${zone}"${zone === current ? html` selected` : ''}>${words}</option>`;
  return html`<label for="timezone">Time zone</label><p class="hint" id="timezone-hint">Time triggers and the times the hub shows follow it.</p>
<select id="timezone" name="timezone"${m.attrs}>${listed ? '' : option(current, current)}${option('UTC', 'UTC')}${ZONE_GROUPS.map(
    ([region, zones]) => html`<optgroup label="${region}">${zones.map((z) => option(z))}</optgroup>`,
  )}</select>${m.error}`;
}

function nameField(values: Values, problem: Problem | undefined, label: string): Html {
  const m = marks(problem, 'name');
  return html`<label for="name">${label}</label><input id="name" name="name" required maxlength="100" autocomplete="off" value="${values.name}"${m.attrs}>${m.error}`;
}

function coordinate(name: 'latitude' | 'longitude', values: Values, problem: Problem | undefined): Html {
  const m = marks(problem, name, 'location-hint');
  const range = name === 'latitude' ? 90 : 180;
  return html`<div><label for="${name}">${LABELS[name]}</label><input id="${name}" name="${name}" type="number" step="any" min="-${range}" max="${range}" value="${values[name]}"${m.attrs}>${m.error}</div>`;
}

function locationFields(values: Values, problem: Problem | undefined): Html {
  return html`<p class="hint" id="location-hint">For sunrise and sunset: degrees with a decimal point, as a map app shows them for a place. Latitude is −90 to 90 (north positive), longitude −180 to 180 (east positive). Leave both empty for no location.</p>
<div class="coords">${coordinate('latitude', values, problem)}${coordinate('longitude', values, problem)}</div>
<div class="locate"><button type="button" id="locate" class="secondary" hidden>Use this browser's position</button><p class="hint" id="locate-status" role="status"></p></div>
<p class="hint">Most browsers share their position only with a page served over HTTPS (or from this same computer), and only once you allow it; otherwise type the two numbers.</p>`;
}

function unitsField(values: Values, problem: Problem | undefined): Html {
  const m = marks(problem, 'units');
  const radio = (value: string, words: string) =>
    html`<label class="inline"><input type="radio" name="units" value="${value}"${values.units === value ? html` checked` : ''}${m.attrs}> ${words}</label>`;
  return html`${radio('metric', 'Metric (°C, km/h, millimetres)')}${radio('imperial', 'Imperial (°F, mph, inches)')}${m.error}`;
}

function elevationField(values: Values, problem: Problem | undefined): Html {
  const m = marks(problem, 'elevation', 'elevation-hint');
  return html`<label for="elevation">Elevation in metres (optional)</label><input id="elevation" name="elevation" type="number" step="any" min="-500" max="9000" value="${values.elevation}"${m.attrs}>${m.error}
<p class="hint" id="elevation-hint">Above sea level: the sun rises a little earlier up a mountain.</p>`;
}

/** The top message of a form the hub refused. */
const notSaved = (problem: Problem) => ({ kind: 'error' as const, text: `Nothing was saved: ${problem.field ? `see “${LABELS[problem.field]}” below.` : problem.text}` });

// ---------------------------------------------------------------------------------------------
// Ways to bring devices in (the onboarding's last page and the empty home page)
// ---------------------------------------------------------------------------------------------

/** How devices come into the hub, with a link to where each is done (administrators). */
export function deviceWays(): Html {
  return html`<ul>
<li><a href="/admin/panel/mqtt">Zigbee2MQTT or Tasmota over MQTT</a>: start the hub with <code>MQTT_URL=embedded</code> to run its own MQTT broker (or set <code>MQTT_URL</code> to yours), and point Zigbee2MQTT or Tasmota at it; the devices they announce appear by themselves.</li>
<li><a href="/os/plugins">Homebridge</a>: install a Homebridge plugin, then import its accessories into rooms.</li>
<li><a href="/admin/panel/matter">Matter pairing</a>: pair a Matter device with the setup code on it or its box.</li>
<li><a href="/admin/panel/drivers">Drivers</a>: install a driver for other kinds of devices.</li>
<li><a href="/os/add">Media devices on the network</a>: find the TVs, speakers and players the hub sees on the network and add them.</li>
</ul>`;
}

/** The home page with no device: where they come from (administrators), or who brings them. */
export function noDevicesYet(role: string): Html {
  if (role !== 'admin') return html`<p class="muted">Devices appear here once an administrator of the hub brings them in and shares them with you.</p>`;
  return html`<section aria-labelledby="bring-in" class="ways"><h2 id="bring-in">Ways to bring devices in</h2>${deviceWays()}</section>`;
}

/** A line on the home page while the onboarding is not done (a hub that had devices before it existed). */
export const welcomeReminder = html`<p class="muted" data-onboarding="pending">The first-run setup is not finished: <a href="${WELCOME}">give the home its name, place and time zone</a>.</p>`;

/**
 * A hook of the home page: an administrator who opens it while the onboarding is not done and the
 * hub has no device yet is sent to the welcome (the query, such as a flash, goes along). An
 * account that still has the generated password is left to the page, which asks for a new one
 * first; members, API clients and failures are the page's business too.
 */
export function welcomeFirst(hub: Hub): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    const url = request.routeOptions.url;
    if (request.method !== 'GET' || (url !== '/os/' && url !== '/os') || !wantsHtml(request)) return;
    try {
      const me = await ask<{ role: string; mustChangePassword: boolean }>(hub, request, hub.ops.auth.me);
      if (me.role !== 'admin' || me.mustChangePassword) return;
      const [settings, { devices }] = await Promise.all([ask<HomeSettings>(hub, request, hub.ops.home.getSettings), ask<{ devices: unknown[] }>(hub, request, hub.ops.devices.list)]);
      if (settings.onboardedAt !== null || devices.length > 0) return;
    } catch {
      return; // the page answers it (the sign-in page, 403)
    }
    const query = request.url.indexOf('?');
    return reply.redirect(`${WELCOME}${query >= 0 ? request.url.slice(query) : ''}`, 303);
  };
}

// ---------------------------------------------------------------------------------------------
// The pages' bodies
// ---------------------------------------------------------------------------------------------

function settingsForm(values: Values, csrf: string, problem?: Problem): Html {
  return html`${STYLE}<form method="post" action="${SETTINGS}" class="settings-form">${csrfField(csrf)}
<fieldset><legend>The home</legend>${nameField(values, problem, 'Name')}</fieldset>
<fieldset><legend>Location and time zone</legend>${locationFields(values, problem)}${elevationField(values, problem)}${zoneSelect(values.timezone, problem)}</fieldset>
<fieldset><legend>Units</legend>${unitsField(values, problem)}</fieldset>
<p class="actions"><button>Save</button></p></form>`;
}

function settingsReadOnly(s: HomeSettings): Html {
  const row = (term: string, value: string) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`;
  const place = s.latitude === null || s.longitude === null ? 'Not set' : `${s.latitude}, ${s.longitude}`;
  return html`<section aria-labelledby="the-home"><h2 id="the-home">${s.name}</h2><dl class="state" data-settings>
${row('Location (latitude, longitude)', place)}${row('Elevation', s.elevation === null ? 'Not set' : `${s.elevation} m`)}${row('Time zone', s.timezone)}${row('Units', s.units === 'imperial' ? 'Imperial' : 'Metric')}
</dl><p class="muted">Only administrators change these.</p></section>`;
}

function welcomeForm(values: Values, csrf: string, onboarded: boolean, problem?: Problem): Html {
  return html`${STYLE}<p class="step">Step 1 of 2</p>
<p>A few questions about your home, then the ways to bring its devices in. Everything here can be changed later on the <a href="${SETTINGS}">settings page</a>.</p>
${onboarded ? html`<p class="muted">The setup is already done: what you save here changes the home's settings.</p>` : ''}
<form method="post" action="${WELCOME}" class="settings-form">${csrfField(csrf)}
<fieldset><legend>1. Your home's name</legend>${nameField(values, problem, 'Name of the home')}</fieldset>
<fieldset><legend>2. Where it is</legend>${locationFields(values, problem)}${zoneSelect(values.timezone, problem)}</fieldset>
<fieldset><legend>3. Units</legend>${unitsField(values, problem)}</fieldset>
<p class="actions"><button>Save and continue</button></p></form>
<form method="post" action="${WELCOME}/finish" class="actions">${csrfField(csrf)}<input type="hidden" name="skip" value="1"><button class="secondary" aria-describedby="skip-hint">Skip for now</button><span class="hint" id="skip-hint">The hub will not ask again; the settings page has the same questions.</span></form>`;
}

const adminsOnly = html`<p class="muted">Only administrators set up the home. <a href="/os/">Back to the home page</a>.</p>`;

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

/** A form page answered again (400) with what was sent and the hub's message at its field, in the frame bindPage draws. */
async function answerAgain(hub: Hub, request: FastifyRequest, reply: FastifyReply, title: string, body: Html, problem: Problem): Promise<FastifyReply> {
  const me = await ask<{ username: string; role: string }>(hub, request, hub.ops.auth.me);
  const csrf = sessionCsrf(request, HOME_AREA.cookie);
  return reply
    .code(400)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(
      page({
        title,
        area: HOME_AREA.name,
        nav: me.role === 'admin' && HOME_AREA.adminNav ? [...HOME_AREA.nav, ...HOME_AREA.adminNav] : HOME_AREA.nav,
        ...(HOME_AREA.manifest ? { manifest: HOME_AREA.manifest } : {}),
        csrf,
        flash: notSaved(problem),
        body: html`${body}<form method="post" action="${HOME_AREA.signOutUrl}" class="row">${csrfField(csrf)}<span class="muted">Signed in as ${me.username}</span><button class="secondary">Sign out</button></form>`,
        script: LOCATE_SCRIPT,
      }),
    );
}

/**
 * A settings form's POST: `home.settings.update` with the fields sent. A browser goes on to
 * `next` with "Saved."; a refusal (400) answers the form again with the values as sent and the
 * hub's message at its field; other refusals go back with the message. API clients get JSON.
 */
function bindSave(app: FastifyInstance, hub: Hub, o: { url: string; summary: string; title: string; next: string; form: (values: Values, csrf: string, current: HomeSettings, problem: Problem) => Html }): void {
  app.post(
    o.url.slice('/os'.length),
    {
      config: { access: 'authenticated' },
      validatorCompiler: () => () => true,
      schema: {
        tags: [HOME_AREA.tag],
        summary: o.summary,
        description:
          'A form of the web UI: runs operation `home.settings.update` with the fields sent (`name`, `latitude`, `longitude`, `elevation`, `timezone`, `units`; an empty number is null). A browser (Accept: text/html) is redirected (303) on with `done`, or answered the form again (400) with the error at its field; other clients get the result as JSON.',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: Type.Object({ _csrf: Type.Optional(Type.String({ description: 'The CSRF token of the session (or header x-csrf-token).' })) }, { additionalProperties: true }),
        response: { 200: Type.Object({ ok: Type.Literal(true), result: Type.Unknown() }), 303: Type.Null({ description: 'On to the next page.' }), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const fields = formFields(request);
      const browser = wantsHtml(request);
      try {
        const result = await hub.operations.invoke(hub.ops.home.updateSettings.name, { json: changeFrom(fields) }, callerOf(request, HOME_AREA.credential));
        if (!browser) return { ok: true as const, result };
        return reply.redirect(withFlash(o.next, 'done', 'Saved.'), 303);
      } catch (err) {
        if (!browser || !(err instanceof DomainError) || err.kind === 'unauthenticated' || err.kind === 'internal') throw err;
        request.failureCode = err.code;
        if (err.kind !== 'invalid') return reply.redirect(withFlash(o.url, 'error', err.message), 303);
        const problem = problemOf(err);
        const current = await ask<HomeSettings>(hub, request, hub.ops.home.getSettings);
        return answerAgain(hub, request, reply, o.title, o.form(valuesSent(fields, current), sessionCsrf(request, HOME_AREA.cookie), current, problem), problem);
      }
    },
  );
}

/** `/os/settings` and the onboarding `/os/welcome`, `/os/welcome/devices`. */
export function settingsPages(app: FastifyInstance, hub: Hub): void {
  const { home } = hub.ops;

  bindPage(app, hub, HOME_AREA, {
    url: '/settings',
    title: 'Settings',
    summary: "Web UI: the home's settings (name, location, time zone, units); administrators change them, members read them.",
    async build(ctx) {
      const settings = await ctx.call<HomeSettings>(home.getSettings);
      return ctx.role === 'admin' ? settingsForm(valuesOf(settings), ctx.csrf) : settingsReadOnly(settings);
    },
    script: LOCATE_SCRIPT,
  });
  bindSave(app, hub, {
    url: SETTINGS,
    summary: "Web UI form: save the home's settings (administrators).",
    title: 'Settings',
    next: SETTINGS,
    form: (values, csrf, _current, problem) => settingsForm(values, csrf, problem),
  });

  bindPage(app, hub, HOME_AREA, {
    url: '/welcome',
    title: 'Welcome',
    summary: "Web UI: the first-run onboarding (administrators), step 1: the home's name, location, time zone and units.",
    async build(ctx) {
      if (ctx.role !== 'admin') return adminsOnly;
      const settings = await ctx.call<HomeSettings>(home.getSettings);
      return welcomeForm(valuesOf(settings), ctx.csrf, settings.onboardedAt !== null);
    },
    script: LOCATE_SCRIPT,
  });
  bindSave(app, hub, {
    url: WELCOME,
    summary: "Web UI form: the onboarding's first step (name, location, time zone, units); on to the ways to bring devices in.",
    title: 'Welcome',
    next: WELCOME_DEVICES,
    form: (values, csrf, current, problem) => welcomeForm(values, csrf, current.onboardedAt !== null, problem),
  });

  bindPage(app, hub, HOME_AREA, {
    url: '/welcome/devices',
    title: 'Bring your devices in',
    summary: "Web UI: the onboarding's last step: the ways to bring devices in, and finishing it.",
    async build(ctx) {
      if (ctx.role !== 'admin') return adminsOnly;
      return html`${STYLE}<p class="step">Step 2 of 2</p>
<section aria-labelledby="ways" class="ways"><h2 id="ways">Ways to bring devices in</h2><p>Each is done on its own page; come back to them any time.</p>${deviceWays()}</section>
<div class="actions"><form method="post" action="${WELCOME}/finish">${csrfField(ctx.csrf)}<button>Finish</button></form><a href="${WELCOME}">Back to step 1</a></div>`;
    },
  });
  bindAreaForm(app, hub, HOME_AREA, {
    url: '/welcome/finish',
    summary: 'Web UI form: end the first-run onboarding (`home.settings.update` with `onboarded: true`), finished or skipped (`skip`).',
    operation: home.updateSettings,
    input: () => ({ json: { onboarded: true } }),
    back: (_p, f) => (text(f, 'skip') ? WELCOME : WELCOME_DEVICES),
    doneUrl: '/os/',
    done: (r, f) => (text(f, 'skip') ? 'Setup skipped: the settings page (/os/settings) has the same questions.' : `${(r as HomeSettings).name} is set up.`),
  });
}
