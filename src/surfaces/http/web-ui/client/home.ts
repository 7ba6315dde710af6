/**
 * The household pages' script (bundled by scripts/build-client.mjs into dist/public/home.js).
 * The pages work without it: every control is a form the server answers. With it:
 * - a tile's form is sent with fetch; the control moves at once and rolls back, with the hub's
 *   message in the tile, when the command fails;
 * - the live stream (`/os/events`) redraws each tile from the device's canonical reading and
 *   marks devices offline, and the status line says whether the hub is online, reconnecting or
 *   offline;
 * - sliders, selects and colours send on change; an unlock asks to confirm;
 * - a dialog the server draws open (the pairing dialog of the add-devices page) becomes modal;
 * - the service worker keeps the app shell for an offline start.
 * The tile markup it relies on is described in tiles.ts.
 */

import { hexOf } from './colour.js';

type Reading = Record<string, unknown>;

/** What each device last said (its reading), and how many readings have come since the page loaded. */
const confirmed = new Map<string, Reading>();
const readingsSeen = new Map<string, number>();
const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';

document.documentElement.classList.add('js');

function tilesOf(deviceId: string): HTMLElement[] {
  return [...document.querySelectorAll<HTMLElement>(`.tile[data-device="${CSS.escape(deviceId)}"]`)];
}

const formatNumber = (v: number) => String(Number(v.toFixed(1)));

function shown(el: HTMLElement, value: unknown): string {
  const words = el.dataset.words ? (JSON.parse(el.dataset.words) as Record<string, string>) : undefined;
  if (words) return value === undefined ? '—' : (words[String(value)] ?? '—');
  if (value === undefined || value === null) return '—';
  return `${typeof value === 'number' ? formatNumber(value) : String(value)}${el.dataset.unit ?? ''}`;
}

/** Draws a tile from a reading: every `[data-read]` element takes its key's value. */
function draw(tile: HTMLElement, reading: Reading): void {
  for (const el of tile.querySelectorAll<HTMLElement>('[data-read]')) {
    const key = el.dataset.read!;
    const value = key === 'colour' ? (typeof reading.hue === 'number' ? hexOf(reading.hue, reading.saturation as number | undefined) : undefined) : reading[key];
    if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement) {
      // The control the person is moving is theirs until they let go.
      if (value !== undefined && el.dataset.moving !== 'true') el.value = String(value);
    } else if (el instanceof HTMLImageElement) {
      if (typeof value === 'string') el.src = value;
    } else if (el.getAttribute('role') === 'switch') {
      const on = value === true;
      el.setAttribute('aria-checked', String(on));
      el.textContent = on ? 'On' : 'Off';
      const command = el.closest('form')?.querySelector<HTMLInputElement>('input[name="command"]');
      if (command) command.value = on ? 'turn_off' : 'turn_on';
    } else if (key === 'locked' && reading.jammed === true) {
      el.textContent = 'Jammed';
    } else if (key === 'title' && value === undefined) {
      el.textContent = reading.playback === 'playing' ? 'Playing' : 'Nothing playing';
    } else if (key === 'artist' && value === undefined) {
      el.textContent = '';
    } else {
      el.textContent = shown(el, value);
    }
  }
  // Play or pause, whichever the player is not doing.
  const transport = tile.querySelector<HTMLButtonElement>('button[name="command"][value="play"], button[name="command"][value="pause"]');
  if (transport && reading.playback !== undefined) {
    const playing = reading.playback === 'playing';
    const name = tile.querySelector('h3')?.textContent ?? '';
    transport.value = playing ? 'pause' : 'play';
    transport.setAttribute('aria-label', `${playing ? 'Pause' : 'Play'} ${name}`);
  }
}

function setOnline(tile: HTMLElement, online: boolean): void {
  tile.classList.toggle('offline', !online);
  const badge = tile.querySelector<HTMLElement>('[data-online]');
  if (badge) {
    badge.textContent = online ? 'Online' : 'Offline';
    badge.className = `badge ${online ? 'online' : 'offline'}`;
  }
  const controls = tile.querySelector('fieldset.controls');
  if (controls instanceof HTMLFieldSetElement) controls.disabled = !online;
}

