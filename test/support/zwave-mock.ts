import { createServer, type Server, type Socket } from 'node:net';
import { CommandClasses } from '@zwave-js/core';
import { Faucet, SerialAPIParser, ZWaveSerialFrameType, type ZWaveSerialFrame } from '@zwave-js/serial';
import { createAndOpenMockedZWaveSerialPort } from '@zwave-js/serial/mock';
import { Bytes } from '@zwave-js/shared';
import { ccCaps, MockController, MockNode, type MockNodeBehavior, type MockNodeOptions, type PartialCCCapabilities } from '@zwave-js/testing';
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

export interface ZwaveMock {
  /** The port to give zwave-js's `Driver`: `tcp://127.0.0.1:<port>`. */
  readonly url: string;
  readonly mockController: MockController;
  readonly mockNodes: Readonly<Record<ZwaveMockNodeName, MockNode>>;
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

const nodeCapabilities: Record<ZwaveMockNodeName, NodeCapabilities> = {
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
};

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

/** The bytes of a Serial API frame (a control byte or a whole message), as a copy; undefined for other frames. */
function frameBytes(frame: ZWaveSerialFrame): Uint8Array<ArrayBuffer> | undefined {
  if (frame.type !== ZWaveSerialFrameType.SerialAPI) return undefined;
  return typeof frame.data === 'number' ? Uint8Array.from([frame.data]) : new Uint8Array(frame.data);
}

export async function startZwaveMock(options: ZwaveMockOptions = {}): Promise<ZwaveMock> {
  const { port: mockPort, serial } = await createAndOpenMockedZWaveSerialPort();
  const mockController = await MockController.create({ homeId: options.homeId ?? 0x7e570001, ownNodeId: 1, mockPort, serial });
  mockController.defineBehavior(...createDefaultMockControllerBehaviors());

  const mockNodes = {} as Record<ZwaveMockNodeName, MockNode>;
  for (const name of Object.keys(ZWAVE_MOCK_NODE_IDS) as ZwaveMockNodeName[]) {
    const node = await MockNode.create({ id: ZWAVE_MOCK_NODE_IDS[name], controller: mockController, capabilities: nodeCapabilities[name] });
    mockController.addNode(node);
    node.defineBehavior(...createDefaultMockNodeBehaviors(), ...(extraBehaviors[name] ?? []));
    mockNodes[name] = node;
  }

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
