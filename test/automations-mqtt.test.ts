import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MqttDeviceSimulator } from './support/mqtt-devices.js';
import { mosquittoPath, startMosquitto } from './support/mosquitto.js';
import { startServer, type TestServer } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';

/**
 * Automations end to end over a real MQTT broker: a Hue dimmer remote as Zigbee2MQTT publishes
 * it (test/support/mqtt-devices.ts) joins through Home Assistant discovery as button devices;
 * an automation with a `button` trigger on its "on" button runs a scene of a WebSocket driver's
 * device. The broker is the hub's embedded one (aedes), and Debian's mosquitto when installed.
 *
 * An `mqtt` trigger is tested too when the hub passes its MQTT link to the automations
 * (`GET /automations/status` says `mqtt: true`); without that wiring in `src/hub.ts` it is skipped.
 */

interface DeviceRecord {
  id: string;
  name: string;
  driverKey: string;
  driverDeviceId: string | null;
  deviceClass: string;
  reading: Record<string, unknown>;
  online: boolean;
}

interface Trace {
  id: string;
  programId: string;
  status: string;
  trigger: string;
  triggered?: { id: string; index?: number; type: string; deviceId?: string; press?: string; description: string };
  steps: Array<{ type: string; status: string }>;
}

interface BrokerSetup {
  /** The hub's MQTT settings. */
  env: Record<string, string>;
  /** After the hub started: where and as whom the simulated firmware connects. */
  simulatorAccess(server: TestServer, token: string): Promise<{ url: string; username?: string; password?: string }>;
  stop(): Promise<void>;
}

const SCENE = { id: 'evening', name: 'Evening glow' };
/** Long enough for a duplicate run to reach the driver had one been started (runs here take a few ms). */
const SETTLE_MS = 400;
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

