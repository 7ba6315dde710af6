import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage, screenshot, seriousViolations, signInWithForm } from './support/browser.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';
import { startZwaveMock, type ZwaveMock } from './support/zwave-mock.js';

/**
 * The Z-Wave admin page (src/integrations/zwave/admin-page.ts) in Chromium, against zwave-js's mock
 * controller over tcp://: the admin turns Z-Wave on by typing the port (no environment variable,
 * no restart), sees the nodes, starts and stops an inclusion, and removes a node that stopped
 * answering. axe-core finds no serious or critical violation at phone and desktop sizes, light
 * and dark, and the page never scrolls sideways. Screenshots go to test-output/screenshots.
 */

const VIEWPORTS = [
  ['phone', { width: 390, height: 844 }],
  ['desktop', { width: 1280, height: 900 }],
] as const;
const PAGE = '/admin/panel/zwave';

let mock: ZwaveMock;
let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  mock = await startZwaveMock();
  server = await startServer();
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await mock?.close();
});

/** Reloads the page until `ready` holds on it (the controller opens and interviews in the background). */
async function reloadUntil(page: Page, what: string, ms: number, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    await page.goto(`${server.url}${PAGE}`);
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await page.waitForTimeout(250);
  }
}

/** The page's serious axe findings, and whether it is wider than the window (it must not scroll sideways). */
async function check(page: Page, name: string): Promise<{ violations: string[]; overflow: number }> {
  await screenshot(page, name);
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  return { violations: await seriousViolations(page), overflow };
}

describe('the Z-Wave admin page', () => {
  it('turns Z-Wave on from the page, lists the nodes, and passes axe at phone and desktop sizes, light and dark', { timeout: 90_000 }, async () => {
    const page = await newPage(browser);
    await signInWithForm(page, server.url, ADMIN, '/admin/login');
    await page.goto(`${server.url}${PAGE}`);
    expect(await page.locator('[data-zwave-state]').getAttribute('data-zwave-state')).toBe('off');
    const off = await check(page, 'admin-zwave-off-desktop-light');
    expect(off).toEqual({ violations: [], overflow: 0 });

    await page.getByLabel('Controller port').fill(mock.url);
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByText('Z-Wave uses the new port now').count()).toBeGreaterThan(0);
    await reloadUntil(page, 'five nodes interviewed', 45_000, async () => (await page.locator('li[data-node]').count()) === 5 && (await page.getByText('Interview: Complete').count()) === 5);
    expect(await page.locator('[data-zwave-state]').getAttribute('data-zwave-state')).toBe('running');
    expect(await page.locator('li[data-node="4"]').innerText()).toMatch(/sensor/);
    await page.context().close();

    const found: Record<string, { violations: string[]; overflow: number }> = {};
    for (const [label, viewport] of VIEWPORTS) {
      for (const scheme of ['light', 'dark'] as const) {
        const view = await newPage(browser, viewport);
        await view.emulateMedia({ colorScheme: scheme });
        await signInWithForm(view, server.url, ADMIN, '/admin/login');
        await view.goto(`${server.url}${PAGE}`);
        found[`${label} ${scheme}`] = await check(view, `admin-zwave-${label}-${scheme}`);
        await view.context().close();
      }
    }
    expect(found).toEqual(Object.fromEntries(Object.keys(found).map((k) => [k, { violations: [], overflow: 0 }])));
  });

  it('starts an inclusion and stops it, from the page', { timeout: 30_000 }, async () => {
    const page = await newPage(browser, VIEWPORTS[0][1]);
    await signInWithForm(page, server.url, ADMIN, '/admin/login');
    await page.goto(`${server.url}${PAGE}`);
    await page.getByRole('button', { name: 'Add a device' }).click();
    await page.goto(`${server.url}${PAGE}`);
    const status = page.locator('[data-inclusion]');
    expect(await status.getAttribute('data-inclusion')).toBe('including');
    expect(await check(page, 'admin-zwave-including-phone-light')).toEqual({ violations: [], overflow: 0 });
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.goto(`${server.url}${PAGE}`);
    expect(await page.locator('[data-inclusion]').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add a device' }).count()).toBe(1);
    await page.context().close();
  });

  it('shows a node that stopped answering as dead, with a Remove button that removes it', { timeout: 60_000 }, async () => {
    const page = await newPage(browser, VIEWPORTS[0][1]);
    await page.emulateMedia({ colorScheme: 'dark' });
    await signInWithForm(page, server.url, ADMIN, '/admin/login');
    mock.setResponsive('plug', false);
    // A command to the plug goes unanswered: the controller marks the node dead.
    const token = await server.login();
    const devices = ((await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Array<{ id: string; driverKey?: string; driverDeviceId?: string }> }).devices;
    const plug = devices.find((d) => d.driverKey === 'zwave' && /-6$/.test(d.driverDeviceId ?? ''))!;
    await server.request('POST', `/v1/os/devices/${encodeURIComponent(plug.id)}/command`, { token, body: { command: 'turn_off', params: {} } });
    await reloadUntil(page, 'node 6 dead', 20_000, async () => (await page.locator('li[data-node="6"]').innerText()).includes('dead: not answering'));
    const remove = page.getByRole('button', { name: 'Remove failed node 6' });
    expect(await remove.count()).toBe(1);
    expect(await check(page, 'admin-zwave-dead-node-phone-dark')).toEqual({ violations: [], overflow: 0 });
    await remove.click();
    await expect.poll(() => page.getByText('The failed node was removed.').count()).toBeGreaterThan(0);
    await page.goto(`${server.url}${PAGE}`);
    expect(await page.locator('li[data-node="6"]').count()).toBe(0);
    await page.context().close();
  });
});
