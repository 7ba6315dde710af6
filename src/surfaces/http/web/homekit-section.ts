import type { Hub } from '../../../hub.js';
import type { FormAction } from './forms.js';
import { text } from './forms.js';
import { csrfField, html, type Html } from './html.js';
import type { PageContext } from './pages.js';
import { qrImage } from './qr.js';

/** What `accessory_hub.homekit` answers (src/domain/accessory-hub/operations.ts). */
interface HomeKitView {
  exposed: boolean;
  devices: 'all' | string[];
  shown: number;
  bridgeable: number;
  limit: number;
  state: string;
  candidates: Array<{ id: string; name: string; service: string; shown: boolean }>;
}

interface Pairing {
  bridge?: { pin: string; setupUri?: string };
}

const STATES: Record<string, string> = {
  stopped: 'Homebridge is not running',
  starting: 'Homebridge is starting',
  running: 'Homebridge is running',
  backoff: 'Homebridge is restarting after a crash',
  failed: 'Homebridge cannot start',
};

/**
 * "Show this hub's devices in Apple Home": the switch, the pairing code once Homebridge runs,
 * and the devices to show. One section, on the household UI's Plugins page and on the admin
 * panel's Apple Home page; `forms` is where each binds its forms (`bindHomeKitForms`).
 */
export async function homekitSection(hub: Hub, { call, csrf }: Pick<PageContext, 'call' | 'csrf'>, forms: string): Promise<Html> {
  const ops = hub.ops.accessoryHub;
  const view = await call<HomeKitView>(ops.homekit);
  // The setup code is in config.json from the first start; the QR payload once Homebridge told it.
  const status = view.exposed ? await call<Pairing>(ops.status) : undefined;
  const toggle = html`<form method="post" action="${forms}/exposure">${csrfField(csrf)}<input type="hidden" name="exposed" value="${view.exposed ? 'false' : 'true'}"><button${view.exposed ? ' class="secondary"' : ''}>${view.exposed ? 'Stop showing them in Apple Home' : "Show this hub's devices in Apple Home"}</button></form>`;
  const leftOut = view.bridgeable - view.shown;
  const summary = view.exposed
    ? html`<p data-homekit="on">${String(view.shown)} device${view.shown === 1 ? '' : 's'} shown in Apple Home. ${STATES[view.state] ?? view.state}.${leftOut > 0 ? html` <strong>${String(leftOut)} left out</strong>: a HomeKit bridge shows at most ${String(view.limit)}; choose the ones that matter below.` : ''}</p>`
    : html`<p data-homekit="off">The hub's devices are not in Apple Home.${view.state === 'stopped' ? ' Homebridge runs only when Apple Home is on or a plugin is installed.' : ` ${STATES[view.state] ?? view.state} for the plugins.`}</p>`;
  const pin = status?.bridge?.pin;
  const setupUri = status?.bridge?.setupUri;
  const pairing =
    view.exposed && pin
      ? html`<p>In the Home app: Add Accessory, then scan this code or type <strong data-homekit-pin>${pin}</strong>.</p>${
          setupUri ? html`<img src="${await qrImage(setupUri)}" width="180" height="180" alt="HomeKit pairing QR code; setup code ${pin}">` : ''
        }`
      : '';
  const all = view.devices === 'all';
  const chosen = new Set(all ? [] : view.devices);
  const choose =
    view.candidates.length === 0
      ? html`<p class="muted">No device HomeKit can show yet (lights, switches, outlets, covers, thermostats, fans, locks, sensors and buttons).</p>`
      : html`<form method="post" action="${forms}/devices">${csrfField(csrf)}<fieldset><legend>Devices in Apple Home</legend>
<p><label><input type="radio" name="which" value="all"${all ? ' checked' : ''}> Every device HomeKit can show (the first ${String(view.limit)})</label></p>
<p><label><input type="radio" name="which" value="chosen"${all ? '' : ' checked'}> Only those ticked</label></p>
<ul class="plain">${view.candidates.map(
          (c) => html`<li><label><input type="checkbox" name="device" value="${c.id}"${chosen.has(c.id) || (all && c.shown) ? ' checked' : ''}> ${c.name} <span class="muted">(${c.service})</span></label></li>`,
        )}</ul></fieldset><button class="secondary">Save the choice</button></form>`;
  return html`<section aria-labelledby="apple-home"><h2 id="apple-home">Apple Home</h2>
${summary}
${toggle}
${pairing}
${choose}</section>`;
}

/** The section's two forms, at `forms`/exposure and `forms`/devices: Apple Home on or off, and the devices chosen; a browser returns to `back`. */
export function bindHomeKitForms(hub: Hub, bind: (action: FormAction) => void, forms: string, back: string): void {
  const ops = hub.ops.accessoryHub;
  bind({
    url: `${forms}/exposure`,
    summary: "Web form: show this hub's devices in Apple Home, or stop (`exposed`); Homebridge starts or stops to match.",
    operation: ops.updateHomekit,
    input: (f) => ({ json: { exposed: f.exposed === 'true' } }),
    back: () => back,
    done: (r) => ((r as HomeKitView).exposed ? "The hub's devices are being added to Apple Home." : "The hub's devices are no longer in Apple Home."),
  });
  bind({
    url: `${forms}/devices`,
    summary: 'Web form: the devices Apple Home shows (`which`: `all`, or `chosen` with each `device` ticked).',
    operation: ops.updateHomekit,
    input: (f) => {
      const ticked = f.device === undefined ? [] : Array.isArray(f.device) ? f.device.map(String) : [String(f.device)];
      return { json: { devices: text(f, 'which') === 'chosen' ? ticked : 'all' } };
    },
    back: () => back,
    done: (r) => `${String((r as HomeKitView).shown)} devices shown in Apple Home.`,
  });
}
