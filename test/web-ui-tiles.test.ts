import { gzipSync } from 'node:zlib';
import { mdiDoorOpen, mdiThermometer } from '@mdi/js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchBrowser, newPage, screenshot, signInWithForm } from './support/browser.js';
import { ADMIN, startServer, type TestServer } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';

/**
 * The household's tiles in Chromium, one per device class, against a real WebSocket driver: each
 * control sends the class's standard command, the driver's state change moves the control
 * without a reload, and a driver's failure shows in the tile with the control moved back.
 */

let server: TestServer;
let token: string;
let driver: TestDriver;
let browser: Browser;
let page: Page;
const actions: Message[] = [];
/** The next ACTION fails with this message (once). */
let failNext: string | undefined;
const ids: Record<string, string> = {};

type Json = Record<string, unknown>;

const DEVICES = [
  { id: 'lamp', name: 'Sofa lamp', deviceClass: 'light', attributes: { colorModes: ['onoff', 'brightness', 'color_temp', 'hs'], minKelvin: 2200, maxKelvin: 6500 }, state: { on: false, brightness: 20, color_temp_kelvin: 3000, hue: 0, saturation: 0 } },
  { id: 'plug', name: 'Kettle plug', deviceClass: 'outlet', state: { on: true, power_w: 12 } },
  { id: 'blind', name: 'Patio blind', deviceClass: 'cover', state: { position: 30 } },
  { id: 'thermo', name: 'Hall thermostat', deviceClass: 'climate', attributes: { hvacModes: ['off', 'heat', 'cool'], temperatureStep: 0.5 }, state: { current_temperature: 19.5, target_temperature: 21, hvac_mode: 'heat' } },
  { id: 'fan', name: 'Ceiling fan', deviceClass: 'fan', state: { on: false, percentage: 0 } },
  { id: 'door', name: 'Front door', deviceClass: 'lock', state: { locked: true } },
  { id: 'temp', name: 'Hall temperature', deviceClass: 'sensor', attributes: { sensorClass: 'temperature', unit: '°C' }, state: { temperature: 21.4 } },
  { id: 'contact', name: 'Back door contact', deviceClass: 'binary_sensor', attributes: { sensorClass: 'contact' }, state: { contact: true } },
  { id: 'tv', name: 'Lounge TV', deviceClass: 'media_player', commands: ['turn_on', 'turn_off', 'play', 'pause', 'next', 'previous', 'volume_set'], state: { on: true, playback: 'playing', volume: 20, title: 'Blue in Green', artist: 'Miles Davis', app: 'Music' } },
  { id: 'ir', name: 'Amplifier remote', deviceClass: 'remote', commands: ['power', 'input_cd'], state: {} },
];

beforeAll(async () => {
  server = await startServer();
  token = await server.login();
  driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.home');
  driver.serveActions((action) => {
    actions.push(action);
    if (failNext) {
      const message = failNext;
      failNext = undefined;
      throw new Error(message);
    }
    return undefined;
  });
  for (const device of DEVICES) driver.send({ type: 'DEVICE_DISCOVERED', device });
  await eventually(async () => {
    const list = ((await (await server.request('GET', '/app/os/devices', { token })).json()) as Json).devices as Array<{ id: string; driverDeviceId: string }>;
    for (const d of list) ids[d.driverDeviceId] = d.id;
    return DEVICES.every((d) => ids[d.id]);
  });
  const space = ((await (await server.request('POST', '/app/os/spaces/save', { token, body: { name: 'Lounge' } })).json()) as { id: string }).id;
  expect((await server.request('POST', `/app/os/spaces/${space}/devices/assign`, { token, body: { deviceIds: DEVICES.map((d) => ids[d.id]) } })).status).toBe(200);
  browser = await launchBrowser();
  page = await newPage(browser);
  page.on('dialog', (dialog) => void dialog.accept());
  await signInWithForm(page, server.url, ADMIN);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  driver?.close();
  await server?.close();
});

const tile = (driverId: string): Locator => page.locator(`#main .room .tile[data-device="${ids[driverId]}"]`);

/** The last ACTION the driver received for a device, once it has arrived. */
async function lastAction(driverId: string, after: number): Promise<Message> {
  return eventually(() => actions.slice(after).findLast((a) => a.deviceId === driverId));
}

