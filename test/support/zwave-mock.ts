import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { CommandClasses, parseNodeID } from '@zwave-js/core';
import {
  AddNodeToNetworkRequest,
  AddNodeToNetworkRequestStatusReport,
  AddNodeStatus,
  AddNodeType,
  Faucet,
  FunctionType,
  IsFailedNodeRequest,
  IsFailedNodeResponse,
  RemoveFailedNodeRequest,
  RemoveFailedNodeRequestStatusReport,
  RemoveFailedNodeResponse,
  RemoveFailedNodeStartFlags,
  RemoveFailedNodeStatus,
  RemoveNodeFromNetworkRequest,
  RemoveNodeFromNetworkRequestStatusReport,
  RemoveNodeStatus,
  RemoveNodeType,
  SerialAPIParser,
  ZWaveSerialFrameType,
  type RemoveNodeFromNetworkRequestStatusReportOptions,
  type ZWaveSerialFrame,
} from '@zwave-js/serial';
import { createAndOpenMockedZWaveSerialPort } from '@zwave-js/serial/mock';
import { Bytes } from '@zwave-js/shared';
import {
  ccCaps,
  getDefaultSupportedFunctionTypes,
  MockController,
  MockNode,
  type MockControllerBehavior,
  type MockNodeBehavior,
  type MockNodeOptions,
  type PartialCCCapabilities,
} from '@zwave-js/testing';
import {
  BatteryCCGet,
  BatteryCCReport,
  CentralSceneCCNotification,
  CentralSceneCCSupportedGet,
  CentralSceneCCSupportedReport,
  CentralSceneKeys,
  DoorLockMode,
  DoorLockOperationType,
  NotificationCCGet,
  NotificationCCReport,
  RateType,
  SwitchType,
} from 'zwave-js';
import { createDefaultMockControllerBehaviors, createDefaultMockNodeBehaviors } from 'zwave-js/Testing';

/**
 * A virtual Z-Wave USB stick for tests: zwave-js's own MockController and MockNodes (from
 * `@zwave-js/testing`, with the default behaviours from `zwave-js/Testing`) behind a TCP server on
 * 127.0.0.1, so a real zwave-js `Driver` connects to it with a `tcp://` port as it would to a
 * stick shared over the network (ser2net and the like).
 *
 * Why not `MockServer` from `zwave-js/Testing` itself: its `start()` also advertises the server
 * over mDNS (@homebridge/ciao multicasting on the machine's network interfaces, not only on
 * loopback; there is no option to turn it off), logs to the console, and does not tell the port
 * it got. This module does what its `start()`
 * does with the same parts (`createAndOpenMockedZWaveSerialPort`, `MockController.create` plus
 * the default behaviours, `MockNode.create`, a `Faucet` from the mock's serial stream to the
 * socket), on loopback only and without those.
 *
 * The relay (the framing between the socket and the mock): the mock controller takes every chunk
 * written to its port as one whole message; only a chunk of exactly one byte is read as ACK
 * (0x06), NAK (0x15) or CAN (0x18). TCP does not keep write boundaries, so the driver's ACK often
 * arrives in the same chunk as its next frame ("06 01 03 00 ..."); `MockServer` passes such a
 * chunk through as it came, the mock reads it as a frame that "does not start with SOF", never
 * sees the ACK, and the link stalls during the interview (measured here with the bytes passed
 * through as they came: no "all nodes ready" within 30 s; with the parser, about 100 of 260
 * chunks from the driver started with a control byte followed by more). So every byte from the client goes
 * through zwave-js's own Serial API parser (as zwave-js's `createAndStartDriverWithMockPort` does
 * when it serves a mock over TCP), and each control byte and each complete frame is written to
 * the mock separately, in order; a frame split over two chunks waits for its rest.
 */

export type ZwaveMockNodeName = 'dimmer' | 'lock' | 'multisensor' | 'remote' | 'plug';
/** Nodes that are not in the network at the start and join it through `queueInclusion`. */
export type ZwaveMockInclusionName = 'dimmer2' | 'sensor2';
export type ZwaveMockAnyNodeName = ZwaveMockNodeName | ZwaveMockInclusionName;

