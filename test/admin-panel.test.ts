import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { LogRing } from '../src/logger.js';
import { launchBrowser, newPage, screenshot } from './support/browser.js';
import { startItachEmulator, type ItachEmulator } from './support/itach-emulator.js';
import { startNpmRegistry, type NpmRegistry } from './support/npm-registry.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';

let server: TestServer;
let browser: Browser;
let page: Page;
let registry: NpmRegistry;
let itach: ItachEmulator;
let token: string;
const files = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-admin-upload-'));

/** A JavaScript driver with an npm dependency: its device is named by the dependency; `whoami` answers its setup value. */
const DRIVER = `import greet from 'hcs-test-greeting';
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
send({ type: 'DEVICE_DISCOVERED', device: { id: 'porch', name: greet('Porch'), commands: ['whoami'], state: { on: true } } });
let buffer = '';
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let i;
  while ((i = buffer.indexOf('\\n')) >= 0) {
    const m = JSON.parse(buffer.slice(0, i)); buffer = buffer.slice(i + 1);
    if (m.type === 'ACTION' || m.type === 'COMMAND_EXECUTE') send({ type: 'ACTION_RESULT', actionId: m.actionId, ok: true, result: { label: process.env.PORCH_LABEL ?? null } });
  }
});
`;

beforeAll(async () => {
  registry = await startNpmRegistry([{ name: 'hcs-test-greeting', version: '1.0.0', files: { 'index.js': "module.exports = (n) => n + ' light';" } }]);
  itach = await startItachEmulator();
  const ring = new LogRing();
  const logger = pino({ level: 'info' }, ring);
  server = await startServer({ env: { DRIVER_NPM_REGISTRY: registry.url, IR_EXTENDER_PORT: String(itach.port) }, logger, logRing: ring });
  token = await server.login();
  fs.writeFileSync(path.join(files, 'porch.driver.json'), JSON.stringify({
    driverKey: 'porch.light',
    driverType: 'javascript',
    driverFile: 'porch.js',
    name: 'Porch light',
    version: '1.0.0',
    properties: { label: { type: 'string', title: 'Label', description: 'What the light calls itself.' }, bright: { type: 'boolean', title: 'Bright' } },
    envMap: { label: 'PORCH_LABEL' },
  }));
  fs.writeFileSync(path.join(files, 'porch.js'), DRIVER);
  fs.writeFileSync(path.join(files, 'package.json'), JSON.stringify({ name: 'porch', version: '1.0.0', private: true, type: 'module', dependencies: { 'hcs-test-greeting': '1.0.0' } }));
  browser = await launchBrowser();
  page = await newPage(browser);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await registry?.close();
  await itach?.close();
  fs.rmSync(files, { recursive: true, force: true });
});

