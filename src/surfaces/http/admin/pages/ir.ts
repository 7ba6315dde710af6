import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../../hub.js';
import { defined, text } from '../../web/forms.js';
import { csrfField, html, type Html } from '../../web/html.js';
import { adminForm, bindPage } from '../panel-kit.js';

interface IrCommand {
  freq_khz: number;
  raw: number[];
}

interface Device {
  id: string;
  name: string;
  driverKey: string;
  room?: string | null;
  category?: string;
  properties: { extenderIp?: string; irCommands?: Record<string, IrCommand> };
}

const BACK = '/admin/panel/ir';

/** IR commands as the form shows them: one per line, `key frequency-kHz pulse,pulse,…`. */
const commandLines = (commands: Record<string, IrCommand> = {}) => Object.entries(commands).map(([key, c]) => `${key} ${c.freq_khz} ${c.raw.join(',')}`).join('\n');

/** The lines back to commands; what does not parse is passed on as it is, for the operation to name. */
function parseCommandLines(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const out: Record<string, unknown> = {};
  for (const line of value.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const [key, freq, ...rest] = trimmed.split(/\s+/);
    out[key!] = { freq_khz: Number(freq), raw: rest.join(',').split(',').filter(Boolean).map(Number) };
  }
  return out;
}

const pulses = (value: unknown) => (typeof value === 'string' ? value.split(/[\s,]+/).filter(Boolean).map(Number) : value);

function deviceForm(csrf: string, device?: Device): Html {
  const id = device?.id ?? 'new';
  return html`<form method="post" action="/admin/panel/ir/save">${csrfField(csrf)}${device ? html`<input type="hidden" name="id" value="${device.id}">` : ''}
<label for="ir-name-${id}">Name</label><input id="ir-name-${id}" name="name" required value="${device?.name ?? ''}">
<label for="ir-ip-${id}">Extender IP address</label><input id="ir-ip-${id}" name="extenderIp" required inputmode="decimal" value="${device?.properties.extenderIp ?? ''}">
<label for="ir-room-${id}">Room</label><input id="ir-room-${id}" name="room" value="${device?.room ?? ''}">
<label for="ir-cmds-${id}">Commands, one per line: <code>key kHz pulse,pulse,…</code> (µs, on/off pairs)</label>
<textarea id="ir-cmds-${id}" name="irCommands" rows="4" required>${commandLines(device?.properties.irCommands)}</textarea>
<button>${device ? 'Save' : 'Create IR device'}</button></form>`;
}

/** GENERIC_IR devices: create and edit them, send a test code, and watch what the hub transmits, live. */
export function irPage(app: FastifyInstance, hub: Hub): void {
  const { devices } = hub.ops;
  bindPage(app, hub, {
    url: '/panel/ir',
    title: 'IR devices',
    summary: 'Admin panel: GENERIC_IR devices, test transmissions and the live IR feed.',
    async build({ call, csrf }) {
      const { devices: all } = await call<{ devices: Device[] }>(devices.list);
      const ir = all.filter((d) => d.driverKey === 'GENERIC_IR');
      return html`
<section aria-labelledby="ir-new"><h2 id="ir-new">New IR device</h2>${deviceForm(csrf)}</section>
${ir.map(
  (d) => html`<section class="card" data-ir-device="${d.id}" aria-labelledby="ir-${d.id}"><h2 id="ir-${d.id}">${d.name}</h2>${deviceForm(csrf, d)}
<form method="post" action="/admin/panel/ir/test" class="row">${csrfField(csrf)}<input type="hidden" name="deviceId" value="${d.id}">
<label>Send a test code <select name="key">${Object.keys(d.properties.irCommands ?? {}).map((k) => html`<option>${k}</option>`)}</select></label><button class="secondary">Send</button></form></section>`,
)}
<section aria-labelledby="ir-raw"><h2 id="ir-raw">Send raw IR</h2>
<form method="post" action="/admin/panel/ir/test">${csrfField(csrf)}
<label>Extender IP address <input name="extenderIp" required></label><label>Frequency (kHz) <input name="freq_khz" type="number" min="15" max="500" value="38" required></label>
<label>Pulses (µs, on/off pairs) <textarea name="raw" rows="2" required></textarea></label><button class="secondary">Send raw</button></form></section>
<section aria-labelledby="ir-live"><h2 id="ir-live">Transmitted, live</h2>
<p class="muted" id="ir-status" role="status">Connecting to /socket/device-ir-test…</p>
<div class="scroll" tabindex="0"><table><thead><tr><th>Time</th><th>Device / key</th><th>Extender</th><th>kHz</th><th>Pulses</th></tr></thead><tbody id="ir-feed"></tbody></table></div></section>`;
    },
    script: `
(function () {
  var s = document.createElement('script');
  s.src = '/admin/assets/socket.io.min.js';
  s.onload = function () {
    var status = document.getElementById('ir-status');
    var socket = io('/socket/device-ir-test', { transports: ['websocket'] });
    socket.on('connect', function () { status.textContent = 'Live: every IR transmission of the hub appears here.'; });
    socket.on('connect_error', function (e) { status.textContent = 'Not connected: ' + e.message; });
    socket.on('ir:data', function (e) {
      var row = document.createElement('tr');
      row.className = 'ir-data';
      [new Date(e.at).toISOString(), (e.deviceId || 'raw') + (e.key ? ' / ' + e.key : ''), e.host, String(e.freqKhz), e.raw.length + ' pulses'].forEach(function (t) {
        var td = document.createElement('td'); td.textContent = t; row.appendChild(td);
      });
      document.getElementById('ir-feed').prepend(row);
    });
  };
  document.head.appendChild(s);
})();`,
  });

  adminForm(app, hub, {
    url: '/panel/ir/save',
    summary: 'Admin panel form: create or edit a GENERIC_IR device (commands one per line: `key kHz pulse,pulse,…`).',
    operation: devices.saveIr,
    input: (f) => ({
      json: defined({ id: text(f, 'id'), name: text(f, 'name'), extenderIp: text(f, 'extenderIp'), room: text(f, 'room'), irCommands: parseCommandLines(f.irCommands) }),
    }),
    back: () => BACK,
    done: (r) => `IR device ${(r as Device).name} saved.`,
  });
  adminForm(app, hub, {
    url: '/panel/ir/test',
    summary: 'Admin panel form: send a test IR code (a key of a device, or raw pulses to an extender).',
    operation: devices.testIr,
    input: (f) => ({
      json: defined({
        deviceId: text(f, 'deviceId'),
        key: text(f, 'key'),
        extenderIp: text(f, 'extenderIp'),
        freq_khz: f.freq_khz === undefined ? undefined : Number(f.freq_khz),
        raw: pulses(f.raw),
      }),
    }),
    back: () => BACK,
    done: () => 'Test code sent.',
  });
}
