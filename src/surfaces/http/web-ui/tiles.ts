import type { DeviceAttributes, DeviceClass } from '../../../domain/devices/capabilities.js';
import type { DeviceReading } from '../../../domain/devices/readings.js';
import { csrfField, html, type Html } from '../web/html.js';
import { hexOf, hueSaturationOf } from './client/colour.js';
import { icon, isIconName, type IconName } from './icons.js';

/**
 * A device's tile on the household's pages, drawn from its class, attributes and canonical
 * reading (the device model, docs/devices.md), never from raw state keys. Every control is a
 * plain form posting to `/os/devices/:id/command` with the class's standard command, so a tile
 * works without JavaScript; the page's script (client/home.ts) sends the same forms with
 * `fetch`, moves the control at once, rolls it back when the command fails, and redraws the tile
 * from each `reading` the live stream sends.
 *
 * What the script relies on, and nothing else: `data-device` and `data-class` on the tile;
 * `data-read="<reading key>"` on what shows a value (an input takes it as its value, a
 * `role=switch` as `aria-checked`, anything else as text, through `data-words` or `data-unit`);
 * `fieldset.controls`, disabled while the device is offline; `[data-error]` for a failed command.
 */

export interface TileDevice {
  id: string;
  name: string;
  deviceClass: DeviceClass;
  attributes: DeviceAttributes;
  reading: DeviceReading;
  online: boolean;
  driverKey: string;
  commands: Array<{ name: string; label?: string; params?: Record<string, unknown> }>;
  properties: Record<string, unknown>;
  /** Prefix of the tile's element ids, when the device has a second tile on the page (a favourite). */
  domPrefix?: string;
}

/** The tile's part of its element ids: unique on the page even when a device has two tiles. */
const domId = (device: TileDevice) => `${device.domPrefix ?? ''}${device.id}`;

/** A binary sensor's state in words, by what it detects: [detected, clear]. */
export const BINARY_SENSOR_WORDS: Record<string, [string, string]> = {
  motion: ['Motion', 'Clear'],
  occupancy: ['Occupied', 'Clear'],
  contact: ['Open', 'Closed'],
  leak: ['Leak', 'Dry'],
  smoke: ['Smoke', 'Clear'],
  tamper: ['Tampered', 'OK'],
};

const SENSOR_LABELS: Record<string, string> = {
  temperature: 'Temperature',
  humidity: 'Humidity',
  illuminance: 'Light level',
  power: 'Power',
  energy: 'Energy',
  battery: 'Battery',
  co2: 'CO₂',
  pm25: 'PM2.5',
  pressure: 'Pressure',
};


/** The tile's icon: what the sensor measures or detects, else what the device is. */
function iconOf(device: TileDevice): Html {
  const sensorClass = device.attributes.sensorClass ?? '';
  const sensor = (device.deviceClass === 'sensor' || device.deviceClass === 'binary_sensor') && isIconName(sensorClass);
  return icon(sensor ? (sensorClass as IconName) : device.deviceClass);
}

const LOCK_WORDS = { true: 'Locked', false: 'Unlocked' };
const ON_WORDS = { true: 'On', false: 'Off' };

const words = (w: Record<string, string>) => JSON.stringify(w);
const fmt = (v: number | undefined, digits = 1) => (v === undefined ? '—' : String(Number(v.toFixed(digits))));

function commandForm(device: TileDevice, csrf: string, command: string | undefined, body: Html, label?: string): Html {
  return html`<form method="post" action="/os/devices/${device.id}/command" class="control"${label ? html` aria-label="${label}"` : ''}>${csrfField(csrf)}${
    command ? html`<input type="hidden" name="command" value="${command}">` : ''
  }${body}</form>`;
}

/** The power switch: sends `turn_off` when on, `turn_on` when off (the script keeps the hidden command in step). */
function powerToggle(device: TileDevice, csrf: string): Html {
  const on = device.reading.on === true;
  return commandForm(
    device,
    csrf,
    on ? 'turn_off' : 'turn_on',
    html`<button type="submit" role="switch" class="switch" aria-checked="${on ? 'true' : 'false'}" aria-label="${device.name}" data-read="on" data-words="${words(ON_WORDS)}">${on ? 'On' : 'Off'}</button>`,
  );
}

