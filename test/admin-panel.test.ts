import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ADMIN, startServer, type TestServer } from './support/server.js';
import { launchBrowser, newPage, screenshot } from './support/browser.js';

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  server = await startServer();
  browser = await launchBrowser();
  page = await newPage(browser);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signIn(p: Page, username = ADMIN.username, password = ADMIN.password) {
  await p.goto(`${server.url}/admin/`);
  await p.getByLabel('Username').fill(username);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

describe('admin panel in a browser', () => {
  it('signs in with a strict, HttpOnly session cookie and shows the system page', async () => {
    await signIn(page);
    await expect.poll(() => page.title()).toContain('System');
    const cookie = (await page.context().cookies()).find((c) => c.name === 'hcs_admin')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(cookie.expires).toBeGreaterThan(Date.now() / 1000);
    expect(await page.locator('[data-fact="Version"]').textContent()).toMatch(/\d+\.\d+/);
    await screenshot(page, 'admin-system');
  });

  it('creates a user through the form', async () => {
    await page.goto(`${server.url}/admin/panel/users`);
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password', { exact: true }).fill('alice-password-1');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.locator('.flash').textContent()).toContain('Account alice created');
    expect(await page.locator('tr[data-user="alice"]').count()).toBe(1);
    await screenshot(page, 'admin-users');
  });
});
