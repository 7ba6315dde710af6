import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { CommandClasses, isZWaveError } from '@zwave-js/core';
import { createMockZWaveRequestFrame, MockZWaveFrameType, type MockZWaveFrame } from '@zwave-js/testing';
import type {
  Driver} from 'zwave-js';
import {
  BinarySwitchCCGet,
  BinarySwitchCCSet,
  CentralSceneKeys,
  DoorLockMode,
  InterviewStage,
  MultilevelSensorCCReport,
  NodeStatus,
  ZWaveErrorCodes,
  type ZWaveNode,
  type ZWaveNodeValueNotificationArgs,
  type ZWaveNodeValueUpdatedArgs,
} from 'zwave-js';
import {
  AIR_TEMPERATURE,
  centralSceneNotification,
  ELECTRIC_METER,
  HOME_SECURITY_MOTION,
  REMOTE_SCENE_COUNT,
  startZwaveMock,
  ZWAVE_MOCK_NODE_IDS,
  type ZwaveMock,
  type ZwaveMockNodeName,
} from './support/zwave-mock.js';
import { READY_WITHIN_MS, sleep, startDriver, waitUntil, within, driverOptions, type StartedDriver } from './support/zwave-driver.js';

/**
 * A real zwave-js Driver against zwave-js's own mock controller and nodes over a `tcp://` port
 * (test/support/zwave-mock.ts): groundwork for a Z-Wave integration. The tests run in order on one
 * driver and one mock, as a hub would see them over time. Every wait is bounded.
 * ZWAVE_TEST_LOG=/some/dir turns zwave-js's own log on (debug level, to files there).
 *
 * Vitest sets NODE_ENV=test, which zwave-js and its DB library read: after reopening a port the
 * driver skips its 250 ms "did it close again at once?" check; and @alcalzone/jsonl-db takes its
 * DB locks as stale after 100 s, so their mtime is refreshed only every 50 s, while its close()
 * judges them with the default 10 s, takes a lock older than that for someone else's and leaves
 * it: a DB open for over 10 s stays locked after close() (see the last test). Production runs
 * have neither.
 */

/** The next event on `node` whose arguments match, within `ms`. */
function nextNodeEvent<A>(node: ZWaveNode, event: 'value updated' | 'value notification', match: (args: A) => boolean, ms: number): Promise<A> {
  let listener: ((n: ZWaveNode, args: A) => void) | undefined;
  const seen = new Promise<A>((resolve) => {
    listener = (_n, args) => {
      if (match(args)) resolve(args);
    };
    node.on(event, listener as never);
  });
  return within(seen, ms, `"${event}" on node ${node.id}`).finally(() => node.off(event, listener as never));
}

const isRequestWith =
  <T>(ccClass: abstract new (...args: never[]) => T, test: (cc: T) => boolean = () => true) =>
  (frame: MockZWaveFrame): boolean =>
    frame.type === MockZWaveFrameType.Request && frame.payload instanceof ccClass && test(frame.payload as T);

const expectedCCs: Record<ZwaveMockNodeName, CommandClasses[]> = {
  dimmer: [CommandClasses['Multilevel Switch']],
  lock: [CommandClasses['Door Lock']],
  multisensor: [CommandClasses['Multilevel Sensor'], CommandClasses.Notification, CommandClasses.Battery],
  remote: [CommandClasses['Central Scene']],
  plug: [CommandClasses['Binary Switch'], CommandClasses.Meter],
};