export interface ZwaveMock {
  /** The port to give zwave-js's `Driver`: `tcp://127.0.0.1:<port>`. */
  readonly url: string;
  readonly mockController: MockController;
  /** The five nodes the network starts with (an entry stays after its node has left the network). */
  readonly mockNodes: Readonly<Record<ZwaveMockNodeName, MockNode>>;
  /** The mock node of that name while it is in the mock controller's network, else undefined. */
  mockNode(name: ZwaveMockAnyNodeName): MockNode | undefined;
  /**
   * The next inclusion the driver starts (`controller.beginInclusion()`) adds this node: 'dimmer2'
   * with the dimmer's capabilities, 'sensor2' with the multisensor's. It gets the lowest free node
   * ID from 7 up (7 on an unchanged network), which is returned. Throws if it is in the network already.
   */
  queueInclusion(name: ZwaveMockInclusionName): number;
  /**
   * The next exclusion the driver starts (`controller.beginExclusion()`) removes this node (as if
   * its button had been pressed): the stick reports Ready, NodeFound, RemovingSlave and Done with
   * its node ID, and the node leaves the mock network. Returns its node ID. Without a queued node
   * the stick stays in exclusion mode, as zwave-js's own mock does, until the driver stops it.
   */
  queueExclusion(name: ZwaveMockAnyNodeName): number;
  /**
   * `false`: the node neither acknowledges nor answers anything from then on (as if unplugged), so
   * the driver's commands to it fail (no ACK, after about 1 s per attempt) and zwave-js marks it
   * dead; the stick reports it as failed (IsFailedNode) and lets RemoveFailedNode remove it.
   * `true`: it answers again.
   */
  setResponsive(name: ZwaveMockAnyNodeName, responsive: boolean): void;
  /** How many TCP connections the mock has accepted so far (a reconnecting driver adds one). */
  readonly connections: number;
  /** Destroys the current client sockets, as if the link to the stick were lost. */
  dropConnections(): void;
  /**
   * Drops the current client and stops listening (a client then gets ECONNREFUSED), as if the
   * stick's network server were gone; `acceptConnections()` listens again on the same port.
   */
  refuseConnections(): Promise<void>;
  acceptConnections(): Promise<void>;
  close(): Promise<void>;
}

export interface ZwaveMockOptions {
  /** The mock controller's home ID (default 0x7e570001, as zwave-js's MockServer). */
  homeId?: number;
}

/** Node IDs of the mock nodes; the controller is node 1. */
export const ZWAVE_MOCK_NODE_IDS: Readonly<Record<ZwaveMockNodeName, number>> = { dimmer: 2, lock: 3, multisensor: 4, remote: 5, plug: 6 };

/** Multilevel Sensor type "Air temperature" and its scale "Celsius". */
export const AIR_TEMPERATURE = { type: 0x01, scaleCelsius: 0x00 } as const;
/** Notification type "Home Security" and its event "Motion detection". */
export const HOME_SECURITY_MOTION = { type: 0x07, event: 0x08 } as const;
/** Meter type "Electric" and its scales kWh and W. */
export const ELECTRIC_METER = { type: 0x01, scaleKWh: 0x00, scaleW: 0x02 } as const;

export const REMOTE_SCENE_COUNT = 4;
const REMOTE_KEY_ATTRIBUTES = [CentralSceneKeys.KeyPressed, CentralSceneKeys.KeyReleased, CentralSceneKeys.KeyHeldDown];

type NodeCapabilities = NonNullable<MockNodeOptions['capabilities']>;

/** CCs every mock node has: what a Z-Wave Plus end device reports about itself. */
const commonCCs = (): PartialCCCapabilities[] => [
  { ccId: CommandClasses['Z-Wave Plus Info'], version: 2 },
  { ccId: CommandClasses.Version, version: 3 },
  { ccId: CommandClasses['Manufacturer Specific'], version: 2 },
];