function scenario(name: string, startBroker: () => Promise<BrokerSetup>) {
  describe(`a Zigbee2MQTT remote's button trigger through ${name}`, () => {
    let broker: BrokerSetup | undefined;
    let server: TestServer;
    let token: string;
    let driver: TestDriver;
    let sim: MqttDeviceSimulator;
    const actions: Message[] = [];
    let on: DeviceRecord;
    let off: DeviceRecord;
    let bridge: DeviceRecord;
    let automationId: string;

    const devices = async (): Promise<DeviceRecord[]> => ((await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: DeviceRecord[] }).devices;
    const device = async (id: string): Promise<DeviceRecord> => (await (await server.request('GET', `/v1/os/devices/${encodeURIComponent(id)}`, { token })).json()) as DeviceRecord;
    const traces = async (): Promise<Trace[]> => {
      const res = await server.request('GET', `/v1/os/automations/${encodeURIComponent(automationId)}/traces`, { token });
      expect(res.status, await res.clone().text()).toBe(200);
      return ((await res.json()) as { traces: Trace[] }).traces;
    };
    const sceneRuns = () => actions.filter((a) => a.command === 'scenes.run');

    beforeAll(async () => {
      broker = await startBroker();
      server = await startServer({ env: broker.env });
      token = await server.login();

      // The scene device: a WebSocket driver's bridge that lists one scene and runs it.
      driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.scenes');
      driver.serveActions((a) => {
        actions.push(a);
        if (a.command === 'scenes.list') return { scenes: [SCENE] };
        if (a.command === 'scenes.run') return { ran: (a.params as { sceneId?: unknown } | undefined)?.sceneId };
        throw new Error(`unexpected ${String(a.command)}`);
      });
      driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'hall-bridge', name: 'Hall bridge', capabilities: ['scenes'], commands: ['scenes.list', 'scenes.run'], state: { reachable: true } } });

      // The remote, as Zigbee2MQTT announces it: availability, entity configs, device triggers.
      const access = await broker.simulatorAccess(server, token);
      sim = await MqttDeviceSimulator.connect(access.url, { devices: ['remote'], ...(access.username ? { username: access.username, password: access.password } : {}) });
      await sim.announce();

      const buttons = await eventually(async () => {
        const list = (await devices()).filter((d) => d.driverKey === 'mqtt' && d.deviceClass === 'button' && d.online);
        return list.length >= 4 ? list : undefined;
      }, 5000, 'the remote\'s four buttons online');
      on = buttons.find((b) => /\bon$/.test(b.name))!;
      off = buttons.find((b) => /\boff$/.test(b.name))!;
      expect(on, buttons.map((b) => b.name).join(', ')).toBeDefined();
      expect(off, buttons.map((b) => b.name).join(', ')).toBeDefined();
      bridge = await eventually(async () => (await devices()).find((d) => d.driverDeviceId === 'hall-bridge' && d.online), 5000, 'the bridge online');
      // The scene catalog lists a scene-capable device's scenes when it comes: scenes.list.
      await eventually(() => actions.some((a) => a.command === 'scenes.list' && a.deviceId === 'hall-bridge'), 5000, 'the bridge asked for its scenes');

      const saved = await server.request('POST', '/v1/os/programs/save', {
        token,
        body: {
          name: 'Hallway remote: evening',
          triggers: [{ type: 'button', deviceIds: [on.id], press: 'single' }],
          steps: [{ type: 'scene', sceneId: `${bridge.id}:${SCENE.id}` }],
        },
      });
      expect(saved.status, await saved.clone().text()).toBe(200);
      automationId = ((await saved.json()) as { id: string }).id;
      // Armed after the program.created event has been handled.
      await eventually(async () => {
        const status = (await (await server.request('GET', '/v1/os/automations/status', { token })).json()) as { role: string; armed: number };
        return status.role === 'active' && status.armed === 1 ? status : undefined;
      }, 5000, 'the automation armed');
    }, 20_000);

    afterAll(async () => {
      await sim?.close();
      driver?.close();
      await server?.close();
      await broker?.stop();
    });

    it("a single press (on_press, then on_press_release) runs the scene exactly once, traced as the button's single press", async () => {
      await sim.press('on_press');
      const run = await eventually(() => sceneRuns()[0], 5000, 'scenes.run at the bridge');
      expect(run).toMatchObject({ deviceId: 'hall-bridge', command: 'scenes.run', params: { sceneId: SCENE.id } });
      // The remote's release ends the press: not a second one.
      await sim.press('on_press_release');
      const trace = await eventually(async () => (await traces()).find((t) => t.status === 'succeeded'), 5000, 'a succeeded trace');
      expect(trace).toMatchObject({
        programId: automationId,
        triggered: { type: 'button', deviceId: on.id, press: 'single', index: 0 },
        steps: [{ type: 'scene', status: 'succeeded' }],
      });
      await settle();
      expect(sceneRuns()).toHaveLength(1);
      expect(await traces()).toHaveLength(1);
      expect((await device(on.id)).reading.lastPress).toBe('single');
    });

    it('a long press (on_hold) of the same button, or a press of another, does not run it', async () => {
      const runsBefore = sceneRuns().length;
      const tracesBefore = (await traces()).length;
      await sim.press('on_hold');
      // The press reached the hub as a long one…
      await eventually(async () => ((await device(on.id)).reading.lastPress === 'long' ? true : undefined), 5000, 'the long press');
      await sim.press('on_hold_release');
      await sim.press('off_press');
      await eventually(async () => ((await device(off.id)).reading.lastPress === 'single' ? true : undefined), 5000, 'the off press');
      // …and the `press: 'single'` trigger on the "on" button let both go.
      await settle();
      expect(sceneRuns()).toHaveLength(runsBefore);
      expect(await traces()).toHaveLength(tracesBefore);
    });

    it("an mqtt trigger on the remote's action topic runs the scene once for its payload only (when the link is wired to the automations)", async ({ skip }) => {
      const status = (await (await server.request('GET', '/v1/os/automations/status', { token })).json()) as { mqtt: boolean };
      if (!status.mqtt) return skip('src/hub.ts passes no `mqtt:` to programsModule: mqtt triggers hear nothing');
      const saved = await server.request('POST', '/v1/os/programs/save', {
        token,
        body: {
          name: 'Hallway remote off: evening',
          triggers: [{ type: 'mqtt', topic: 'zigbee2mqtt/+/action', payload: 'off_press' }],
          steps: [{ type: 'scene', sceneId: `${bridge.id}:${SCENE.id}` }],
        },
      });
      expect(saved.status, await saved.clone().text()).toBe(200);
      const mqttAutomation = ((await saved.json()) as { id: string }).id;
      await eventually(async () => {
        const s = (await (await server.request('GET', '/v1/os/automations/status', { token })).json()) as { armed: number };
        return s.armed === 2 ? s : undefined;
      }, 5000, 'both automations armed');
      const mqttTraces = async () => ((await (await server.request('GET', `/v1/os/automations/${encodeURIComponent(mqttAutomation)}/traces`, { token })).json()) as { traces: Trace[] }).traces;
      const runsBefore = sceneRuns().length;
      const buttonTracesBefore = (await traces()).length;

      // Another payload on the topic (and the z2m state topic, which the filter does not match): nothing.
      await sim.press('off_hold');
      await eventually(async () => ((await device(off.id)).reading.lastPress === 'long' ? true : undefined), 5000, 'the off hold');
      await settle();
      expect(sceneRuns()).toHaveLength(runsBefore);
      expect(await mqttTraces()).toHaveLength(0);

      await sim.press('off_press');
      await eventually(() => sceneRuns().length > runsBefore || undefined, 5000, 'scenes.run from the mqtt trigger');
      const trace = await eventually(async () => (await mqttTraces()).find((t) => t.status === 'succeeded'), 5000, 'a succeeded mqtt trace');
      expect(trace).toMatchObject({
        triggered: { type: 'mqtt', topic: 'zigbee2mqtt/hallway_remote/action', payload: 'off_press', index: 0 },
        steps: [{ type: 'scene', status: 'succeeded' }],
      });
      await sim.press('off_press_release');
      await settle();
      expect(sceneRuns().slice(runsBefore)).toEqual([expect.objectContaining({ deviceId: 'hall-bridge', params: { sceneId: SCENE.id } })]);
      expect(await mqttTraces()).toHaveLength(1);
      // The button automation was not started by the off button.
      expect(await traces()).toHaveLength(buttonTracesBefore);
    });
  });
}

