/**
 * A Matter controller for tests (a test peer of the hub's Matter bridge): commissions a Matter node
 * over UDP at a known address with its manual pairing code, reads its endpoints, reads attributes,
 * invokes commands and records the attribute reports of a wildcard subscription.
 *
 * Built on matter.js 0.17's node API (`@matter/main`): a `ServerNode` with `ControllerBehavior`
 * whose `peers` commission a `ClientNode`. matter.js's `CommissioningController` moved to the legacy
 * package `@project-chip/matter.js` in 0.17 and is itself a wrapper of this: its
 * `commissionNode({ discovery: { knownAddress }, passcode })` does
 * `node.peers.forDescriptor({ addresses: [knownAddress] })` then `clientNode.commission(...)`, as here.
 *
 * Loopback only, no mDNS needed:
 * - the controller listens on 127.0.0.1 and ::1, on a port the system picks;
 * - it does not scan with mDNS (`controller.ip: false`): the node is reached at its known address,
 *   for PASE and, seeded into the new peer as its operational address, for the CASE reconnection of
 *   commissioning step 18 (which matter.js otherwise resolves by mDNS);
 * - matter.js has one mDNS socket per process, shared by all its nodes (a node still advertises
 *   itself): `configureMatterForTests()` binds it to the loopback interface before it opens, so no
 *   multicast leaves the machine.
 *
 * Storage: each controller has an environment of its own whose filesystem is its own directory (a
 * temp dir, removed on close, unless `storageDir` is given).
 */
import { randomUUID } from 'node:crypto';
import dgram from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  ChangeNotificationService,
  ClientNode,
  ClusterBehavior,
  ControllerBehavior,
  Environment,
  Filesystem,
  Logger,
  LogLevel,
  NetworkClient,
  Node,
  Seconds,
  ServerNode,
  VendorId,
  type Endpoint,
} from '@matter/main';
import { Matter } from '@matter/main/model';
import { MdnsService, PeerSet, Read, SessionManager, type ClientRead, type Peer, type Subscribe } from '@matter/main/protocol';
import { AttributeId, ClusterId, EndpointNumber, Status, StatusResponseError } from '@matter/main/types';
import { NodeJsFilesystem } from '@matter/nodejs';

export interface MatterReport {
  endpoint: number;
  cluster: string;
  attribute: string;
  value: unknown;
  at: number;
}

export interface MatterEndpointInfo {
  number: number;
  deviceTypes: Array<{ name: string; code: number }>;
  clusters: string[];
  label?: string;
}

export interface ReportFilter {
  endpoint?: number;
  cluster?: string;
  attribute?: string;
  value?: (v: unknown) => boolean;
}

export interface MatterTestController {
  /** Commissions the node at ip:port with the manual pairing code (11 or 21 digits); resolves with its node id once subscribed. */
  commission(options: { ip: string; port: number; manualPairingCode: string; timeoutMs?: number }): Promise<bigint | string>;
  /**
   * The node's endpoints but the root (0), from the controller's copy of the node kept up to date by
   * the subscription (an endpoint added to a bridge later shows up): for each endpoint number, its
   * device types (names and codes), its cluster names (camelCase, as matter.js names them: 'onOff',
   * 'levelControl', ...) and the BridgedDeviceBasicInformation nodeLabel when present.
   */
  endpoints(): Promise<MatterEndpointInfo[]>;
  /** Reads an attribute from the node (not from the cache), e.g. read(3, 'onOff', 'onOff'). */
  read(endpoint: number, cluster: string, attribute: string): Promise<unknown>;
  /**
   * Invokes a command, e.g. invoke(3, 'onOff', 'toggle'), invoke(3, 'levelControl', 'moveToLevel',
   * { level: 127, transitionTime: 0, optionsMask: {}, optionsOverride: {} }); resolves with the
   * command's response (undefined for a plain status). Rejects with a `MatterStatusError` whose
   * `status` is the Matter status code when the node answers with a failure status. (Mind the
   * cluster's own rules: a light that is off ignores moveToLevel unless its options say executeIfOff.)
   */
  invoke(endpoint: number, cluster: string, command: string, request?: unknown): Promise<unknown>;
  /**
   * Attribute changes reported through the subscription, oldest first. An attribute reported with
   * the value the controller already had is no change, and so not listed (several changes within
   * the node's 50 ms report batching reach the controller as their net result).
   */
  readonly reports: MatterReport[];
  /** Resolves when a report matching the filter arrives (after the call), or rejects after timeoutMs (default 3000). */
  nextReport(filter: ReportFilter, timeoutMs?: number): Promise<MatterReport>;
  /**
   * Disconnects and connects again to the already-commissioned node (no new commissioning),
   * re-subscribing; resolves once subscribed. Give `ip` and `port` if the node moved.
   */
  reconnect(options?: { ip: string; port: number; timeoutMs?: number }): Promise<void>;
  /** The matter.js controller node, for what this API does not cover. */
  readonly node: ServerNode;
  /** The commissioned matter.js client node (undefined before commissioning). */
  readonly peer: ClientNode | undefined;
  close(): Promise<void>;
}

