import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startAndroidTvEmulator, type AndroidTvEmulator } from './support/androidtv-emulator.js';
import { launchBrowser, newPage, screenshot, seriousViolations, signInWithForm } from './support/browser.js';
import { startMdnsResponder, type MdnsResponder } from './support/mdns-responder.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';
import { eventually, TestDriver } from './support/ws-driver.js';

/**
 * Accessibility of the web pages, checked by axe-core (Deque's engine, run in the page): no
 * serious or critical violation on any household page or the admin panel's, signed in and out,
 * on a phone and on a desktop, in the light and the dark scheme; the home page with devices
 * offline (their driver gone), the add-devices page with an Android TV to pair and its pairing
 * dialog open. The pairing dialog is modal: Tab stays in it, Escape closes it, and focus goes
 * back to the button that opened it.
 */

let server: TestServer;
let token: string;
let driver: TestDriver;
let browser: Browser;
let tv: AndroidTvEmulator;
let mdns: MdnsResponder;
const TV = 'androidtv:11:22:33:44:55:66';
const PAIRING = `/os/add?pair=${encodeURIComponent(TV)}`;

beforeAll(async () => {
  tv = await startAndroidTvEmulator({ silentPairing: false });
  mdns = await startMdnsResponder({
    services: [{ type: '_androidtvremote2._tcp', instanceName: 'Den TV', host: 'den-tv.local', port: tv.remotePort, addresses: ['127.0.0.1'], txt: { bt: '11:22:33:44:55:66' } }],
  });
  server = await startServer({ env: { MEDIA_MDNS_ADDRESS: `127.0.0.1:${mdns.port}`, MEDIA_DISCOVERY_TIMEOUT_MS: '300', CAST_PAIRING_STEP_TIMEOUT_MS: '2000' } });
  token = await server.login();
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.a11y');
  driver.serveActions(() => undefined);
  for (const device of [
    { id: 'l', name: 'Desk lamp', deviceClass: 'light', attributes: { colorModes: ['brightness', 'color_temp', 'hs'] }, state: { on: true, brightness: 50 } },
    { id: 'c', name: 'Blind', deviceClass: 'cover', state: { position: 50 } },
    { id: 't', name: 'Thermostat', deviceClass: 'climate', attributes: { hvacModes: ['heat', 'off'] }, state: { current_temperature: 20, target_temperature: 21, hvac_mode: 'heat' } },
    { id: 'k', name: 'Door', deviceClass: 'lock', state: { locked: true } },
    { id: 'm', name: 'Speaker', deviceClass: 'media_player', state: { on: true, playback: 'paused', volume: 30, title: 'A song' } },
    { id: 's', name: 'Humidity', deviceClass: 'sensor', attributes: { sensorClass: 'humidity' }, state: { humidity: 45 } },
    { id: 'b', name: 'Hall motion', deviceClass: 'binary_sensor', attributes: { sensorClass: 'motion' }, state: { motion: false } },
    { id: 'f', name: 'Fan', deviceClass: 'fan', state: { on: false } },
    { id: 'r', name: 'TV remote', deviceClass: 'remote', commands: ['power', 'mute'], state: {} },
  ]) {
    driver.send({ type: 'DEVICE_DISCOVERED', device });
  }
  await eventually(async () => (((await (await server.request('GET', '/app/os/devices', { token })).json()) as { devices: unknown[] }).devices.length >= 9 ? true : undefined));
  const space = ((await (await server.request('POST', '/app/os/spaces/save', { token, body: { name: 'Study' } })).json()) as { id: string }).id;
  const { devices } = (await (await server.request('GET', '/app/os/devices', { token })).json()) as { devices: Array<{ id: string }> };
  await server.request('POST', `/app/os/spaces/${space}/devices/assign`, { token, body: { deviceIds: devices.slice(0, 5).map((d) => d.id) } });
  await server.request('POST', '/app/os/programs/save', { token, body: { yaml: 'name: Morning\nsteps:\n  - delay: 1s\n' } });
  // Devices whose driver has gone: offline, each with its "Offline" badge, in a room and not.
  const gone = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.gone');
  gone.send({ type: 'DEVICE_DISCOVERED', device: { id: 'p', name: 'Porch light', deviceClass: 'light', attributes: { colorModes: ['brightness'] }, state: { on: false, brightness: 0 } } });
  gone.send({ type: 'DEVICE_DISCOVERED', device: { id: 'x', name: 'Cellar temperature', deviceClass: 'sensor', attributes: { sensorClass: 'temperature' }, state: { temperature: 12 } } });
  const offline = async () => ((await (await server.request('GET', '/app/os/devices', { token })).json()) as { devices: Array<{ id: string; name: string; online: boolean }> }).devices.filter((d) => ['Porch light', 'Cellar temperature'].includes(d.name));
  const porch = (await eventually(async () => ((await offline()).length === 2 ? await offline() : undefined))).find((d) => d.name === 'Porch light')!;
  await server.request('POST', `/app/os/spaces/${space}/devices/assign`, { token, body: { deviceIds: [porch.id] } });
  gone.close();
  await eventually(async () => ((await offline()).every((d) => !d.online) ? true : undefined), 5000, 'the devices offline');
  // An Android TV found on the network, added and not paired: the add-devices page offers to pair it.
  expect((await server.request('POST', '/app/os/media-services/endpoints/discover', { token, body: {} })).status).toBe(200);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  driver?.close();
  await server?.close();
  await mdns?.close();
  await tv?.close();
});

