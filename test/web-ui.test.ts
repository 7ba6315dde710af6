import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage, screenshot } from './support/browser.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';

let server: TestServer;
let token: string;
let driver: TestDriver;
let browser: Browser;
let page: Page;
const actions: Message[] = [];
const ids = { lamp: '', space: '', program: '' };

type Json = Record<string, unknown>;
const json = async (res: Response) => (await res.json()) as Json;

beforeAll(async () => {
  server = await startServer();
  token = await server.login();
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.lights');
  driver.serveActions((action) => {
    actions.push(action);
    // Two scene bridges: one the member will be granted, one never.
    if (action.command === 'scenes.list') return action.deviceId === 'hall-bridge' ? [{ id: 'evening', name: 'Evening glow' }] : [{ id: 'party', name: 'Attic party' }];
    return { done: action.command };
  });
  driver.send({
    type: 'DEVICE_DISCOVERED',
    device: {
      id: 'lamp-1',
      name: 'Reading lamp',
      commands: [{ name: 'turn_on', label: 'On' }, { name: 'set_brightness', label: 'Set brightness', params: { type: 'object', properties: { brightness: { type: 'integer', minimum: 0, maximum: 100, title: 'Brightness' } }, required: ['brightness'] } }],
      state: { on: false, brightness: 10 },
    },
  });
  ids.lamp = await eventually(async () => {
    const list = (await json(await server.request('GET', '/app/os/devices', { token }))).devices as Array<{ id: string; name: string }>;
    return list.find((d) => d.name === 'Reading lamp')?.id;
  });
  ids.space = ((await json(await server.request('POST', '/app/os/spaces/save', { token, body: { name: 'Living room' } }))) as { id: string }).id;
  expect((await server.request('POST', `/app/os/spaces/${ids.space}/devices/assign`, { token, body: { deviceIds: [ids.lamp] } })).status).toBe(200);
  const program = await server.request('POST', '/app/os/programs/save', { token, body: { yaml: `name: Evening\nsteps:\n  - device: ${ids.lamp}\n    command: turn_on\n` } });
  expect(program.status).toBe(200);
  ids.program = ((await program.json()) as { id: string }).id;
  const user = (await json(await server.request('POST', '/admin/users', { token, body: { username: 'hank', password: 'hank-password-1' } }))) as { id: string };
  expect((await server.request('POST', `/admin/users/${user.id}/access`, { token, body: { spaceIds: [ids.space], deviceIds: [] } })).status).toBe(200);
  browser = await launchBrowser();
  page = await newPage(browser);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  driver?.close();
  await server?.close();
});

