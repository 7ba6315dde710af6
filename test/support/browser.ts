import fs from 'node:fs';
import path from 'node:path';
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type Browser, type Page } from 'playwright-core';

/** Where the browser tests write their screenshots, for a reviewer to look at. */
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, '../../test-output/screenshots');

/**
 * Headless Chromium from npm alone: @sparticuz/chromium unpacks its binary under /tmp on first use,
 * playwright-core drives it. Every wait a test makes is bounded by the page's default timeout.
 */
export async function launchBrowser(): Promise<Browser> {
  // Not --single-process (the package's default, made for AWS Lambda): in one process a service
  // worker (the web UI registers one) brings the whole browser down when a second context opens.
  const args = chromium.args.filter((arg) => arg !== '--single-process');
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