function showError(tile: HTMLElement, message: string | undefined): void {
  const box = tile.querySelector<HTMLElement>('[data-error]');
  if (!box) return;
  box.textContent = message ?? '';
  box.hidden = !message;
}

/** What a command will change, so the control moves before the hub answers. */
function predicted(command: string, fields: URLSearchParams, current: Reading): Reading {
  const n = (name: string) => {
    for (const [key, value] of fields) if (key.startsWith(`p.${name}:`)) return Number(value);
    return undefined;
  };
  switch (command) {
    case 'turn_on':
      return { on: true };
    case 'turn_off':
      return { on: false };
    case 'toggle':
      return { on: current.on !== true };
    case 'set_brightness':
      return { brightness: n('brightness'), on: (n('brightness') ?? 0) > 0 };
    case 'set_color_temp':
      return { colorTempKelvin: n('kelvin') };
    case 'set_percentage':
      return { percentage: n('percentage') };
    case 'set_position':
      return { position: n('position') };
    case 'volume_set':
      return { volume: n('volume') };
    case 'set_target_temperature':
      return { targetTemperature: n('temperature') };
    case 'set_hvac_mode':
      return { hvacMode: fields.get('p.mode:string') ?? current.hvacMode };
    case 'lock':
      return { locked: true, jammed: false };
    case 'unlock':
      return { locked: false, jammed: false };
    case 'play':
      return { playback: 'playing' };
    case 'pause':
      return { playback: 'paused' };
    default:
      return {};
  }
}

/** The climate stepper's − and +: from the target shown now, one step, within the range. */
function stepTarget(submitter: HTMLButtonElement, deviceId: string): void {
  const stepper = submitter.closest<HTMLElement>('.stepper');
  const delta = Number(submitter.dataset.delta);
  if (!stepper || !delta) return;
  const step = Number(stepper.dataset.step) || 0.5;
  const min = Number(stepper.dataset.min);
  const max = Number(stepper.dataset.max);
  const target = confirmed.get(deviceId)?.targetTemperature;
  const base = typeof target === 'number' ? target : delta < 0 ? max : min;
  submitter.value = String(Math.min(max, Math.max(min, Math.round((base + delta * step) / step) * step)));
}

async function send(form: HTMLFormElement, submitter: HTMLElement | null): Promise<void> {
  const tile = form.closest<HTMLElement>('.tile');
  const deviceId = tile?.dataset.device;
  if (!tile || !deviceId) return;
  if (submitter instanceof HTMLButtonElement) {
    if (submitter.dataset.confirm && !window.confirm(submitter.dataset.confirm)) return;
    stepTarget(submitter, deviceId);
  }
  const fields = new URLSearchParams();
  for (const [key, value] of new FormData(form)) if (typeof value === 'string') fields.append(key, value);
  if (submitter instanceof HTMLButtonElement && submitter.name) fields.set(submitter.name, submitter.value);
  const command = fields.get('command') ?? '';
  const before = confirmed.get(deviceId) ?? {};
  const seen = readingsSeen.get(deviceId) ?? 0;
  const expected = { ...before, ...predicted(command, fields, before) };
  for (const t of tilesOf(deviceId)) {
    draw(t, expected);
    showError(t, undefined);
  }
  let failure: string | undefined;
  try {
    const response = await fetch(form.action, { method: 'POST', body: fields, headers: { accept: 'application/json', 'x-csrf-token': csrf }, credentials: 'same-origin' });
    if (response.ok) {
      // Until the device reports, what it was told is the best guess; a report that came in the
      // meantime is newer than the guess and stays.
      if ((readingsSeen.get(deviceId) ?? 0) === seen) confirmed.set(deviceId, expected);
      return;
    }
    const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
    failure = body.error?.message ?? `The hub answered ${response.status}.`;
  } catch {
    failure = 'The hub did not answer; check the connection.';
  }
  // Back to what the device last said, with the hub's reason.
  for (const t of tilesOf(deviceId)) {
    draw(t, confirmed.get(deviceId) ?? before);
    showError(t, failure);
  }
}

