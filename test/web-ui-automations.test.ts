import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage, seriousViolations, signInWithForm } from './support/browser.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';

/**
 * The automations pages in Chromium (`/os/automations`), against the real server and a
 * WebSocket driver: an administrator makes the motion-activated light from its template, the
 * sensor's motion reaches the light through the automation, and the trace says what triggered
 * it; the other templates save what they say; a run whose condition failed says why. Every page
 * passes axe-core on a phone and a desktop, light and dark. Screenshots go to /tmp/automations-*.png.
 */

let server: TestServer;
let token: string;
let driver: TestDriver;
let browser: Browser | undefined;
let page: Page;
const actions: Message[] = [];
const ids: Record<string, string> = {};
/** The automation the motion template made, and one with a condition that does not hold. */
const made = { motion: '', guarded: '', motionTrace: '', guardedTrace: '' };

type Json = Record<string, unknown>;
const json = async (res: Response) => (await res.json()) as Json;

const DEVICES = [
  // No class declared: its state makes it a motion binary sensor.
  { id: 'hall-motion', name: 'Hall motion', state: { motion: false, battery: 90 } },
  { id: 'ceiling', name: 'Ceiling light', deviceClass: 'light', state: { on: false, brightness: 0 } },
  { id: 'back-door', name: 'Back door', deviceClass: 'binary_sensor', attributes: { sensorClass: 'contact' }, state: { contact: true } },
  { id: 'hall-button', name: 'Hall button', deviceClass: 'button', state: {} },
  { id: 'bridge', name: 'Hall bridge', category: 'bridge', capabilities: ['scenes'] },
];

/** A light whose driver went away, added before the accessibility pass: the pages show an offline device among the choices too. */
let offlineLight: Promise<void> | undefined;
async function addOfflineLight(): Promise<void> {
  const gone = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.garage');
  gone.send({ type: 'DEVICE_DISCOVERED', device: { id: 'garage-light', name: 'Garage light', category: 'light', commands: ['turn_on', 'turn_off'], state: { on: false } } });
  await eventually(async () => ((await json(await server.request('GET', '/app/os/devices', { token }))).devices as Array<{ driverDeviceId: string; online: boolean }>).some((d) => d.driverDeviceId === 'garage-light' && d.online));
  gone.close();
  await eventually(async () => ((await json(await server.request('GET', '/app/os/devices', { token }))).devices as Array<{ driverDeviceId: string; online: boolean }>).some((d) => d.driverDeviceId === 'garage-light' && !d.online));
}

beforeAll(async () => {
  server = await startServer();
  token = await server.login();
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.automations');
  driver.serveActions((action) => {
    actions.push(action);
    if (action.command === 'scenes.list') return [{ id: 'evening', name: 'Evening glow' }];
    return undefined;
  });
  for (const device of DEVICES) driver.send({ type: 'DEVICE_DISCOVERED', device });
  await eventually(async () => {
    const list = (await json(await server.request('GET', '/app/os/devices', { token }))).devices as Array<{ id: string; driverDeviceId: string }>;
    for (const d of list) ids[d.driverDeviceId] = d.id;
    return DEVICES.every((d) => ids[d.id]);
  });
  try {
    browser = await launchBrowser();
  } catch (err) {
    // No Chromium on this machine: the browser tests skip (the server's own tests still ran).
    console.warn(`Chromium is not available, skipping the automations browser tests: ${(err as Error).message}`);
    return;
  }
  page = await newPage(browser);
  await signInWithForm(page, server.url, ADMIN);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  driver?.close();
  await server?.close();
});

/** The last ACTION the driver received for a device after `after`, once it has arrived. */
const actionFor = (driverId: string, after: number, command?: string) =>
  eventually(() => actions.slice(after).findLast((a) => a.deviceId === driverId && (command === undefined || a.command === command)), 5000, `an action for ${driverId}`);

const program = async (id: string) => json(await server.request('GET', `/app/os/programs/${id}`, { token }));
const idFromUrl = (url: string) => /\/os\/automations\/([^/?]+)/.exec(new URL(url).pathname)?.[1] ?? '';