/** A slider for a standard command with one numeric parameter; "Set" submits it without JavaScript. */
function slider(device: TileDevice, csrf: string, o: { command: string; param: string; read: keyof DeviceReading; label: string; min: number; max: number; step?: number; unit?: string }): Html {
  const id = `${o.param}-${domId(device)}`;
  const value = device.reading[o.read];
  const current = typeof value === 'number' ? value : o.min;
  return commandForm(
    device,
    csrf,
    o.command,
    html`<label for="${id}">${o.label} <output data-read="${o.read}"${o.unit ? html` data-unit="${o.unit}"` : ''}>${typeof value === 'number' ? `${fmt(value, 0)}${o.unit ?? ''}` : '—'}</output></label>
<div class="slider"><input type="range" id="${id}" name="p.${o.param}:integer" min="${o.min}" max="${o.max}" step="${o.step ?? 1}" value="${current}" data-read="${o.read}"><button class="apply secondary" aria-label="Set ${o.label.toLowerCase()} of ${device.name}">Set</button></div>`,
  );
}

/** Buttons of one form, each sending its own command. */
function commandButtons(device: TileDevice, csrf: string, buttons: Array<{ command: string; label: string; text?: string | Html; confirm?: string }>, label: string): Html {
  return commandForm(
    device,
    csrf,
    undefined,
    html`<div class="buttons">${buttons.map(
      (b) => html`<button name="command" value="${b.command}" class="secondary" aria-label="${b.label}"${b.confirm ? html` data-confirm="${b.confirm}"` : ''}>${b.text ?? b.label}</button>`,
    )}</div>`,
    label,
  );
}

function lightControls(device: TileDevice, csrf: string): Html {
  const modes = device.attributes.colorModes ?? [];
  const { minKelvin = 2000, maxKelvin = 6500 } = device.attributes;
  const dims = modes.includes('brightness') || modes.includes('color_temp') || modes.includes('hs') || device.reading.brightness !== undefined;
  return html`${powerToggle(device, csrf)}
${dims ? slider(device, csrf, { command: 'set_brightness', param: 'brightness', read: 'brightness', label: 'Brightness', min: 0, max: 100, unit: ' %' }) : ''}
${modes.includes('color_temp') ? slider(device, csrf, { command: 'set_color_temp', param: 'kelvin', read: 'colorTempKelvin', label: 'Colour temperature', min: minKelvin, max: maxKelvin, step: 50, unit: ' K' }) : ''}
${modes.includes('hs') ? colourPicker(device, csrf) : ''}`;
}

/** Colour as a colour input; the form sends it as `#rrggbb` and the route turns it into hue and saturation. */
function colourPicker(device: TileDevice, csrf: string): Html {
  const id = `colour-${domId(device)}`;
  return commandForm(
    device,
    csrf,
    'set_hs_color',
    html`<div class="slider"><label for="${id}">Colour</label><input type="color" id="${id}" name="p.colour:hs" value="${hexOf(device.reading.hue, device.reading.saturation)}" data-read="colour"><button class="apply secondary" aria-label="Set colour of ${device.name}">Set</button></div>`,
  );
}

function coverControls(device: TileDevice, csrf: string): Html {
  return html`${commandButtons(
    device,
    csrf,
    [
      { command: 'open', label: `Open ${device.name}`, text: 'Open' },
      { command: 'stop', label: `Stop ${device.name}`, text: 'Stop' },
      { command: 'close', label: `Close ${device.name}`, text: 'Close' },
    ],
    `Move ${device.name}`,
  )}
${slider(device, csrf, { command: 'set_position', param: 'position', read: 'position', label: 'Position', min: 0, max: 100, unit: ' %' })}`;
}

