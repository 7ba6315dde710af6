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
type LocalInfo = {
  driverKey: string;
  file: string;
  status: string;
  pid?: number;
  restarts: number;
  error?: string;
  lastExit?: { code: number | null };
  lastPongAt?: number;
  properties: Record<string, unknown>;
  commands: Record<string, unknown>;
};

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

  it('runs a Lua driver written as a plain io.read loop: REST commands reach it, its state comes back, and it is restarted after a crash', async () => {
    driversDir = driversWith('lua-plain');
    server = await startServer({ env: { DRIVERS_DIR: driversDir } });
    const token = await server.login();
    const local = async () => ((await (await server.request('GET', '/v1/os/drivers', { token })).json()) as { local: LocalInfo[] }).local.find((d) => d.driverKey === 'lua-plain')!;
    const fan = await eventually(async () => {
      const { devices } = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Device[] };
      return devices.find((d) => d.driverKey === 'lua-plain' && d.driverDeviceId === 'p1' && d.online);
    }, 10_000, 'plain Lua fan discovered');
    const command = (cmd: string, params: Record<string, unknown> = {}) => server.request('POST', `/v1/os/devices/${fan.id}/command`, { token, body: { command: cmd, params } });
    const speed = async () => ((await (await server.request('GET', `/v1/os/devices/${fan.id}`, { token })).json()) as { state: { state: { speed?: number } } }).state.state.speed;

    const set = await command('set_speed', { level: 3 });
    expect(set.status).toBe(200);
    expect(await set.json()).toEqual({ ok: true, result: { via: 'COMMAND_EXECUTE', command: 'set_speed', deviceId: 'p1', params: { level: 3 }, speed: 3 } });
    await eventually(async () => (await speed()) === 3, 10_000, 'speed in the device state');
    expect(await (await command('spin')).json()).toMatchObject({ ok: true, result: { via: 'ACTION', command: 'spin' } });
    // The Lua program answers the hub's PINGs itself.
    await eventually(async () => (await local()).lastPongAt !== undefined, 10_000, 'a PONG');
    const before = await local();
    expect(before).toMatchObject({ status: 'running', restarts: 0 });

    // An error in the loop ends the program (exit code 1): the pending command fails at once,
    // and the supervisor starts it again like any other driver.
    const crashed = await command('crash');
    expect(crashed.status).toBe(502);
    expect(((await crashed.json()) as { error: { code: string } }).error.code).toBe('DRIVER_DISCONNECTED');
    const after = await eventually(async () => {
      const now = await local();
      return now.status === 'running' && now.restarts >= 1 ? now : undefined;
    }, 10_000, 'the Lua driver restarted');
    expect(after.pid).not.toBe(before.pid);
    expect(after.lastExit).toMatchObject({ code: 1 });
    await eventually(async () => {
      const detail = (await (await server.request('GET', `/v1/os/devices/${fan.id}`, { token })).json()) as { online: boolean };
      return detail.online;
    }, 10_000, 'the fan online again');
    expect(await (await command('set_speed', { level: 1 })).json()).toMatchObject({ ok: true, result: { speed: 1 } });
  });

  it('lists manifests written with lists in the keyed form, and an invalid one with its file and the field at fault, without stopping the others', async () => {
    driversDir = driversWith('lua-plain', 'js-lamp');
    fs.mkdirSync(path.join(driversDir, 'nameless'));
    fs.writeFileSync(path.join(driversDir, 'nameless', 'main.py'), '');
    fs.writeFileSync(
      path.join(driversDir, 'nameless', 'nameless.driver.json'),
      JSON.stringify({ driverKey: 'nameless', driverFile: 'main.py', driverType: 'python', commands: ['reboot', { title: 'No name' }] }),
    );
    server = await startServer({ env: { DRIVERS_DIR: driversDir } });
    const token = await server.login();

    const list = await eventually(async () => {
      const { local } = (await (await server.request('GET', '/v1/os/drivers', { token })).json()) as { local: LocalInfo[] };
      return local.every((d) => d.status === 'running' || d.status === 'invalid') ? local : undefined;
    }, 10_000, 'every valid driver running');
    expect(list.map((d) => [d.driverKey, d.status])).toEqual([
      ['broken', 'invalid'],
      ['js-lamp', 'running'],
      ['lua-plain', 'running'],
      ['nameless', 'invalid'],
    ]);
    expect(list.find((d) => d.driverKey === 'nameless')).toMatchObject({
      file: 'nameless/nameless.driver.json',
      error: 'invalid manifest: /commands/1 must be a command name or an object with a "name" string',
    });
    expect(list.find((d) => d.driverKey === 'broken')).toMatchObject({ file: 'broken/broken.driver.json', error: expect.stringMatching(/^driverFile "\.\.\/escape\.js"/) });
    expect(list.find((d) => d.driverKey === 'lua-plain')).toMatchObject({
      properties: { label: { type: 'string', title: 'Label', default: 'Plain fan' } },
      commands: { boost: {}, set_speed: { title: 'Set speed', params: { level: { type: 'integer', minimum: 0, maximum: 5 } } } },
    });
    // The invalid manifest answers 409 on its own routes; the others work.
    const settings = await server.request('GET', '/v1/os/drivers/nameless/settings', { token });
    expect(settings.status).toBe(409);
    expect(((await settings.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'DRIVER_MANIFEST_INVALID', message: expect.stringContaining('/commands/1') });
    expect((await server.request('GET', '/v1/os/drivers/lua-plain/settings', { token })).status).toBe(200);
  });
});
