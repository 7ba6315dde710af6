import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage, screenshot, seriousViolations, signInWithForm } from './support/browser.js';
import { freePort } from './support/net.js';
import { startNpmRegistry, type NpmRegistry } from './support/npm-registry.js';
import { ADMIN, startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually, TestDriver } from './support/ws-driver.js';

/**
 * Homebridge plugins from the household pages, in Chromium, against the real managed Homebridge
 * and a local npm registry holding the test plugin: search, install with npm's lines shown as
 * they come, configure in the form made from its config.schema.json (the hub's ajv check answers
 * at the field), import its accessory into a room in one step, disable and enable it.
 */

const FIXTURE = path.resolve(import.meta.dirname, 'fixtures/homebridge-hcs-test');
const fixture = (file: string) => fs.readFileSync(path.join(FIXTURE, file), 'utf8');

let server: TestServer;
let token: string;
let registry: NpmRegistry;
let browser: Browser;
let page: Page;
let office = '';

const status = async () => (await (await server.request('GET', '/v1/os/accessory-hub/status', { token })).json()) as { state: string; pid?: number };
const flash = () => page.locator('.flash').first().textContent();

beforeAll(async () => {
  const port = await freePort();
  registry = await startNpmRegistry([{ name: 'homebridge-hcs-test', version: '1.0.0', files: { 'package.json': fixture('package.json'), 'index.js': fixture('index.js'), 'config.schema.json': fixture('config.schema.json') } }]);
  const dataDir = tempDataDir();
  const hubDir = path.join(dataDir, 'accessory-hub');
  fs.mkdirSync(hubDir, { recursive: true });
  fs.writeFileSync(path.join(hubDir, 'config.json'), JSON.stringify({ bridge: { name: 'HCS UI Bridge', username: '0E:AA:BB:CC:DD:02', port, pin: '031-45-154', advertiser: 'ciao' }, accessories: [], platforms: [] }));
  server = await startServer({ dataDir, env: { ACCESSORY_HUB: 'on', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_REGISTRY: registry.url, ACCESSORY_HUB_POLL_MS: '60000' }, timers: undefined });
  token = await server.login();
  office = ((await (await server.request('POST', '/app/os/spaces/save', { token, body: { name: 'Office' } })).json()) as { id: string }).id;
  await eventually(async () => (await status()).state === 'running', 30_000, 'Homebridge running');
  browser = await launchBrowser();
  page = await newPage(browser);
  page.setDefaultTimeout(30_000);
  await signInWithForm(page, server.url, ADMIN);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await registry?.close();
});

