import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type Browser, type Page } from 'playwright-core';

/** Where the browser tests write their screenshots, for a reviewer to look at. */
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, '../../test-output/screenshots');

/**
 * Headless Chromium from npm alone: @sparticuz/chromium unpacks its binary under /tmp on first use,
 * playwright-core drives it. Every wait a test makes is bounded by the page's default timeout.
 */
export async function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  // Not --single-process (the package's default, made for AWS Lambda): in one process a service
  // worker (the web UI registers one) brings the whole browser down when a second context opens.
  const args = [...chromium.args.filter((arg) => arg !== '--single-process'), ...extraArgs];
  return playwright.launch({ executablePath: await chromium.executablePath(), args, headless: true, timeout: 30_000 });
}

export async function newPage(browser: Browser, viewport: { width: number; height: number } = { width: 1280, height: 900 }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.setDefaultNavigationTimeout(10_000);
  return page;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** Signs `page` in through a web area's sign-in form (`/os/login` unless said) and waits to leave it. */
export async function signInWithForm(page: Page, baseUrl: string, credentials: { username: string; password: string }, loginPath = '/os/login'): Promise<void> {
  await page.goto(`${baseUrl}${loginPath}`);
  await page.getByLabel('Username').fill(credentials.username);
  await page.getByLabel('Password').fill(credentials.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.endsWith('/login'));
}

/** Deque's axe-core engine, injected into the page it checks. */
const AXE_SOURCE: string = (createRequire(import.meta.url)('axe-core') as { source: string }).source;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** The serious and critical accessibility violations axe-core finds on the page as it is now, in words. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const violations = await page.evaluate<AxeViolation[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`);
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}