const makeNodeCapabilities = (): Record<ZwaveMockNodeName, NodeCapabilities> => ({
  dimmer: {
    genericDeviceClass: 0x11, // Multilevel Switch
    specificDeviceClass: 0x01, // Multilevel Power Switch
    commandClasses: [
      ...commonCCs(),
      ccCaps({ ccId: CommandClasses['Multilevel Switch'], version: 4, defaultValue: 0, primarySwitchType: SwitchType['Down/Up'] }),
    ],
  },
  lock: {
    genericDeviceClass: 0x40, // Entry Control
    specificDeviceClass: 0x01, // Door Lock
    commandClasses: [
      ...commonCCs(),
      ccCaps({
        ccId: CommandClasses['Door Lock'],
        version: 4,
        supportedOperationTypes: [DoorLockOperationType.Constant],
        supportedDoorLockModes: [DoorLockMode.Unsecured, DoorLockMode.Secured],
      }),
    ],
  },
  multisensor: {
    genericDeviceClass: 0x07, // Notification Sensor
    specificDeviceClass: 0x01, // Notification Sensor
    commandClasses: [
      ...commonCCs(),
      ccCaps({
        ccId: CommandClasses['Multilevel Sensor'],
        version: 11,
        sensors: { [AIR_TEMPERATURE.type]: { supportedScales: [AIR_TEMPERATURE.scaleCelsius] } },
        getValue: () => 21.5,
      }),
      ccCaps({
        ccId: CommandClasses.Notification,
        version: 8,
        supportsV1Alarm: false,
        notificationTypesAndEvents: { [HOME_SECURITY_MOTION.type]: [HOME_SECURITY_MOTION.event] },
      }),
      { ccId: CommandClasses.Battery, version: 1 },
    ],
  },
  remote: {
    genericDeviceClass: 0x18, // Wall Controller
    specificDeviceClass: 0x01, // Basic Wall Controller
    commandClasses: [...commonCCs(), { ccId: CommandClasses['Central Scene'], version: 3 }],
  },
  plug: {
    genericDeviceClass: 0x10, // Binary Switch
    specificDeviceClass: 0x01, // Binary Power Switch
    commandClasses: [
      ...commonCCs(),
      ccCaps({ ccId: CommandClasses['Binary Switch'], version: 2, defaultValue: false }),
      ccCaps({
        ccId: CommandClasses.Meter,
        version: 4,
        meterType: ELECTRIC_METER.type,
        supportedScales: [ELECTRIC_METER.scaleKWh, ELECTRIC_METER.scaleW],
        supportedRateTypes: [RateType.Consumed],
        supportsReset: true,
        getValue: (scale) => (scale === ELECTRIC_METER.scaleW ? 12.5 : 3.25),
      }),
    ],
  },
});

/** Fresh capability objects for a node (each mock node gets its own). */
const nodeCapabilities = (name: ZwaveMockNodeName): NodeCapabilities => makeNodeCapabilities()[name];

/** zwave-js 15.29.0 has no mock behaviour for Battery CC: without one the interview waits out its report timeout. */
const respondToBatteryGet: MockNodeBehavior = {
  handleCC(controller, _self, receivedCC) {
    if (receivedCC instanceof BatteryCCGet) {
      return { action: 'sendCC', cc: new BatteryCCReport({ nodeId: controller.ownNodeId, level: 87 }) };
    }
    return undefined;
  },
};

/**
 * Nor for Notification Get: a node with no lifeline is taken to be a "pull" node and asked for
 * its state at the end of the interview, which waits out the report timeout unanswered. The
 * answer is "idle" (event 0) for the type asked.
 */
const respondToNotificationGet: MockNodeBehavior = {
  handleCC(controller, _self, receivedCC) {
    if (receivedCC instanceof NotificationCCGet && receivedCC.notificationType !== undefined) {
      const cc = new NotificationCCReport({ nodeId: controller.ownNodeId, notificationType: receivedCC.notificationType, notificationEvent: 0 });
      return { action: 'sendCC', cc };
    }
    return undefined;
  },
};