describe('Homebridge plugins in the browser', () => {
  it('searches the registry and installs a plugin, showing npm\'s lines as they come', { timeout: 90_000 }, async () => {
    await page.getByRole('link', { name: 'Plugins' }).click();
    await expect.poll(() => page.title()).toContain('Plugins');
    expect(await page.locator('main').textContent()).toContain('No plugins yet.');
    await page.getByLabel('Search the registry').fill('hcs');
    await page.getByRole('button', { name: 'Search' }).click();
    const results = page.getByRole('list', { name: 'Search results' });
    expect(await results.textContent()).toContain('homebridge-hcs-test');
    await results.getByRole('button', { name: 'Install homebridge-hcs-test' }).click();
    // The page stays while npm runs: its lines arrive over the live stream.
    const progress = page.getByLabel('Install progress');
    await expect.poll(async () => ((await progress.textContent()) ?? '').split('\n').filter(Boolean).length, { timeout: 60_000 }).toBeGreaterThan(1);
    await page.waitForURL(/\/os\/plugins\?done=/, { timeout: 60_000 });
    expect(await flash()).toBe('homebridge-hcs-test is installed.');
    expect(await page.locator('tr[data-plugin="homebridge-hcs-test"]').textContent()).toContain('1.0.0');
  });

  it('configures it in the form made from its config.schema.json, with the hub\'s answer at the field', { timeout: 90_000 }, async () => {
    const before = (await status()).pid;
    await page.getByRole('link', { name: 'Configure homebridge-hcs-test' }).click();
    await expect.poll(() => page.title()).toContain('Configure homebridge-hcs-test');
    const name = page.getByRole('textbox', { name: 'Name', exact: true });
    expect(await name.getAttribute('required')).not.toBeNull();
    // Past the browser's own check, the hub's ajv check answers at the field.
    await page.evaluate(`document.querySelector('form.schema-form').noValidate = true`);
    await page.getByRole('button', { name: 'Save and restart Homebridge' }).click();
    await expect.poll(() => page.locator('.field-error').first().textContent()).toMatch(/fewer than 1 character/);
    expect(await page.getByRole('textbox', { name: 'Name', exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'os-plugin-config');
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Desk switch');
    await page.getByRole('button', { name: 'Save and restart Homebridge' }).click();
    await expect.poll(flash).toBe('homebridge-hcs-test is configured; Homebridge restarted.');
    await eventually(async () => {
      const s = await status();
      return s.state === 'running' && s.pid !== before;
    }, 30_000, 'Homebridge restarted');
    // The form shows what was saved.
    await page.goto(`${server.url}/os/plugins/config?plugin=homebridge-hcs-test`);
    expect(await page.getByRole('textbox', { name: 'Name', exact: true }).inputValue()).toBe('Desk switch');
  });

  it('imports its accessory into a room in one step', { timeout: 90_000 }, async () => {
    await eventually(
      async () => {
        await page.goto(`${server.url}/os/plugins`);
        await page.getByRole('button', { name: 'Look again' }).click();
        await page.waitForURL(/\/os\/plugins\?/);
        return (await page.locator('[data-accessory]').count()) > 0;
      },
      30_000,
      'the accessory offered for import',
    );
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'os-plugins');
    const item = page.locator('[data-accessory]').filter({ hasText: 'Desk switch' });
    await item.getByLabel('Room for Desk switch').selectOption({ label: 'Office' });
    await item.getByRole('button', { name: 'Import Desk switch' }).click();
    await expect.poll(flash).toBe('Desk switch is imported.');
    const { devices } = (await (await server.request('GET', '/app/os/devices', { token })).json()) as { devices: Array<{ name: string; room: string | null; deviceClass: string }> };
    expect(devices.find((d) => d.name === 'Desk switch')).toMatchObject({ room: office, deviceClass: 'switch' });
    await page.goto(`${server.url}/os/`);
    expect(await page.locator(`[data-space="${office}"] .tile`).filter({ hasText: 'Desk switch' }).count()).toBe(1);
  });

  it('disables and enables it', { timeout: 90_000 }, async () => {
    await page.goto(`${server.url}/os/plugins`);
    await page.getByRole('button', { name: 'Disable homebridge-hcs-test' }).click();
    await expect.poll(flash).toBe('homebridge-hcs-test is disabled; Homebridge restarted.');
    expect(await page.locator('tr[data-plugin="homebridge-hcs-test"]').textContent()).toContain('Disabled');
    await page.getByRole('button', { name: 'Enable homebridge-hcs-test' }).click();
    await expect.poll(flash).toBe('homebridge-hcs-test is enabled; Homebridge restarted.');
  });

  it("shows the hub's devices in Apple Home from the same page: the switch, the setup code, the devices chosen", { timeout: 90_000 }, async () => {
    const driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'ui.lights');
    try {
      driver.serveActions((a) => ({ done: a.command }));
      for (const id of ['reading', 'ceiling']) driver.send({ type: 'DEVICE_DISCOVERED', device: { id, name: `${id} lamp`, category: 'light', commands: ['turn_on', 'turn_off'], state: { on: false } } });
      await eventually(async () => ((await (await server.request('GET', '/v1/os/accessory-hub/homekit', { token })).json()) as { candidates: unknown[] }).candidates.length === 2, 10_000, 'two candidates');
      await page.goto(`${server.url}/os/plugins`);
      const section = page.getByRole('region', { name: 'Apple Home' });
      expect(await section.textContent()).toContain("The hub's devices are not in Apple Home.");
      await section.getByRole('button', { name: "Show this hub's devices in Apple Home" }).click();
      await expect.poll(flash).toBe("The hub's devices are being added to Apple Home.");
      expect(await page.locator('[data-homekit="on"]').textContent()).toContain('2 devices shown in Apple Home.');
      expect(await page.locator('[data-homekit-pin]').textContent()).toBe('031-45-154');
      // Only the reading lamp.
      await section.getByLabel('Only those ticked').check();
      await section.getByLabel('ceiling lamp').uncheck();
      await section.getByRole('button', { name: 'Save the choice' }).click();
      await expect.poll(flash).toBe('1 devices shown in Apple Home.');
      const view = (await (await server.request('GET', '/v1/os/accessory-hub/homekit', { token })).json()) as { devices: string[]; candidates: Array<{ name: string; shown: boolean }> };
      expect(view.devices).toHaveLength(1);
      expect(view.candidates.filter((c) => c.shown).map((c) => c.name)).toEqual(['reading lamp']);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, 'os-plugins-apple-home');
      const phone = await newPage(browser, { width: 390, height: 844 });
      try {
        await signInWithForm(phone, server.url, ADMIN);
        await phone.goto(`${server.url}/os/plugins`);
        expect(await seriousViolations(phone)).toEqual([]);
        await screenshot(phone, 'os-plugins-apple-home-phone');
      } finally {
        await phone.context().close();
      }
    } finally {
      driver.close();
    }
  });
});
