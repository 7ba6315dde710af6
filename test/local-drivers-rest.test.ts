import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';

const FIXTURES = path.resolve(import.meta.dirname, 'fixtures/drivers');
let server: TestServer;
let driversDir: string | undefined;
afterEach(async () => {
  await server?.close();
  if (driversDir) fs.rmSync(driversDir, { recursive: true, force: true });
  driversDir = undefined;
});

/** A DRIVERS_DIR with copies of some fixture drivers (plus a broken manifest). */
function driversWith(...names: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-drivers-'));
  for (const name of names) fs.cpSync(path.join(FIXTURES, name), path.join(dir, name), { recursive: true });
  fs.mkdirSync(path.join(dir, 'broken'));
  fs.writeFileSync(path.join(dir, 'broken', 'broken.driver.json'), JSON.stringify({ driverKey: 'broken', driverFile: '../escape.js', driverType: 'javascript' }));
  return dir;
}

type Device = { id: string; driverKey: string; driverDeviceId: string; online: boolean };
type LocalInfo = { driverKey: string; status: string; pid?: number; restarts: number; error?: string };

describe('local drivers through the OS API', () => {
  it('lists manifests with their status, commands a local device, and restarts a driver when its settings change', async () => {
    driversDir = driversWith('js-lamp', 'lua-fan');
    server = await startServer({ env: { DRIVERS_DIR: driversDir } });
    const token = await server.login();

    const lamp = await eventually(async () => {
      const { devices } = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Device[] };
      return devices.find((d) => d.driverKey === 'js-lamp' && d.online);
    }, 10_000, 'lamp discovered');
    await eventually(async () => {
      const { devices } = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Device[] };
      return devices.some((d) => d.driverKey === 'lua-fan' && d.online);
    }, 10_000, 'fan discovered');

    const list = (await (await server.request('GET', '/v1/os/drivers', { token })).json()) as { connected: Array<{ driverKey: string; transport: string }>; local: LocalInfo[] };
    expect(list.local.find((d) => d.driverKey === 'broken')).toMatchObject({ status: 'invalid', error: expect.any(String) });
    expect(list.local.find((d) => d.driverKey === 'js-lamp')).toMatchObject({ status: 'running' });
    expect(list.connected).toEqual(expect.arrayContaining([expect.objectContaining({ driverKey: 'js-lamp', transport: 'process' })]));

    const toggled = await server.request('POST', `/v1/os/devices/${lamp.id}/command`, { token, body: { command: 'toggle' } });
    expect(await toggled.json()).toMatchObject({ ok: true, result: { via: 'ACTION', on: true } });
    const blink = await server.request('POST', `/v1/os/devices/${lamp.id}/command`, { token, body: { command: 'blink', params: { times: 2 } } });
    expect(await blink.json()).toMatchObject({ ok: true, result: { via: 'COMMAND_EXECUTE', params: { times: 2 } } });

    const settings = (await (await server.request('GET', '/v1/os/drivers/js-lamp/settings', { token })).json()) as { values: Record<string, unknown> };
    expect(settings.values).toEqual({});
    const before = list.local.find((d) => d.driverKey === 'js-lamp')!;
    const fanPid = list.local.find((d) => d.driverKey === 'lua-fan')!.pid;
    const bad = await server.request('POST', '/v1/os/drivers/js-lamp/settings', { token, body: { values: { brightness: 'bright' } } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('INVALID_DRIVER_SETTINGS');
    const updated = await server.request('POST', '/v1/os/drivers/js-lamp/settings', { token, body: { values: { brightness: 33 } } });
    expect(updated.status).toBe(200);
    await eventually(async () => {
      const now = (await (await server.request('GET', '/v1/os/drivers', { token })).json()) as { local: LocalInfo[] };
      const lampNow = now.local.find((d) => d.driverKey === 'js-lamp')!;
      const fanNow = now.local.find((d) => d.driverKey === 'lua-fan')!;
      return lampNow.status === 'running' && lampNow.pid !== before.pid && fanNow.pid === fanPid;
    }, 10_000, 'only the lamp restarted');
    // The new process got the stored value through envMap.
    await eventually(async () => {
      const detail = (await (await server.request('GET', `/v1/os/devices/${lamp.id}`, { token })).json()) as { state: { state: { brightness: number } } };
      return detail.state.state.brightness === 33;
    }, 10_000, 'setting reached the process');

    expect((await server.request('POST', '/v1/os/drivers/nope/restart', { token })).status).toBe(404);
  });
});