function climateControls(device: TileDevice, csrf: string): Html {
  const { minTemperature = 5, maxTemperature = 35, temperatureStep = 0.5, temperatureUnit = '°C', hvacModes = [] } = device.attributes;
  const target = device.reading.targetTemperature;
  const clamp = (v: number) => Math.min(maxTemperature, Math.max(minTemperature, v));
  const step = (sign: 1 | -1) => (target === undefined ? (sign < 0 ? minTemperature : maxTemperature) : clamp(target + sign * temperatureStep));
  const modeId = `mode-${domId(device)}`;
  return html`<p class="reading">Now <span class="big" data-read="currentTemperature" data-unit="${temperatureUnit}">${fmt(device.reading.currentTemperature)}${temperatureUnit}</span></p>
${commandForm(
  device,
  csrf,
  'set_target_temperature',
  html`<div class="stepper" data-step="${temperatureStep}" data-min="${minTemperature}" data-max="${maxTemperature}">
<button name="p.temperature:number" value="${step(-1)}" data-delta="-1" class="secondary" aria-label="Lower the target of ${device.name}">−</button>
<span>Target <output data-read="targetTemperature" data-unit="${temperatureUnit}">${fmt(target)}${temperatureUnit}</output></span>
<button name="p.temperature:number" value="${step(1)}" data-delta="1" class="secondary" aria-label="Raise the target of ${device.name}">+</button></div>`,
  `Target temperature of ${device.name}`,
)}
${hvacModes.length > 0
    ? commandForm(
        device,
        csrf,
        'set_hvac_mode',
        html`<div class="slider"><label for="${modeId}">Mode</label><select id="${modeId}" name="p.mode:string" data-read="hvacMode">${hvacModes.map(
          (m) => html`<option value="${m}"${m === device.reading.hvacMode ? html` selected` : ''}>${m}</option>`,
        )}</select><button class="apply secondary" aria-label="Set mode of ${device.name}">Set</button></div>`,
      )
    : device.reading.hvacMode
      ? html`<p class="muted">Mode <span data-read="hvacMode">${device.reading.hvacMode}</span></p>`
      : ''}`;
}

function lockControls(device: TileDevice, csrf: string): Html {
  const locked = device.reading.locked;
  return html`<p class="reading big" data-read="locked" data-words="${words(LOCK_WORDS)}">${device.reading.jammed ? 'Jammed' : locked === undefined ? '—' : locked ? 'Locked' : 'Unlocked'}</p>
${commandForm(device, csrf, 'lock', html`<button class="secondary" aria-label="Lock ${device.name}">Lock</button>`)}
${commandForm(
  device,
  csrf,
  'unlock',
  html`<label class="confirm"><input type="checkbox" name="confirm" value="yes" required> Yes, unlock</label><button class="secondary" aria-label="Unlock ${device.name}" data-confirm="Unlock ${device.name}?">Unlock</button>`,
)}`;
}

function mediaControls(device: TileDevice, csrf: string): Html {
  const r = device.reading;
  const playing = r.playback === 'playing';
  return html`<div class="now-playing">${r.artworkUrl ? html`<img src="${r.artworkUrl}" alt="" width="64" height="64" loading="lazy" referrerpolicy="no-referrer" data-read="artworkUrl">` : ''}
<div><p class="title" data-read="title">${r.title ?? (playing ? 'Playing' : 'Nothing playing')}</p><p class="muted" data-read="artist">${r.artist ?? ''}</p>
<p class="muted">${r.app ? html`App <span data-read="app">${r.app}</span>` : r.input ? html`Source <span data-read="input">${r.input}</span>` : ''}</p></div></div>
${powerToggle(device, csrf)}
${commandButtons(
  device,
  csrf,
  [
    { command: 'previous', label: `Previous on ${device.name}`, text: icon('previous') },
    // Both drawings: the stylesheet shows the one the button's value (play or pause) calls for.
    { command: playing ? 'pause' : 'play', label: `${playing ? 'Pause' : 'Play'} ${device.name}`, text: html`${icon('play', 'when-play')}${icon('pause', 'when-pause')}` },
    { command: 'next', label: `Next on ${device.name}`, text: icon('next') },
  ],
  `Transport of ${device.name}`,
)}
${slider(device, csrf, { command: 'volume_set', param: 'volume', read: 'volume', label: 'Volume', min: 0, max: 100 })}`;
}

/** An IR remote's keys (a GENERIC_IR device's `irCommands`), or a device's own commands. */
function remoteKeys(device: TileDevice, csrf: string): Html {
  const ir = device.properties.irCommands;
  const keys = ir && typeof ir === 'object' ? Object.keys(ir) : device.commands.map((c) => c.name);
  if (keys.length === 0) return html`<p class="muted">No keys learned yet.</p>`;
  return commandForm(
    device,
    csrf,
    undefined,
    html`<div class="keys">${keys.map((k) => html`<button name="command" value="${k}" class="secondary" aria-label="${k.replace(/_/g, ' ')} (${device.name})">${k.replace(/_/g, ' ')}</button>`)}</div>`,
    `Keys of ${device.name}`,
  );
}

