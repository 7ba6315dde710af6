import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage, screenshot, seriousViolations, signInWithForm } from './support/browser.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';

/**
 * A secret the hub shows once (a driver token, an invite code) is never put in a URL: the form
 * that creates it answers with the page that shows it (no redirect carrying it in `?done=`), so it
 * is in no Location header, no browser history entry, no access log line and no Referer.
 */
let server: TestServer;
let cookie: string;
/** Every URL requested and every Location answered, over the whole file. */
const urls: string[] = [];

async function browserFetch(path: string, init: { method?: string; body?: URLSearchParams } = {}): Promise<Response> {
  urls.push(path);
  const res = await fetch(`${server.url}${path}`, {
    method: init.method ?? 'GET',
    redirect: 'manual',
    headers: {
      accept: 'text/html,application/xhtml+xml',
      ...(cookie ? { cookie } : {}),
      ...(init.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(init.body ? { body: init.body.toString() } : {}),
  });
  const location = res.headers.get('location');
  if (location) urls.push(location);
  return res;
}

/** The hidden fields of the form posting to `action` on the page at `pagePath`, as a browser would send them. */
async function formOn(pagePath: string, action: string): Promise<URLSearchParams> {
  const res = await browserFetch(pagePath);
  expect(res.status).toBe(200);
  const body = await res.text();
  const form = new RegExp(`<form method="post" action="${action}"[^>]*>(.*?)</form>`, 's').exec(body);
  expect(form, `a form posting to ${action} on ${pagePath}`).not.toBeNull();
  const csrf = /<input type="?hidden"? name="?_csrf"? value="?([^"> ]+)"?/.exec(form![1]!);
  expect(csrf).not.toBeNull();
  return new URLSearchParams({ _csrf: csrf![1]! });
}

/** The secret on a one-time page, checked to appear there exactly once. */
function shownOnce(body: string): string {
  const match = [...body.matchAll(/<pre id="secret-value"[^>]*>([^<]+)<\/pre>/g)];
  expect(match).toHaveLength(1);
  const secret = match[0]![1]!;
  expect(body.split(secret)).toHaveLength(2);
  return secret;
}

function expectOneTimePage(res: Response): void {
  expect(res.status).toBe(200);
  expect(res.headers.get('location')).toBeNull();
  expect(res.headers.get('content-type')).toContain('text/html');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
}

beforeAll(async () => {
  server = await startServer({ env: { APP_REGISTRATION: 'invite', DRIVER_AUTH: 'token' } });
  const res = await browserFetch('/admin/login', { method: 'POST', body: new URLSearchParams({ username: ADMIN.username, password: ADMIN.password }) });
  expect(res.status).toBe(303);
  const session = /hcs_admin=([^;]+)/.exec(res.headers.get('set-cookie') ?? '');
  expect(session).not.toBeNull();
  cookie = `hcs_admin=${session![1]!}`;
}, 60_000);
afterAll(async () => {
  await server?.close();
});

describe('secrets shown once are never in a URL', () => {
  const secrets: string[] = [];

  it('shows a new driver token on the answer to its form, not through a redirect', async () => {
    const fields = await formOn('/admin/panel/drivers', '/admin/panel/driver-tokens/create');
    fields.set('driverKey', 'acme.blinds');
    fields.set('label', 'attic');
    const res = await browserFetch('/admin/panel/driver-tokens/create', { method: 'POST', body: fields });
    expectOneTimePage(res);
    const body = await res.text();
    const token = shownOnce(body);
    secrets.push(token);
    expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(body).toContain('acme.blinds');
    expect(body).toContain('<title>New driver token · Admin');
    expect(body).toMatch(/<button type="button" id="secret-copy"[^>]*>Copy<\/button>/);
    expect(body).toContain('<a href="/admin/panel/drivers">');

    // The token is the real one: the hub lists a token for the driverKey (never the token itself).
    const admin = await server.login();
    const listed = await server.request('GET', '/admin/driver-tokens', { token: admin });
    const text = await listed.text();
    expect(JSON.parse(text)).toMatchObject({ tokens: [{ driverKey: 'acme.blinds', label: 'attic' }] });
    expect(text).not.toContain(token);

    // Going back to the drivers page does not show it again.
    const back = await browserFetch('/admin/panel/drivers');
    expect(back.status).toBe(200);
    expect(await back.text()).not.toContain(token);
  });

  it('shows a new invite code on the answer to its form, and the code registers an account', async () => {
    const fields = await formOn('/admin/panel/users', '/admin/panel/invites/create');
    fields.set('note', 'for the neighbour');
    fields.set('role', 'user');
    fields.set('expiresInHours', '24');
    const res = await browserFetch('/admin/panel/invites/create', { method: 'POST', body: fields });
    expectOneTimePage(res);
    const body = await res.text();
    const code = shownOnce(body);
    secrets.push(code);
    expect(code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    expect(body).toContain('for the neighbour');
    expect(body).toContain('<a href="/admin/panel/users">');

    const back = await browserFetch('/admin/panel/users');
    expect(await back.text()).not.toContain(code);

    const joined = await server.request('POST', '/app/auth/register', { body: { username: 'neighbour', password: 'neighbour-password', inviteCode: code } });
    expect(joined.status).toBe(201);
  });

  it('still sends a failed form back to its page with the error, and no secret', async () => {
    const fields = await formOn('/admin/panel/drivers', '/admin/panel/driver-tokens/create');
    const res = await browserFetch('/admin/panel/driver-tokens/create', { method: 'POST', body: fields });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(/^\/admin\/panel\/drivers\?error=/);
  });

  it('refuses the form without its CSRF field', async () => {
    const res = await browserFetch('/admin/panel/invites/create', { method: 'POST', body: new URLSearchParams({ note: 'no token' }) });
    expect(res.status).toBe(403);
  });

  it('gives an API client the secret as JSON, as before', async () => {
    const admin = await server.login();
    const res = await server.request('POST', '/admin/panel/driver-tokens/create', { token: admin, body: { driverKey: 'acme.locks' } });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { ok: true; result: { driverKey: string; token: string } };
    expect(answer).toMatchObject({ ok: true, result: { driverKey: 'acme.locks' } });
    expect(answer.result.token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
  });

  it('put no secret in any URL or Location header', () => {
    expect(secrets).toHaveLength(2);
    expect(urls.length).toBeGreaterThan(5);
    for (const secret of secrets) {
      for (const url of urls) {
        expect(url).not.toContain(secret);
        expect(decodeURIComponent(url)).not.toContain(secret);
      }
    }
  });
});

describe('in a browser', () => {
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    browser = await launchBrowser();
    page = await newPage(browser);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('leaves the token out of the address bar and the history, and copies it', async () => {
    await signInWithForm(page, server.url, ADMIN, '/admin/login');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await page.goto(`${server.url}/admin/panel/drivers`);
    await page.getByLabel('driverKey').fill('acme.garage');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('heading', { name: 'Copy the token now' }).waitFor();
    const token = (await page.locator('#secret-value').textContent())!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(page.url()).toBe(`${server.url}/admin/panel/driver-tokens/create`);
    expect(await page.evaluate<string>('location.href')).not.toContain(token);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'admin-driver-token-once');

    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.locator('#secret-copied').textContent()).toBe('Copied.');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(token);

    await page.getByRole('link', { name: 'Back to the drivers' }).click();
    await page.waitForURL(`${server.url}/admin/panel/drivers`);
    expect(await page.content()).not.toContain(token);
  });
});
