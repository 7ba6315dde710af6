import net from 'node:net';
import { Aedes } from 'aedes';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, newPage, screenshot, seriousViolations, signInWithForm } from './support/browser.js';
import { MqttDeviceSimulator } from './support/mqtt-devices.js';
import { mosquittoPath, startMosquitto, type Mosquitto } from './support/mosquitto.js';
import { ADMIN, startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';

/**
 * MQTT against real brokers (aedes in this process; Debian's mosquitto when installed), with
 * devices that publish exactly what Zigbee2MQTT, Tasmota and ESPHome publish
 * (test/support/mqtt-devices.ts): discovery, state, commands, availability, removal, the hub's
 * own devices exposed to a plain MQTT client, and bad input.
 */

interface DeviceRecord {
  id: string;
  name: string;
  driverKey: string;
  driverDeviceId: string | null;
  deviceClass: string;
  attributes: Record<string, unknown>;
  reading: Record<string, unknown>;
  online: boolean;
  room: string | null;
  properties: Record<string, unknown>;
}

interface AedesBroker {
  url: string;
  broker: Aedes;
  close(): Promise<void>;
}

async function startAedes(): Promise<AedesBroker> {
  const broker = await Aedes.createBroker();
  const server = net.createServer(broker.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    broker,
    async close() {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function plainClient(url: string): Promise<MqttClient> {
  return mqtt.connectAsync(url, { protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 3000 });
}

/** The scenario every broker runs: the six devices join, report, take commands, go offline and leave. */
function discoveryScenario(name: string, brokerUrl: () => string) {
  describe(`discovery through ${name}`, () => {
    let server: TestServer;
    let token: string;
    let sim: MqttDeviceSimulator;

    const devices = async (): Promise<DeviceRecord[]> => {
      const res = await server.request('GET', '/v1/os/devices', { token });
      return ((await res.json()) as { devices: DeviceRecord[] }).devices.filter((d) => d.driverKey === 'mqtt');
    };
    const find = async (match: (d: DeviceRecord) => boolean, label: string) => eventually(async () => (await devices()).find(match), 5000, label);
    const command = async (id: string, cmd: string, params: Record<string, unknown> = {}) => {
      const res = await server.request('POST', `/v1/os/devices/${encodeURIComponent(id)}/command`, { token, body: { command: cmd, params } });
      expect(res.status, await res.clone().text()).toBe(200);
    };

    beforeAll(async () => {
      server = await startServer({ env: { MQTT_URL: brokerUrl() } });
      token = await server.login();
      sim = await MqttDeviceSimulator.connect(brokerUrl());
      await sim.announce();
    }, 20_000);

    afterAll(async () => {
      await sim?.close();
      await server?.close();
    });

    it('a Zigbee2MQTT colour bulb is a light: state, brightness, colour temperature and colour commands on its set topic', async () => {
      const bulb = await find((d) => d.deviceClass === 'light' && d.online && d.reading.on !== undefined, 'the bulb online with its state');
      expect(bulb.attributes.colorModes).toEqual(expect.arrayContaining(['onoff', 'brightness', 'color_temp', 'hs']));
      expect(bulb.properties).toMatchObject({ manufacturer: expect.any(String), model: expect.any(String) });

      const set = 'zigbee2mqtt/living_room_bulb/set';
      let next = sim.nextCommand(set);
      await command(bulb.id, 'turn_on');
      expect(JSON.parse((await next).payload)).toEqual({ state: 'ON' });
      expect((await next).qos).toBe(1);

      next = sim.nextCommand(set);
      await command(bulb.id, 'set_brightness', { brightness: 50 });
      expect(JSON.parse((await next).payload)).toEqual({ state: 'ON', brightness: 127 });
      await find((d) => d.id === bulb.id && d.reading.brightness === 50, 'the bulb reads 50 %');

      next = sim.nextCommand(set);
      await command(bulb.id, 'set_color_temp', { kelvin: 2700 });
      expect(JSON.parse((await next).payload)).toMatchObject({ state: 'ON', color_temp: 370 });

      next = sim.nextCommand(set);
      await command(bulb.id, 'set_hs_color', { hue: 120, saturation: 100 });
      const colour = JSON.parse((await next).payload) as { color: Record<string, number> };
      expect(Object.keys(colour.color).sort()).toEqual(expect.arrayContaining(colour.color.h !== undefined ? ['h', 's'] : ['x', 'y']));

      next = sim.nextCommand(set);
      await command(bulb.id, 'turn_off');
      expect(JSON.parse((await next).payload)).toEqual({ state: 'OFF' });
      await find((d) => d.id === bulb.id && d.reading.on === false, 'the bulb reads off');
    });

    it('a Zigbee2MQTT temperature/humidity sensor is sensors with their class, unit and value', async () => {
      const ofSensor = (d: DeviceRecord) => d.properties.physicalDeviceName === 'bedroom_climate';
      const temperature = await find((d) => ofSensor(d) && d.deviceClass === 'sensor' && d.attributes.sensorClass === 'temperature' && d.reading.value !== undefined, 'the temperature');
      expect(temperature.attributes.unit).toBe('°C');
      expect(typeof temperature.reading.value).toBe('number');
      const humidity = await find((d) => ofSensor(d) && d.deviceClass === 'sensor' && d.attributes.sensorClass === 'humidity' && d.reading.value !== undefined, 'the humidity');
      expect(humidity.reading.unit).toBe('%');
      // Both belong to one physical device.
      expect(humidity.properties.physicalDevice).toBe(temperature.properties.physicalDevice);
    });

    it('a Zigbee2MQTT door contact is a binary sensor of class contact: closed is not detected, open is', async () => {
      const door = await find((d) => d.deviceClass === 'binary_sensor' && d.attributes.sensorClass === 'contact' && d.reading.detected !== undefined, 'the door');
      expect(door.reading.detected).toBe(false);
      // Through the simulated device, as its firmware reports: a birth message answered later republishes this state, not the first one.
      await sim.report('door', { contact: false, battery: 90 });
      await find((d) => d.id === door.id && d.reading.detected === true, 'the door reads open');
    });

    it("a Zigbee2MQTT remote's triggers are buttons whose presses reach the hub", async () => {
      const buttons = await eventually(async () => {
        const list = (await devices()).filter((d) => d.deviceClass === 'button');
        return list.length >= 4 ? list : undefined;
      }, 5000, 'four buttons');
      const on = buttons.find((b) => /\bon$/.test(b.name));
      expect(on, buttons.map((b) => b.name).join(', ')).toBeDefined();
      await sim.press('on_press');
      await find((d) => d.id === on!.id && d.reading.lastPress === 'single', 'the press');
    });

    it('a Tasmota plug switches on cmnd/POWER and reports its power as a sensor', async () => {
      // Tasmota's tele/STATE is not retained: the plug may not have told its state yet.
      const plug = await find((d) => (d.deviceClass === 'switch' || d.deviceClass === 'outlet') && d.online, 'the plug');
      const on = plug.reading.on === true;
      const next = sim.nextCommand(/(^cmnd\/[^/]+|cmnd)\/POWER$/);
      await command(plug.id, on ? 'turn_off' : 'turn_on');
      expect((await next).payload).toBe(on ? 'OFF' : 'ON');
      await find((d) => d.id === plug.id && d.reading.on === !on, 'the plug switched');
      // The plug's next telemetry (tele/<topic>/SENSOR, not retained) reaches its energy sensors.
      await sim.report('plug', { Power: 1234 });
      const power = await find((d) => d.deviceClass === 'sensor' && d.attributes.sensorClass === 'power' && d.reading.value === 1234, 'the power');
      expect(power.reading.unit).toBe('W');
    });

    it('an ESPHome cover opens, closes and goes to a position on its own topics', async () => {
      const cover = await find((d) => d.deviceClass === 'cover' && d.online, 'the cover');
      let next = sim.nextCommand(/command$/);
      await command(cover.id, 'open');
      expect((await next).payload).toBe('OPEN');
      next = sim.nextCommand(/position\/command$/);
      await command(cover.id, 'set_position', { position: 30 });
      expect(Number((await next).payload)).toBe(30);
      await find((d) => d.id === cover.id && d.reading.position === 30, 'the cover at 30 %');
    });

    it('availability topics take devices offline and back', async () => {
      const bulb = await find((d) => d.deviceClass === 'light' && d.online, 'the bulb');
      await sim.goOffline('bulb');
      await find((d) => d.id === bulb.id && !d.online, 'the bulb offline');
      await sim.goOnline('bulb');
      await find((d) => d.id === bulb.id && d.online, 'the bulb online again');
      const cover = await find((d) => d.deviceClass === 'cover', 'the cover');
      await sim.goOffline('cover');
      await find((d) => d.id === cover.id && !d.online, 'the cover offline');
      await sim.goOnline('cover');
    });

    it('an empty retained config removes the device', async () => {
      const door = await find((d) => d.deviceClass === 'binary_sensor', 'the door');
      await sim.remove('door');
      await eventually(async () => !(await devices()).some((d) => d.id === door.id), 5000, 'the door gone');
      const res = await server.request('GET', `/v1/os/devices/${encodeURIComponent(door.id)}`, { token });
      expect(res.status).toBe(404);
      // Announced again, it comes back with the same id.
      await sim.announce(['door']);
      await find((d) => d.id === door.id, 'the door back');
    });
  });
}

describe('MQTT', () => {
  let aedes: AedesBroker;

  beforeAll(async () => {
    aedes = await startAedes();
  });
  afterAll(async () => {
    await aedes?.close();
  });

  discoveryScenario('aedes', () => aedes.url);

  describe('the hub itself', () => {
    let server: TestServer;
    let token: string;
    let driver: TestDriver;
    const actions: Message[] = [];
    const dataDir = tempDataDir();

    beforeAll(async () => {
      server = await startServer({ dataDir, env: { MQTT_URL: aedes.url, MQTT_EXPOSE: 'on', MQTT_DISCOVERY_PREFIX: 'hub_test' } });
      token = await server.login();
      driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'desk.driver');
      driver.serveActions((a) => {
        actions.push(a);
        return { done: a.command };
      });
      driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'desk', name: 'Desk lamp', deviceClass: 'light', commands: ['turn_on', 'turn_off', 'set_brightness'], state: { on: false, brightness: 10 } } });
    }, 20_000);

    afterAll(async () => {
      driver?.close();
      await server?.close();
    });

    it("exposes the hub's devices as retained discovery configs a plain client sees, with state and availability", async () => {
      const client = await plainClient(aedes.url);
      const configs = new Map<string, Record<string, unknown>>();
      const retained = new Map<string, string>();
      client.on('message', (topic, payload) => {
        if (topic.endsWith('/config') && payload.length) configs.set(topic, JSON.parse(payload.toString()) as Record<string, unknown>);
        else retained.set(topic, payload.toString());
      });
      await client.subscribeAsync(['hub_test/#', 'hcs/#'], { qos: 1 });
      const [topic, config] = await eventually(() => [...configs].find(([, c]) => (c.device as { name?: string })?.name === 'Desk lamp'), 5000, 'the lamp config');
      expect(topic).toMatch(/^hub_test\/light\/hcs_[A-Za-z0-9]+\/[A-Za-z0-9_-]+\/config$/);
      expect(config).toMatchObject({ schema: 'json', brightness: true, brightness_scale: 100 });
      const state = await eventually(() => retained.get(config.state_topic as string), 5000, 'the lamp state');
      expect(JSON.parse(state)).toMatchObject({ state: 'OFF', brightness: 10 });
      const availability = config.availability as Array<{ topic: string }>;
      expect(await eventually(() => retained.get(availability[0]!.topic), 5000, 'the hub status')).toBe('online');

      // A command from the client reaches the WebSocket driver as an ACTION, run as the mqtt caller.
      await client.publishAsync(config.command_topic as string, JSON.stringify({ state: 'ON', brightness: 40 }), { qos: 1 });
      const action = await eventually(() => actions.find((a) => a.command === 'set_brightness'), 5000, 'the ACTION');
      expect(action.params).toEqual({ brightness: 40 });
      driver.send({ type: 'STATE_UPDATE', deviceId: 'desk', state: { on: true, brightness: 40 } });
      await eventually(() => JSON.parse(retained.get(config.state_topic as string) ?? '{}').brightness === 40 || undefined, 5000, 'the new state published');
      // Its own configs are not imported back as MQTT devices.
      const all = ((await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: DeviceRecord[] }).devices;
      expect(all.filter((d) => d.name === 'Desk lamp').map((d) => d.driverKey)).toEqual(['desk.driver']);
      const activity = await server.request('GET', '/admin/activity', { token });
      expect(JSON.stringify(await activity.json())).toContain('mqtt.exposed.command');
      await client.endAsync();
    });

    it('lists the link and its counts in GET /mqtt/status, and refuses broker users with an external broker', async () => {
      const res = await server.request('GET', '/v1/os/mqtt/status', { token });
      expect(res.status).toBe(200);
      const status = (await res.json()) as { enabled: boolean; mode: string; connection: { connected: boolean }; exposure: { devices: number } };
      expect(status).toMatchObject({ enabled: true, mode: 'external', connection: { connected: true } });
      expect(status.exposure.devices).toBeGreaterThanOrEqual(1);
      const users = await server.request('POST', '/v1/os/mqtt/users', { token, body: { username: 'zigbee', password: 'long-enough' } });
      expect(users.status).toBe(409);
      expect(((await users.json()) as { error: { code: string } }).error.code).toBe('MQTT_BROKER_NOT_EMBEDDED');
    });

    it('reconnects after the broker drops it, and takes state again', async () => {
      const sim = await MqttDeviceSimulator.connect(aedes.url, { prefix: 'hub_test', devices: ['plug'] });
      await sim.announce();
      const find = async (match: (d: DeviceRecord) => boolean, label: string) =>
        eventually(async () => (((await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: DeviceRecord[] }).devices).find(match), 5000, label);
      const plug = await find((d) => d.driverKey === 'mqtt' && (d.deviceClass === 'switch' || d.deviceClass === 'outlet') && d.online, 'the plug');
      const hubClient = Object.values((aedes.broker as unknown as { clients: Record<string, { id: string; close(): void }> }).clients).find((c) => c.id.startsWith('hcs-'));
      expect(hubClient).toBeDefined();
      hubClient!.close();
      await find((d) => d.id === plug.id && !d.online, 'offline while disconnected');
      await find((d) => d.id === plug.id && d.online, 'online after the reconnect');
      // Subscriptions are back: a new report reaches the hub.
      await sim.report('plug', { Power: 77 });
      await find((d) => d.driverKey === 'mqtt' && d.attributes.sensorClass === 'power' && d.reading.value === 77, 'state after the reconnect');
      const status = (await (await server.request('GET', '/v1/os/mqtt/status', { token })).json()) as { connection: { reconnects: number } };
      expect(status.connection.reconnects).toBeGreaterThanOrEqual(1);
      await sim.close();
    }, 15_000);

    it('keeps a device id and room across a restart', async () => {
      const sim = await MqttDeviceSimulator.connect(aedes.url, { prefix: 'hub_test', devices: ['cover'] });
      await sim.announce();
      const list = async () => ((await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: DeviceRecord[] }).devices;
      const cover = await eventually(async () => (await list()).find((d) => d.driverKey === 'mqtt' && d.deviceClass === 'cover'), 5000, 'the cover');
      const space = (await (await server.request('POST', '/v1/os/spaces/save', { token, body: { name: 'Living room' } })).json()) as { id: string };
      expect((await server.request('POST', `/v1/os/devices/${encodeURIComponent(cover.id)}/metadata`, { token, body: { room: space.id } })).status).toBe(200);
      // A config of this hub's left on the broker for a device it no longer has (removed while the hub was away).
      const { exposure } = (await (await server.request('GET', '/v1/os/mqtt/status', { token })).json()) as { exposure: { baseTopic: string } };
      const ghost = `hub_test/switch/hcs_${exposure.baseTopic.split('/')[1]}/ghost/config`;
      const client = await plainClient(aedes.url);
      await client.publishAsync(ghost, JSON.stringify({ name: 'Ghost', command_topic: 'x/set' }), { qos: 1, retain: true });
      driver.close();
      await server.close();
      server = await startServer({ dataDir, env: { MQTT_URL: aedes.url, MQTT_EXPOSE: 'on', MQTT_DISCOVERY_PREFIX: 'hub_test' } });
      token = await server.login();
      // Cleared once the broker's retained copies had time to arrive.
      const retainedGhost = async () => {
        const probe = await plainClient(aedes.url);
        let held = false;
        probe.on('message', (topic, payload) => {
          if (topic === ghost && payload.length > 0) held = true;
        });
        await probe.subscribeAsync(ghost, { qos: 1 });
        await new Promise((resolve) => setTimeout(resolve, 100));
        await probe.endAsync();
        return held;
      };
      await eventually(async () => ((await retainedGhost()) ? undefined : true), 6000, 'the ghost config cleared');
      await client.endAsync();
      const again = await eventually(async () => (await list()).find((d) => d.driverKey === 'mqtt' && d.driverDeviceId === cover.driverDeviceId && d.online), 5000, 'the cover back');
      expect(again.id).toBe(cover.id);
      expect(again.room).toBe(space.id);
      await sim.close();
    }, 20_000);
  });

  describe('a command in the moments after connecting', () => {
    const dataDir = tempDataDir();
    const env = { MQTT_URL: '', MQTT_DISCOVERY_PREFIX: 'settle_test', ACTION_TIMEOUT_MS: '6000' };
    let sim: MqttDeviceSimulator;
    let plugId = '';

    /** A hub on the same data folder, connected to the broker, with none of the plug's configs retained there. */
    const restartWithoutConfigs = async (previous: TestServer): Promise<{ server: TestServer; token: string }> => {
      await previous.close();
      await sim.remove('plug');
      const server = await startServer({ dataDir, env: { ...env, MQTT_URL: aedes.url } });
      const token = await server.login();
      await eventually(async () => ((await (await server.request('GET', '/v1/os/mqtt/status', { token })).json()) as { connection: { connected: boolean } }).connection.connected || undefined, 5000, 'connected');
      return { server, token };
    };

    beforeAll(async () => {
      sim = await MqttDeviceSimulator.connect(aedes.url, { prefix: 'settle_test', devices: ['plug'] });
    });
    afterAll(async () => {
      await sim?.close();
    });

    it('waits for the retained config of a device it knows from before, and fails with the reason when none comes', async () => {
      let server = await startServer({ dataDir, env: { ...env, MQTT_URL: aedes.url } });
      let token = await server.login();
      await sim.announce();
      const plug = await eventually(async () => ((await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: DeviceRecord[] }).devices.find((d) => d.driverKey === 'mqtt' && d.deviceClass === 'switch'), 5000, 'the plug');
      plugId = plug.id;

      // Its config arrives a moment after the command: the command waits for it and goes through.
      ({ server, token } = await restartWithoutConfigs(server));
      const next = sim.nextCommand(/POWER$/);
      const command = server.request('POST', `/v1/os/devices/${encodeURIComponent(plugId)}/command`, { token, body: { command: 'turn_on' } });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await sim.announce();
      const res = await command;
      expect(res.status, await res.clone().text()).toBe(200);
      expect((await next).payload).toBe('ON');

      // No config at all: after the grace, the answer says why.
      ({ server, token } = await restartWithoutConfigs(server));
      const started = Date.now();
      const failed = await server.request('POST', `/v1/os/devices/${encodeURIComponent(plugId)}/command`, { token, body: { command: 'turn_off' } });
      expect(failed.status).toBe(502);
      const body = (await failed.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('DEVICE_UNREACHABLE');
      expect(body.error.message).toMatch(/has not announced itself on MQTT since the hub connected/);
      expect(Date.now() - started).toBeLessThan(5000);
      await server.close();
    }, 30_000);
  });

  describe('bad input', () => {
    let server: TestServer;
    let token: string;
    let client: MqttClient;

    beforeAll(async () => {
      server = await startServer({ env: { MQTT_URL: aedes.url, MQTT_DISCOVERY_PREFIX: 'bad_test', MQTT_MAX_CONFIG_BYTES: '65536', MQTT_MAX_PAYLOAD_BYTES: '65536' } });
      token = await server.login();
      client = await plainClient(aedes.url);
    }, 20_000);

    afterAll(async () => {
      await client?.endAsync();
      await server?.close();
    });

    const status = async () =>
      (await (await server.request('GET', '/v1/os/mqtt/status', { token })).json()) as { rejected: Array<{ topic: string; reason: string }>; discovery: { dropped: number; unreadable: number; devices: number } };

    it('lists malformed JSON, unknown components, bad templates and oversized configs with their reason, and keeps going', async () => {
      await client.publishAsync('bad_test/light/x/broken/config', '{"name": "half', { qos: 1 });
      await client.publishAsync('bad_test/vacuum/x/robot/config', JSON.stringify({ name: 'Robot', command_topic: 'r/set' }), { qos: 1 });
      await client.publishAsync('bad_test/sensor/x/tpl/config', JSON.stringify({ name: 'T', state_topic: 't/state', value_template: '{{ value_json. }}' }), { qos: 1 });
      await client.publishAsync('bad_test/sensor/x/huge/config', JSON.stringify({ name: 'H', state_topic: 'h', padding: 'x'.repeat(1024 * 1024) }), { qos: 1 });
      await client.publishAsync('bad_test/switch/x/wild/config', JSON.stringify({ name: 'W', command_topic: 'w/#' }), { qos: 1 });
      const s = await eventually(async () => {
        const now = await status();
        return now.rejected.length >= 5 ? now : undefined;
      }, 5000, 'five rejected');
      const reason = (suffix: string) => s.rejected.find((r) => r.topic.includes(suffix))?.reason;
      expect(reason('/broken/')).toMatch(/JSON/);
      expect(reason('/robot/')).toMatch(/component vacuum/);
      expect(reason('/tpl/')).toMatch(/value_template/);
      expect(reason('/huge/')).toMatch(/larger than/);
      expect(reason('/wild/')).toMatch(/wildcards/);
      // A good config after them still works.
      await client.publishAsync('bad_test/switch/x/good/config', JSON.stringify({ name: 'Good', command_topic: 'g/set', state_topic: 'g/state' }), { qos: 1 });
      await eventually(async () => ((await status()).discovery.devices >= 1 ? true : undefined), 5000, 'the good one');
    });

    it('a template that throws on a payload, a 1 MB payload and a topic flood are counted and ignored', async () => {
      await client.publishAsync('bad_test/sensor/x/strict/config', JSON.stringify({ name: 'Strict', state_topic: 's/state', value_template: '{{ value_json.missing | is_defined }}' }), { qos: 1 });
      await eventually(async () => ((await status()).discovery.devices >= 2 ? true : undefined), 5000, 'the strict sensor');
      await client.publishAsync('s/state', '{"other": 1}', { qos: 1 });
      await client.publishAsync('s/state', 'x'.repeat(1024 * 1024), { qos: 1 });
      await eventually(async () => {
        const s = await status();
        return s.discovery.unreadable >= 1 && s.discovery.dropped >= 1 ? true : undefined;
      }, 5000, 'counted');
      // A flood of 5000 messages on the discovery prefix and on state topics: the hub keeps answering.
      for (let i = 0; i < 5000; i++) void client.publish(i % 2 ? `bad_test/sensor/flood/${i}/config` : 'g/state', i % 2 ? '{' : 'ON', { qos: 0 });
      const started = Date.now();
      const health = await server.request('GET', '/healthz');
      expect(health.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(2000);
      const s = await eventually(async () => {
        const now = await status();
        return now.rejected.length >= 100 ? now : undefined;
      }, 10_000, 'the flood rejected');
      // The list is bounded.
      expect(s.rejected.length).toBeLessThanOrEqual(200);
    }, 20_000);
  });
});

describe('MQTT_URL=embedded: the hub runs the broker', () => {
  let server: TestServer;
  let token: string;

  beforeAll(async () => {
    server = await startServer({ env: { MQTT_URL: 'embedded', MQTT_PORT: '0', MQTT_BIND: '127.0.0.1' } });
    token = await server.login();
  }, 20_000);
  afterAll(async () => {
    await server?.close();
  });

  it('lets in only the users an admin creates, and their devices join', async () => {
    const status = (await (await server.request('GET', '/v1/os/mqtt/status', { token })).json()) as { mode: string; embedded: { port: number; users: number }; connection: { connected: boolean } };
    expect(status).toMatchObject({ mode: 'embedded', embedded: { users: 0 } });
    const url = `mqtt://127.0.0.1:${status.embedded.port}`;
    await eventually(async () => ((await (await server.request('GET', '/v1/os/mqtt/status', { token })).json()) as { connection: { connected: boolean } }).connection.connected || undefined, 5000, 'the hub on its broker');
    await expect(plainClient(url)).rejects.toThrow();

    const created = await server.request('POST', '/v1/os/mqtt/users', { token, body: { username: 'zigbee2mqtt', password: 'z2m-secret-1' } });
    expect(created.status).toBe(201);
    expect((await server.request('POST', '/v1/os/mqtt/users', { token, body: { username: 'zigbee2mqtt', password: 'z2m-secret-1' } })).status).toBe(409);
    expect((await server.request('POST', '/v1/os/mqtt/users', { token, body: { username: 'bad name', password: 'z2m-secret-1' } })).status).toBe(400);
    // Concurrent writers: one name created once, several names all created.
    const racing = await Promise.all(Array.from({ length: 5 }, () => server.request('POST', '/v1/os/mqtt/users', { token, body: { username: 'racer', password: 'racer-secret-1' } })));
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const many = await Promise.all(Array.from({ length: 5 }, (_, i) => server.request('POST', '/v1/os/mqtt/users', { token, body: { username: `device-${i}`, password: 'device-secret-1' } })));
    expect(many.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const listed = ((await (await server.request('GET', '/v1/os/mqtt/users', { token })).json()) as { users: Array<{ username: string }> }).users.map((u) => u.username);
    expect(listed.sort()).toEqual(['device-0', 'device-1', 'device-2', 'device-3', 'device-4', 'racer', 'zigbee2mqtt']);
    for (const name of ['racer', 'device-0', 'device-1', 'device-2', 'device-3', 'device-4']) expect((await server.request('DELETE', `/v1/os/mqtt/users/${name}`, { token })).status).toBe(200);
    await expect(mqtt.connectAsync(url, { protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 3000, username: 'zigbee2mqtt', password: 'wrong-one' })).rejects.toThrow();

    const sim = await MqttDeviceSimulator.connect(url, { username: 'zigbee2mqtt', password: 'z2m-secret-1', devices: ['bulb'] });
    await sim.announce();
    const bulb = await eventually(async () => (((await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: DeviceRecord[] }).devices).find((d) => d.driverKey === 'mqtt' && d.deviceClass === 'light' && d.online), 5000, 'the bulb');
    const next = sim.nextCommand('zigbee2mqtt/living_room_bulb/set');
    expect((await server.request('POST', `/v1/os/devices/${encodeURIComponent(bulb.id)}/command`, { token, body: { command: 'turn_on' } })).status).toBe(200);
    expect(JSON.parse((await next).payload)).toEqual({ state: 'ON' });
    await sim.close();

    expect((await server.request('DELETE', '/v1/os/mqtt/users/zigbee2mqtt', { token })).status).toBe(200);
    await expect(mqtt.connectAsync(url, { protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 3000, username: 'zigbee2mqtt', password: 'z2m-secret-1' })).rejects.toThrow();
  });

  it('the admin panel shows the link and rejected configs, and adds and removes broker users', async () => {
    const status = (await (await server.request('GET', '/v1/os/mqtt/status', { token })).json()) as { embedded: { port: number } };
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${status.embedded.port}`, { protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 3000, username: 'zigbee2mqtt', password: 'z2m-secret-1' }).catch(() => undefined);
    // The user was removed by the test before; this one is created through the panel.
    expect(client).toBeUndefined();
    const browser = await launchBrowser();
    try {
      const page = await newPage(browser);
      await signInWithForm(page, server.url, ADMIN, '/admin/login');
      await page.goto(`${server.url}/admin/panel/mqtt`);
      await page.getByLabel('Username').fill('tasmota');
      await page.getByLabel('Password').fill('tasmota-secret');
      await page.getByRole('button', { name: 'Add user' }).click();
      await page.locator('[data-mqtt-user="tasmota"]').waitFor();
      const tasmota = await mqtt.connectAsync(`mqtt://127.0.0.1:${status.embedded.port}`, { protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 3000, username: 'tasmota', password: 'tasmota-secret' });
      await tasmota.publishAsync('homeassistant/switch/broken/config', '{"name":', { qos: 1, retain: true });
      await eventually(async () => {
        await page.goto(`${server.url}/admin/panel/mqtt`);
        return (await page.locator('[data-rejected="homeassistant/switch/broken/config"]').count()) > 0 || undefined;
      }, 5000, 'the rejected config listed');
      await tasmota.publishAsync('homeassistant/switch/broken/config', '', { qos: 1, retain: true });
      await tasmota.endAsync();
      expect(await page.locator('[data-connected="true"]').count()).toBe(1);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, 'admin-mqtt');
      await page.getByRole('button', { name: 'Remove tasmota' }).click();
      await page.locator('[data-mqtt-user="tasmota"]').waitFor({ state: 'detached' });
    } finally {
      await browser.close();
    }
  }, 30_000);

  it('a port in use is a status, not a crash', async () => {
    const status = (await (await server.request('GET', '/v1/os/mqtt/status', { token })).json()) as { embedded: { port: number } };
    const second = await startServer({ env: { MQTT_URL: 'embedded', MQTT_PORT: String(status.embedded.port), MQTT_BIND: '127.0.0.1' } });
    try {
      const secondToken = await second.login();
      const s = (await (await second.request('GET', '/v1/os/mqtt/status', { token: secondToken })).json()) as { embedded: { error?: string } };
      expect(s.embedded.error).toMatch(/already in use/);
      expect((await second.request('GET', '/readyz')).status).toBe(200);
    } finally {
      await second.close();
    }
  });
});

const mosquitto = mosquittoPath();
describe.skipIf(!mosquitto)("MQTT against Debian's mosquitto", () => {
  let broker: Mosquitto;
  beforeAll(async () => {
    broker = await startMosquitto();
  });
  afterAll(async () => {
    await broker?.stop();
  });
  discoveryScenario('mosquitto', () => broker.url);
});