const HOUSEHOLD_PAGES = ['/os/', '/os/programs', '/os/media', '/os/remotes', '/os/rooms', '/os/add', PAIRING, '/os/plugins', '/os/password'];
const ADMIN_PAGES = ['/admin/', '/admin/panel/users', '/admin/panel/drivers', '/admin/panel/ir', '/admin/panel/logs', '/admin/panel/backups'];

describe('accessibility (axe-core)', () => {
  for (const [label, viewport] of [
    ['phone', { width: 390, height: 844 }],
    ['desktop', { width: 1280, height: 900 }],
  ] as const) {
    for (const scheme of ['light', 'dark'] as const) {
      it(`has no serious or critical violation on any page, signed out and in, on a ${label} in the ${scheme} scheme`, { timeout: 120_000 }, async () => {
        const page = await newPage(browser, viewport);
        await page.emulateMedia({ colorScheme: scheme });
        const found: Record<string, string[]> = {};
        for (const path of ['/os/login', '/admin/login']) {
          await page.goto(`${server.url}${path}`);
          found[`${path} (signed out)`] = await seriousViolations(page);
        }
        await signInWithForm(page, server.url, ADMIN, '/os/login');
        await signInWithForm(page, server.url, ADMIN, '/admin/login');
        for (const path of [...HOUSEHOLD_PAGES, ...ADMIN_PAGES]) {
          await page.goto(`${server.url}${path}`);
          // The page itself, signed in (not a sign-in page it was sent to).
          const url = new URL(page.url());
          expect(`${url.pathname}${url.search}`, path).toBe(path);
          if (path === PAIRING) expect(await page.getByRole('dialog', { name: 'Pair Den TV' }).isVisible()).toBe(true);
          found[path] = await seriousViolations(page);
        }
        await page.goto(`${server.url}/os/`);
        expect(await page.locator('.tile').count()).toBe(11);
        expect(await page.locator('.tile.offline .badge.offline[data-online]').count()).toBe(2);
        await screenshot(page, `os-home-${label}-${scheme}`);
        await page.context().close();
        expect(Object.fromEntries(Object.entries(found).filter(([, v]) => v.length > 0))).toEqual({});
      });
    }
  }
});

/** Whether the page's focus is in its open dialog. */
const focusInDialog = (page: Page) => page.evaluate<boolean>(`document.activeElement?.closest('dialog[open]') != null`);
/** The focused element's name (its aria-label, else its text), or its id. */
const focused = (page: Page) => page.evaluate<string | null>(`document.activeElement?.getAttribute('aria-label') ?? (document.activeElement?.id || document.activeElement?.textContent || null)`);

describe('the pairing dialog', () => {
  for (const [label, viewport] of [
    ['phone', { width: 390, height: 844 }],
    ['desktop', { width: 1280, height: 900 }],
  ] as const) {
    it(`is modal on a ${label}: Tab and Shift+Tab stay in it, Escape closes it, focus goes back to its Pair button`, async () => {
      const page = await newPage(browser, viewport);
      await signInWithForm(page, server.url, ADMIN);
      await page.goto(`${server.url}${PAIRING}`);
      const dialog = page.getByRole('dialog', { name: 'Pair Den TV' });
      await expect.poll(() => dialog.evaluate((d) => d.matches(':modal'))).toBe(true);
      // The code field has the focus; the page behind is out of reach of the keyboard.
      expect(await focused(page)).toBe('pair-code');
      for (const key of [...Array<string>(8).fill('Tab'), ...Array<string>(8).fill('Shift+Tab')]) {
        await page.keyboard.press(key);
        expect(await focusInDialog(page), `after ${key}: ${await focused(page)}`).toBe(true);
      }
      expect(await seriousViolations(page)).toEqual([]);
      await page.keyboard.press('Escape');
      await expect.poll(() => dialog.count()).toBe(0);
      // The page script moves focus on the dialog's close event, a moment after Escape.
      await expect.poll(() => focused(page)).toBe('Pair Den TV');
      // A reload does not open it again.
      expect(new URL(page.url()).search).toBe('');
      await page.context().close();
    });
  }

  it('opened by the Pair button (the TV shows its code), gives the focus back to it on Escape', async () => {
    const page = await newPage(browser);
    await signInWithForm(page, server.url, ADMIN);
    await page.goto(`${server.url}/os/add`);
    const row = page.locator(`tr[data-endpoint="${TV}"]`);
    await row.getByText('Pairing port', { exact: true }).click();
    await row.getByLabel(/Pairing port of Den TV/).fill(String(tv.pairingPort));
    await row.getByRole('button', { name: 'Pair Den TV' }).click();
    const dialog = page.getByRole('dialog', { name: 'Pair Den TV' });
    await expect.poll(() => dialog.evaluate((d) => d.matches(':modal'))).toBe(true);
    expect(tv.shownCode()).toBeTruthy();
    await page.keyboard.press('Tab');
    expect(await focusInDialog(page)).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    // The page script moves focus on the dialog's close event, a moment after Escape.
      await expect.poll(() => focused(page)).toBe('Pair Den TV');
    await page.context().close();
  });
});
