import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, seriousViolations, signInWithForm } from './support/browser.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';

/**
 * The home settings page and the first-run onboarding, in Chromium with axe-core, on a phone and
 * a desktop. One hub as started with ADMIN_PASSWORD (nothing to change first): the admin is sent
 * to the welcome, a bad latitude and time zone are refused at their fields with nothing saved,
 * the browser's position fills the location, finishing ends it for good; a member is never sent
 * there and reads the settings. A second hub with a generated password: the password comes
 * first, then the welcome, which "Skip for now" ends too.
 */

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const BERLIN = { latitude: 52.52, longitude: 13.405 };
const MEMBER = { username: 'mia', password: 'mia-password-1' };

let server: TestServer;
let generatedHub: TestServer;
let generated = '';
let token: string;
let browser: Browser;

interface Settings {
  name: string;
  latitude: number | null;
  longitude: number | null;
  elevation: number | null;
  timezone: string;
  units: string;
  onboardedAt: number | null;
}

beforeAll(async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  [server, generatedHub, browser] = await Promise.all([startServer(), startServer({ env: { ADMIN_PASSWORD: '' }, logger: pino({ level: 'warn' }, sink) }), launchBrowser()]);
  generated = /generated password (\S+)/.exec(lines.find((l) => l.includes('generated password')) ?? '')?.[1] ?? '';
  token = await server.login();
  expect((await server.request('POST', '/admin/users', { token, body: MEMBER })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([server?.close(), generatedHub?.close()]);
});

async function open(viewport: { width: number; height: number }, options: { geolocation?: boolean; javaScript?: boolean } = {}): Promise<Page> {
  const context = await browser.newContext({
    viewport,
    ...(options.geolocation ? { geolocation: BERLIN, permissions: ['geolocation'] } : {}),
    ...(options.javaScript === false ? { javaScriptEnabled: false } : {}),
  });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.setDefaultNavigationTimeout(10_000);
  return page;
}

const shot = (page: Page, name: string) => page.screenshot({ path: `/tmp/onboarding-${name}.png`, fullPage: true });
const path = (page: Page) => new URL(page.url()).pathname;
const flash = (page: Page) => page.locator('.flash').first().textContent();
const settingsOf = async (hub = server, bearer = token) => (await (await hub.request('GET', '/v1/os/home/settings', { token: bearer })).json()) as Settings;
/** Lets a value past the browser's own checks (min, max), so that the hub's answer is what shows. */
const skipBrowserChecks = (page: Page) => page.evaluate(`document.querySelectorAll('form').forEach((f) => { f.noValidate = true; })`);

describe('the home settings and the first-run onboarding', () => {
  it('asks nothing first of an admin whose password ADMIN_PASSWORD set', async () => {
    const me = (await (await server.request('GET', '/v1/os/auth/me', { token })).json()) as { mustChangePassword: boolean };
    expect(me.mustChangePassword).toBe(false);
    expect((await settingsOf()).onboardedAt).toBeNull();
  });

  it('never sends a member to the welcome; a member reads the settings', async () => {
    const page = await open(PHONE);
    await signInWithForm(page, server.url, MEMBER);
    expect(path(page)).toBe('/os/');
    const main = page.locator('main');
    expect(await main.textContent()).toContain('No devices yet.');
    expect(await main.textContent()).toContain('once an administrator of the hub brings them in');
    expect(await main.locator('a[href^="/admin/panel/"]').count()).toBe(0);
    await page.goto(`${server.url}/os/welcome`);
    expect(path(page)).toBe('/os/welcome');
    expect(await main.textContent()).toContain('Only administrators set up the home.');
    await page.goto(`${server.url}/os/settings`);
    expect(await page.locator('[data-settings]').textContent()).toMatch(/Location \(latitude, longitude\)\s*Not set/);
    expect(await page.locator('input:not([type=hidden]), select').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'member-settings-phone');
    // Nor can a member save them.
    const refused = await page.evaluate<number>(
      `fetch('/os/settings', { method: 'POST', headers: { 'x-csrf-token': document.querySelector('meta[name=csrf-token]').content, 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ name: 'Mine' }) }).then((r) => r.status)`,
    );
    expect(refused).toBe(403);
    expect((await settingsOf()).name).toBe('Home');
    await page.context().close();
  });

  it('sends the admin to the welcome on a phone: errors at their fields with nothing saved, the position from the browser, the ways to bring devices in, then done for good', async () => {
    const page = await open(PHONE, { geolocation: true });
    await signInWithForm(page, server.url, ADMIN);
    expect(path(page)).toBe('/os/welcome');
    expect(await page.title()).toBe('Welcome · Home · Home Control');
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBeLessThanOrEqual(0);
    await shot(page, 'welcome-phone');

    await page.getByLabel('Name of the home').fill('Lindenhof');
    await page.getByRole('button', { name: "Use this browser's position" }).click();
    await expect.poll(() => page.getByLabel(/^Latitude/).inputValue()).toBe('52.5200');
    expect(await page.getByLabel(/^Longitude/).inputValue()).toBe('13.4050');
    expect(await page.locator('#locate-status').textContent()).toContain('Filled in from this browser');
    expect(await page.getByText('Most browsers share their position only with a page served over HTTPS').count()).toBe(1);
    await page.getByLabel('Time zone').selectOption('Europe/Berlin');
    await page.getByLabel('Imperial').check();

    // A latitude past the pole: the hub's 400 at the field, the values as typed, nothing saved.
    await page.getByLabel(/^Latitude/).fill('95');
    await skipBrowserChecks(page);
    const answer = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/os/welcome');
    await page.getByRole('button', { name: 'Save and continue' }).click();
    expect((await answer).status()).toBe(400);
    await expect.poll(() => page.locator('#latitude-error').textContent()).toBe('Latitude must be at most 90.');
    expect(await page.getByLabel(/^Latitude/).getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel(/^Latitude/).getAttribute('aria-describedby')).toContain('latitude-error');
    expect(await page.locator('.flash.error').textContent()).toBe('Nothing was saved: see “Latitude” below.');
    expect(await page.getByLabel('Name of the home').inputValue()).toBe('Lindenhof');
    expect(await page.getByLabel('Time zone').inputValue()).toBe('Europe/Berlin');
    expect(await page.getByLabel('Imperial').isChecked()).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'error-phone');
    expect(await settingsOf()).toMatchObject({ name: 'Home', latitude: null, longitude: null, units: 'metric', onboardedAt: null });

    // A time zone the hub does not know (the select offers none; a hand-made request can).
    await page.getByLabel(/^Latitude/).fill('52.52');
    await page.evaluate(`(() => { const s = document.getElementById('timezone'); s.add(new Option('Mars/Olympus', 'Mars/Olympus')); s.value = 'Mars/Olympus'; })()`);
    await skipBrowserChecks(page);
    await page.getByRole('button', { name: 'Save and continue' }).click();
    await expect.poll(() => page.locator('#timezone-error').textContent()).toBe('Unknown time zone "Mars/Olympus" (use an IANA name such as "Europe/Berlin")');
    expect(await page.getByLabel('Time zone').getAttribute('aria-invalid')).toBe('true');
    expect(await settingsOf()).toMatchObject({ name: 'Home', latitude: null, onboardedAt: null });

    await page.getByLabel('Time zone').selectOption('Europe/Berlin');
    await page.getByRole('button', { name: 'Save and continue' }).click();
    await page.waitForURL(/\/os\/welcome\/devices\?done=/);
    expect(await flash(page)).toBe('Saved.');
    expect(await settingsOf()).toMatchObject({ name: 'Lindenhof', ...BERLIN, timezone: 'Europe/Berlin', units: 'imperial', onboardedAt: null });
    // Saved, not finished: the home page still starts here.
    await page.goto(`${server.url}/os/`);
    expect(path(page)).toBe('/os/welcome');
    expect(await page.getByLabel('Name of the home').inputValue()).toBe('Lindenhof');

    await page.goto(`${server.url}/os/welcome/devices`);
    const ways = page.getByRole('region', { name: 'Ways to bring devices in' });
    const links = await ways.getByRole('link').evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
    expect(links).toEqual([
      ['Zigbee2MQTT or Tasmota over MQTT', '/admin/panel/mqtt'],
      ['Homebridge', '/os/plugins'],
      ['Matter pairing', '/admin/panel/matter'],
      ['Drivers', '/admin/panel/drivers'],
      ['Media devices on the network', '/os/add'],
    ]);
    expect(await ways.textContent()).toContain('MQTT_URL=embedded');
    // Each link is a page of the hub (the admin panel's sign-in first, it has its own session).
    for (const [, href] of links) expect([200, 303], href!).toContain((await fetch(`${server.url}${href}`, { headers: { accept: 'text/html' }, redirect: 'manual' })).status);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'devices-phone');

    await page.getByRole('button', { name: 'Finish' }).click();
    await page.waitForURL(/\/os\/\?done=/);
    expect(await flash(page)).toBe('Lindenhof is set up.');
    // The empty home page points to the same ways.
    expect(await page.locator('main').textContent()).toContain('No devices yet.');
    expect(await page.getByRole('region', { name: 'Ways to bring devices in' }).getByRole('link').count()).toBe(5);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'home-empty-phone');

    const saved = await settingsOf();
    expect(saved).toMatchObject({ name: 'Lindenhof', ...BERLIN, timezone: 'Europe/Berlin', units: 'imperial' });
    expect(saved.onboardedAt).toEqual(expect.any(Number));
    await page.goto(`${server.url}/os/`);
    expect(path(page)).toBe('/os/');
    await page.context().close();
  });

  it('saves the settings page on a desktop, also without JavaScript', async () => {
    // Without JavaScript: no position button, the fields and the form work.
    const plain = await open(DESKTOP, { javaScript: false });
    await signInWithForm(plain, server.url, ADMIN);
    expect(path(plain)).toBe('/os/');
    await plain.goto(`${server.url}/os/settings`);
    expect(await plain.getByRole('button', { name: "Use this browser's position" }).isVisible()).toBe(false);
    expect(await plain.getByLabel('Name', { exact: true }).inputValue()).toBe('Lindenhof');
    expect(await plain.getByLabel(/^Latitude/).inputValue()).toBe('52.52');
    expect(await plain.getByLabel('Time zone').inputValue()).toBe('Europe/Berlin');
    await plain.getByLabel('Name', { exact: true }).fill('Lindenhof 7');
    await plain.getByLabel(/^Longitude/).fill('13.41');
    await plain.getByLabel(/^Elevation/).fill('34');
    await plain.getByLabel('Time zone').selectOption('Europe/Vienna');
    await plain.getByLabel('Metric').check();
    await plain.getByRole('button', { name: 'Save', exact: true }).click();
    await plain.waitForURL(/\/os\/settings\?done=/);
    expect(await flash(plain)).toBe('Saved.');
    expect(await settingsOf()).toMatchObject({ name: 'Lindenhof 7', latitude: 52.52, longitude: 13.41, elevation: 34, timezone: 'Europe/Vienna', units: 'metric' });
    await plain.context().close();

    const page = await open(DESKTOP);
    await signInWithForm(page, server.url, ADMIN);
    await page.goto(`${server.url}/os/settings`);
    expect(await page.getByRole('button', { name: "Use this browser's position" }).isVisible()).toBe(true);
    expect(await page.getByLabel(/^Elevation/).inputValue()).toBe('34');
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'settings-desktop');
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'settings-desktop-dark');
    await page.context().close();
  });

  it('after a generated password, asks for a new one first, then the welcome; "Skip for now" ends it too', async () => {
    expect(generated).not.toBe('');
    const page = await open(DESKTOP);
    await signInWithForm(page, generatedHub.url, { username: ADMIN.username, password: generated });
    expect(path(page)).toBe('/os/password');
    await page.getByLabel('Current password').fill(generated);
    await page.getByLabel('New password (at least 8 characters)').fill('orchard-gate-31');
    await page.getByLabel('New password again').fill('orchard-gate-31');
    await page.getByRole('button', { name: 'Save the new password' }).click();
    await page.waitForURL(/\/os\/welcome/);
    expect(await flash(page)).toBe('Your new password is saved.');
    expect(await page.getByLabel('Name of the home').inputValue()).toBe('Home');
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'welcome-desktop');

    await page.getByRole('button', { name: 'Skip for now' }).click();
    await page.waitForURL(/\/os\/\?done=/);
    expect(await flash(page)).toContain('Setup skipped');
    await page.goto(`${generatedHub.url}/os/`);
    expect(path(page)).toBe('/os/');
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'home-empty-desktop');
    const login = await generatedHub.request('POST', '/v1/os/auth/login', { body: { username: ADMIN.username, password: 'orchard-gate-31' } });
    const bearer = ((await login.json()) as { accessToken: string }).accessToken;
    const settings = await settingsOf(generatedHub, bearer);
    expect(settings.onboardedAt).toEqual(expect.any(Number));
    expect(settings.name).toBe('Home');
    await page.context().close();
  });
});