async function signIn(p: Page, username = ADMIN.username, password = ADMIN.password) {
  await p.goto(`${server.url}/admin/`);
  await p.getByLabel('Username').fill(username);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

const flash = (p: Page) => p.locator('.flash').first().textContent();

describe('admin panel in a browser', () => {
  it('signs in with a strict, HttpOnly, expiring session cookie and shows the system page', async () => {
    await signIn(page);
    await expect.poll(() => page.title()).toContain('System');
    const cookie = (await page.context().cookies()).find((c) => c.name === 'hcs_admin')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(cookie.expires).toBeGreaterThan(Date.now() / 1000);
    expect(await page.locator('[data-fact="Version"]').textContent()).toMatch(/\d+\.\d+/);
    expect(await page.locator('[data-fact="Data folder"]').textContent()).toMatch(/MB in \d+ files/);
    await screenshot(page, 'admin-system');
  });

  it('creates a user through the form', async () => {
    await page.goto(`${server.url}/admin/panel/users`);
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password', { exact: true }).fill('alice-password-1');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => flash(page)).toContain('Account alice created');
    expect(await page.locator('tr[data-user="alice"]').count()).toBe(1);
    await screenshot(page, 'admin-users');
  });

  it('uploads a JavaScript driver with a dependency, sees its device appear, and edits a setup value', async () => {
    await page.goto(`${server.url}/admin/panel/drivers`);
    await page.getByLabel('Manifest').setInputFiles(path.join(files, 'porch.driver.json'));
    await page.getByLabel('Driver file').setInputFiles(path.join(files, 'porch.js'));
    await page.getByLabel('Dependencies (package.json or requirements.txt)').setInputFiles(path.join(files, 'package.json'));
    await page.getByRole('button', { name: 'Upload and install' }).click();
    await expect.poll(() => flash(page), { timeout: 30_000 }).toMatch(/Driver porch\.light 1\.0\.0 installed/);
    const card = page.locator('[data-driver="porch.light"]');
    await expect
      .poll(async () => {
        await page.reload();
        return card.locator('.device').allTextContents();
      })
      .toEqual(['Porch light']);
    expect(await card.locator('summary', { hasText: 'Install log' }).count()).toBe(1);

    await card.getByLabel('Label').fill('Front porch');
    await card.getByLabel('Bright').check();
    await card.getByRole('button', { name: 'Save and restart' }).click();
    await expect.poll(() => flash(page)).toContain('Settings saved');
    expect(await page.locator('[data-driver="porch.light"]').getByLabel('Label').inputValue()).toBe('Front porch');
    await screenshot(page, 'admin-drivers');

    // The driver restarted with the value: its command answers it.
    const devices = (await (await server.request('GET', '/app/os/devices', { token })).json()) as { devices: Array<{ id: string; driverKey: string; online: boolean }> };
    const porch = devices.devices.find((d) => d.driverKey === 'porch.light')!;
    await expect
      .poll(async () => {
        const res = await server.request('POST', `/app/os/devices/${porch.id}/command`, { token, body: { command: 'whoami' } });
        return res.status === 200 ? ((await res.json()) as { result: { label: string } }).result.label : res.status;
      }, { timeout: 15_000 })
      .toBe('Front porch');
  });

  it('creates a GENERIC_IR device, sends a test code and watches it arrive on the live feed', async () => {
    await page.goto(`${server.url}/admin/panel/ir`);
    await expect.poll(() => page.locator('#ir-status').textContent()).toContain('Live');
    const form = page.locator('section[aria-labelledby="ir-new"]');
    await form.getByLabel('Name').fill('Living room TV');
    await form.getByLabel('Extender IP address').fill('127.0.0.1');
    await form.getByLabel(/Commands, one per line/).fill('power 38 9000,4500,560,560,560,1690\nmute 38 9000,4500,560,560');
    await form.getByRole('button', { name: 'Create IR device' }).click();
    await expect.poll(() => flash(page)).toContain('IR device Living room TV saved');
    await expect.poll(() => page.locator('#ir-status').textContent()).toContain('Live');
    const card = page.locator('[data-ir-device]').first();
    await card.getByLabel('Send a test code').selectOption('power');
    // The live feed is on this page: send with fetch (the form's own CSRF field) so the page stays and shows the row.
    await page.evaluate(`(async () => {
      const form = document.querySelector('[data-ir-device] form[action="/admin/panel/ir/test"]');
      await fetch(form.action, { method: 'POST', body: new URLSearchParams(new FormData(form)) });
    })()`);
    await expect.poll(() => page.locator('tr.ir-data').count()).toBe(1);
    expect(await page.locator('tr.ir-data').first().textContent()).toContain('power');
    expect(itach.lines.some((l) => l.startsWith('sendir,1:1,'))).toBe(true);
    await screenshot(page, 'admin-ir');
  });

  it('shows the log lines by level and the audit trail of what the admin did', async () => {
    await page.goto(`${server.url}/admin/panel/logs?level=info`);
    expect(await page.locator('tbody tr[class^="log-"]').count()).toBeGreaterThan(0);
    expect(await page.locator('tr[data-audit="users.create"]').count()).toBe(1);
    expect(await page.locator('tr[data-audit="drivers.packages.install"]').count()).toBe(1);
    await page.getByLabel('Level').selectOption('error');
    await page.getByRole('button', { name: 'Filter' }).click();
    expect(page.url()).toContain('level=error');
    await screenshot(page, 'admin-logs');
  });

  it('takes a backup and downloads it', async () => {
    await page.goto(`${server.url}/admin/panel/backups`);
    await page.getByRole('button', { name: 'Back up now' }).click();
    await expect.poll(() => flash(page)).toMatch(/Backup hcs-backup-\d{8}-\d{6} taken/);
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-backup] a').first().click()]);
    const saved = path.join(files, download.suggestedFilename());
    await download.saveAs(saved);
    expect(download.suggestedFilename()).toMatch(/^hcs-backup-.*\.tar\.gz$/);
    const bytes = fs.readFileSync(saved);
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    await screenshot(page, 'admin-backups');
  });

  it('refuses a POST signed in by the cookie without the CSRF token', async () => {
    const refused = await page.evaluate(async () => {
      const res = await fetch('/admin/panel/users/create', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=mallory&password=mallory-pass' });
      return { status: res.status, body: await res.json() };
    });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'CSRF_TOKEN_INVALID' } } });
    const forged = await page.evaluate(async () => {
      const res = await fetch('/admin/users', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': 'guessed' }, body: '{"username":"mallory","password":"mallory-pass"}' });
      return res.status;
    });
    expect(forged).toBe(403);
    const users = (await (await server.request('GET', '/admin/users', { token })).json()) as { users: Array<{ username: string }> };
    expect(users.users.map((u) => u.username)).not.toContain('mallory');
  });

  it('signs out (the session is revoked) and refuses a household account', async () => {
    const cookie = (await page.context().cookies()).find((c) => c.name === 'hcs_admin')!;
    await page.goto(`${server.url}/admin/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.title()).toContain('Sign in');
    expect((await server.request('GET', '/admin/system', { headers: { cookie: `hcs_admin=${cookie.value}` } })).status).toBe(401);

    await signIn(page, 'alice', 'alice-password-1');
    await expect.poll(() => flash(page)).toContain('not an administrator');
    expect((await page.context().cookies()).some((c) => c.name === 'hcs_admin')).toBe(false);
  });

  it('works on a phone-sized screen', async () => {
    const phone = await newPage(browser, { width: 390, height: 844 });
    await signIn(phone);
    await expect.poll(() => phone.title()).toContain('System');
    const overflow = await phone.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(phone, 'admin-system-phone');
  });
});
