import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startAndroidTvEmulator, type AndroidTvEmulator } from './support/androidtv-emulator.js';
import { launchBrowser, newPage, screenshot, seriousViolations, signInWithForm } from './support/browser.js';
import { startMdnsResponder, type MdnsResponder } from './support/mdns-responder.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';

/**
 * Adding things from the household pages, in Chromium: the media endpoints an mDNS responder
 * announces on loopback are found by "Look for devices", taken out and added again, and an
 * Android TV (the emulator) is paired with the code it shows, typed into the page's dialog.
 */

let server: TestServer;
let token: string;
let tv: AndroidTvEmulator;
let mdns: MdnsResponder;
let browser: Browser;
let page: Page;
const TV = 'androidtv:11:22:33:44:55:66';
const SPEAKER = 'cast:spk1';

beforeAll(async () => {
  tv = await startAndroidTvEmulator({ silentPairing: false });
  mdns = await startMdnsResponder({
    services: [
      { type: '_androidtvremote2._tcp', instanceName: 'Den TV', host: 'den-tv.local', port: tv.remotePort, addresses: ['127.0.0.1'], txt: { bt: '11:22:33:44:55:66' } },
      { type: '_googlecast._tcp', instanceName: 'Speaker-1', host: 'speaker.local', port: 8009, addresses: ['127.0.0.3'], txt: { id: 'spk1', fn: 'Kitchen speaker' } },
    ],
  });
  server = await startServer({ env: { MEDIA_MDNS_ADDRESS: `127.0.0.1:${mdns.port}`, MEDIA_DISCOVERY_TIMEOUT_MS: '300', CAST_PAIRING_STEP_TIMEOUT_MS: '2000' } });
  token = await server.login();
  browser = await launchBrowser();
  page = await newPage(browser);
  await signInWithForm(page, server.url, ADMIN);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await mdns?.close();
  await tv?.close();
});

const row = (id: string) => page.locator(`tr[data-endpoint="${id}"]`);

async function endpoint(id: string): Promise<{ enabled: boolean; paired: boolean }> {
  const { endpoints } = (await (await server.request('GET', '/app/os/media-services/endpoints', { token })).json()) as { endpoints: Array<{ id: string; enabled: boolean; paired: boolean }> };
  return endpoints.find((e) => e.id === id)!;
}

describe('adding devices in the browser', () => {
  it('finds the endpoints on the network, takes one out and adds it again', async () => {
    await page.getByRole('link', { name: 'Add devices' }).click();
    await expect.poll(() => page.title()).toContain('Add devices');
    await page.getByRole('button', { name: 'Look for devices' }).click();
    await expect.poll(() => page.locator('.flash').first().textContent()).toMatch(/^Found 2 \(2 new\)\.$/);
    expect(await row(TV).locator('[data-status]').textContent()).toBe('Added; needs pairing');
    expect(await row(SPEAKER).locator('td').first().textContent()).toContain('Kitchen speaker');

    await row(SPEAKER).getByRole('button', { name: 'Take Kitchen speaker out of the home' }).click();
    await expect.poll(() => page.locator('.flash').first().textContent()).toBe('Kitchen speaker is out of the home.');
    expect(await row(SPEAKER).locator('[data-status]').textContent()).toBe('Not added');
    expect((await endpoint(SPEAKER)).enabled).toBe(false);
    await row(SPEAKER).getByRole('button', { name: 'Add Kitchen speaker' }).click();
    await expect.poll(() => page.locator('.flash').first().textContent()).toBe('Kitchen speaker is added.');
    expect((await endpoint(SPEAKER)).enabled).toBe(true);
  });

  it('pairs an Android TV with the code it shows, typed into a dialog; a wrong code asks again', async () => {
    await row(TV).getByText('Pairing port', { exact: true }).click();
    await row(TV).getByLabel(/Pairing port of Den TV/).fill(String(tv.pairingPort));
    await row(TV).getByRole('button', { name: 'Pair Den TV' }).click();
    const dialog = page.getByRole('dialog', { name: 'Pair Den TV' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'os-add-pairing');
    const code = tv.shownCode()!;
    // A code whose first byte is wrong is caught by the hub: the pairing stays open.
    const wrong = `${code.startsWith('00') ? '11' : '00'}${code.slice(2)}`;
    await dialog.getByLabel('Code shown on the TV').fill(wrong);
    await dialog.getByRole('button', { name: 'Pair' }).click();
    await expect.poll(() => page.locator('.flash.error').textContent()).toBeTruthy();
    await dialog.getByLabel('Code shown on the TV').fill(code);
    await dialog.getByRole('button', { name: 'Pair' }).click();
    await expect.poll(() => page.locator('.flash').first().textContent()).toBe('Den TV is paired.');
    expect(await row(TV).locator('[data-status]').textContent()).toBe('Added');
    expect(await page.getByRole('dialog').count()).toBe(0);
    expect((await endpoint(TV)).paired).toBe(true);
    expect(tv.pairedClients).toHaveLength(1);
  });

  it('is for administrators only', async () => {
    await server.request('POST', '/admin/users', { token, body: { username: 'kid', password: 'kid-password-1' } });
    const other = await newPage(browser);
    await signInWithForm(other, server.url, { username: 'kid', password: 'kid-password-1' });
    expect(await other.getByRole('link', { name: 'Add devices' }).count()).toBe(0);
    await other.goto(`${server.url}/os/add`);
    expect(await other.locator('main').textContent()).toContain('Only administrators add devices.');
    const refused = await other.evaluate<number>(`fetch('/os/add/discover', { method: 'POST', headers: { 'x-csrf-token': document.querySelector('meta[name=csrf-token]').content, accept: 'application/json' } }).then((r) => r.status)`);
    expect(refused).toBe(403);
    await other.context().close();
  });
});
