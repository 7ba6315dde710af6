import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, newPage, screenshot } from './support/browser.js';
import { startServer, type TestServer } from './support/server.js';

/**
 * The first start without ADMIN_PASSWORD: the admin signs in with the password the hub logged once
 * and is asked to choose their own before anything else, in the household pages and the panel.
 * Then the API: changing one's own password proves the current one, ends the other sessions and
 * answers a new one.
 */

let server: TestServer;
let generated: string;
let browser: Browser;

beforeAll(async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  server = await startServer({ env: { ADMIN_PASSWORD: '' }, logger: pino({ level: 'warn' }, sink) });
  const line = lines.find((l) => l.includes('generated password'));
  expect(line).toBeDefined();
  generated = /generated password (\S+)/.exec(line!)![1]!;
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function login(password: string): Promise<Response> {
  return server.request('POST', '/v1/os/auth/login', { body: { username: 'admin', password } });
}

describe('the first admin chooses a password', () => {
  it('asks in the browser before showing any page, then goes on with a new session', async () => {
    const page = await newPage(browser);
    await page.goto(`${server.url}/`);
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill(generated);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.title()).toContain('Choose a password');
    expect(new URL(page.url()).pathname).toBe('/os/password');
    // Every other page sends it back here.
    await page.goto(`${server.url}/os/programs`);
    expect(new URL(page.url()).pathname).toBe('/os/password');
    await screenshot(page, 'os-password');

    await page.getByLabel('Current password').fill(generated);
    await page.getByLabel('New password (at least 8 characters)').fill('kitchen-table-42');
    await page.getByLabel('New password again').fill('kitchen-table-41');
    await page.getByRole('button', { name: 'Save the new password' }).click();
    expect(await page.locator('.field-error').textContent()).toBe('The two new passwords differ.');

    await page.getByLabel('Current password').fill('not-the-password');
    await page.getByLabel('New password (at least 8 characters)').fill('kitchen-table-42');
    await page.getByLabel('New password again').fill('kitchen-table-42');
    await page.getByRole('button', { name: 'Save the new password' }).click();
    expect(await page.locator('#currentPassword-error').textContent()).toBe('The current password is wrong.');

    await page.getByLabel('Current password').fill(generated);
    await page.getByLabel('New password (at least 8 characters)').fill('kitchen-table-42');
    await page.getByLabel('New password again').fill('kitchen-table-42');
    await page.getByRole('button', { name: 'Save the new password' }).click();
    await expect.poll(() => page.title()).toContain('Programs');
    expect(await page.locator('.flash.done').textContent()).toBe('Your new password is saved.');
    // The session the change answered works; the old password no longer does.
    await page.goto(`${server.url}/os/`);
    await expect.poll(() => page.title()).toContain('Home');
    expect((await login(generated)).status).toBe(401);
    expect((await login('kitchen-table-42')).status).toBe(200);
    await page.context().close();
  });

  it('answers mustChangePassword false from then on', async () => {
    const token = ((await (await login('kitchen-table-42')).json()) as { accessToken: string }).accessToken;
    const me = (await (await server.request('GET', '/v1/os/auth/me', { token })).json()) as { mustChangePassword: boolean };
    expect(me.mustChangePassword).toBe(false);
  });
});

describe('auth.change_password over the API', () => {
  it('proves the current password, refuses the same one, ends the other sessions and answers a new one', async () => {
    const first = ((await (await login('kitchen-table-42')).json()) as { accessToken: string }).accessToken;
    const second = ((await (await login('kitchen-table-42')).json()) as { accessToken: string }).accessToken;

    const wrong = await server.request('POST', '/v1/os/auth/password', { token: first, body: { currentPassword: 'nope-nope-nope', newPassword: 'garden-shed-77' } });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('CURRENT_PASSWORD_WRONG');
    const same = await server.request('POST', '/v1/os/auth/password', { token: first, body: { currentPassword: 'kitchen-table-42', newPassword: 'kitchen-table-42' } });
    expect(((await same.json()) as { error: { code: string } }).error.code).toBe('PASSWORD_UNCHANGED');
    const short = await server.request('POST', '/v1/os/auth/password', { token: first, body: { currentPassword: 'kitchen-table-42', newPassword: 'short' } });
    expect(short.status).toBe(400);

    const changed = await server.request('POST', '/v1/os/auth/password', { token: first, body: { currentPassword: 'kitchen-table-42', newPassword: 'garden-shed-77' } });
    expect(changed.status).toBe(200);
    const fresh = ((await changed.json()) as { accessToken: string }).accessToken;
    expect(fresh).not.toBe(first);
    for (const old of [first, second]) expect((await server.request('GET', '/v1/os/auth/me', { token: old })).status).toBe(401);
    expect((await server.request('GET', '/v1/os/auth/me', { token: fresh })).status).toBe(200);

    // The App API answers the new session as a sign-in does: token and cookie.
    const app = await server.request('POST', '/app/auth/password', { token: fresh, body: { currentPassword: 'garden-shed-77', newPassword: 'garden-shed-78' } });
    expect(app.status).toBe(200);
    expect(app.headers.get('set-cookie')).toMatch(/^hcs_session=/);
    expect(((await app.json()) as { data: { token: string } }).data.token).toBeTruthy();

    // Wrong current passwords count against the login limiter, as failed sign-ins do.
    const token = ((await (await login('garden-shed-78')).json()) as { accessToken: string }).accessToken;
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await server.request('POST', '/v1/os/auth/password', { token, body: { currentPassword: `wrong-${i}-password`, newPassword: 'garden-shed-79' } })).status);
    expect(statuses).toContain(429);
  });
});