describe('automations in a browser', () => {
  it('lists the automations for an administrator, with templates to start from', async (ctx) => {
    if (!browser) return ctx.skip();
    await page.goto(`${server.url}/os/`);
    await page.getByRole('link', { name: 'Automations' }).click();
    await page.waitForURL(/\/os\/automations$/);
    expect(await page.locator('h1').textContent()).toBe('Automations');
    expect(await page.getByText('No automations yet').count()).toBe(1);
    for (const title of ['Motion-activated light', 'Door left open', 'Lights at sunset', 'Button → scene']) {
      expect(await page.getByRole('article', { name: title }).count(), title).toBe(1);
    }
  });

  it('creates the motion-activated light through its form, saved as canonical JSON', async (ctx) => {
    if (!browser) return ctx.skip();
    await page.getByRole('article', { name: 'Motion-activated light' }).getByRole('link', { name: 'Use this template' }).click();
    await page.waitForURL(/\/os\/automations\/new\/motion-light$/);
    // The pickers list the devices of their class by name.
    const sensorOptions = await page.getByLabel('Motion sensor').locator('option').allTextContents();
    expect(sensorOptions).toEqual(['Choose a motion sensor', 'Hall motion (motion)', 'Back door (contact)']);
    expect(await page.getByLabel('Light', { exact: true }).locator('option').allTextContents()).toEqual(['Choose a light', 'Ceiling light']);
    await page.getByLabel('Name').fill('Hall motion light');
    await page.getByLabel('Motion sensor').selectOption({ label: 'Hall motion (motion)' });
    await page.getByLabel('Light', { exact: true }).selectOption({ label: 'Ceiling light' });
    await page.getByLabel('Minutes without motion').fill('3');
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.waitForURL((url) => /^\/os\/automations\/[^/]+$/.test(url.pathname) && !url.pathname.endsWith('/new'));
    made.motion = idFromUrl(page.url());
    expect(await page.locator('.flash.done').textContent()).toBe('Automation “Hall motion light” created.');

    // Through the REST API: the trigger and the steps the template promised.
    const saved = await program(made.motion);
    expect(saved).toMatchObject({ name: 'Hall motion light', mode: 'restart', enabled: true, conditions: [] });
    expect(saved.triggers).toEqual([{ id: 'motion', type: 'state', deviceIds: [ids['hall-motion']], field: 'detected', to: true }]);
    expect(saved.steps).toEqual([
      { type: 'command', deviceId: ids.ceiling, command: 'turn_on' },
      { type: 'wait_for_trigger', triggers: [{ type: 'state', deviceIds: [ids['hall-motion']], field: 'detected', to: false, forMs: 180_000 }], timeoutMs: 3_600_000, continueOnTimeout: true },
      { type: 'command', deviceId: ids.ceiling, command: 'turn_off' },
    ]);
    expect(saved.yaml).toBeUndefined();
    const { automations } = (await json(await server.request('GET', '/app/os/automations', { token }))) as { automations: Array<{ programId: string; enabled: boolean }> };
    expect(automations.find((a) => a.programId === made.motion)).toMatchObject({ enabled: true });
  });

  it('reads the automation out in words: when, if, then', async (ctx) => {
    if (!browser) return ctx.skip();
    const when = await page.getByRole('region', { name: 'When' }).textContent();
    expect(when).toContain('Hall motion detects motion');
    expect(await page.getByRole('region', { name: 'If' }).textContent()).toContain('No conditions');
    const then = await page.getByRole('region', { name: 'Then' }).locator('li').allTextContents();
    expect(then).toEqual(['Turn on Ceiling light', 'Wait until Hall motion stops detecting motion and stays so for 3 minutes, at most 1 hour (past that, it goes on)', 'Turn off Ceiling light']);
    expect(await page.getByRole('switch', { name: 'Hall motion light enabled' }).getAttribute('aria-checked')).toBe('true');
    expect(await page.getByText('No traces yet').count()).toBe(1);
  });

  it('turns the light on when the sensor detects motion, and the trace says what triggered it', async (ctx) => {
    if (!browser) return ctx.skip();
    const mark = actions.length;
    driver.send({ type: 'STATE_UPDATE', deviceId: 'hall-motion', state: { motion: true } });
    expect(await actionFor('ceiling', mark)).toMatchObject({ command: 'turn_on' });
    // The run now waits for the motion to end; its trace is there already.
    const traces = await eventually(async () => {
      const list = (await json(await server.request('GET', `/app/os/automations/${made.motion}/traces`, { token }))).traces as Array<{ id: string; status: string }>;
      return list.length > 0 ? list : undefined;
    });
    made.motionTrace = traces[0]!.id;

    await page.goto(`${server.url}/os/automations/${made.motion}`);
    await page.getByRole('link', { name: 'All traces' }).click();
    await page.waitForURL(/\/traces$/);
    await page.locator(`[data-trace="${made.motionTrace}"] a`).click();
    await page.waitForURL(new RegExp(`/traces/${made.motionTrace}$`));
    expect(await page.locator('[data-trigger-description]').textContent()).toBe('Hall motion detected changed from false to true');
    expect(await page.locator('[data-entry="conditions"]').count()).toBe(0);
    expect(await page.getByText('None: it runs whenever a trigger fires.').count()).toBe(1);
    const first = page.locator('[data-step="0"]');
    expect(await first.getAttribute('data-status')).toBe('succeeded');
    expect(await first.textContent()).toContain('Step 1: Turn on Ceiling light');
    expect(await page.locator('[data-why]').textContent()).toMatch(/^It is running now/);
  });

  it('switches an automation off and on from the list', async (ctx) => {
    if (!browser) return ctx.skip();
    await page.goto(`${server.url}/os/automations`);
    const item = page.locator(`[data-automation="${made.motion}"]`);
    expect(await item.locator('.when').textContent()).toBe('When Hall motion detects motion.');
    expect(await item.textContent()).toContain('No timed trigger');
    const toggle = () => page.getByRole('switch', { name: 'Hall motion light enabled' });
    await toggle().click();
    await expect.poll(async () => toggle().getAttribute('aria-checked')).toBe('false');
    expect(await page.locator('.flash.done').textContent()).toBe('Hall motion light is disabled.');
    expect(new URL(page.url()).pathname).toBe('/os/automations');
    expect(await program(made.motion)).toMatchObject({ enabled: false });
    await toggle().click();
    await expect.poll(async () => toggle().getAttribute('aria-checked')).toBe('true');
    expect(await program(made.motion)).toMatchObject({ enabled: true });
  });

  it('runs a test from the automation page and opens its trace', async (ctx) => {
    if (!browser) return ctx.skip();
    await page.goto(`${server.url}/os/automations/${made.motion}`);
    const mark = actions.length;
    await page.getByRole('button', { name: 'Run a test now' }).click();
    await page.waitForURL(new RegExp(`/os/automations/${made.motion}/traces/[^/]+$`));
    expect(await page.locator('.flash.done').textContent()).toMatch(/^Test run: /);
    expect(await page.locator('[data-trigger-description]').textContent()).toBe('A test run started by an administrator');
    expect(await actionFor('ceiling', mark, 'turn_on')).toMatchObject({ command: 'turn_on' });
  });

  it('says plainly why a run did not happen, and filters the traces to those', async (ctx) => {
    if (!browser) return ctx.skip();
    driver.send({ type: 'STATE_UPDATE', deviceId: 'ceiling', state: { on: false } });
    const res = await server.request('POST', '/app/os/programs/save', {
      token,
      body: {
        name: 'Doorbell chime when the light is on',
        triggers: [{ id: 'press', type: 'button', deviceIds: [ids['hall-button']], press: 'single' }],
        conditions: [{ type: 'state', deviceId: ids.ceiling, field: 'on', is: true }],
        steps: [{ type: 'alert', message: 'Someone pressed the hall button', severity: 'info' }],
      },
    });
    expect(res.status).toBe(200);
    made.guarded = ((await res.json()) as { id: string }).id;
    await eventually(async () => (((await json(await server.request('GET', `/app/os/devices/${ids.ceiling}`, { token }))).reading as Json)?.on === false ? true : undefined));
    for (let i = 0; i < 2; i++) {
      const test = await json(await server.request('POST', `/app/os/automations/${made.guarded}/test`, { token, body: {} }));
      expect(test.status).toBe('not_passed');
      made.guardedTrace = test.id as string;
    }
    await page.goto(`${server.url}/os/automations/${made.guarded}/traces`);
    await page.getByRole('link', { name: 'Only those that failed or did not run' }).click();
    await page.waitForURL(/notable=1$/);
    expect(await page.getByRole('link', { name: 'Only those that failed or did not run' }).getAttribute('aria-current')).toBe('page');
    const entry = page.locator(`[data-trace="${made.guardedTrace}"]`);
    expect(await entry.textContent()).toContain('×2');
    expect(await entry.textContent()).toContain('It did not run: the condition “Ceiling light is on” did not hold');
    await entry.locator('a').click();
    const why = await page.locator('[data-why]').textContent();
    expect(why).toMatch(/^It did not run: the condition “Ceiling light is on” did not hold: .+\. This happened 2 times in a row, the last at /);
    const condition = page.locator('[data-condition="0"]');
    expect(await condition.getAttribute('data-result')).toBe('false');
    expect(await condition.textContent()).toContain('✗');
    expect(await page.getByRole('region', { name: 'Timeline' }).getByText('None ran.').count()).toBe(1);
  });

  it('saves the other templates as they say: door left open, lights at sunset, button → scene', async (ctx) => {
    if (!browser) return ctx.skip();
    // Door left open: the alert names the door.
    await page.goto(`${server.url}/os/automations/new/door-open`);
    await page.getByLabel('Contact sensor').selectOption({ label: 'Back door (contact)' });
    await page.getByLabel('Minutes open').fill('10');
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.waitForURL((url) => !url.pathname.includes('/new/'));
    const door = await program(idFromUrl(page.url()));
    expect(door.triggers).toEqual([{ id: 'open', type: 'state', deviceIds: [ids['back-door']], field: 'detected', to: true, forMs: 600_000 }]);
    expect(door.steps).toEqual([{ type: 'alert', message: 'Back door has been open for 10 minutes.', severity: 'warning', alertType: 'door_open', deviceId: ids['back-door'] }]);
    expect(await page.getByRole('region', { name: 'When' }).textContent()).toContain('Back door opens and stays so for 10 minutes');

    // Lights at sunset: the home has no location, which the form says, linking to the settings.
    await page.goto(`${server.url}/os/automations/new/sunset-lights`);
    expect(await page.locator('[data-missing="location"] a').getAttribute('href')).toBe('/os/settings');
    await page.getByRole('button', { name: 'Create automation' }).click();
    // No light chosen: the form comes back with the error and what was typed.
    await expect.poll(() => page.locator('.flash.error').textContent()).toBe('Lights must have at least one light chosen');
    expect(await page.getByLabel('Name').inputValue()).toBe('Lights at sunset');
    await page.getByLabel('Ceiling light').check();
    await page.getByLabel('Minutes from sunset').fill('-15');
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.waitForURL((url) => !url.pathname.includes('/new/'));
    const sunset = await program(idFromUrl(page.url()));
    expect(sunset.triggers).toEqual([{ id: 'sunset', type: 'sun', event: 'sunset', offsetMs: -900_000 }]);
    expect(sunset.steps).toEqual([{ type: 'command', deviceId: ids.ceiling, command: 'turn_on' }]);
    expect(await page.getByRole('region', { name: 'When' }).textContent()).toContain('15 minutes before sunset');

    // Button → scene: the scenes the bridge listed when it came online.
    await eventually(async () => {
      await page.goto(`${server.url}/os/automations/new/button-scene`);
      return (await page.getByLabel('Scene', { exact: true }).count()) === 1;
    });
    await page.getByLabel('Button', { exact: true }).selectOption({ label: 'Hall button' });
    await page.getByLabel('Press').selectOption('double');
    await page.getByLabel('Scene', { exact: true }).selectOption({ label: 'Evening glow (Hall bridge)' });
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.waitForURL((url) => !url.pathname.includes('/new/'));
    const button = await program(idFromUrl(page.url()));
    expect(button.triggers).toEqual([{ id: 'press', type: 'button', deviceIds: [ids['hall-button']], press: 'double' }]);
    expect(button.steps).toEqual([{ type: 'scene', sceneId: `${ids.bridge}:evening` }]);
    expect(await page.getByRole('region', { name: 'Then' }).textContent()).toContain('Run the scene Evening glow of Hall bridge');
  });

  for (const [label, viewport] of [
    ['phone', { width: 390, height: 844 }],
    ['desktop', { width: 1280, height: 800 }],
  ] as const) {
    for (const scheme of ['light', 'dark'] as const) {
      it(`has no serious or critical violation and no sideways scrolling on a ${label} in the ${scheme} scheme`, { timeout: 90_000 }, async (ctx) => {
        if (!browser) return ctx.skip();
        await (offlineLight ??= addOfflineLight());
        const p = await newPage(browser, viewport);
        await p.emulateMedia({ colorScheme: scheme });
        await signInWithForm(p, server.url, ADMIN);
        const pages: Record<string, string> = {
          list: '/os/automations',
          template: '/os/automations/new/motion-light',
          'template-sunset': '/os/automations/new/sunset-lights',
          automation: `/os/automations/${made.motion}`,
          traces: `/os/automations/${made.guarded}/traces`,
          trace: `/os/automations/${made.motion}/traces/${made.motionTrace}`,
          'trace-not-passed': `/os/automations/${made.guarded}/traces/${made.guardedTrace}`,
        };
        const found: Record<string, string[]> = {};
        const wide: Record<string, number> = {};
        for (const [name, path] of Object.entries(pages)) {
          await p.goto(`${server.url}${path}`);
          expect(new URL(p.url()).pathname, name).toBe(path);
          found[name] = await seriousViolations(p);
          const overflow = await p.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
          if (overflow > 0) wide[name] = overflow;
          await p.screenshot({ path: `/tmp/automations-${name}-${label}-${scheme}.png`, fullPage: true });
        }
        await p.context().close();
        expect(Object.fromEntries(Object.entries(found).filter(([, v]) => v.length > 0))).toEqual({});
        expect(wide).toEqual({});
      });
    }
  }
});