/** A Matter status answered by the node: `status` is its code (e.g. 1 for Failure), `statusName` its name. */
export class MatterStatusError extends Error {
  readonly status: number;
  readonly clusterStatus: number | undefined;

  constructor(status: number, message: string, clusterStatus?: number) {
    super(message);
    this.name = 'MatterStatusError';
    this.status = status;
    this.clusterStatus = clusterStatus;
  }

  get statusName(): string {
    return Status[this.status] ?? `Status ${this.status}`;
  }
}

/** The loopback interface's name on this machine ("lo" on Linux, "lo0" on macOS). */
export function loopbackInterface(): string {
  for (const [name, infos] of Object.entries(networkInterfaces())) {
    if (infos?.some((info) => info.internal)) return name;
  }
  return 'lo';
}

/**
 * A UDP port free on both 127.0.0.1 and ::1 now (a matter.js node listens on the same port over
 * IPv4 and IPv6), released at once.
 */
export async function freeUdpPort(): Promise<number> {
  const bind = (socket: dgram.Socket, port: number, host: string): Promise<boolean> =>
    new Promise((resolve) => {
      socket.once('error', () => resolve(false));
      socket.bind(port, host, () => resolve(true));
    });
  for (let attempt = 0; attempt < 20; attempt++) {
    const v6 = dgram.createSocket({ type: 'udp6', ipv6Only: true });
    const v4 = dgram.createSocket('udp4');
    try {
      if (!(await bind(v6, 0, '::1'))) continue;
      const { port } = v6.address();
      if (await bind(v4, port, '127.0.0.1')) return port;
    } finally {
      for (const socket of [v6, v4]) {
        try {
          socket.close();
        } catch {
          // never bound, or closed by its bind error
        }
      }
    }
  }
  throw new Error('Found no UDP port free on both 127.0.0.1 and ::1');
}

let configured = false;

/**
 * Process-wide matter.js settings for tests: call before any matter.js node of the process starts
 * (idempotent; `startMatterTestController` calls it, and so should a test that starts its own node
 * first).
 * - `mdns.networkInterface` = the loopback: matter.js has one mDNS socket per process (in the root
 *   environment, for every node, a hub's too) and binds it to every interface unless this names one.
 * - `runtime.signals` / `runtime.exitcode` off: matter.js would otherwise take SIGINT/SIGTERM and set
 *   the exit code of the test worker.
 * - logging at warnings, unless `MATTER_LOG_LEVEL` (matter.js's `log.level`) says otherwise.
 */
export function configureMatterForTests(): void {
  const env = Environment.default;
  if (!configured) {
    configured = true;
    env.vars.set('mdns.networkInterface', loopbackInterface());
    env.vars.set('runtime.signals', false);
    env.vars.set('runtime.exitcode', false);
    if (env.vars.get('log.level') === undefined) Logger.level = LogLevel.WARN;
  }
  // Too late if a node opened the mDNS socket before: say so rather than multicast on every network.
  if (env.has(MdnsService) && env.get(MdnsService).limitedToNetInterface !== loopbackInterface()) {
    throw new Error(
      "matter.js's mDNS socket was opened on every interface before configureMatterForTests(): call it before starting any matter.js node",
    );
  }
}

/**
 * An environment for one matter.js node whose storage is in `directory`: it inherits the process's
 * matter.js services (crypto, network, storage drivers, variables) but has a filesystem of its own.
 * Give the node a unique id too: matter.js's storage service caches open stores by node id.
 */
