import net from 'node:net';
import { Aedes } from 'aedes';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_KEYS, MqttDeviceSimulator, REMOTE_ACTIONS, simulatedDevices, type MqttMessage } from './support/mqtt-devices.js';

// The device simulator against a real broker (aedes on 127.0.0.1): what a hub would see.

interface Received {
  topic: string;
  payload: string;
  retain: boolean;
}

const PREFIX = 'homeassistant';

async function until(check: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const settle = (ms = 150) => new Promise((resolve) => setTimeout(resolve, ms));

describe('MQTT device simulator (z2m, Tasmota, ESPHome)', () => {
  let broker: Aedes;
  let server: net.Server;
  let url: string;
  let sim: MqttDeviceSimulator;
  const clients: MqttClient[] = [];

  async function client(): Promise<MqttClient> {
    const c = await connectAsync(url, { reconnectPeriod: 0, connectTimeout: 3000, protocolVersion: 4 });
    c.on('error', () => {});
    clients.push(c);
    return c;
  }

  /** A fresh client subscribed to `filters`, with what it receives (retained messages first). */
  async function watch(...filters: string[]): Promise<{ client: MqttClient; got: Received[] }> {
    const c = await client();
    const got: Received[] = [];
    c.on('message', (topic, payload, packet) => got.push({ topic, payload: payload.toString(), retain: packet.retain }));
    await c.subscribeAsync(filters, { qos: 1 });
    return { client: c, got };
  }

  beforeAll(async () => {
    broker = await Aedes.createBroker();
    server = net.createServer(broker.handle);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    url = `mqtt://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    sim = await MqttDeviceSimulator.connect(url, { prefix: PREFIX });
    await sim.announce();
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => {})));
    await sim?.close();
    await new Promise<void>((resolve) => (broker ? broker.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('keeps every discovery config retained at its topic, with parseable JSON', async () => {
    const expected = DEVICE_KEYS.flatMap((k) => sim.devices[k].discovery(PREFIX).map((m) => m.topic));
    expect(new Set(expected).size).toBe(expected.length);
    const { got } = await watch(`${PREFIX}/#`);
    await until(() => expected.every((t) => got.some((m) => m.topic === t)), 'all configs');
    for (const topic of expected) {
      const message = got.find((m) => m.topic === topic);
      expect(message?.retain, topic).toBe(true);
      expect(() => JSON.parse(message?.payload ?? ''), topic).not.toThrow();
    }
    const config = (topic: string) => JSON.parse(got.find((m) => m.topic === topic)?.payload ?? 'null');

    // Zigbee2MQTT: JSON light, availability on the bridge and the device, device block.
    const light = config(`${PREFIX}/light/0x0017880104e45517/light/config`);
    expect(light).toMatchObject({
      schema: 'json',
      brightness: true,
      brightness_scale: 254,
      supported_color_modes: ['xy', 'color_temp'],
      min_mireds: 153,
      max_mireds: 500,
      command_topic: 'zigbee2mqtt/living_room_bulb/set',
      state_topic: 'zigbee2mqtt/living_room_bulb',
      unique_id: '0x0017880104e45517_light_zigbee2mqtt',
      availability_mode: 'all',
      availability: [
        { topic: 'zigbee2mqtt/bridge/state', value_template: '{{ value_json.state }}' },
        { topic: 'zigbee2mqtt/living_room_bulb/availability', value_template: '{{ value_json.state }}' },
      ],
      device: {
        identifiers: ['zigbee2mqtt_0x0017880104e45517'],
        manufacturer: 'Philips',
        model_id: '9290012573A',
        name: 'living_room_bulb',
        via_device: 'zigbee2mqtt_bridge_0x00124b0024c2a1b3',
      },
    });
    expect(config(`${PREFIX}/sensor/0x00158d0001a2b3c4/temperature/config`)).toMatchObject({
      value_template: '{{ value_json["temperature"] }}',
      device_class: 'temperature',
      unit_of_measurement: '°C',
      state_topic: 'zigbee2mqtt/bedroom_climate',
    });
    expect(config(`${PREFIX}/sensor/0x00158d0001a2b3c4/linkquality/config`)).toMatchObject({ enabled_by_default: false, entity_category: 'diagnostic' });
    expect(config(`${PREFIX}/binary_sensor/0x00158d0002c3d4e5/contact/config`)).toMatchObject({
      device_class: 'door',
      payload_on: false,
      payload_off: true,
      value_template: '{{ value_json["contact"] }}',
    });
    for (const action of REMOTE_ACTIONS) {
      expect(config(`${PREFIX}/device_automation/0x0017880104a1b2c3/action_${action}/config`)).toMatchObject({
        automation_type: 'trigger',
        type: 'action',
        subtype: action,
        payload: action,
        topic: 'zigbee2mqtt/hallway_remote/action',
        device: { identifiers: ['zigbee2mqtt_0x0017880104a1b2c3'] },
      });
    }

    // Tasmota (SetOption19 1): abbreviated keys, chip id in the topic and unique id.
    expect(config(`${PREFIX}/switch/8D8F3C_RL_1/config`)).toEqual({
      name: 'Kitchen Plug',
      stat_t: 'tele/tasmota_8D8F3C/STATE',
      avty_t: 'tele/tasmota_8D8F3C/LWT',
      pl_avail: 'Online',
      pl_not_avail: 'Offline',
      cmd_t: 'cmnd/tasmota_8D8F3C/POWER',
      pl_off: 'OFF',
      pl_on: 'ON',
      val_tpl: '{{value_json.POWER}}',
      uniq_id: '8D8F3C_RL_1',
      dev: { ids: ['8D8F3C'] },
    });
    expect(config(`${PREFIX}/sensor/8D8F3C_ENERGY_Power/config`)).toMatchObject({
      stat_t: 'tele/tasmota_8D8F3C/SENSOR',
      unit_of_meas: 'W',
      dev_cla: 'power',
      val_tpl: "{{value_json['ENERGY']['Power']}}",
    });
    expect(config(`${PREFIX}/sensor/8D8F3C_status/config`).dev).toEqual({ ids: ['8D8F3C'], name: 'Kitchen Plug', mdl: 'Sonoff Pow R2', sw: '14.4.1(tasmota)', mf: 'Tasmota' });

    // ESPHome: abbreviated cover with position topics.
    expect(config(`${PREFIX}/cover/esphome-blinds/living_room_blinds/config`)).toMatchObject({
      cmd_t: 'esphome-blinds/cover/living_room_blinds/command',
      stat_t: 'esphome-blinds/cover/living_room_blinds/state',
      pos_t: 'esphome-blinds/cover/living_room_blinds/position/state',
      set_pos_t: 'esphome-blinds/cover/living_room_blinds/position/command',
      avty_t: 'esphome-blinds/status',
      uniq_id: 'ESPcoverliving_room_blinds',
      dev: { ids: 'a0b765f1c2d4', name: 'esphome-blinds' },
    });
  });

  it('keeps availability retained as each firmware does', async () => {
    const { got } = await watch('zigbee2mqtt/+/availability', 'zigbee2mqtt/bridge/state', 'tele/+/LWT', 'esphome-blinds/status');
    const want: Record<string, string> = {
      'zigbee2mqtt/bridge/state': '{"state":"online"}',
      'zigbee2mqtt/living_room_bulb/availability': '{"state":"online"}',
      'zigbee2mqtt/hallway_remote/availability': '{"state":"online"}',
      'tele/tasmota_8D8F3C/LWT': 'Online',
      'esphome-blinds/status': 'online',
    };
    await until(() => Object.keys(want).every((t) => got.some((m) => m.topic === t)), 'availability');
    for (const [topic, payload] of Object.entries(want)) expect(got.find((m) => m.topic === topic)).toMatchObject({ payload, retain: true });

    await sim.goOffline('door');
    await until(() => got.some((m) => m.topic === 'zigbee2mqtt/front_door/availability' && m.payload === '{"state":"offline"}'), 'door offline');
    await sim.goOnline('door');
    await until(() => got.filter((m) => m.topic === 'zigbee2mqtt/front_door/availability').at(-1)?.payload === '{"state":"online"}', 'door online');
  });

  it('turns the z2m bulb on at brightness 127 and publishes its full state', async () => {
    const { client: hub, got } = await watch('zigbee2mqtt/living_room_bulb');
    const command = sim.nextCommand('zigbee2mqtt/living_room_bulb/set');
    await hub.publishAsync('zigbee2mqtt/living_room_bulb/set', JSON.stringify({ state: 'ON', brightness: 127 }), { qos: 1 });
    await expect(command).resolves.toEqual({ topic: 'zigbee2mqtt/living_room_bulb/set', payload: '{"state":"ON","brightness":127}', qos: 1 });
    await until(() => got.length > 0, 'bulb state');
    const state = JSON.parse(got[0]?.payload ?? '{}');
    expect(state).toMatchObject({ state: 'ON', brightness: 127, color_mode: 'color_temp', linkquality: expect.any(Number) });
    expect(got[0]?.retain).toBe(false);

    await hub.publishAsync('zigbee2mqtt/living_room_bulb/set', '{"color_temp":300}', { qos: 1 });
    await until(() => got.length > 1, 'color_temp state');
    expect(JSON.parse(got[1]?.payload ?? '{}')).toMatchObject({ state: 'ON', brightness: 127, color_mode: 'color_temp', color_temp: 300 });

    await hub.publishAsync('zigbee2mqtt/living_room_bulb/set', '{"color":{"hue":240,"saturation":100}}', { qos: 1 });
    await until(() => got.length > 2, 'hs state');
    const hs = JSON.parse(got[2]?.payload ?? '{}');
    expect(hs).toMatchObject({ color_mode: 'hs', color: { hue: 240, saturation: 100, h: 240, s: 100 } });
    expect(hs.color.x).toBeCloseTo(0.1355, 3);
    expect(sim.commands.filter((c) => c.topic === 'zigbee2mqtt/living_room_bulb/set')).toHaveLength(3);
  });

  it('switches the Tasmota relay: tele/STATE, then {"POWER":"ON"} on stat/RESULT and ON on stat/POWER', async () => {
    const { client: hub, got } = await watch('stat/tasmota_8D8F3C/#', 'tele/tasmota_8D8F3C/STATE');
    await hub.publishAsync('cmnd/tasmota_8D8F3C/POWER', 'ON', { qos: 1 });
    await until(() => got.some((m) => m.topic === 'stat/tasmota_8D8F3C/POWER'), 'POWER');
    expect(got.map((m) => m.topic)).toEqual(['tele/tasmota_8D8F3C/STATE', 'stat/tasmota_8D8F3C/RESULT', 'stat/tasmota_8D8F3C/POWER']);
    expect(JSON.parse(got[0]?.payload ?? '{}')).toMatchObject({ POWER: 'ON' });
    expect(got[1]?.payload).toBe('{"POWER":"ON"}');
    expect(got[2]?.payload).toBe('ON');

    got.length = 0;
    await hub.publishAsync('cmnd/tasmota_8D8F3C/Power', 'toggle', { qos: 1 });
    await until(() => got.some((m) => m.topic === 'stat/tasmota_8D8F3C/POWER'), 'toggled');
    expect(got.find((m) => m.topic === 'stat/tasmota_8D8F3C/RESULT')?.payload).toBe('{"POWER":"OFF"}');
  });

  it('moves the ESPHome cover on OPEN: opening with positions, then open at 100', async () => {
    const { client: hub, got } = await watch('esphome-blinds/cover/living_room_blinds/state', 'esphome-blinds/cover/living_room_blinds/position/state');
    await until(() => got.length >= 2, 'retained cover state');
    expect(got.map((m) => [m.topic.slice('esphome-blinds/cover/living_room_blinds/'.length), m.payload, m.retain]).sort()).toEqual([
      ['position/state', '0', true],
      ['state', 'closed', true],
    ]);
    got.length = 0;
    await hub.publishAsync('esphome-blinds/cover/living_room_blinds/command', 'OPEN', { qos: 1 });
    await until(() => got.some((m) => m.payload === 'open'), 'open');
    const states = got.filter((m) => m.topic.endsWith('/living_room_blinds/state')).map((m) => m.payload);
    const positions = got.filter((m) => m.topic.endsWith('/position/state')).map((m) => Number(m.payload));
    expect(states[0]).toBe('opening');
    expect(states.at(-1)).toBe('open');
    expect(positions[0]).toBe(0);
    expect(positions.at(-1)).toBe(100);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));

    got.length = 0;
    await hub.publishAsync('esphome-blinds/cover/living_room_blinds/position/command', '40', { qos: 1 });
    await until(() => got.some((m) => m.topic.endsWith('/position/state') && m.payload === '40'), 'position 40');
    expect(got.filter((m) => m.topic.endsWith('/living_room_blinds/state')).map((m) => m.payload)).toContain('closing');
    await until(() => got.at(-1)?.payload === 'open', 'stopped at 40');
  });

  it('presses the remote: state with action, then the bare action on /action', async () => {
    const { got } = await watch('zigbee2mqtt/hallway_remote', 'zigbee2mqtt/hallway_remote/action');
    await sim.press('on_press');
    await until(() => got.length >= 2, 'press');
    expect(got[0]?.topic).toBe('zigbee2mqtt/hallway_remote');
    expect(JSON.parse(got[0]?.payload ?? '{}')).toMatchObject({ action: 'on_press', battery: 85 });
    expect(got[1]).toMatchObject({ topic: 'zigbee2mqtt/hallway_remote/action', payload: 'on_press' });
    await expect(sim.press('dance')).rejects.toThrow(/no action/);
  });

  it('answers Home Assistant coming online as z2m and Tasmota do', async () => {
    const { client: hub, got } = await watch('zigbee2mqtt/bedroom_climate', 'tele/tasmota_8D8F3C/STATE');
    await hub.publishAsync(`${PREFIX}/status`, 'online', { qos: 1 });
    await until(() => got.some((m) => m.topic === 'zigbee2mqtt/bedroom_climate') && got.some((m) => m.topic === 'tele/tasmota_8D8F3C/STATE'), 'states again');
    expect(JSON.parse(got.find((m) => m.topic === 'zigbee2mqtt/bedroom_climate')?.payload ?? '{}')).toEqual({
      battery: 97,
      humidity: 48.2,
      linkquality: 87,
      pressure: 1008.3,
      temperature: 21.5,
      voltage: 2995,
    });
    expect(sim.commands.some((c) => c.topic === `${PREFIX}/status`)).toBe(false);
  });

  it('times out waiting for a command that does not come', async () => {
    await expect(sim.nextCommand('cmnd/tasmota_8D8F3C/POWER', 100)).rejects.toThrow(/within 100 ms/);
  });

  it('clears a removed device from the broker with retained empty configs', async () => {
    const bulbTopics = sim.devices.bulb.discovery(PREFIX).map((m) => m.topic);
    expect(sim.devices.bulb.removal(PREFIX)).toEqual(bulbTopics.map((topic) => ({ topic, payload: '', retain: true })));
    await sim.remove('bulb');
    const others = DEVICE_KEYS.filter((k) => k !== 'bulb').flatMap((k) => sim.devices[k].discovery(PREFIX).map((m) => m.topic));
    const { got } = await watch(`${PREFIX}/#`);
    await until(() => others.every((t) => got.some((m) => m.topic === t)), 'remaining configs');
    await settle();
    expect(got.filter((m) => bulbTopics.includes(m.topic))).toEqual([]);
  });
});