async function signIn(p: Page, username: string, password: string) {
  await p.goto(`${server.url}/os/`);
  await p.getByLabel('Username').fill(username);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

describe('household web UI in a browser', () => {
  it('signs a household member in and shows their rooms, devices and state, changing live when the driver reports', async () => {
    await signIn(page, 'hank', 'hank-password-1');
    await expect.poll(() => page.title()).toContain('Home');
    const card = page.locator(`[data-device="${ids.lamp}"]`);
    expect(await card.locator('h3').textContent()).toContain('Reading lamp');
    // No class declared: its commands make it a light, drawn as one.
    expect(await card.getAttribute('data-class')).toBe('light');
    expect(await card.getByRole('slider', { name: /Brightness/ }).inputValue()).toBe('10');
    await expect.poll(() => page.locator('#hub-status').textContent()).toBe('Hub online');
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp-1', state: { brightness: 55, on: true } });
    await expect.poll(() => card.getByRole('slider', { name: /Brightness/ }).inputValue()).toBe('55');
    expect(await card.getByRole('switch', { name: 'Reading lamp' }).getAttribute('aria-checked')).toBe('true');
    await screenshot(page, 'os-rooms');
  });

  it('shows a member only what is granted to them (spaces.overview), an administrator everything', async () => {
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'fan-1', name: 'Attic fan', state: { on: false } } });
    const overview = await eventually(async () => {
      const body = (await json(await server.request('GET', '/app/os/spaces/overview', { token }))) as { spaces: Array<{ space: { name: string }; devices: unknown[] }>; unplaced: Array<{ device: { name: string } }> };
      return body.unplaced.length > 0 ? body : undefined;
    });
    expect(overview.spaces).toMatchObject([{ space: { name: 'Living room' }, devices: [{ device: { name: 'Reading lamp' }, state: { state: { brightness: 55 }, online: true } }] }]);
    expect(overview.unplaced.map((d) => d.device.name)).toEqual(['Attic fan']);
    await page.reload();
    expect(await page.locator('[data-device]').count()).toBe(1);
    expect(await page.content()).not.toContain('Attic fan');
  });

  it('runs a scene of a granted device with one tap, and shows no scene of a device the member does not see', async () => {
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'hall-bridge', name: 'Hall bridge', category: 'bridge', capabilities: ['scenes'] } });
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'attic-bridge', name: 'Attic bridge', category: 'bridge', capabilities: ['scenes'] } });
    const [hall, attic] = await eventually(async () => {
      const list = (await json(await server.request('GET', '/app/os/devices', { token }))).devices as Array<{ id: string; name: string }>;
      const found = ['Hall bridge', 'Attic bridge'].map((name) => list.find((d) => d.name === name)?.id);
      return found.every(Boolean) ? (found as [string, string]) : undefined;
    });
    expect((await server.request('POST', `/app/os/spaces/${ids.space}/devices/assign`, { token, body: { deviceIds: [hall] } })).status).toBe(200);
    // The hub lists a bridge's scenes when it comes online.
    const quick = page.getByRole('region', { name: 'Scenes and programs' });
    await eventually(async () => {
      await page.goto(`${server.url}/os/`);
      return (await quick.getByRole('button', { name: 'Run Evening glow' }).count()) === 1;
    });
    expect(await quick.getByRole('button', { name: 'Run Evening glow' }).count()).toBe(1);
    expect(await page.content()).not.toContain('Attic party');
    // An administrator sees both: the member's page leaves one out, it is not missing.
    const admin = await newPage(browser);
    await signIn(admin, ADMIN.username, ADMIN.password);
    await expect.poll(async () => (await admin.content()).includes('Attic party')).toBe(true);
    await admin.context().close();
    const before = actions.length;
    await quick.getByRole('button', { name: 'Run Evening glow' }).click();
    await expect.poll(() => page.locator('.flash').first().textContent()).toBe('The scene is on.');
    expect(actions.slice(before).find((a) => a.command === 'scenes.run')).toMatchObject({ deviceId: 'hall-bridge', params: { sceneId: 'evening' } });
    // The other one answers as a scene that does not exist, and the member cannot ask every device.
    const runAs = (sceneId: string) =>
      page.evaluate<number>(`fetch('/os/scenes/${encodeURIComponent(sceneId)}/run', { method: 'POST', headers: { 'x-csrf-token': document.querySelector('meta[name=csrf-token]').content, accept: 'application/json' } }).then((r) => r.status)`);
    expect(await runAs(`${attic}:party`)).toBe(404);
    expect(actions.slice(before).some((a) => a.deviceId === 'attic-bridge' && a.command === 'scenes.run')).toBe(false);
    // Activity presets likewise: a mapped control on a granted device is offered, one on a device the member does not see is not.
    const fan = (((await json(await server.request('GET', '/app/os/devices', { token }))).devices as Array<{ id: string; name: string }>).find((d) => d.name === 'Attic fan'))!.id;
    for (const [name, deviceId] of [['Lamp on', ids.lamp], ['Attic fan on', fan]] as const) {
      expect((await server.request('POST', '/app/os/action-maps/save', { token, body: { name, controlKey: name, deviceId, command: 'turn_on' } })).status).toBe(200);
    }
    await page.goto(`${server.url}/os/`);
    expect(await quick.getByRole('button', { name: 'Run Lamp on' }).count()).toBe(1);
    expect(await page.content()).not.toContain('Attic fan on');
    const beforePreset = actions.length;
    await quick.getByRole('button', { name: 'Run Lamp on' }).click();
    await expect.poll(() => page.locator('.flash').first().textContent()).toBe('Done.');
    expect(actions.slice(beforePreset).find((a) => a.deviceId === 'lamp-1')).toMatchObject({ command: 'turn_on' });
    // Back out of the room, so the tests after this one see one device.
    expect((await server.request('POST', '/app/os/spaces/devices/move', { token, body: { deviceId: hall, spaceId: null } })).status).toBe(200);
  });

  it('sends a command with its parameters from the device tile', async () => {
    const card = page.locator(`[data-device="${ids.lamp}"]`);
    const before = actions.length;
    await card.getByRole('slider', { name: /Brightness/ }).fill('70');
    await eventually(() => actions.length > before);
    expect(actions.at(-1)).toMatchObject({ command: 'set_brightness', params: { brightness: 70 } });
  });

  it('runs a program', async () => {
    await page.goto(`${server.url}/os/programs`);
    const before = actions.length;
    await page.getByRole('button', { name: 'Run Evening' }).click();
    await expect.poll(() => page.locator('.flash').first().textContent()).toContain('running');
    await eventually(() => actions.length > before);
    expect(actions.at(-1)).toMatchObject({ command: 'turn_on' });
    await screenshot(page, 'os-programs');
  });

  it('refuses a POST signed in by the cookie without the CSRF token', async () => {
    const status = await page.evaluate(`fetch('/os/devices/${ids.lamp}/command', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'command=turn_on' }).then((r) => r.status)`);
    expect(status).toBe(403);
  });

  it('lets an administrator edit a program as YAML, with an error shown at its line', async () => {
    const admin = await newPage(browser);
    await signIn(admin, ADMIN.username, ADMIN.password);
    await admin.goto(`${server.url}/os/programs/${ids.program}`);
    const editor = admin.getByLabel(/Program \(YAML/);
    expect(await editor.inputValue()).toContain('name: Evening');
    await editor.fill(`name: Evening\nsteps:\n  - device: ${ids.lamp}\n    command: turn_on\n  - delay: forever\n`);
    await admin.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => admin.locator('.error-line').count()).toBe(1);
    expect(await admin.locator('.error-line').textContent()).toContain('delay: forever');
    expect(await admin.locator('.flash.error').textContent()).toMatch(/^Line 5/);
    await screenshot(admin, 'os-program-error');
    await admin.getByLabel(/Program \(YAML/).fill(`name: Evening\nsteps:\n  - device: ${ids.lamp}\n    command: turn_on\n  - delay: 1s\n`);
    await admin.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => admin.locator('.flash').first().textContent()).toContain('Program Evening saved');
    const saved = (await json(await server.request('GET', `/app/os/programs/${ids.program}`, { token }))) as { steps: unknown[] };
    expect(saved.steps).toHaveLength(2);
    await admin.goto(`${server.url}/os/media`);
    await screenshot(admin, 'os-media');
    await admin.goto(`${server.url}/os/remotes`);
    await screenshot(admin, 'os-remotes');
  });

  it('lets an administrator create, rename and remove rooms and move devices between them', async () => {
    const admin = await newPage(browser);
    await signIn(admin, ADMIN.username, ADMIN.password);
    await admin.goto(`${server.url}/os/rooms`);
    await admin.getByLabel('Name', { exact: true }).fill('Kitchen');
    await admin.getByRole('button', { name: 'Create room' }).click();
    await expect.poll(() => admin.locator('.flash').first().textContent()).toBe('Room Kitchen created.');
    await admin.getByLabel('Name of Kitchen').fill('Kitchen and dining');
    await admin.getByRole('button', { name: 'Rename Kitchen' }).click();
    await expect.poll(() => admin.locator('.flash').first().textContent()).toBe('Renamed to Kitchen and dining.');

    await admin.getByLabel('Room of Reading lamp').selectOption({ label: 'Kitchen and dining' });
    await admin.getByRole('button', { name: 'Move Reading lamp' }).click();
    await expect.poll(() => admin.locator('.flash').first().textContent()).toBe('Reading lamp moved.');
    await screenshot(admin, 'os-rooms-admin');
    const kitchen = (((await json(await server.request('GET', '/app/os/spaces', { token }))).spaces as Array<{ id: string; name: string }>).find((s) => s.name === 'Kitchen and dining'))!;
    const lamp = (await json(await server.request('GET', `/app/os/devices/${ids.lamp}`, { token }))) as { room: string };
    expect(lamp.room).toBe(kitchen.id);
    await admin.goto(`${server.url}/os/`);
    expect(await admin.locator(`[data-space="${kitchen.id}"] [data-device="${ids.lamp}"]`).count()).toBe(1);

    await admin.goto(`${server.url}/os/rooms`);
    await admin.getByText('Remove Kitchen and dining…').click();
    await admin.getByRole('button', { name: 'Remove Kitchen and dining' }).click();
    await expect.poll(() => admin.locator('.flash').first().textContent()).toBe('Room removed; its device is in no room now.');
    expect(((await json(await server.request('GET', `/app/os/devices/${ids.lamp}`, { token }))) as { room: string | null }).room).toBeNull();
    // Back where the member can see it, for the tests after this one.
    await admin.getByLabel('Room of Reading lamp').selectOption({ label: 'Living room' });
    await admin.getByRole('button', { name: 'Move Reading lamp' }).click();
    await expect.poll(() => admin.locator('.flash').first().textContent()).toBe('Reading lamp moved.');
    await admin.context().close();

    await page.goto(`${server.url}/os/rooms`);
    expect(await page.locator('main').textContent()).toContain('Only administrators arrange rooms.');
    expect(await page.locator('select').count()).toBe(0);
  });

  it('works on a phone and by keyboard, every page with a title and labelled controls', async () => {
    const phone = await newPage(browser, { width: 390, height: 844 });
    await signIn(phone, 'hank', 'hank-password-1');
    await expect.poll(() => phone.title()).toContain('Home');
    for (const path of ['/os/', '/os/programs', '/os/media', '/os/remotes', '/os/rooms']) {
      await phone.goto(server.url + path);
      expect(await phone.title(), path).toMatch(/ · Home · Home Control$/);
      const overflow = await phone.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow, path).toBeLessThanOrEqual(0);
      const unlabelled = await phone.evaluate<string[]>(`[...document.querySelectorAll('input:not([type=hidden]), select, textarea')].filter((el) => !el.labels || el.labels.length === 0).map((el) => el.name)`);
      expect(unlabelled, path).toEqual([]);
    }
    await phone.goto(`${server.url}/os/`);
    await phone.keyboard.press('Tab');
    expect(await phone.evaluate<string>('document.activeElement.textContent')).toContain('Skip to content');
    await phone.keyboard.press('Tab');
    expect(await phone.evaluate<string>('document.activeElement.tagName')).toBe('A');
    await screenshot(phone, 'os-home-phone');
  });
});