/**
 * A plugin install stays on its page while npm runs, so that npm's lines (the live stream's
 * `plugin_progress`) show as they come; the outcome then comes as any form's would.
 */
async function install(form: HTMLFormElement): Promise<void> {
  const box = document.getElementById('plugin-progress');
  const fields = new URLSearchParams();
  for (const [key, value] of new FormData(form)) if (typeof value === 'string') fields.append(key, value);
  const name = fields.get('pluginId') ?? '';
  if (box) {
    box.hidden = false;
    box.textContent = `Installing ${name}…\n`;
  }
  for (const button of document.querySelectorAll<HTMLButtonElement>('form.install button')) button.disabled = true;
  let failure: string;
  try {
    const response = await fetch(form.action, { method: 'POST', body: fields, headers: { accept: 'application/json', 'x-csrf-token': csrf }, credentials: 'same-origin' });
    if (response.ok) {
      window.location.assign(`/os/plugins?done=${encodeURIComponent(`${name} is installed.`)}`);
      return;
    }
    const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
    failure = body.error?.message ?? `The hub answered ${response.status}.`;
  } catch {
    failure = 'The hub did not answer; check the connection.';
  }
  window.location.assign(`/os/plugins?error=${encodeURIComponent(failure)}`);
}

function enhanceControls(): void {
  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (form instanceof HTMLFormElement && form.classList.contains('install')) {
      event.preventDefault();
      void install(form);
      return;
    }
    if (!(form instanceof HTMLFormElement) || !form.classList.contains('control')) return;
    event.preventDefault();
    void send(form, event.submitter);
  });
  // Sliders, selects and colours send when let go; the output beside a slider follows it.
  document.addEventListener('input', (event) => {
    const input = event.target;
    if (!(input instanceof HTMLInputElement) || input.type !== 'range') return;
    input.dataset.moving = 'true';
    const output = input.closest('form')?.querySelector<HTMLElement>('output[data-read]');
    if (output) output.textContent = shown(output, Number(input.value));
  });
  document.addEventListener('change', (event) => {
    const input = event.target;
    if (!(input instanceof HTMLInputElement || input instanceof HTMLSelectElement)) return;
    const form = input.closest('form.control');
    if (!(form instanceof HTMLFormElement) || input.type === 'checkbox') return;
    delete input.dataset.moving;
    void send(form, null);
  });
  // The unlock is confirmed in a dialog, not by the box the page shows without a script.
  for (const box of document.querySelectorAll<HTMLInputElement>('.confirm input[type="checkbox"]')) box.required = false;
}

/** The status line: online while the live stream is open, reconnecting while it retries, offline when the network is gone. */
function status(state: 'online' | 'reconnecting' | 'offline'): void {
  const line = document.getElementById('hub-status');
  if (!line) return;
  line.dataset.status = state;
  line.textContent = state === 'online' ? 'Hub online' : state === 'reconnecting' ? 'Reconnecting to the hub…' : 'Offline: no connection to the hub';
}

/** A plugin install's progress: npm's lines as they come, then the outcome (the plugins page). */
function showProgress(event: MessageEvent<string>): void {
  const box = document.getElementById('plugin-progress');
  if (!box) return;
  const p = JSON.parse(event.data) as { pluginId: string; line?: string; outcome?: string; error?: string };
  box.hidden = false;
  const text = p.line ?? (p.outcome === 'succeeded' ? `${p.pluginId}: done.` : `${p.pluginId}: failed${p.error ? `: ${p.error}` : ''}.`);
  box.textContent = `${box.textContent ?? ''}${text}\n`.split('\n').slice(-200).join('\n');
  box.scrollTop = box.scrollHeight;
}