/**
 * Nor for Central Scene CC; and its Supported Report and Notification have no `serialize()` in
 * 15.29.0 (a mock sending one sends no payload, which the driver drops as invalid), so the payload
 * is written here by hand, as the Central Scene spec (v3) lays it out.
 */
const respondToCentralSceneSupportedGet: MockNodeBehavior = {
  handleCC(controller, _self, receivedCC) {
    if (receivedCC instanceof CentralSceneCCSupportedGet) {
      const cc = new CentralSceneCCSupportedReport({
        nodeId: controller.ownNodeId,
        sceneCount: REMOTE_SCENE_COUNT,
        supportsSlowRefresh: false,
        supportedKeyAttributes: Object.fromEntries(Array.from({ length: REMOTE_SCENE_COUNT }, (_, i) => [i + 1, REMOTE_KEY_ATTRIBUTES])),
      });
      // Scene count; slow refresh no (bit 7), one bit-mask byte (bits 2-1), identical attributes for all scenes (bit 0); the mask.
      const mask = REMOTE_KEY_ATTRIBUTES.reduce((m, key) => m | (1 << key), 0);
      cc.payload = Bytes.from([REMOTE_SCENE_COUNT, (1 << 1) | 1, mask]);
      return { action: 'sendCC', cc };
    }
    return undefined;
  },
};

/** A Central Scene Notification from a mock node to the controller, with its payload (see above). */
export function centralSceneNotification(
  controller: MockController,
  notification: { sequenceNumber: number; sceneNumber: number; keyAttribute: CentralSceneKeys },
): CentralSceneCCNotification {
  const cc = new CentralSceneCCNotification({ nodeId: controller.ownNodeId, ...notification });
  cc.payload = Bytes.from([notification.sequenceNumber & 0xff, notification.keyAttribute & 0b111, notification.sceneNumber & 0xff]);
  return cc;
}

const extraBehaviors: Partial<Record<ZwaveMockNodeName, MockNodeBehavior[]>> = {
  multisensor: [respondToBatteryGet, respondToNotificationGet],
  remote: [respondToCentralSceneSupportedGet],
};

/** Which of the starting nodes each node joining through `queueInclusion` copies. */
const INCLUSION_TEMPLATES: Readonly<Record<ZwaveMockInclusionName, ZwaveMockNodeName>> = { dimmer2: 'dimmer', sensor2: 'multisensor' };
/** The lowest node ID `queueInclusion` gives (the one after the five starting nodes). */
export const ZWAVE_MOCK_FIRST_INCLUSION_NODE_ID = 7;

/**
 * The mock controller's inclusion state, as zwave-js's own controller behaviours keep it in
 * `controller.state` (MockControllerState.ts in zwave-js, which the package does not export).
 */
const INCLUSION_STATE_KEY = 'inclusionState';
const InclusionState = { Idle: 0, AddingNode: 1, RemovingNode: 2 } as const;
const inclusionState = (controller: MockController): unknown => controller.state.get(INCLUSION_STATE_KEY) ?? InclusionState.Idle;

/** What the network behaviours below share with the `ZwaveMock` methods. */
interface MockNetwork {
  /** Every mock node by name, the starting ones and those an inclusion has created. */
  readonly byName: Map<ZwaveMockAnyNodeName, MockNode>;
  /** The nodes `setResponsive(name, false)` has silenced. */
  readonly unresponsive: Set<MockNode>;
  /** The node the next exclusion removes (`queueExclusion`). */
  pendingExclusion: MockNode | undefined;
}

/** The gap between two status reports of a (mock) exclusion; the stick's are some ms apart too. */
const STATUS_REPORT_GAP_MS = 10;

/**
 * On every mock node, in front of its other behaviours: while the node is unresponsive it does
 * nothing with what it receives (its automatic ACK is off as well, see `setResponsive`).
 */
const silentWhileUnresponsive = (network: MockNetwork): MockNodeBehavior => ({
  handleCC(_controller, self) {
    return network.unresponsive.has(self) ? { action: 'stop' } : undefined;
  },
});