describe('simulated devices without a broker', () => {
  it('changes nothing and answers nothing for unknown commands', () => {
    const d = simulatedDevices();
    const before = DEVICE_KEYS.map((k) => d[k].state().map((m: MqttMessage) => m.payload.replace(/"Time":"[^"]*"|"Uptime(Sec)?":("[^"]*"|\d+)/g, '')));
    expect(d.bulb.handle('zigbee2mqtt/living_room_bulb/set', '{"wobble":1}')).toEqual([]);
    expect(d.bulb.handle('zigbee2mqtt/living_room_bulb/set', 'not json')).toEqual([]);
    expect(d.bulb.handle('zigbee2mqtt/living_room_bulb/set', '{"brightness":999}')).toEqual([]);
    expect(d.plug.handle('cmnd/tasmota_8D8F3C/Frobnicate', '1')).toEqual([]);
    expect(d.cover.handle('esphome-blinds/cover/living_room_blinds/command', 'WIGGLE')).toEqual([]);
    expect(d.cover.handle('esphome-blinds/cover/living_room_blinds/position/command', 'half')).toEqual([]);
    expect(d.door.handle('zigbee2mqtt/front_door/set', '{"contact":false}')).toEqual([]);
    const after = DEVICE_KEYS.map((k) => d[k].state().map((m: MqttMessage) => m.payload.replace(/"Time":"[^"]*"|"Uptime(Sec)?":("[^"]*"|\d+)/g, '')));
    expect(after).toEqual(before);
  });

  it('gives fresh state on each call', () => {
    const a = simulatedDevices();
    a.plug.handle('cmnd/tasmota_8D8F3C/POWER', 'ON');
    expect(simulatedDevices().plug.state().find((m) => m.topic === 'stat/tasmota_8D8F3C/POWER')?.payload).toBe('OFF');
    expect(a.plug.state().find((m) => m.topic === 'stat/tasmota_8D8F3C/POWER')?.payload).toBe('ON');
  });

  it('reports the door opening as z2m publishes it', () => {
    const { door } = simulatedDevices();
    const [message] = door.report({ contact: false });
    expect(message?.topic).toBe('zigbee2mqtt/front_door');
    expect(JSON.parse(message?.payload ?? '{}')).toMatchObject({ contact: false, battery: 100 });
  });

  it('speaks the Tasmota 8.x `~` form when asked', () => {
    const { plug } = simulatedDevices({ tasmotaDiscovery: 'tilde' });
    const configs = plug.discovery(PREFIX);
    const relay = JSON.parse(configs.find((m) => m.topic === `${PREFIX}/switch/8D8F3C_RL_1/config`)?.payload ?? '{}');
    expect(relay).toMatchObject({ '~': 'tasmota_8D8F3C/', cmd_t: '~cmnd/POWER', stat_t: '~tele/STATE', avty_t: '~tele/LWT', pl_avail: 'Online' });
    const power = JSON.parse(configs.find((m) => m.topic === `${PREFIX}/sensor/8D8F3C_ENERGY_Power/config`)?.payload ?? '{}');
    expect(power).toMatchObject({ '~': 'tasmota_8D8F3C/tele/', stat_t: '~SENSOR', unit_of_meas: 'W', dev_cla: 'power' });
    // Home Assistant expands `~` at the start of a topic: the topics the device really uses.
    const expand = (config: Record<string, string>, key: string) => (config[key] ?? '').replace(/^~/, config['~'] ?? '');
    expect(expand(relay, 'cmd_t')).toBe('tasmota_8D8F3C/cmnd/POWER');
    expect(expand(power, 'stat_t')).toBe('tasmota_8D8F3C/tele/SENSOR');
    expect(plug.commandTopics).toEqual(['tasmota_8D8F3C/cmnd/#']);
    expect(plug.online()).toEqual([{ topic: 'tasmota_8D8F3C/tele/LWT', payload: 'Online', retain: true }]);
    const answer = plug.handle('tasmota_8D8F3C/cmnd/POWER', 'ON');
    expect(answer.map((m) => [m.topic, m.topic.endsWith('STATE') ? JSON.parse(m.payload).POWER : m.payload])).toEqual([
      ['tasmota_8D8F3C/tele/STATE', 'ON'],
      ['tasmota_8D8F3C/stat/RESULT', '{"POWER":"ON"}'],
      ['tasmota_8D8F3C/stat/POWER', 'ON'],
    ]);
  });
});