describe('device tiles in a browser', () => {
  it('says the hub is online once the live stream is open', async () => {
    await expect.poll(() => page.locator('#hub-status').getAttribute('data-status')).toBe('online');
    expect(await page.locator('#hub-status').textContent()).toBe('Hub online');
  });

  it('light: the switch turns it on, the brightness slider sets the level, the driver moves them, a failure rolls back', async () => {
    const lamp = tile('lamp');
    expect(await lamp.getAttribute('data-class')).toBe('light');
    const power = lamp.getByRole('switch', { name: 'Sofa lamp' });
    expect(await power.getAttribute('aria-checked')).toBe('false');
    let mark = actions.length;
    await power.click();
    expect(await lastAction('lamp', mark)).toMatchObject({ command: 'turn_on' });
    expect(await power.getAttribute('aria-checked')).toBe('true');

    mark = actions.length;
    const brightness = lamp.getByLabel('Brightness', { exact: false }).and(lamp.locator('input[type=range]').first());
    await brightness.fill('65');
    expect(await lastAction('lamp', mark)).toMatchObject({ command: 'set_brightness', params: { brightness: 65 } });

    // The driver reports: the controls follow without a reload.
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { on: false, brightness: 40 } });
    await expect.poll(() => power.getAttribute('aria-checked')).toBe('false');
    await expect.poll(() => lamp.locator('input[type=range]').first().inputValue()).toBe('40');
    expect(await lamp.locator('output[data-read="brightness"]').textContent()).toBe('40 %');

    // Colour temperature and colour are offered, as its colour modes say.
    expect(await lamp.getByLabel(/Colour temperature/).count()).toBe(1);
    expect(await lamp.getByLabel('Colour', { exact: true }).count()).toBe(1);

    // The driver fails: the switch goes back and the hub's message shows in the tile.
    failNext = 'Bulb unreachable';
    await power.click();
    await expect.poll(() => lamp.locator('[data-error]').textContent()).toContain('Bulb unreachable');
    expect(await lamp.locator('[data-error]').isVisible()).toBe(true);
    expect(await power.getAttribute('aria-checked')).toBe('false');
    await screenshot(page, 'os-home');
  });

  it('outlet: a switch and its power', async () => {
    const plug = tile('plug');
    expect(await plug.locator('[data-read="value"]').textContent()).toBe('12 W');
    const power = plug.getByRole('switch', { name: 'Kettle plug' });
    expect(await power.getAttribute('aria-checked')).toBe('true');
    const mark = actions.length;
    await power.click();
    expect(await lastAction('plug', mark)).toMatchObject({ command: 'turn_off' });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'plug', state: { on: true, power_w: 1800 } });
    await expect.poll(() => plug.locator('[data-read="value"]').textContent()).toBe('1800 W');
    expect(await power.getAttribute('aria-checked')).toBe('true');
  });

  it('cover: open, stop and close, and a position slider', async () => {
    const blind = tile('blind');
    let mark = actions.length;
    await blind.getByRole('button', { name: 'Open Patio blind' }).click();
    expect(await lastAction('blind', mark)).toMatchObject({ command: 'open' });
    mark = actions.length;
    await blind.getByRole('button', { name: 'Stop Patio blind' }).click();
    expect(await lastAction('blind', mark)).toMatchObject({ command: 'stop' });
    mark = actions.length;
    await blind.getByRole('slider', { name: /Position/ }).fill('75');
    expect(await lastAction('blind', mark)).toMatchObject({ command: 'set_position', params: { position: 75 } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'blind', state: { position: 10 } });
    await expect.poll(() => blind.getByRole('slider', { name: /Position/ }).inputValue()).toBe('10');
  });

  it('climate: the current temperature, the target with − and +, and the mode', async () => {
    const thermo = tile('thermo');
    expect(await thermo.locator('[data-read="currentTemperature"]').textContent()).toBe('19.5°C');
    let mark = actions.length;
    await thermo.getByRole('button', { name: 'Raise the target of Hall thermostat' }).click();
    expect(await lastAction('thermo', mark)).toMatchObject({ command: 'set_target_temperature', params: { temperature: 21.5 } });
    await expect.poll(() => thermo.locator('output[data-read="targetTemperature"]').textContent()).toBe('21.5°C');
    mark = actions.length;
    await thermo.getByRole('button', { name: 'Lower the target of Hall thermostat' }).click();
    expect(await lastAction('thermo', mark)).toMatchObject({ command: 'set_target_temperature', params: { temperature: 21 } });
    mark = actions.length;
    await thermo.getByLabel('Mode', { exact: true }).selectOption('cool');
    // The class's standard command, as this driver (no command list) takes it: set_mode.
    expect(await lastAction('thermo', mark)).toMatchObject({ command: 'set_mode', params: { mode: 'cool' } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'thermo', state: { current_temperature: 20, target_temperature: 18, hvac_mode: 'off' } });
    await expect.poll(() => thermo.locator('output[data-read="targetTemperature"]').textContent()).toBe('18°C');
    expect(await thermo.getByLabel('Mode', { exact: true }).inputValue()).toBe('off');
  });

  it('fan: a switch and a speed slider', async () => {
    const fan = tile('fan');
    let mark = actions.length;
    await fan.getByRole('switch', { name: 'Ceiling fan' }).click();
    expect(await lastAction('fan', mark)).toMatchObject({ command: 'turn_on' });
    mark = actions.length;
    await fan.getByRole('slider', { name: /Speed/ }).fill('50');
    expect(await lastAction('fan', mark)).toMatchObject({ command: 'set_percentage', params: { percentage: 50 } });
  });

  it('lock: lock, and an unlock that asks to confirm first', async () => {
    const door = tile('door');
    expect(await door.locator('[data-read="locked"]').textContent()).toBe('Locked');
    const asked: string[] = [];
    const onDialog = (dialog: { message(): string }) => asked.push(dialog.message());
    page.on('dialog', onDialog);
    const mark = actions.length;
    await door.getByRole('button', { name: 'Unlock Front door' }).click();
    expect(await lastAction('door', mark)).toMatchObject({ command: 'unlock' });
    page.off('dialog', onDialog);
    expect(asked).toEqual(['Unlock Front door?']);
    await expect.poll(() => door.locator('[data-read="locked"]').textContent()).toBe('Unlocked');
    driver.send({ type: 'STATE_UPDATE', deviceId: 'door', state: { locked: true } });
    await expect.poll(() => door.locator('[data-read="locked"]').textContent()).toBe('Locked');
  });

  it('sensor and binary sensor: the value with its unit, and the state in words', async () => {
    expect(await tile('temp').locator('[data-read="value"]').textContent()).toBe('21.4 °C');
    // The icon is what the sensor measures or detects.
    expect(await tile('temp').locator('header svg.icon path').getAttribute('d')).toBe(mdiThermometer);
    expect(await tile('contact').locator('header svg.icon path').getAttribute('d')).toBe(mdiDoorOpen);
    expect(await tile('contact').locator('[data-read="detected"]').textContent()).toBe('Closed');
    driver.send({ type: 'STATE_UPDATE', deviceId: 'contact', state: { contact: false } });
    await expect.poll(() => tile('contact').locator('[data-read="detected"]').textContent()).toBe('Open');
    driver.send({ type: 'STATE_UPDATE', deviceId: 'temp', state: { temperature: 22.05 } });
    await expect.poll(() => tile('temp').locator('[data-read="value"]').textContent()).toBe('22.1 °C');
  });

  it('media player: now playing, transport, volume and app', async () => {
    const tv = tile('tv');
    expect(await tv.locator('[data-read="title"]').textContent()).toBe('Blue in Green');
    expect(await tv.locator('[data-read="artist"]').textContent()).toBe('Miles Davis');
    expect(await tv.locator('[data-read="app"]').textContent()).toBe('Music');
    let mark = actions.length;
    await tv.getByRole('button', { name: 'Pause Lounge TV' }).click();
    await expect.poll(async () => (await tv.locator('[data-error]').textContent()) || actions.slice(mark).some((a) => a.deviceId === 'tv')).toBe(true);
    expect(await lastAction('tv', mark)).toMatchObject({ command: 'pause' });
    await expect.poll(() => tv.getByRole('button', { name: 'Play Lounge TV' }).count()).toBe(1);
    mark = actions.length;
    await tv.getByRole('slider', { name: /Volume/ }).fill('35');
    expect(await lastAction('tv', mark)).toMatchObject({ command: 'volume_set', params: { volume: 35 } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 'tv', state: { playback: 'playing', title: 'So What' } });
    await expect.poll(() => tv.locator('[data-read="title"]').textContent()).toBe('So What');
    expect(await tv.getByRole('button', { name: 'Pause Lounge TV' }).count()).toBe(1);
  });

  it('remote: its keys', async () => {
    const mark = actions.length;
    await tile('ir').getByRole('button', { name: 'input cd (Amplifier remote)' }).click();
    expect(await lastAction('ir', mark)).toMatchObject({ command: 'input_cd' });
  });

  it('shows a device going offline, with its controls disabled, and back', async () => {
    const lamp = tile('lamp');
    driver.send({ type: 'DEVICE_REMOVED', deviceId: 'lamp' });
    await expect.poll(() => lamp.locator('[data-online]').textContent()).toBe('Offline');
    expect(await lamp.getByRole('switch').isDisabled()).toBe(true);
    driver.send({ type: 'DEVICE_DISCOVERED', device: DEVICES[0] });
    await expect.poll(() => lamp.locator('[data-online]').textContent()).toBe('Online');
    expect(await lamp.getByRole('switch').isDisabled()).toBe(false);
  });

  it('sends / to the household pages, and links administrators to the admin panel', async () => {
    const res = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/os/');
    await page.goto(`${server.url}/`);
    expect(new URL(page.url()).pathname).toBe('/os/');
    expect(await page.getByRole('link', { name: 'Admin' }).getAttribute('href')).toBe('/admin/');
  });

  it('is an installable app: a manifest with its icons, and a service worker that keeps the shell only', async () => {
    const manifest = (await (await fetch(`${server.url}/os/manifest.webmanifest`)).json()) as { start_url: string; display: string; icons: Array<{ src: string; sizes: string; type: string }> };
    expect(manifest).toMatchObject({ start_url: '/os/', scope: '/os/', display: 'standalone' });
    for (const icon of manifest.icons) {
      const res = await fetch(`${server.url}${icon.src}`);
      expect(res.headers.get('content-type')).toBe('image/png');
      const png = Buffer.from(await res.arrayBuffer());
      // The PNG header's width and height (IHDR) are the size the manifest names.
      expect(`${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`).toBe(icon.sizes);
    }
    expect(await page.evaluate<string>('navigator.serviceWorker.ready.then((r) => r.scope)')).toBe(`${server.url}/os/`);
    await page.reload();
    await expect.poll(() => page.evaluate<boolean>('navigator.serviceWorker.controller !== null')).toBe(true);
    await page.reload();
    const cached = await page.evaluate<string[]>(
      `caches.keys().then((names) => Promise.all(names.map((n) => caches.open(n).then((c) => c.keys())))).then((lists) => lists.flat().map((r) => new URL(r.url).pathname))`,
    );
    expect(cached).toContain('/os/assets/home.js');
    // Pages and API answers are never kept.
    expect(cached.filter((path) => !path.startsWith('/os/assets/') && path !== '/os/manifest.webmanifest')).toEqual([]);
  });

  it('keeps the page script small: at most 60 KB gzipped', async () => {
    const res = await fetch(`${server.url}${(await page.locator('script[src^="/os/assets/home.js"]').getAttribute('src'))!}`);
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(gzipSync(Buffer.from(await res.arrayBuffer())).length).toBeLessThanOrEqual(60 * 1024);
  });

  it('works without JavaScript: a tile control is a form the hub answers', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    const plain = await context.newPage();
    try {
      await signInWithForm(plain, server.url, ADMIN);
      const fan = plain.locator(`#main .room .tile[data-device="${ids.fan}"]`);
      await fan.getByRole('slider', { name: /Speed/ }).fill('80');
      const mark = actions.length;
      await fan.getByRole('button', { name: 'Set speed of Ceiling fan' }).click();
      expect(await lastAction('fan', mark)).toMatchObject({ command: 'set_percentage', params: { percentage: 80 } });
      await expect.poll(() => plain.locator('.flash').first().textContent()).toContain('set_percentage: done');
    } finally {
      await context.close().catch(() => undefined);
    }
  });


});