describe('zwave-js Driver against the Z-Wave mock stick over TCP', () => {
  let mock: ZwaveMock;
  let cacheDir: string;
  const tempDirs: string[] = [];
  const drivers: Driver[] = [];
  let current: StartedDriver;

  const node = (name: ZwaveMockNodeName, driver: Driver = current.driver): ZWaveNode => driver.controller.nodes.getOrThrow(ZWAVE_MOCK_NODE_IDS[name]);

  beforeAll(async () => {
    mock = await startZwaveMock();
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'zwave-mock-cache-'));
    tempDirs.push(cacheDir);
    current = await startDriver(mock.url, driverOptions({ cacheDir }), drivers);
  }, READY_WITHIN_MS + 5_000);

  afterAll(async () => {
    for (const driver of drivers) await driver.destroy();
    await mock?.close();
    for (const dir of tempDirs) await rm(dir, { recursive: true, force: true });
  });

  it('interviews the five mock nodes, each ready with its command classes and values', () => {
    expect(current.readyAfterMs).toBeLessThan(READY_WITHIN_MS);
    expect(current.driverReadyEvents()).toBe(1);
    const { driver } = current;
    expect([...driver.controller.nodes.keys()].sort((a, b) => a - b)).toEqual([1, ...Object.values(ZWAVE_MOCK_NODE_IDS)]);
    for (const name of Object.keys(expectedCCs) as ZwaveMockNodeName[]) {
      const n = node(name);
      expect(n.ready, name).toBe(true);
      expect(n.interviewStage, name).toBe(InterviewStage.Complete);
      expect(n.status, name).toBe(NodeStatus.Alive);
      for (const cc of expectedCCs[name]) expect(n.supportsCC(cc), `${name} supports ${CommandClasses[cc]}`).toBe(true);
      expect(n.getCCVersion(CommandClasses.Version), name).toBe(3);
    }
    // What the interview read from the mocks.
    expect(node('dimmer').getValue({ commandClass: CommandClasses['Multilevel Switch'], property: 'currentValue' })).toBe(0);
    expect(node('lock').getValue({ commandClass: CommandClasses['Door Lock'], property: 'currentMode' })).toBe(DoorLockMode.Unsecured);
    const sensor = node('multisensor');
    expect(sensor.getValue({ commandClass: CommandClasses['Multilevel Sensor'], property: 'Air temperature' })).toBe(21.5);
    expect(sensor.getValue({ commandClass: CommandClasses.Battery, property: 'level' })).toBe(87);
    const motion = { commandClass: CommandClasses.Notification, property: 'Home Security', propertyKey: 'Motion sensor status' };
    expect(sensor.getValue(motion)).toBe(0); // idle
    const motionMeta = sensor.getValueMetadata(motion);
    expect('states' in motionMeta ? Object.keys(motionMeta.states ?? {}) : []).toContain(String(HOME_SECURITY_MOTION.event));
    const scenes = node('remote')
      .getDefinedValueIDs()
      .filter((v) => v.commandClass === CommandClasses['Central Scene'] && v.property === 'scene');
    expect(scenes.map((v) => v.propertyKey)).toEqual(Array.from({ length: REMOTE_SCENE_COUNT }, (_, i) => String(i + 1).padStart(3, '0')));
    const plug = node('plug');
    expect(plug.getValue({ commandClass: CommandClasses['Binary Switch'], property: 'currentValue' })).toBe(false);
    const meter = plug.getDefinedValueIDs().filter((v) => v.commandClass === CommandClasses.Meter && v.property === 'value');
    expect(Object.fromEntries(meter.map((v) => [plug.getValueMetadata(v).label, plug.getValue(v)]))).toEqual({
      'Electric Consumption [kWh]': 3.25,
      'Electric Consumption [W]': 12.5,
    });
    expect(plug.getValueMetadata(meter[0]!).ccSpecific).toMatchObject({ meterType: ELECTRIC_METER.type });
    expect(current.errors).toEqual([]);
  });

  it('sends a Binary Switch Set through the node API to the mock plug', async () => {
    const plug = mock.mockNodes.plug;
    plug.clearReceivedControllerFrames();
    await within(node('plug').commandClasses['Binary Switch'].set(true), 5_000, 'Binary Switch set(true)');
    plug.assertReceivedControllerFrame(isRequestWith(BinarySwitchCCSet, (cc) => cc.targetValue === true), {
      errorMessage: 'the mock plug received no Binary Switch Set (on)',
    });
    // The mock's own state follows; a Get through the driver reads it back.
    const report = await within(node('plug').commandClasses['Binary Switch'].get(), 5_000, 'Binary Switch get()');
    expect(report?.currentValue).toBe(true);
    plug.assertReceivedControllerFrame(isRequestWith(BinarySwitchCCGet));
  });

  it('turns reports sent by mock nodes into value events on the driver nodes', async () => {
    const sensor = node('multisensor');
    const updated = nextNodeEvent<ZWaveNodeValueUpdatedArgs>(
      sensor,
      'value updated',
      (a) => a.commandClass === CommandClasses['Multilevel Sensor'] && a.property === 'Air temperature',
      5_000,
    );
    const report = new MultilevelSensorCCReport({
      nodeId: mock.mockController.ownNodeId,
      type: AIR_TEMPERATURE.type,
      scale: AIR_TEMPERATURE.scaleCelsius,
      value: 23.4,
    });
    await mock.mockNodes.multisensor.sendToController(createMockZWaveRequestFrame(report, { ackRequested: false }));
    const args = await updated;
    expect(args).toMatchObject({ prevValue: 21.5, newValue: 23.4 });
    expect(sensor.getValue({ commandClass: CommandClasses['Multilevel Sensor'], property: 'Air temperature' })).toBe(23.4);

    // A scene button: zwave-js gives Central Scene Notifications as events ("value notification"), not as states.
    const remote = node('remote');
    const pressed = nextNodeEvent<ZWaveNodeValueNotificationArgs>(
      remote,
      'value notification',
      (a) => a.commandClass === CommandClasses['Central Scene'] && a.property === 'scene',
      5_000,
    );
    const notification = centralSceneNotification(mock.mockController, { sequenceNumber: 1, sceneNumber: 2, keyAttribute: CentralSceneKeys.KeyPressed });
    await mock.mockNodes.remote.sendToController(createMockZWaveRequestFrame(notification, { ackRequested: false }));
    expect(await pressed).toMatchObject({ propertyKey: '002', value: CentralSceneKeys.KeyPressed });
  });

  it('after the link drops, fails commands at once until it has reopened the TCP port by itself, then works again', async () => {
    // Let the last exchange finish: destroying a socket discards what it has not read yet (the
    // driver's last ACK), and the mock would then log an ACK timeout.
    await sleep(200);
    const { driver } = current;
    const plug = mock.mockNodes.plug;
    const connectionsBefore = mock.connections;
    const droppedAt = Date.now();
    mock.dropConnections();
    await sleep(100); // the driver sees the socket close within a few ms on loopback

    // zwave-js does not queue a command while its port is closed: it is rejected right away.
    plug.clearReceivedControllerFrames();
    const duringOutage = await within(
      node('plug').commandClasses['Binary Switch'].set(false).then(
        () => undefined,
        (error: unknown) => error,
      ),
      5_000,
      'set(false) while the link is down',
    );
    expect(isZWaveError(duringOutage) && duringOutage.code).toBe(ZWaveErrorCodes.Controller_MessageDropped);
    expect(String(duringOutage)).toMatch(/serial port is not open/);
    plug.assertReceivedControllerFrame(isRequestWith(BinarySwitchCCSet), { noMatch: true });

    // It reopens the port itself, 1 s after noticing (zwave-js's fixed wait; 250 ms more outside
    // NODE_ENV=test): no "error", no second "driver ready", no new interview, nodes stay ready.
    await waitUntil(() => mock.connections > connectionsBefore, 5_000, 'the driver to reconnect');
    expect(Date.now() - droppedAt).toBeGreaterThanOrEqual(1_000);
    await within(node('plug').commandClasses['Binary Switch'].set(false), 5_000, 'set(false) after the reconnect');
    plug.assertReceivedControllerFrame(isRequestWith(BinarySwitchCCSet, (cc) => cc.targetValue === false));
    expect(driver.ready).toBe(true);
    expect(current.driverReadyEvents()).toBe(1);
    expect(node('plug').interviewStage).toBe(InterviewStage.Complete);
    expect(current.errors).toEqual([]);
  });

  it('gives up and destroys itself when the port stays unreachable; a new Driver on the same cache comes back', async () => {
    await sleep(200); // as above
    const old = current;
    const oldPlug = node('plug');
    const lostAt = Date.now();
    await mock.refuseConnections();
    // zwave-js: 1 s wait, then up to 10 connection attempts 1 s apart, then "error" (ZW0100) and destroy().
    await waitUntil(() => old.errors.length > 0, 20_000, 'the driver to give up on the port');
    const gaveUpAfterMs = Date.now() - lostAt;
    expect(gaveUpAfterMs).toBeGreaterThan(5_000);
    expect(old.errors).toHaveLength(1);
    const failure = old.errors[0];
    expect(isZWaveError(failure) && failure.code).toBe(ZWaveErrorCodes.Driver_Failed);
    expect(String(failure)).toMatch(/Failed to open the serial port: connect ECONNREFUSED/);
    expect(old.driver.ready).toBe(false);
    // "error" is emitted before the driver's own destroy() has finished; calling destroy() again
    // waits for that one (it is idempotent), as an application's "error" handler would.
    await within(old.driver.destroy(), 5_000, 'the failed driver to finish destroying itself');
    // A destroyed driver stays destroyed, port back or not: the application has to make a new Driver.
    // Its controller and its nodes' CC APIs throw at once (ZW0103), synchronously.
    await mock.acceptConnections();
    expect(() => old.driver.controller).toThrow(/controller is not yet ready/);
    expect(() => oldPlug.commandClasses['Binary Switch'].set).toThrow(/controller is not yet ready/);

    // Same cacheDir (its network cache and values), but a fresh lockDir: under NODE_ENV=test the
    // destroyed driver's DB locks outlive it (see the top of this file).
    const lockDir = await mkdtemp(path.join(os.tmpdir(), 'zwave-mock-lock-'));
    tempDirs.push(lockDir);
    current = await startDriver(mock.url, driverOptions({ cacheDir, lockDir }), drivers);
    expect(current.errors).toEqual([]);
    for (const name of Object.keys(expectedCCs) as ZwaveMockNodeName[]) expect(node(name).ready, name).toBe(true);
    // The values known before come from the cache.
    expect(node('multisensor').getValue({ commandClass: CommandClasses['Multilevel Sensor'], property: 'Air temperature' })).toBe(23.4);
    const plug = mock.mockNodes.plug;
    plug.clearReceivedControllerFrames();
    await within(node('plug').commandClasses['Binary Switch'].set(true), 5_000, 'set(true) on the new driver');
    plug.assertReceivedControllerFrame(isRequestWith(BinarySwitchCCSet, (cc) => cc.targetValue === true));
  }, 45_000);
});
