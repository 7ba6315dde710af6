import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Device as SimulatedDevice } from 'tplink-smarthome-simulator';
import { startServer, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';
import { freePort } from './support/net.js';

/**
 * A real Homebridge 2 plugin from npm driving a device over its real protocol: homebridge-tplink-smarthome
 * 8.0.4 (engines.homebridge `^1.6.0 || ^2.0.0-beta.0`) installed through the hub from the registry,
 * configured through the hub's config route, its plug imported as a hub device, and the hub's commands
 * reaching the plug while changes made at the plug reach the hub. The plug is tplink-smarthome-simulator,
 * written independently of this hub (by the author of the plugin's protocol library,
 * tplink-smarthome-api, to test that library): the plugin and its library run unmodified and speak
 * TP-Link's encrypted protocol (UDP discovery, TCP commands) to something that answers as an HS100
 * does, so what the test checks is the relay of the device, not a value a fake of ours agreed with.
 *
 * Everything stays on loopback. The plug listens on 127.0.0.1 only; the plugin's discovery
 * "broadcast" goes to 127.0.0.1 (not 255.255.255.255), the plug is also listed by host, and only
 * its MAC is let in. The plug must be on TP-Link's port 9999: in 8.0.4 a listed device's `port`
 * cannot be set (config.schema.json types it a string, the plugin's own check then wants a
 * number, so either fails its configuration), and its discovery "broadcast" and then its commands
 * go to port 9999.
 * It needs the npm registry, so it runs when HCS_REAL_PLUGINS is set, as accessory-hub-real-plugin.test.ts.
 */
const REAL = process.env.HCS_REAL_PLUGINS === '1';
const PLUGIN = 'homebridge-tplink-smarthome';
const VERSION = '8.0.4';
const HOMEBRIDGE_RANGE = '^1.6.0 || ^2.0.0-beta.0';
const PLUG = { address: '127.0.0.1', port: 9999, alias: 'Simulated Plug', mac: '50:C7:BF:00:5E:01', deviceId: '8006A1B2C3D4E5F60718293A4B5C6D7E8F901234' };

type Json = Record<string, unknown>;
interface Device {
  id: string;
  name: string;
  driverKey: string;
  deviceClass: string;
  reading: Json;
}
interface HapAccessory {
  aid: number;
  name: string | null;
  services: Array<{ type: string }>;
}

let server: TestServer | undefined;
let token: string;
let plug: SimulatedDevice | undefined;
/** What reached the simulated plug: protocol, decrypted message, and where from. */
const received: Array<{ protocol: string; message: string; remoteAddress: string }> = [];

const api = async (method: string, p: string, body?: unknown) => {
  const res = await server!.request(method, `/v1/os${p}`, { token, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: (await res.json()) as Json };
};
const hubPlug = async () => ((await api('GET', '/devices')).body.devices as Device[]).find((d) => d.driverKey === 'accessory-hub' && d.name === PLUG.alias);
/** The relay as the simulated plug holds it: 1 on, 0 off (what `system.get_sysinfo` answers). */
const sysinfo = () => plug!.data.system.sysinfo as { relay_state?: 0 | 1 };
/** HAP's Outlet service (47), short or long form. */
const isOutlet = (type: string) => type === '47' || type.startsWith('00000047-');

describe.skipIf(!REAL)(`a real plugin from npm against a simulated device: ${PLUGIN} ${VERSION}`, () => {
  beforeAll(async () => {
    plug = new SimulatedDevice({ model: 'hs100', address: PLUG.address, port: PLUG.port, data: { alias: PLUG.alias, mac: PLUG.mac, deviceId: PLUG.deviceId } as never });
    plug.deviceNetworking.on('data', (m: { protocol: string; message: string; remoteAddress: string }) => received.push(m));
    // A connection reset when Homebridge restarts is no failure of the plug (unheard, it would throw).
    plug.deviceNetworking.on('error', () => undefined);
    await plug.start().catch((err: unknown) => {
      throw new Error(`the simulated plug needs ${PLUG.address}:${PLUG.port} (UDP and TCP), see the comment at the top: ${String(err)}`);
    });
    expect(plug.address).toBe('127.0.0.1');
    server = await startServer({ env: { ACCESSORY_HUB: 'on', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_PORT: String(await freePort()), ACCESSORY_HUB_POLL_MS: '1000' } });
    token = await server.login();
    await eventually(async () => ((await api('GET', '/accessory-hub/status')).body.state === 'running' ? true : undefined), 30_000, 'Homebridge running');
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await plug?.stop();
  });

  it('installs from the registry as a plugin for this Homebridge, and takes a configuration that keeps discovery on loopback', async () => {
    const installed = await api('POST', `/accessory-hub/plugins/${PLUGIN}/install`, { version: VERSION });
    expect(installed.status, JSON.stringify(installed.body)).toBe(200);
    expect(installed.body).toMatchObject({ name: PLUGIN, installed: true, version: VERSION, homebridgeRange: HOMEBRIDGE_RANGE, fitsHomebridge: true, hasConfigSchema: true });

    const config = {
      name: 'TplinkSmarthome',
      // Discovery: to 127.0.0.1 instead of the LAN's broadcast address, and to the plug by host;
      // only the plug's MAC, only plugs.
      broadcast: PLUG.address,
      devices: [{ host: PLUG.address }],
      macAddresses: [PLUG.mac],
      deviceTypes: ['plug'],
      // Discovery (which also refreshes each device's state) every second; no energy polling.
      pollingInterval: 1,
      emeterPollingInterval: 0,
      addCustomCharacteristics: false,
      timeout: 5,
    };
    const configured = await api('POST', `/accessory-hub/plugins/${PLUGIN}/config`, config);
    expect(configured.status, JSON.stringify(configured.body)).toBe(200);
    // Homebridge's config.json holds that block as written, and only it (no LAN broadcast left in).
    expect((await api('GET', `/accessory-hub/plugins/${PLUGIN}/config`)).body).toEqual({ name: PLUGIN, config });
    expect((await api('GET', `/accessory-hub/plugins/${PLUGIN}`)).body).toMatchObject({ configBlocks: 1 });
  }, 240_000);

  it('serves the plug as an outlet, and imports it as a hub outlet showing its relay', async () => {
    const accessory = await eventually(async () => {
      const res = await api('GET', '/accessory-hub/accessories');
      return res.status === 200 ? (res.body.accessories as HapAccessory[]).find((a) => a.name === PLUG.alias) : undefined;
    }, 60_000, 'the simulated plug served over HAP');
    expect(accessory.services.some((s) => isOutlet(s.type)), JSON.stringify(accessory.services)).toBe(true);

    const importable = await eventually(async () => {
      const list = (await api('POST', '/accessory-hub/import-accessories/resync')).body.accessories as Array<{ accessoryId: string; name: string }> | undefined;
      return list?.find((a) => a.name === PLUG.alias);
    }, 30_000, 'the plug importable');
    const res = await api('POST', `/accessory-hub/import-accessories/${importable.accessoryId}/import`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const device = (await api('GET', `/devices/${res.body.deviceId as string}`)).body as unknown as Device;
    expect(['outlet', 'switch']).toContain(device.deviceClass);
    // The simulator starts with the relay off.
    expect(sysinfo().relay_state).toBe(0);
    expect(device.reading).toMatchObject({ on: false });
  }, 120_000);

  it("switches the plug's relay with the hub's commands", async () => {
    const device = (await hubPlug())!;
    const on = await api('POST', `/devices/${device.id}/command`, { command: 'turn_on' });
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    await eventually(() => (sysinfo().relay_state === 1 ? true : undefined), 10_000, "the simulated plug's relay on");
    // It came as TP-Link's command over TCP, from the plugin on this machine.
    const commands = received.filter((m) => m.message.includes('set_relay_state'));
    expect(commands.map((m) => [m.protocol, m.remoteAddress, JSON.parse(m.message)])).toEqual([['tcp', '127.0.0.1', { system: { set_relay_state: { state: 1 } } }]]);
    await eventually(async () => ((await hubPlug())?.reading.on === true ? true : undefined), 10_000, 'the hub device on');

    const off = await api('POST', `/devices/${device.id}/command`, { command: 'turn_off' });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    await eventually(() => (sysinfo().relay_state === 0 ? true : undefined), 10_000, "the simulated plug's relay off");
    await eventually(async () => ((await hubPlug())?.reading.on === false ? true : undefined), 10_000, 'the hub device off');
  }, 60_000);

  it('follows the relay switched at the plug (its button, the Kasa app)', async () => {
    sysinfo().relay_state = 1;
    // The plugin sees it at its next discovery round (1 s), HAP tells the hub (or its 1 s poll reads it).
    await eventually(async () => ((await hubPlug())?.reading.on === true ? true : undefined), 10_000, 'the hub device on after the plug was switched on');
    sysinfo().relay_state = 0;
    await eventually(async () => ((await hubPlug())?.reading.on === false ? true : undefined), 10_000, 'the hub device off after the plug was switched off');
    // Discovery reached the plug (UDP, besides the plugin's TCP), all of it from loopback.
    expect(received.some((m) => m.protocol === 'udp' && m.message.includes('get_sysinfo'))).toBe(true);
    expect(new Set(received.map((m) => m.remoteAddress))).toEqual(new Set(['127.0.0.1']));
  }, 30_000);
});