scenario('the embedded broker (MQTT_URL=embedded)', async () => ({
  env: { MQTT_URL: 'embedded', MQTT_PORT: '0', MQTT_BIND: '127.0.0.1' },
  async simulatorAccess(server, token) {
    const status = (await (await server.request('GET', '/v1/os/mqtt/status', { token })).json()) as { embedded: { port: number } };
    const user = { username: 'zigbee2mqtt', password: 'z2m-secret-1' };
    const created = await server.request('POST', '/v1/os/mqtt/users', { token, body: user });
    expect(created.status, await created.clone().text()).toBe(201);
    await eventually(
      async () => ((await (await server.request('GET', '/v1/os/mqtt/status', { token })).json()) as { connection: { connected: boolean } }).connection.connected || undefined,
      5000,
      'the hub on its broker',
    );
    return { url: `mqtt://127.0.0.1:${status.embedded.port}`, ...user };
  },
  stop: async () => undefined,
}));

const mosquitto = mosquittoPath();
describe.skipIf(!mosquitto)("Debian's mosquitto", () => {
  scenario('mosquitto', async () => {
    const broker = await startMosquitto();
    return {
      env: { MQTT_URL: broker.url },
      simulatorAccess: async () => ({ url: broker.url }),
      stop: () => broker.stop(),
    };
  });
});
