import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { CommandClasses, isZWaveError } from '@zwave-js/core';
import { RemoveFailedNodeRequest, SendDataBridgeRequest, SendDataRequest, type Message } from '@zwave-js/serial';
import { MockZWaveFrameType, type MockZWaveFrame } from '@zwave-js/testing';
import type {
  Driver} from 'zwave-js';
import {
  BinarySwitchCCSet,
  InclusionState,
  InclusionStrategy,
  InterviewStage,
  NodeStatus,
  RemoveNodeReason,
  ZWaveErrorCodes,
  type InclusionResult,
  type ZWaveController,
  type ZWaveNode,
} from 'zwave-js';
import { startZwaveMock, ZWAVE_MOCK_FIRST_INCLUSION_NODE_ID, ZWAVE_MOCK_NODE_IDS, type ZwaveMock, type ZwaveMockNodeName } from './support/zwave-mock.js';
import { READY_WITHIN_MS, sleep, startDriver, waitUntil, within, driverOptions, type StartedDriver } from './support/zwave-driver.js';

/**
 * Network management against the Z-Wave mock stick (test/support/zwave-mock.ts) with a real
 * zwave-js Driver over `tcp://`: inclusion, exclusion, a node that stops answering, and removing a
 * failed node. One mock, one driver; the tests run in order and each builds on the network the
 * previous one left. Every wait is bounded. ZWAVE_TEST_LOG=/some/dir turns zwave-js's log on.
 */

/** The error `promise` rejects with (bounded); fails if it resolves. */
async function rejectionOf(promise: Promise<unknown>, ms: number, what: string): Promise<unknown> {
  return within(
    promise.then(
      () => {
        throw new Error(`${what} resolved, expected a rejection`);
      },
      (error: unknown) => error,
    ),
    ms,
    what,
  );
}


/** The controller events of one test, in order, by name (with the node ID where there is one). */
function recordControllerEvents(controller: ZWaveController): { events: string[]; stop: () => void } {
  const events: string[] = [];
  const names = ['inclusion started', 'inclusion stopped', 'node found', 'node added', 'exclusion started', 'exclusion stopped', 'exclusion failed', 'node removed'] as const;
  const listeners = names.map((name) => {
    const listener = (arg?: unknown) => events.push(arg && typeof arg === 'object' && 'id' in arg ? `${name} ${String(arg.id)}` : name);
    controller.on(name, listener as never);
    return () => controller.off(name, listener as never);
  });
  return { events, stop: () => listeners.forEach((off) => off()) };
}

function nextNodeAdded(controller: ZWaveController, ms: number): Promise<[ZWaveNode, InclusionResult]> {
  let listener: ((node: ZWaveNode, result: InclusionResult) => void) | undefined;
  const added = new Promise<[ZWaveNode, InclusionResult]>((resolve) => {
    listener = (node, result) => resolve([node, result]);
    controller.on('node added', listener);
  });
  return within(added, ms, '"node added"').finally(() => controller.off('node added', listener!));
}

function nextNodeRemoved(controller: ZWaveController, ms: number): Promise<[ZWaveNode, RemoveNodeReason]> {
  let listener: ((node: ZWaveNode, reason: RemoveNodeReason) => void) | undefined;
  const removed = new Promise<[ZWaveNode, RemoveNodeReason]>((resolve) => {
    listener = (node, reason) => resolve([node, reason]);
    controller.on('node removed', listener);
  });
  return within(removed, ms, '"node removed"').finally(() => controller.off('node removed', listener!));
}

/** Node status changes ("dead", "alive", ...) seen on `node` from now on. */
function recordStatus(node: ZWaveNode): { seen: string[]; stop: () => void } {
  const seen: string[] = [];
  const names = ['dead', 'alive', 'sleep', 'wake up'] as const;
  const listeners = names.map((name) => {
    const listener = () => seen.push(name);
    node.on(name, listener);
    return () => node.off(name, listener);
  });
  return { seen, stop: () => listeners.forEach((off) => off()) };
}