/** A RemoveNode status report; Done carries the node ID too, as the stick sends it. */
function removeNodeStatus(callbackId: number, status: RemoveNodeStatus, nodeId?: number): RemoveNodeFromNetworkRequestStatusReport {
  // zwave-js's options type only allows a node ID with RemovingSlave/RemovingController, but its
  // serializer writes one for any status that has it (and its parser ignores it after Done).
  const options = (nodeId === undefined ? { status } : { status, nodeId }) as RemoveNodeFromNetworkRequestStatusReportOptions;
  return new RemoveNodeFromNetworkRequestStatusReport({ callbackId, ...options });
}

/** The node ID at the start of a request's payload (IsFailedNodeRequest has no parser of its own in zwave-js 15.29.0). */
const requestedNodeId = (controller: MockController, payload: Bytes): number => parseNodeID(payload, controller.encodingContext.nodeIdType).nodeId;

/**
 * Controller behaviours added to zwave-js's defaults (defined after them, so they are asked first;
 * returning false leaves a message to the defaults):
 *
 * - Exclusion of the node queued with `queueExclusion`: Ready, then NodeFound, RemovingSlave (with
 *   the node ID) and Done (with the node ID) 10 ms apart, and the node leaves the mock network, the
 *   sequence zwave-js's `performExclusion` waits for. With no node queued the default answers
 *   (Ready, and nothing more until the driver stops it).
 * - A Stop of inclusion or exclusion while the stick is idle is only acknowledged. zwave-js sends
 *   one more Stop without callback after every inclusion and exclusion; the default behaviours
 *   would take it for a start (they put an idle stick into "adding"/"removing" mode whatever the
 *   request's type) and then refuse the next inclusion or exclusion.
 * - IsFailedNode: whether the node is unresponsive (`setResponsive(name, false)`).
 * - RemoveFailedNode: "started" (response), then, after the host has acknowledged that, as the
 *   stick tries the node: "node removed" (status report) and the node leaves the mock network if it
 *   is unresponsive, "node OK" if it answers. An unknown node ID gets the "node not found" flag.
 */
