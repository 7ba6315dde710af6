import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockZWaveRequestFrame, MockZWaveFrameType, type MockZWaveFrame } from '@zwave-js/testing';
import { BinarySwitchCCSet, CentralSceneKeys, DoorLockCCOperationSet, DoorLockMode, MultilevelSensorCCReport, MultilevelSwitchCCSet } from 'zwave-js';
import { startServer, type TestServer } from './support/server.js';
import { waitFor } from './support/zwave-driver.js';
import { AIR_TEMPERATURE, centralSceneNotification, startZwaveMock, ZWAVE_MOCK_NODE_IDS, type ZwaveMock } from './support/zwave-mock.js';

/**
 * The Z-Wave integration (src/integrations/zwave) on the real server, against zwave-js's own mock
 * controller and nodes over tcp:// (test/support/zwave-mock.ts): the nodes become hub devices by
 * their command classes, commands reach the mock nodes as command class frames, reports reach
 * state, and the admin operations work. Every wait is bounded.
 */

const READY_WITHIN_MS = 40_000;


const isRequestWith =
  <T>(ccClass: abstract new (...args: never[]) => T, test: (cc: T) => boolean = () => true) =>
  (frame: MockZWaveFrame): boolean =>
    frame.type === MockZWaveFrameType.Request && frame.payload instanceof ccClass && test(frame.payload as T);

interface Device {
  id: string;
  name: string;
  deviceClass: string;
  online?: boolean;
  attributes?: Record<string, unknown>;
  properties?: Record<string, unknown>;
  driverKey?: string;
  driverDeviceId?: string;
}

interface Status {
  state: string;
  error?: string;
  homeId?: string;
  inclusion: { mode: string };
  nodes: Array<{ nodeId: number; status: string; interviewStage: string; ready: boolean; devices: Array<{ id: string; deviceClass: string }> }>;
}