export function isolatedEnvironment(name: string, directory: string): Environment {
  const env = new Environment(name, Environment.default);
  env.set(Filesystem, new NodeJsFilesystem(directory));
  return env;
}

function statusError(error: unknown, what: string): unknown {
  if (error instanceof StatusResponseError) {
    const name = Status[error.code] ?? 'unknown status';
    const detail = error.bareMessage;
    const message = `${what} failed with status ${name} (${error.code})${detail === name ? '' : `: ${detail}`}`;
    return new MatterStatusError(error.code, message, error.clusterCode);
  }
  return error;
}

function matches(report: MatterReport, filter: ReportFilter): boolean {
  if (filter.endpoint !== undefined && report.endpoint !== filter.endpoint) return false;
  if (filter.cluster !== undefined && report.cluster !== filter.cluster) return false;
  if (filter.attribute !== undefined && report.attribute !== filter.attribute) return false;
  if (filter.value !== undefined && !filter.value(report.value)) return false;
  return true;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** How the controller subscribes: every attribute and event, reports as soon as they change. */
const SUBSCRIPTION = {
  minIntervalFloor: Seconds(0),
  maxIntervalCeiling: Seconds(3),
} as Subscribe;

export async function startMatterTestController(
  options: { storageDir?: string; fabricLabel?: string } = {},
): Promise<MatterTestController> {
  configureMatterForTests();

  const ownsDir = options.storageDir === undefined;
  const storageDir = options.storageDir ?? (await mkdtemp(join(tmpdir(), 'matter-controller-')));
  const id = `test-controller-${randomUUID().slice(0, 8)}`;

  let controller: ServerNode;
  try {
    controller = await ServerNode.create(ServerNode.RootEndpoint.with(ControllerBehavior), {
      id,
      environment: isolatedEnvironment(id, storageDir),
      network: { port: 0, listeningAddressIpv4: '127.0.0.1', listeningAddressIpv6: '::1', ble: false },
      controller: { adminFabricLabel: options.fabricLabel ?? 'hub tests', ip: false, ble: false },
      commissioning: { enabled: false },
      subscriptions: { persistenceEnabled: false },
      // Test vendor and product ids, stated so that matter.js does not warn about its defaults.
      basicInformation: {
        vendorId: VendorId(0xfff1),
        vendorName: 'hub tests',
        productId: 0x8000,
        productName: 'Matter test controller',
        hardwareVersion: 1,
        softwareVersion: 1,
      },
    });
    await controller.start();
  } catch (error) {
    if (ownsDir) await rm(storageDir, { recursive: true, force: true });
    throw error;
  }

  const reports: MatterReport[] = [];
  const waiters = new Set<{ filter: ReportFilter; resolve: (report: MatterReport) => void }>();
  let peer: ClientNode | undefined;
  let closed = false;

  // Every state change of the controller's nodes, its peers' included: keep the peers' attribute changes.
  const changes = controller.env.get(ChangeNotificationService);
  const onChange = (change: ChangeNotificationService.Change): void => {
    if (change.kind !== 'update' || !ClusterBehavior.is(change.behavior)) return;
    let owner: Node;
    try {
      owner = Node.forEndpoint(change.endpoint);
    } catch {
      return;
    }
    if (!(owner instanceof ClientNode)) return;
    const state = change.endpoint.maybeStateOf(change.behavior.id) as Record<string, unknown> | undefined;
    if (state === undefined) return;
    const at = Date.now();
    for (const attribute of change.properties ?? Object.keys(state)) {
      if (attribute.startsWith('__')) continue; // matter.js's own bookkeeping (__version__)
      const report: MatterReport = {
        endpoint: change.endpoint.number,
        cluster: change.behavior.id,
        attribute,
        value: state[attribute],
        at,
      };
      reports.push(report);
      for (const waiter of waiters) {
        if (matches(report, waiter.filter)) {
          waiters.delete(waiter);
          waiter.resolve(report);
        }
      }
    }
  };
  changes.change.on(onChange);

  function requirePeer(): ClientNode {
    if (closed) throw new Error('The Matter test controller is closed');
    if (peer === undefined) throw new Error('No node commissioned yet: call commission() first');
    return peer;
  }

  function endpointOf(number: number): Endpoint {
    const node = requirePeer();
    if (!node.endpoints.has(number)) throw new Error(`The node has no endpoint ${number}`);
    return node.endpoints.for(number);
  }

  function clusterOf(endpoint: Endpoint, cluster: string): ClusterBehavior.Type {
    const type = endpoint.behaviors.supported[cluster];
    if (type === undefined || !ClusterBehavior.is(type)) {
      throw new Error(`Endpoint ${endpoint.number} has no cluster ${cluster}`);
    }
    return type;
  }

  /** Resolves once the node's subscription is established. */
  async function subscribed(node: ClientNode, timeoutMs: number, what: string): Promise<void> {
    const events = node.eventsOf(NetworkClient);
    let onStatus: ((active: boolean) => void) | undefined;
    const active = new Promise<void>((resolve) => {
      onStatus = (isActive) => {
        if (isActive) resolve();
      };
      events.subscriptionStatusChanged.on(onStatus);
    });
    try {
      if (await node.act((agent) => agent.get(NetworkClient).subscriptionActive)) return;
      await withTimeout(active, timeoutMs, what);
    } finally {
      if (onStatus) events.subscriptionStatusChanged.off(onStatus);
    }
  }

  /**
   * Ends the subscription and closes the sessions with the node, telling it so (CloseSession), so
   * that it does not hold on to them: a matter.js node that closes with a session whose controller
   * has gone waits for its retransmissions to run out (about 13 s) first.
   */
  async function endSessions(): Promise<void> {
    const address = peer?.peerAddress;
    if (peer === undefined || address === undefined) return;
    try {
      await withTimeout(
        (async () => {
          await peer?.disable();
          for (const session of [...controller.env.get(SessionManager).sessionsFor(address)]) {
            await session.initiateClose();
          }
        })(),
        2000,
        'Closing the sessions with the node',
      );
    } catch {
      // The node may be gone already: nothing to tell it then.
    }
  }

  const api: MatterTestController = {
    reports,

    get node() {
      return controller;
    },

    get peer() {
      return peer;
    },

    async commission({ ip, port, manualPairingCode, timeoutMs = 30_000 }) {
      if (closed) throw new Error('The Matter test controller is closed');
      if (peer !== undefined) throw new Error('This test controller has already commissioned a node');
      const started = Date.now();
      const node = await controller.peers.forDescriptor({ addresses: [{ type: 'udp', ip, port }] });

      // Commissioning's CASE reconnection (step 18) looks the node's operational address up by mDNS
      // unless the peer has one: give the peer made for the node the known address.
      const peerSet = controller.env.get(PeerSet);
      const seed = (added: Peer): void => {
        if (added.descriptor.operationalAddress === undefined) {
          added.descriptor.operationalAddress = { type: 'udp', ip, port };
        }
      };
      peerSet.added.on(seed);
      try {
        await withTimeout(
          node.commission({
            pairingCode: manualPairingCode,
            timeout: Seconds(Math.max(1, Math.ceil(timeoutMs / 1000))),
            defaultSubscription: SUBSCRIPTION,
            // A test node has test attestation certificates and no DCL to check them against.
            onAttestationFailure: true,
          }),
          timeoutMs,
          `Commissioning the node at ${ip}:${port}`,
        );
      } catch (error) {
        await withTimeout(node.delete(), 2000, 'Forgetting the node').catch(() => undefined);
        throw error;
      } finally {
        peerSet.added.off(seed);
      }
      peer = node;
      await subscribed(node, Math.max(1000, timeoutMs - (Date.now() - started)), 'Subscribing to the commissioned node');
      const address = node.peerAddress;
      if (address === undefined) throw new Error('Commissioning finished without a peer address');
      return address.nodeId;
    },

    async endpoints() {
      const node = requirePeer();
      const result: MatterEndpointInfo[] = [];
      for (const endpoint of node.endpoints) {
        if (endpoint.number === 0) continue;
        const descriptor = endpoint.maybeStateOf('descriptor') as
          | { deviceTypeList?: ReadonlyArray<{ deviceType: number }> }
          | undefined;
        const deviceTypes = (descriptor?.deviceTypeList ?? []).map(({ deviceType }) => ({
          name: Matter.deviceTypes.find((type) => type.id === deviceType)?.name ?? `0x${deviceType.toString(16)}`,
          code: deviceType,
        }));
        const clusters = Object.entries(endpoint.behaviors.supported)
          .filter(([, type]) => ClusterBehavior.is(type))
          .map(([name]) => name)
          .sort();
        const bridged = endpoint.maybeStateOf('bridgedDeviceBasicInformation') as { nodeLabel?: string } | undefined;
        const info: MatterEndpointInfo = { number: endpoint.number, deviceTypes, clusters };
        if (bridged?.nodeLabel !== undefined) info.label = bridged.nodeLabel;
        result.push(info);
      }
      return result.sort((a, b) => a.number - b.number);
    },

    async read(endpointNumber, cluster, attribute) {
      const endpoint = endpointOf(endpointNumber);
      const type = clusterOf(endpoint, cluster);
      const model = (type.cluster.attributes as Record<string, { id: number } | undefined>)[attribute];
      if (model === undefined) throw new Error(`Cluster ${cluster} has no attribute ${attribute}`);
      const request: ClientRead = {
        ...Read({
          attributes: [
            { endpointId: EndpointNumber(endpoint.number), clusterId: ClusterId(type.cluster.id), attributeId: AttributeId(model.id) },
          ],
        }),
        includeKnownVersions: true,
      };
      let found = false;
      let value: unknown;
      try {
        for await (const chunk of requirePeer().interaction.read(request)) {
          for await (const entry of chunk) {
            if (entry.kind === 'attr-value') {
              found = true;
              value = entry.value;
            } else if (entry.kind === 'attr-status') {
              throw new MatterStatusError(
                entry.status,
                `Reading ${cluster}.${attribute} of endpoint ${endpointNumber} failed: ${Status[entry.status] ?? entry.status}`,
                entry.clusterStatus,
              );
            }
          }
        }
      } catch (error) {
        throw statusError(error, `Reading ${cluster}.${attribute} of endpoint ${endpointNumber}`);
      }
      if (!found) throw new Error(`Reading ${cluster}.${attribute} of endpoint ${endpointNumber} returned nothing`);
      return value;
    },

    async invoke(endpointNumber, cluster, command, request) {
      const endpoint = endpointOf(endpointNumber);
      const type = clusterOf(endpoint, cluster);
      const known = (type.cluster.commands as Record<string, unknown> | undefined)?.[command];
      const method = endpoint.commandsOf(cluster)[command];
      if (known === undefined || method === undefined) {
        throw new Error(`Cluster ${cluster} of endpoint ${endpointNumber} has no command ${command}`);
      }
      try {
        return await (method as (fields?: unknown) => Promise<unknown>)(request);
      } catch (error) {
        throw statusError(error, `${cluster}.${command} on endpoint ${endpointNumber}`);
      }
    },

    nextReport(filter, timeoutMs = 3000) {
      const waiter = { filter, resolve: (_report: MatterReport): void => undefined };
      const arrived = new Promise<MatterReport>((resolve) => {
        waiter.resolve = resolve;
      });
      waiters.add(waiter);
      return withTimeout(arrived, timeoutMs, `Waiting for a report ${JSON.stringify(filter)}`).finally(() => {
        waiters.delete(waiter);
      });
    },

    async reconnect(options) {
      const node = requirePeer();
      const timeoutMs = options?.timeoutMs ?? 15_000;
      const address = node.peerAddress;
      if (address === undefined) throw new Error('The node is not commissioned');
      const work = async (): Promise<void> => {
        await node.disable();
        // Drop the sessions (the node may have restarted and forgotten them) so that CASE runs again.
        const protocolPeer = controller.env.get(PeerSet).get(address);
        await protocolPeer?.disconnect(new Error('Test controller reconnecting'));
        if (options !== undefined) {
          const operational = { type: 'udp' as const, ip: options.ip, port: options.port };
          if (protocolPeer !== undefined) protocolPeer.descriptor.operationalAddress = operational;
          await node.set({ commissioning: { addresses: [operational] } });
        }
        await node.enable();
        await subscribed(node, timeoutMs, 'Re-subscribing to the node');
      };
      await withTimeout(work(), timeoutMs, 'Reconnecting to the node');
    },

    async close() {
      if (closed) return;
      closed = true;
      changes.change.off(onChange);
      waiters.clear();
      try {
        await endSessions();
        await controller.close();
      } finally {
        if (ownsDir) await rm(storageDir, { recursive: true, force: true });
      }
    },
  };
  return api;
}