function networkBehaviors(network: MockNetwork): MockControllerBehavior[] {
  const excludeQueuedNode: MockControllerBehavior = {
    async onHostMessage(controller, msg) {
      if (!(msg instanceof RemoveNodeFromNetworkRequest)) return false;
      const callbackId = msg.callbackId ?? 0;
      if (msg.removeNodeType === RemoveNodeType.Stop) {
        if (inclusionState(controller) !== InclusionState.Idle) return false;
        if (callbackId !== 0) await controller.sendMessageToHost(removeNodeStatus(callbackId, RemoveNodeStatus.Failed));
        return true;
      }
      const node = network.pendingExclusion;
      if (!node || inclusionState(controller) !== InclusionState.Idle) return false;
      network.pendingExclusion = undefined;
      controller.state.set(INCLUSION_STATE_KEY, InclusionState.RemovingNode);
      await controller.sendMessageToHost(removeNodeStatus(callbackId, RemoveNodeStatus.Ready));
      void (async () => {
        await sleep(STATUS_REPORT_GAP_MS);
        await controller.sendMessageToHost(removeNodeStatus(callbackId, RemoveNodeStatus.NodeFound));
        await sleep(STATUS_REPORT_GAP_MS);
        await controller.sendMessageToHost(removeNodeStatus(callbackId, RemoveNodeStatus.RemovingSlave, node.id));
        await sleep(STATUS_REPORT_GAP_MS);
        controller.removeNode(node);
        controller.state.set(INCLUSION_STATE_KEY, InclusionState.Idle);
        await controller.sendMessageToHost(removeNodeStatus(callbackId, RemoveNodeStatus.Done, node.id));
      })().catch(() => undefined); // the host went away mid-way (no ACK): nothing to do
      return true;
    },
  };

  const ignoreStopInclusionWhileIdle: MockControllerBehavior = {
    async onHostMessage(controller, msg) {
      if (!(msg instanceof AddNodeToNetworkRequest) || msg.addNodeType !== AddNodeType.Stop) return false;
      if (inclusionState(controller) !== InclusionState.Idle) return false;
      const callbackId = msg.callbackId ?? 0;
      if (callbackId !== 0) await controller.sendMessageToHost(new AddNodeToNetworkRequestStatusReport({ callbackId, status: AddNodeStatus.Failed }));
      return true;
    },
  };

  const answerIsFailedNode: MockControllerBehavior = {
    async onHostMessage(controller, msg) {
      if (!(msg instanceof IsFailedNodeRequest)) return false;
      const node = controller.nodes.get(requestedNodeId(controller, msg.payload));
      const failed = node !== undefined && network.unresponsive.has(node);
      const response = new IsFailedNodeResponse({ result: failed });
      response.payload = Bytes.from([failed ? 1 : 0]); // the class has no serializer of its own
      await controller.sendMessageToHost(response);
      return true;
    },
  };

  const answerRemoveFailedNode: MockControllerBehavior = {
    async onHostMessage(controller, msg) {
      if (!(msg instanceof RemoveFailedNodeRequest)) return false;
      const node = controller.nodes.get(msg.failedNodeId);
      const started = new RemoveFailedNodeResponse({ removeStatus: node ? RemoveFailedNodeStartFlags.OK : RemoveFailedNodeStartFlags.NodeNotFound });
      started.payload = Bytes.from([started.removeStatus]); // no serializer of its own either
      await controller.sendMessageToHost(started);
      if (!node) return true;
      const removed = network.unresponsive.has(node);
      if (removed) controller.removeNode(node);
      const removeStatus = removed ? RemoveFailedNodeStatus.NodeRemoved : RemoveFailedNodeStatus.NodeOK;
      const callbackId = msg.callbackId ?? 0;
      const report = new RemoveFailedNodeRequestStatusReport({ callbackId, removeStatus });
      report.payload = Bytes.from([callbackId, removeStatus]);
      await controller.sendMessageToHost(report);
      return true;
    },
  };

  return [excludeQueuedNode, ignoreStopInclusionWhileIdle, answerIsFailedNode, answerRemoveFailedNode];
}

/** The bytes of a Serial API frame (a control byte or a whole message), as a copy; undefined for other frames. */
function frameBytes(frame: ZWaveSerialFrame): Uint8Array<ArrayBuffer> | undefined {
  if (frame.type !== ZWaveSerialFrameType.SerialAPI) return undefined;
  return typeof frame.data === 'number' ? Uint8Array.from([frame.data]) : new Uint8Array(frame.data);
}