const isRemoveFailedNodeRequest = (msg: Readonly<Message>): boolean => msg instanceof RemoveFailedNodeRequest;

const isRequestWith =
  <T>(ccClass: abstract new (...args: never[]) => T, test: (cc: T) => boolean = () => true) =>
  (frame: MockZWaveFrame): boolean =>
    frame.type === MockZWaveFrameType.Request && frame.payload instanceof ccClass && test(frame.payload as T);

describe('Z-Wave network management against the mock stick', () => {
  let mock: ZwaveMock;
  let cacheDir: string;
  const drivers: Driver[] = [];
  let current: StartedDriver;
  const controller = (): ZWaveController => current.driver.controller;
  const node = (name: ZwaveMockNodeName): ZWaveNode => controller().nodes.getOrThrow(ZWAVE_MOCK_NODE_IDS[name]);
  const NEW_NODE_ID = ZWAVE_MOCK_FIRST_INCLUSION_NODE_ID;

  beforeAll(async () => {
    mock = await startZwaveMock();
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'zwave-mock-network-'));
    current = await startDriver(mock.url, driverOptions({ cacheDir }), drivers);
  }, READY_WITHIN_MS + 5_000);

  afterAll(async () => {
    for (const driver of drivers) await driver.destroy();
    await mock?.close();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  it('includes a queued node: "node added" for node 7, interviewed until ready', async () => {
    expect(controller().nodes.has(NEW_NODE_ID)).toBe(false);
    expect(mock.queueInclusion('dimmer2')).toBe(NEW_NODE_ID);
    const { events, stop } = recordControllerEvents(controller());
    const added = nextNodeAdded(controller(), 10_000);
    const t0 = Date.now();
    expect(await within(controller().beginInclusion({ strategy: InclusionStrategy.Insecure }), 5_000, 'beginInclusion')).toBe(true);
    const [newNode, result] = await added;
    const addedAfterMs = Date.now() - t0;
    expect(newNode.id).toBe(NEW_NODE_ID);
    expect(result.lowSecurity).toBe(false);
    expect(controller().nodes.get(NEW_NODE_ID)).toBe(newNode);
    // "node added" comes before the interview; "ready" follows it.
    await waitUntil(() => newNode.ready, 15_000, 'node 7 to become ready');
    stop();
    expect(newNode.interviewStage).toBe(InterviewStage.Complete);
    expect(newNode.status).toBe(NodeStatus.Alive);
    expect(newNode.supportsCC(CommandClasses['Multilevel Switch'])).toBe(true);
    expect(newNode.getValue({ commandClass: CommandClasses['Multilevel Switch'], property: 'currentValue' })).toBe(0);
    expect(controller().inclusionState).toBe(InclusionState.Idle);
    // zwave-js leaves inclusion mode ("inclusion stopped") before it reports the node ("node found").
    expect(events).toEqual(['inclusion started', 'inclusion stopped', `node found ${NEW_NODE_ID}`, `node added ${NEW_NODE_ID}`]);
    expect(mock.mockNode('dimmer2')?.id).toBe(NEW_NODE_ID);
    // It answers commands like the first dimmer.
    await within(newNode.commandClasses['Multilevel Switch'].set(40), 5_000, 'Multilevel Switch set(40) on node 7');
    expect(addedAfterMs).toBeLessThan(5_000);
    expect(current.errors).toEqual([]);
  });

  it('excludes a queued node: "node removed" (Excluded) and node 7 is gone from the driver and the stick', async () => {
    expect(mock.queueExclusion('dimmer2')).toBe(NEW_NODE_ID);
    const { events, stop } = recordControllerEvents(controller());
    const removed = nextNodeRemoved(controller(), 10_000);
    expect(await within(controller().beginExclusion(), 5_000, 'beginExclusion')).toBe(true);
    const [gone, reason] = await removed;
    expect(gone.id).toBe(NEW_NODE_ID);
    expect(reason).toBe(RemoveNodeReason.Excluded);
    // The node is forgotten right after the event, in the same task.
    expect(controller().nodes.has(NEW_NODE_ID)).toBe(false);
    await waitUntil(() => controller().inclusionState === InclusionState.Idle, 5_000, 'inclusion state Idle');
    stop();
    expect(events).toEqual(['exclusion started', 'exclusion stopped', `node removed ${NEW_NODE_ID}`]);
    expect(mock.mockNode('dimmer2')).toBeUndefined();
    expect(mock.mockController.nodes.has(NEW_NODE_ID)).toBe(false);
    expect([...controller().nodes.keys()].sort((a, b) => a - b)).toEqual([1, ...Object.values(ZWAVE_MOCK_NODE_IDS)]);
  });

  it('without a queued node, exclusion waits (nothing is removed) until stopExclusion()', async () => {
    const { events, stop } = recordControllerEvents(controller());
    expect(await within(controller().beginExclusion(), 5_000, 'beginExclusion')).toBe(true);
    await sleep(300);
    expect(controller().inclusionState).toBe(InclusionState.Excluding);
    expect(await within(controller().stopExclusion(), 5_000, 'stopExclusion')).toBe(true);
    expect(controller().inclusionState).toBe(InclusionState.Idle);
    stop();
    expect(events).toEqual(['exclusion started', 'exclusion stopped']);
    expect(controller().nodes.size).toBe(6);
  });

  it('includes a second kind of node ("sensor2") under the freed node ID 7', async () => {
    expect(mock.queueInclusion('sensor2')).toBe(NEW_NODE_ID);
    const added = nextNodeAdded(controller(), 10_000);
    expect(await within(controller().beginInclusion({ strategy: InclusionStrategy.Insecure }), 5_000, 'beginInclusion')).toBe(true);
    const [newNode] = await added;
    expect(newNode.id).toBe(NEW_NODE_ID);
    await waitUntil(() => newNode.ready, 15_000, 'node 7 (sensor2) to become ready');
    for (const cc of [CommandClasses['Multilevel Sensor'], CommandClasses.Notification, CommandClasses.Battery]) {
      expect(newNode.supportsCC(cc), CommandClasses[cc]).toBe(true);
    }
    expect(newNode.supportsCC(CommandClasses['Multilevel Switch'])).toBe(false);
    expect(newNode.getValue({ commandClass: CommandClasses.Battery, property: 'level' })).toBe(87);
  });

  it('a node that stops answering: the command fails, the node is marked Dead; answering again, it is Alive', async () => {
    const plug = node('plug');
    const mockPlug = mock.mockNodes.plug;
    const status = recordStatus(plug);
    expect(await within(controller().isFailedNode(plug.id), 5_000, 'isFailedNode')).toBe(false);

    mock.setResponsive('plug', false);
    mock.mockController.clearReceivedHostMessages();
    mockPlug.clearReceivedControllerFrames();
    mockPlug.clearSentControllerFrames();
    const t0 = Date.now();
    const failure = await rejectionOf(plug.commandClasses['Binary Switch'].set(true), 15_000, 'Binary Switch set(true) to the silent plug');
    const failedAfterMs = Date.now() - t0;
    expect(isZWaveError(failure) && failure.code).toBe(ZWaveErrorCodes.Controller_CallbackNOK);
    expect(String(failure)).toMatch(/The node did not acknowledge the command/);
    expect(plug.status).toBe(NodeStatus.Dead);
    expect(status.seen).toEqual(['dead']);
    // zwave-js tried three times (three SendData to the stick; zwave-js sends SendDataBridge when
    // the stick supports it, as the mock does), the node answered none of them.
    const sends = mock.mockController.receivedHostMessages.filter(
      (msg) => (msg instanceof SendDataBridgeRequest || msg instanceof SendDataRequest) && msg.command instanceof BinarySwitchCCSet,
    );
    expect(sends).toHaveLength(3);
    mockPlug.assertReceivedControllerFrame(isRequestWith(BinarySwitchCCSet, (cc) => cc.targetValue === true));
    mockPlug.assertSentControllerFrame(() => true, { noMatch: true, errorMessage: 'the silent plug sent something (an ACK?)' });
    // Each attempt waits out the mock stick's 1 s for the node's ACK before its NoAck report.
    expect(failedAfterMs).toBeGreaterThanOrEqual(3_000);
    expect(failedAfterMs).toBeLessThan(8_000);
    // The stick now lists it as failed.
    expect(await within(controller().isFailedNode(plug.id), 5_000, 'isFailedNode')).toBe(true);

    mock.setResponsive('plug', true);
    // zwave-js still sends to a Dead node; the first success brings it back.
    await within(plug.commandClasses['Binary Switch'].set(true), 5_000, 'Binary Switch set(true) to the plug answering again');
    expect(plug.status).toBe(NodeStatus.Alive);
    expect(status.seen).toEqual(['dead', 'alive']);
    expect(await within(controller().isFailedNode(plug.id), 5_000, 'isFailedNode')).toBe(false);
    status.stop();
  });

  it('removeFailedNode on a node that answers: rejected (ZW0360) after pinging it, nothing is sent to the stick', async () => {
    const lock = node('lock');
    mock.mockController.clearReceivedHostMessages();
    const t0 = Date.now();
    const failure = await rejectionOf(controller().removeFailedNode(lock.id), 15_000, 'removeFailedNode(lock)');
    const rejectedAfterMs = Date.now() - t0;
    expect(isZWaveError(failure) && failure.code).toBe(ZWaveErrorCodes.RemoveFailedNode_Failed);
    expect(String(failure)).toMatch(/responded to a ping/);
    expect(mock.mockController.receivedHostMessages.some(isRemoveFailedNodeRequest)).toBe(false);
    expect(controller().nodes.has(lock.id)).toBe(true);
    expect(controller().inclusionState).toBe(InclusionState.Idle);
    // zwave-js pings up to three times, 2 s apart, before it gives up: about 4 s.
    expect(rejectedAfterMs).toBeGreaterThanOrEqual(4_000);
    expect(rejectedAfterMs).toBeLessThan(10_000);
  }, 20_000);

  it('removeFailedNode when the node answers again by the time the stick checks: rejected with ZW0361 (node OK)', async () => {
    const lock = node('lock');
    mock.setResponsive('lock', false);
    // zwave-js's ping fails; when its RemoveFailedNode request reaches the stick, the lock is back.
    const requested = mock.mockController.expectHostMessage(isRemoveFailedNodeRequest, { timeout: 10_000 }).then(() => mock.setResponsive('lock', true));
    const failure = await rejectionOf(controller().removeFailedNode(lock.id), 15_000, 'removeFailedNode(lock)');
    await requested;
    expect(isZWaveError(failure) && failure.code).toBe(ZWaveErrorCodes.RemoveFailedNode_NodeOK);
    expect(controller().nodes.has(lock.id)).toBe(true);
    expect(mock.mockNode('lock')).toBeDefined();
    expect(controller().inclusionState).toBe(InclusionState.Idle);
    // The failed ping left it Dead; the next successful exchange makes it Alive again.
    expect(await within(lock.ping(), 5_000, 'ping the lock')).toBe(true);
    expect(lock.status).toBe(NodeStatus.Alive);
  });

  it('removeFailedNode on an unresponsive node: resolves, "node removed" (RemoveFailed), the node is gone', async () => {
    const sensor2 = controller().nodes.getOrThrow(NEW_NODE_ID);
    mock.setResponsive('sensor2', false);
    const removed = nextNodeRemoved(controller(), 10_000);
    await within(controller().removeFailedNode(NEW_NODE_ID), 10_000, 'removeFailedNode(7)');
    const [gone, reason] = await removed;
    expect(gone).toBe(sensor2);
    expect(reason).toBe(RemoveNodeReason.RemoveFailed);
    expect(controller().nodes.has(NEW_NODE_ID)).toBe(false);
    expect(mock.mockNode('sensor2')).toBeUndefined();
    expect(controller().inclusionState).toBe(InclusionState.Idle);
    expect(current.errors).toEqual([]);
  });
});