describe('Z-Wave integration on the hub, against the zwave-js mock controller', () => {
  let mock: ZwaveMock;
  let server: TestServer;
  let token: string;
  const api = (method: string, path: string, body?: unknown) => server.request(method, `/v1/os${path}`, { token, ...(body === undefined ? {} : { body }) });
  const status = async () => (await (await api('GET', '/zwave/status')).json()) as Status;
  const devices = async () => ((await (await api('GET', '/devices')).json()) as { devices?: Device[] } | Device[]);
  const list = async (): Promise<Device[]> => {
    const body = await devices();
    return Array.isArray(body) ? body : (body.devices ?? []);
  };
  /** The hub device of a node's part: found by its driver's id suffix (`<homeId>-<node>[-<part>]`). */
  const device = async (nodeId: number, part = ''): Promise<Device | undefined> => {
    const s = await status();
    const id = `${s.homeId}-${nodeId}${part ? `-${part}` : ''}`;
    return (await list()).find((d) => d.driverKey === 'zwave' && d.driverDeviceId === id);
  };
  const command = (id: string, name: string, params: Record<string, unknown> = {}) => api('POST', `/devices/${encodeURIComponent(id)}/command`, { command: name, params });

  beforeAll(async () => {
    mock = await startZwaveMock();
    server = await startServer({ env: { ZWAVE_PORT: mock.url } });
    token = await server.login();
    await waitFor('all five nodes ready', READY_WITHIN_MS, async () => {
      const s = await status();
      return s.state === 'running' && s.nodes.length === 5 && s.nodes.every((n) => n.ready) ? s : undefined;
    });
  }, READY_WITHIN_MS + 10_000);

  afterAll(async () => {
    await server?.close();
    await mock?.close();
  });

  it('maps each node by its command classes into the device model', async () => {
    const s = await status();
    expect(s.nodes.map((n) => n.interviewStage)).toEqual(['Complete', 'Complete', 'Complete', 'Complete', 'Complete']);
    const classes = Object.fromEntries(s.nodes.map((n) => [n.nodeId, n.devices.map((d) => `${d.id.slice(s.homeId!.length + 1)}:${d.deviceClass}`).sort()]));
    expect(classes).toEqual({
      [ZWAVE_MOCK_NODE_IDS.dimmer]: ['2:light'],
      [ZWAVE_MOCK_NODE_IDS.lock]: ['3:lock'],
      [ZWAVE_MOCK_NODE_IDS.multisensor]: ['4-battery:sensor', '4-motion:binary_sensor', '4-temperature:sensor'],
      [ZWAVE_MOCK_NODE_IDS.remote]: ['5-scene-001:button', '5-scene-002:button', '5-scene-003:button', '5-scene-004:button'],
      [ZWAVE_MOCK_NODE_IDS.plug]: ['6-energy:sensor', '6:outlet'],
    });
    const all = await list();
    expect(all.filter((d) => d.driverKey === 'zwave')).toHaveLength(11);
    const temperature = await device(4, 'temperature');
    expect(temperature?.deviceClass).toBe('sensor');
    expect(temperature?.attributes).toMatchObject({ sensorClass: 'temperature', unit: '°C' });
  });

  it('turns standard commands into command class frames at the mock nodes', async () => {
    const dimmer = (await device(2))!;
    mock.mockNodes.dimmer.clearReceivedControllerFrames();
    const dim = await command(dimmer.id, 'set_brightness', { brightness: 50 });
    expect(dim.status, await dim.clone().text()).toBe(200);
    mock.mockNodes.dimmer.assertReceivedControllerFrame(isRequestWith(MultilevelSwitchCCSet, (cc) => cc.targetValue === 50));

    const lock = (await device(3))!;
    mock.mockNodes.lock.clearReceivedControllerFrames();
    expect((await command(lock.id, 'lock')).status).toBe(200);
    mock.mockNodes.lock.assertReceivedControllerFrame(isRequestWith(DoorLockCCOperationSet, (cc) => cc.mode === DoorLockMode.Secured));

    const plug = (await device(6))!;
    mock.mockNodes.plug.clearReceivedControllerFrames();
    expect((await command(plug.id, 'turn_on')).status).toBe(200);
    mock.mockNodes.plug.assertReceivedControllerFrame(isRequestWith(BinarySwitchCCSet, (cc) => cc.targetValue === true));
  });

  it('turns reports from the nodes into state, and scene presses into button presses', async () => {
    const sensor = (await device(4, 'temperature'))!;
    const report = new MultilevelSensorCCReport({ nodeId: mock.mockController.ownNodeId, type: AIR_TEMPERATURE.type, scale: AIR_TEMPERATURE.scaleCelsius, value: 23.4 });
    await mock.mockNodes.multisensor.sendToController(createMockZWaveRequestFrame(report, { ackRequested: false }));
    await waitFor('the temperature in the state', 5_000, async () => {
      const d = (await (await api('GET', `/devices/${encodeURIComponent(sensor.id)}`)).json()) as { reading?: { value?: number } };
      return d.reading?.value === 23.4 ? d : undefined;
    });

    const button = (await device(5, 'scene-002'))!;
    const notification = centralSceneNotification(mock.mockController, { sequenceNumber: 7, sceneNumber: 2, keyAttribute: CentralSceneKeys.KeyPressed });
    await mock.mockNodes.remote.sendToController(createMockZWaveRequestFrame(notification, { ackRequested: false }));
    await waitFor('the press in the button state', 5_000, async () => {
      const d = (await (await api('GET', `/devices/${encodeURIComponent(button.id)}`)).json()) as { reading?: { lastPress?: string } };
      return d.reading?.lastPress === 'single' ? d : undefined;
    });
  });

  it('refuses a second inclusion with 409, and the port setting while ZWAVE_PORT decides', async () => {
    const first = await api('POST', '/zwave/inclusion', { security: 'insecure' });
    expect(first.status, await first.clone().text()).toBe(200);
    const second = await api('POST', '/zwave/inclusion', {});
    expect(second.status).toBe(409);
    expect(((await second.json()) as { code?: string; error?: { code?: string } }).error?.code ?? '').toMatch(/ZWAVE_INCLUSION_ACTIVE/);
    expect((await api('DELETE', '/zwave/inclusion')).status).toBe(200);
    expect((await status()).inclusion.mode).toBe('idle');

    const set = await api('POST', '/integrations/zwave/settings', { values: { port: 'tcp://127.0.0.1:1' } });
    expect(set.status).toBe(409);
    expect(JSON.stringify(await set.json())).toMatch(/SETTING_SET_BY_ENVIRONMENT/);
    const pin = await api('POST', '/zwave/inclusion/pin', { pin: '12345' });
    expect(pin.status).toBe(409);
    expect((await api('POST', '/zwave/inclusion/pin', { pin: 'abc' })).status).toBe(400);
    expect((await api('POST', '/zwave/nodes/99/heal')).status).toBe(404);
  });

  it('includes a new node and excludes it again', async () => {
    const nodeId = mock.queueInclusion('dimmer2');
    expect((await api('POST', '/zwave/inclusion', { security: 'insecure' })).status).toBe(200);
    await waitFor('the new node as a light', 20_000, async () => ((await device(nodeId))?.deviceClass === 'light' ? true : undefined));
    mock.queueExclusion('dimmer2');
    expect((await api('POST', '/zwave/exclusion')).status).toBe(200);
    await waitFor('the node and its device gone', 20_000, async () => ((await status()).nodes.some((n) => n.nodeId === nodeId) ? undefined : true));
    await waitFor('its device removed', 5_000, async () => ((await device(nodeId)) ? undefined : true));
  }, 45_000);

  it('marks a node that stops answering offline, and removes it as a failed node', async () => {
    const plug = (await device(6))!;
    mock.setResponsive('plug', false);
    const failed = await command(plug.id, 'turn_off');
    expect(failed.status).toBeGreaterThanOrEqual(500);
    await waitFor('the plug offline', 15_000, async () => ((await list()).find((d) => d.id === plug.id)?.online === false ? true : undefined));
    mock.setResponsive('plug', true);
    // Still answers: not a failed node.
    await waitFor('the plug answers again', 15_000, async () => ((await command(plug.id, 'turn_off')).status === 200 ? true : undefined));
    expect((await api('DELETE', '/zwave/nodes/6')).status).toBe(409);
    mock.setResponsive('plug', false);
    await command(plug.id, 'turn_on');
    const removed = await api('DELETE', '/zwave/nodes/6');
    expect(removed.status, await removed.clone().text()).toBe(200);
    await waitFor('the plug gone', 5_000, async () => ((await device(6)) ? undefined : true));
  }, 60_000);

  it('survives the TCP link to the stick dropping, and answers commands again', async () => {
    const dimmer = (await device(2))!;
    mock.dropConnections();
    await waitFor('commands work again', 15_000, async () => ((await command(dimmer.id, 'turn_off')).status === 200 ? true : undefined));
    expect((await status()).state).toBe('running');
  }, 30_000);
});