export async function startZwaveMock(options: ZwaveMockOptions = {}): Promise<ZwaveMock> {
  const { port: mockPort, serial } = await createAndOpenMockedZWaveSerialPort();
  // zwave-js's mock stick does not list IsFailedNode and RemoveFailedNode among its functions (the
  // driver then refuses them with ZW0105 without sending anything); the behaviours below answer them.
  const supportedFunctionTypes = [...getDefaultSupportedFunctionTypes(), FunctionType.IsFailedNode, FunctionType.RemoveFailedNode];
  const mockController = await MockController.create({
    homeId: options.homeId ?? 0x7e570001,
    ownNodeId: 1,
    mockPort,
    serial,
    capabilities: { supportedFunctionTypes },
  });
  const network: MockNetwork = { byName: new Map(), unresponsive: new Set(), pendingExclusion: undefined };
  // defineBehavior puts later definitions in front: these are asked before the defaults.
  mockController.defineBehavior(...createDefaultMockControllerBehaviors());
  mockController.defineBehavior(...networkBehaviors(network));

  const mockNodes = {} as Record<ZwaveMockNodeName, MockNode>;
  for (const name of Object.keys(ZWAVE_MOCK_NODE_IDS) as ZwaveMockNodeName[]) {
    const node = await MockNode.create({ id: ZWAVE_MOCK_NODE_IDS[name], controller: mockController, capabilities: nodeCapabilities(name) });
    mockController.addNode(node);
    node.defineBehavior(...createDefaultMockNodeBehaviors(), ...(extraBehaviors[name] ?? []));
    node.defineBehavior(silentWhileUnresponsive(network));
    mockNodes[name] = node;
    network.byName.set(name, node);
  }

  const inNetwork = (name: ZwaveMockAnyNodeName): MockNode | undefined => {
    const node = network.byName.get(name);
    return node && mockController.nodes.get(node.id) === node ? node : undefined;
  };

  // What the mock controller sends goes to the current client; with none it is dropped, as on a
  // stick whose host went away.
  const faucet = new Faucet(serial.readable);
  const sockets = new Set<Socket>();
  let connections = 0;

  const server: Server = createServer((socket) => {
    connections += 1;
    // One host at a time, as on a serial port: a new connection replaces the current one.
    for (const other of sockets) other.destroy();
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('error', () => undefined);

    const toSocket = new WritableStream<ZWaveSerialFrame>({
      write(frame) {
        const bytes = frameBytes(frame);
        if (bytes && !socket.destroyed) socket.write(bytes);
      },
    });
    faucet.connect(toSocket);

    // The relay: client bytes → Serial API parser → one write to the mock per control byte or frame.
    const parser = new SerialAPIParser();
    const parserInput = parser.writable.getWriter();
    void parser.readable
      .pipeTo(
        new WritableStream<ZWaveSerialFrame>({
          async write(frame) {
            const bytes = frameBytes(frame);
            if (bytes) await serial.writeAsync(bytes).catch(() => undefined);
          },
        }),
      )
      .catch(() => undefined);
    socket.on('data', (chunk: Buffer) => void parserInput.write(chunk).catch(() => undefined));
    socket.on('close', () => {
      sockets.delete(socket);
      void parserInput.abort().catch(() => undefined);
      // Only unhook the faucet if no newer connection has taken it over.
      if (sockets.size === 0) faucet.disconnect();
    });
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));
  await listen(0);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('Z-Wave mock: no TCP address');
  const port = address.port;

  let closed = false;
  return {
    url: `tcp://127.0.0.1:${port}`,
    mockController,
    mockNodes,
    mockNode: inNetwork,
    queueInclusion(name) {
      if (inNetwork(name)) throw new Error(`Z-Wave mock: ${name} is in the network already`);
      let id = ZWAVE_MOCK_FIRST_INCLUSION_NODE_ID;
      while (mockController.nodes.has(id)) id += 1;
      const template = INCLUSION_TEMPLATES[name];
      // zwave-js's handleAddNode creates the node when the inclusion starts (with the default node
      // behaviours, then this setup) and adds it to the network at "protocol done".
      mockController.nodePendingInclusion = {
        id,
        capabilities: nodeCapabilities(template),
        setup(node) {
          node.defineBehavior(...(extraBehaviors[template] ?? []));
          node.defineBehavior(silentWhileUnresponsive(network));
          network.byName.set(name, node);
        },
      };
      return id;
    },
    queueExclusion(name) {
      const node = inNetwork(name);
      if (!node) throw new Error(`Z-Wave mock: ${name} is not in the network`);
      network.pendingExclusion = node;
      return node.id;
    },
    setResponsive(name, responsive) {
      const node = network.byName.get(name);
      if (!node) throw new Error(`Z-Wave mock: no mock node ${name} (yet)`);
      node.autoAckControllerFrames = responsive;
      if (responsive) network.unresponsive.delete(node);
      else network.unresponsive.add(node);
    },
    get connections() {
      return connections;
    },
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    async refuseConnections() {
      for (const socket of sockets) socket.destroy();
      if (server.listening) await stopListening();
    },
    async acceptConnections() {
      if (!server.listening) await listen(port);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const socket of sockets) socket.destroy();
      if (server.listening) await stopListening();
      faucet.close();
      mockController.destroy();
      await serial.close().catch(() => undefined);
      mockPort.destroy();
    },
  };
}
