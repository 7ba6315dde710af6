import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, newPage, screenshot, seriousViolations, signInWithForm } from './support/browser.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';
import { eventually, TestDriver } from './support/ws-driver.js';

/**
 * Accessibility of the web pages, checked by axe-core (Deque's engine, run in the page): no
 * serious or critical violation on any household page or the admin panel's, signed in and out,
 * on a phone and on a desktop, in the light and the dark scheme.
 */

let server: TestServer;
let token: string;
let driver: TestDriver;
let browser: Browser;

beforeAll(async () => {
  server = await startServer();
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
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  driver?.close();
  await server?.close();
});

const HOUSEHOLD_PAGES = ['/os/', '/os/programs', '/os/media', '/os/remotes', '/os/rooms', '/os/add', '/os/plugins', '/os/password'];
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
          expect(new URL(page.url()).pathname, path).toBe(path);
          found[path] = await seriousViolations(page);
        }
        await page.goto(`${server.url}/os/`);
        expect(await page.locator('.tile').count()).toBe(9);
        await screenshot(page, `os-home-${label}-${scheme}`);
        await page.context().close();
        expect(Object.fromEntries(Object.entries(found).filter(([, v]) => v.length > 0))).toEqual({});
      });
    }
  }
});