function sensorReading(device: TileDevice): Html {
  const sensorClass = device.attributes.sensorClass ?? '';
  const unit = device.reading.unit ?? device.attributes.unit ?? '';
  const value = device.reading.value;
  return html`<p class="reading"><span class="muted">${SENSOR_LABELS[sensorClass] ?? 'Value'}</span>
<span class="big" data-read="value"${unit ? html` data-unit="${unit === '%' ? ' %' : ` ${unit}`}"` : ''}>${value === undefined ? '—' : typeof value === 'number' ? fmt(value) : value}${value !== undefined && unit ? (unit === '%' ? ' %' : ` ${unit}`) : ''}</span></p>`;
}

function binarySensorReading(device: TileDevice): Html {
  const [yes, no] = BINARY_SENSOR_WORDS[device.attributes.sensorClass ?? ''] ?? ['Detected', 'Clear'];
  const detected = device.reading.detected;
  return html`<p class="reading big" data-read="detected" data-words="${words({ true: yes, false: no })}">${detected === undefined ? '—' : detected ? yes : no}</p>`;
}

/** A device the model does not recognise: its own commands, each with an input per parameter. */
function genericControls(device: TileDevice, csrf: string): Html {
  return html`${device.reading.on !== undefined ? powerToggle(device, csrf) : ''}${device.commands.map((c) =>
    commandForm(device, csrf, c.name, html`${paramFields(domId(device), c.name, c.params)}<button class="secondary" aria-label="${c.label ?? c.name} (${device.name})">${c.label ?? c.name}</button>`),
  )}`;
}

interface ParamSchema {
  type?: string;
  title?: string;
  enum?: Array<string | number>;
  minimum?: number;
  maximum?: number;
  required?: boolean;
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

/**
 * A posted command form's `p.<name>:<type>` fields as the command's params, typed as the form
 * said; a `:hs` colour (`#rrggbb`) becomes `hue` and `saturation`.
 */
export function paramsOf(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(fields)) {
    if (!key.startsWith('p.') || raw === '' || raw === undefined) continue;
    const [name, type] = key.slice(2).split(':') as [string, string | undefined];
    if (type === 'boolean') out[name] = raw === 'true';
    else if ((type === 'number' || type === 'integer') && typeof raw === 'string' && Number.isFinite(Number(raw))) out[name] = Number(raw);
    else if (type === 'hs' && typeof raw === 'string') Object.assign(out, hueSaturationOf(raw) ?? { [name]: raw });
    else out[name] = raw;
  }
  return out;
}

function controlsOf(device: TileDevice, csrf: string): Html {
  switch (device.deviceClass) {
    case 'light':
      return lightControls(device, csrf);
    case 'switch':
      return powerToggle(device, csrf);
    case 'outlet':
      return html`${powerToggle(device, csrf)}${device.reading.value !== undefined ? html`<p class="muted">Power <span data-read="value" data-unit=" W">${fmt(device.reading.value as number)} W</span></p>` : ''}`;
    case 'cover':
      return coverControls(device, csrf);
    case 'climate':
      return climateControls(device, csrf);
    case 'fan':
      return html`${powerToggle(device, csrf)}${slider(device, csrf, { command: 'set_percentage', param: 'percentage', read: 'percentage', label: 'Speed', min: 0, max: 100, unit: ' %' })}`;
    case 'lock':
      return lockControls(device, csrf);
    case 'media_player':
      return mediaControls(device, csrf);
    case 'remote':
      return remoteKeys(device, csrf);
    case 'sensor':
      return sensorReading(device);
    case 'binary_sensor':
      return binarySensorReading(device);
    case 'button':
      return html`<p class="reading">Last press <span class="big" data-read="lastPress">${device.reading.lastPress ?? '—'}</span></p>`;
    case 'generic':
      return genericControls(device, csrf);
  }
}

/** The tile of one device. */
export function deviceTile(device: TileDevice, csrf: string): Html {
  const offline = !device.online;
  return html`<article class="tile${offline ? ' offline' : ''}" data-device="${device.id}" data-class="${device.deviceClass}" aria-labelledby="dev-${domId(device)}">
<header>${iconOf(device)}<h3 id="dev-${domId(device)}">${device.name}</h3>
<span class="badge ${offline ? 'offline' : 'online'}" data-online>${offline ? 'Offline' : 'Online'}</span></header>
<fieldset class="controls"${offline ? html` disabled` : ''}><legend class="visually-hidden">Controls of ${device.name}</legend>${controlsOf(device, csrf)}</fieldset>
<p class="tile-error" role="alert" data-error hidden></p></article>`;
}
