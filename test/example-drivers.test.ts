import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';

const EXAMPLES = path.resolve(import.meta.dirname, '../drivers/examples');
let server: TestServer;
let blinds: ChildProcess | undefined;
afterEach(async () => {
  blinds?.kill('SIGTERM');
  blinds = undefined;
  await server?.close();
});

type Device = { id: string; name: string; driverKey: string; driverDeviceId: string; online: boolean; capabilities: string[]; deviceClass: string; attributes: Record<string, unknown>; reading: Record<string, unknown> };

async function online(s: TestServer, token: string, driverKey: string, driverDeviceId: string): Promise<Device> {
  return eventually(
    async () => {
      const { devices } = (await (await s.request('GET', '/v1/os/devices', { token })).json()) as { devices: Device[] };
      return devices.find((d) => d.driverKey === driverKey && d.driverDeviceId === driverDeviceId && d.online);
    },
    15_000,
    `${driverKey}/${driverDeviceId} online`,
  );
}

async function stateOf(s: TestServer, token: string, id: string): Promise<Record<string, unknown>> {
  const detail = (await (await s.request('GET', `/v1/os/devices/${id}`, { token })).json()) as { state: { state: Record<string, unknown> } };
  return detail.state.state;
}

describe('example drivers, end to end through REST', () => {
  it('runs the JavaScript dimmer, the Python thermostat and the Lua media player as local drivers', async () => {
    server = await startServer({ env: { DRIVERS_DIR: EXAMPLES } });
    const token = await server.login();
    const command = (id: string, cmd: string, params: Record<string, unknown> = {}) =>
      server.request('POST', `/v1/os/devices/${id}/command`, { token, body: { command: cmd, params } });

    const dimmer = await online(server, token, 'example.dimmer', 'dimmer-1');
    expect(dimmer).toMatchObject({ deviceClass: 'light', attributes: { colorModes: ['brightness'] } });
    expect((await command(dimmer.id, 'turn_on')).status).toBe(200);
    expect((await command(dimmer.id, 'set_brightness', { brightness: 35 })).status).toBe(200);
    await eventually(async () => (await stateOf(server, token, dimmer.id)).brightness === 35, 10_000, 'dimmer brightness');
    // Outside the light class's range: refused by the hub, the driver never sees it.
    const tooBright = await command(dimmer.id, 'set_brightness', { brightness: 400 });
    expect(tooBright.status).toBe(400);
    expect(((await tooBright.json()) as { error: { code: string } }).error.code).toBe('INVALID_COMMAND_PARAMS');

    const thermostat = await online(server, token, 'example.thermostat', 'thermostat-1');
    expect(thermostat).toMatchObject({ deviceClass: 'climate', attributes: { minTemperature: 5, maxTemperature: 35, hvacModes: ['heat', 'cool', 'off'], temperatureUnit: '°C' } });
    expect(thermostat.reading).toHaveProperty('targetTemperature');
    expect(thermostat.reading).toHaveProperty('hvacAction');
    expect((await command(thermostat.id, 'set_target_temperature', { temperature: 19.5 })).status).toBe(200);
    await eventually(async () => (await stateOf(server, token, thermostat.id)).target_temperature === 19.5, 10_000, 'thermostat target');
    expect((await command(thermostat.id, 'set_mode', { mode: 'cool' })).status).toBe(200);
    // The class's standard command, checked against the modes the driver declared.
    expect((await command(thermostat.id, 'set_hvac_mode', { mode: 'auto' })).status).toBe(400);
    expect((await command(thermostat.id, 'set_hvac_mode', { mode: 'heat' })).status).toBe(200);
    await eventually(async () => (await stateOf(server, token, thermostat.id)).mode === 'heat', 10_000, 'thermostat mode');

    const media = await online(server, token, 'example.media', 'media-1');
    expect(media.capabilities).toEqual(expect.arrayContaining(['apps', 'equalizer', 'scenes']));
    expect(media.deviceClass).toBe('media_player');
    const apps = (await (await server.request('GET', `/v1/os/devices/${media.id}/apps`, { token })).json()) as { apps: Array<{ id: string }> };
    expect(apps.apps.map((a) => a.id)).toEqual(expect.arrayContaining(['movies', 'music']));
    const icon = await server.request('GET', `/v1/os/devices/${media.id}/apps/movies/icon`, { token });
    expect(icon.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await icon.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
    // A player that is off refuses to launch apps: the driver's error comes back as 502.
    const asleep = await server.request('POST', `/v1/os/devices/${media.id}/apps/music/launch`, { token });
    expect(asleep.status).toBe(502);
    expect((await command(media.id, 'power_on')).status).toBe(200);
    expect((await server.request('POST', `/v1/os/devices/${media.id}/apps/music/launch`, { token })).status).toBe(200);
    expect((await server.request('POST', `/v1/os/devices/${media.id}/equalizer`, { token, body: { bands: { bass: 3 } } })).status).toBe(200);
    const scenes = (await (await server.request('GET', `/v1/os/devices/${media.id}/scenes`, { token })).json()) as { scenes: unknown[] };
    expect(scenes.scenes.length).toBeGreaterThan(0);
    expect((await command(media.id, 'volume_set', { volume: 42 })).status).toBe(200);
    await eventually(async () => (await stateOf(server, token, media.id)).volume === 42, 10_000, 'media volume');
  });

  it('runs the WebSocket blinds driver as an external process', async () => {
    server = await startServer();
    const token = await server.login();
    blinds = spawn(process.execPath, [path.join(EXAMPLES, 'websocket-blinds/blinds.mjs'), `${server.url.replace('http', 'ws')}/driver`], { stdio: 'ignore' });
    const { devices } = await eventually(async () => {
      const list = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Device[] };
      return list.devices.filter((d) => d.driverKey.includes('blinds') && d.online).length >= 2 ? list : undefined;
    }, 15_000, 'two blinds');
    const blind = devices.find((d) => d.driverKey.includes('blinds'))!;
    expect(blind).toMatchObject({ deviceClass: 'cover', attributes: { tilt: false } });
    expect(blind.reading).toHaveProperty('position');
    const res = await server.request('POST', `/v1/os/devices/${blind.id}/command`, { token, body: { command: 'set_position', params: { position: 25 } } });
    expect(res.status).toBe(200);
    await eventually(async () => (await stateOf(server, token, blind.id)).position === 25, 10_000, 'blind position');
  });
});