function live(): void {
  if (!('EventSource' in window) || (document.querySelectorAll('.tile').length === 0 && !document.getElementById('plugin-progress'))) return;
  let source: EventSource | undefined;
  let retry = 1000;
  const open = () => {
    source = new EventSource('/os/events');
    source.addEventListener('ready', () => {
      retry = 1000;
      status('online');
    });
    source.addEventListener('reading', (event) => {
      const change = JSON.parse((event as MessageEvent<string>).data) as { deviceId: string; reading: Reading; online: boolean };
      confirmed.set(change.deviceId, change.reading);
      readingsSeen.set(change.deviceId, (readingsSeen.get(change.deviceId) ?? 0) + 1);
      for (const tile of tilesOf(change.deviceId)) {
        draw(tile, change.reading);
        setOnline(tile, change.online);
      }
    });
    source.addEventListener('plugin_progress', (event) => showProgress(event as MessageEvent<string>));
    source.addEventListener('online', (event) => {
      const change = JSON.parse((event as MessageEvent<string>).data) as { deviceId: string; online: boolean };
      for (const tile of tilesOf(change.deviceId)) setOnline(tile, change.online);
    });
    source.onerror = () => {
      status(navigator.onLine ? 'reconnecting' : 'offline');
      // The browser retries an open stream by itself; a closed one (the session ended, the hub
      // refused) is opened again here, waiting longer each time.
      if (source?.readyState === EventSource.CLOSED) {
        source.close();
        setTimeout(open, retry);
        retry = Math.min(retry * 2, 30_000);
      }
    };
  };
  window.addEventListener('offline', () => status('offline'));
  window.addEventListener('online', () => status('reconnecting'));
  open();
}

/** The elements of `root` that Tab stops at, in order (none has a positive tabindex in these pages). */
function tabStops(root: HTMLElement): HTMLElement[] {
  const candidates = root.querySelectorAll<HTMLElement>('a[href], button, input:not([type="hidden"]), select, textarea, summary, [tabindex]');
  return [...candidates].filter((el) => el.tabIndex >= 0 && !(el as HTMLButtonElement).disabled && el.getClientRects().length > 0);
}

/**
 * A dialog the server draws open for the page without a script (`dialog[open][data-modal]`) is
 * shown again with `showModal()`: the page behind it leaves the tab order and the accessibility
 * tree, and Escape closes it. When it closes, focus goes back to the control that opened it
 * (`data-return-focus`, an element id; the opener is on the previous page when the server opened
 * the dialog, so the browser's own return of focus finds nothing), and the address becomes
 * `data-close-url`, so that a reload does not open it again. Tab from its last control goes to
 * its first, Shift+Tab from its first to its last (the browser would move on to its own toolbar,
 * leaving the page with no focus).
 */
function modalDialogs(): void {
  for (const dialog of document.querySelectorAll<HTMLDialogElement>('dialog[data-modal]')) {
    if (!dialog.open || typeof dialog.showModal !== 'function') continue;
    // Taking the attribute away hides the dialog without a `close` event; showModal() needs it closed.
    dialog.removeAttribute('open');
    dialog.showModal();
    dialog.addEventListener('keydown', (event) => {
      if (event.key !== 'Tab' || event.altKey || event.ctrlKey || event.metaKey) return;
      const stops = tabStops(dialog);
      const [first, last] = [stops[0], stops.at(-1)];
      if (!first || !last) return;
      if (event.shiftKey ? document.activeElement === first : document.activeElement === last) {
        event.preventDefault();
        (event.shiftKey ? last : first).focus();
      }
    });
    dialog.addEventListener('close', () => {
      const { closeUrl, returnFocus } = dialog.dataset;
      if (closeUrl) history.replaceState(history.state, '', closeUrl);
      if (returnFocus) document.getElementById(returnFocus)?.focus();
    });
  }
}

/** The readings the page was drawn with, so that a rollback has something to return to. */
function readInitial(): void {
  const data = document.getElementById('readings');
  if (!data?.textContent) return;
  for (const [id, reading] of Object.entries(JSON.parse(data.textContent) as Record<string, Reading>)) confirmed.set(id, reading);
}

readInitial();
modalDialogs();
enhanceControls();
live();
if ('serviceWorker' in navigator && window.isSecureContext) void navigator.serviceWorker.register('/os/sw.js', { scope: '/os/' }).catch(() => undefined);
