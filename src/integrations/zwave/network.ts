import fs from 'node:fs/promises';
import path from 'node:path';
import type * as ZwaveJs from 'zwave-js';
import type { Driver, InclusionGrant, ZWaveNode } from 'zwave-js';
import { resolveFromRequirementFolders } from '../../adapters/requirements/resolution.js';
import { attachBuiltInDriver, runBuiltInAction, type BuiltInDriver, type BuiltInDriverContext, type IntegrationStatus } from '../../domain/drivers/builtin.js';
import type { DriverManager } from '../../domain/drivers/driver-manager.js';
import type { BuiltInIntegrations } from '../../domain/drivers/builtin.js';
import type { ServerToDriverMessage } from '../../domain/drivers/messages.js';
import { Backoff } from '../../platform/backoff.js';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import { LeasedRuntime, type RuntimeLeases } from '../../platform/leased-runtime.js';
import type { ModuleLog } from '../../platform/module.js';
import { messageOf, NetworkFailureError } from '../../platform/network-failures.js';
import type { Requirements, RequirementsStatus } from '../../platform/requirements.js';
import { zwaveErrors } from './errors.js';
import type { ZwaveSecurityKeys } from './keys.js';
import { MAPPED_COMMAND_CLASSES, partsOf, scenePress, type NodePart } from './mapping.js';

type ZwaveModule = typeof ZwaveJs;
/** zwave-js's security classes (SecurityClass in @zwave-js/core), by number. */
const SECURITY_CLASSES: Readonly<Record<number, string>> = { [-1]: 'None', 0: 'S2_Unauthenticated', 1: 'S2_Authenticated', 2: 'S2_AccessControl', 7: 'S0_Legacy' };

export type ZwaveState = 'off' | 'starting' | 'running' | 'failed' | 'standby';
export type InclusionMode = 'idle' | 'including' | 'excluding';

export interface ZwaveNodeStatus {
  nodeId: number;
  name: string;
  /** zwave-js's node status: `alive`, `dead`, `asleep`, `awake` or `unknown`. */
  status: string;
  /** zwave-js's interview stage: `Complete` once interviewed. */
  interviewStage: string;
  ready: boolean;
  manufacturer?: string;
  product?: string;
  /** The highest security class it was included with: `S2_AccessControl`, `S2_Authenticated`, `S2_Unauthenticated`, `S0_Legacy`, `None`. */
  security?: string;
  /** The hub devices it became. */
  devices: Array<{ id: string; deviceClass: string; name: string }>;
  /** Command classes it has that the mapping does not use. */
  unmapped: string[];
}

export interface ZwaveStatus {
  state: ZwaveState;
  port: string | null;
  error?: string;
  homeId?: string;
  holder?: string;
  requirements?: RequirementsStatus;
  inclusion: { mode: InclusionMode; pinRequested: boolean; dsk?: string; last?: { nodeId: number; security: string; at: number } };
  nodes: ZwaveNodeStatus[];
}

export interface ZwaveNetworkOptions {
  /** ZWAVE_PORT now (settings change without a restart). */
  port(): string | undefined;
  /** The network cache (DATA_DIR/zwave): zwave-js keeps what it learnt of the nodes there. */
  cacheDir: string;
  keys(): Promise<ZwaveSecurityKeys>;
  requirements?: Requirements;
  leases?: RuntimeLeases;
  manager: DriverManager;
  integrations: BuiltInIntegrations;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
  /** The bound of one command, request and answer (ms). */
  commandTimeoutMs: number;
  /** More zwave-js options (tests shorten its timeouts). */
  driverOptions?: Record<string, unknown>;
}

/** Failures of a command class call (ZWaveError codes 200–209: no ACK, no answer, dropped) are the device's absence, not a refusal. */
function commandFailure(err: unknown): NetworkFailureError {
  if (err instanceof NetworkFailureError) return err;
  const code = (err as { code?: unknown }).code;
  const message = messageOf(err);
  if (typeof code === 'number' && code >= 200 && code < 210) return new NetworkFailureError(/timeout|timed out/i.test(message) ? 'timeout' : 'unreachable', message);
  return new NetworkFailureError('rejected', message);
}

const RECONNECT = { initialMs: 2_000, maxMs: 60_000 };

/**
 * The hub's Z-Wave network: one zwave-js Driver on ZWAVE_PORT, its nodes as hub devices (by
 * mapping.ts), and the controller's inclusion, exclusion and repairs. It is a built-in driver
 * (driverKey `zwave`), so the devices, their commands and their state take every driver's path.
 * A stick that cannot be opened, or a driver that gave up on it (zwave-js destroys itself after
 * about 10 s of a port that does not answer), is a failed status naming why, retried with the
 * back-off; the hub keeps running. It runs on one instance of a cluster (a lease): a stick has
 * one host.
 */
export class ZwaveNetwork implements BuiltInDriver {
  readonly driverKey = 'zwave';
  readonly name = 'Z-Wave';
  private zwave: ZwaveModule | undefined;
  private driver: Driver | undefined;
  private context: BuiltInDriverContext | null = null;
  private detach: (() => void) | undefined;
  private state: ZwaveState = 'off';
  private error: string | undefined;
  private openPort: string | undefined;
  private homeId: string | undefined;
  private readonly parts = new Map<number, NodePart[]>();
  /** Each device's part, and the state last told of it (JSON): commands find their part here, updates skip what did not change. */
  private readonly devicesById = new Map<string, { part: NodePart; told: string }>();
  private readonly backoff = new Backoff(RECONNECT);
  private retry: TimerHandle | undefined;
  private inclusionMode: InclusionMode = 'idle';
  private pin: { dsk: string; resolve(pin: string | false): void } | undefined;
  private lastIncluded: ZwaveStatus['inclusion']['last'];
  private readonly lease: LeasedRuntime;
  /** Each driver's generation: events of a driver that was replaced are ignored. */
  private generation = 0;

  constructor(private readonly o: ZwaveNetworkOptions) {
    this.lease = new LeasedRuntime({
      lease: 'builtin:zwave',
      ...(o.leases ? { leases: o.leases } : {}),
      label: 'Z-Wave',
      log: o.log,
      running: () => this.detach !== undefined,
      activate: () => this.activate(),
      deactivate: () => this.deactivate(),
    });
  }

  // --- lifecycle -------------------------------------------------------------------------------

  async start(): Promise<void> {
    // Without a port there is nothing to run: no lease is taken, so another instance may run the stick.
    if (!this.o.port()) {
      this.state = 'off';
      return;
    }
    await this.lease.start();
  }

  async stop(): Promise<void> {
    await this.lease.stop();
  }

  /** ZWAVE_PORT changed: close the stick and open the new one (or stay off). */
  async reconfigure(): Promise<void> {
    if (this.o.port() === this.openPort && this.detach) return;
    await this.lease.stop();
    await this.start();
  }

  private async activate(): Promise<void> {
    const port = this.o.port();
    if (!port) {
      this.state = 'off';
      return;
    }
    this.detach = attachBuiltInDriver(this.o.manager, this, this.o.log, { integrations: this.o.integrations });
    this.openPort = port;
    // Opening the stick is not awaited: /readyz does not wait for a radio.
    void this.open(port);
  }

  private async deactivate(): Promise<void> {
    this.generation += 1;
    if (this.retry) this.o.timers.clearTimeout(this.retry);
    this.retry = undefined;
    this.pin?.resolve(false);
    this.pin = undefined;
    this.inclusionMode = 'idle';
    const driver = this.driver;
    this.driver = undefined;
    if (driver) await driver.destroy().catch((err: unknown) => this.o.log.warn({ err: messageOf(err) }, 'Z-Wave: the driver did not close cleanly'));
    this.detach?.();
    this.detach = undefined;
    this.openPort = undefined;
    this.state = 'off';
    this.error = undefined;
  }

  private async open(port: string): Promise<void> {
    const generation = ++this.generation;
    this.state = 'starting';
    try {
      const folders = this.o.requirements ? await this.o.requirements.ensure() : [];
      resolveFromRequirementFolders(folders);
      this.zwave ??= await import('zwave-js');
      const keys = await this.o.keys();
      if (generation !== this.generation) return;
      const { Driver } = this.zwave;
      const lockDir = path.join(this.o.cacheDir, 'locks');
      await removeStaleLocks(lockDir, this.o.clock.now(), this.o.log);
      const driver = new Driver(port, {
        securityKeys: keys,
        storage: { cacheDir: this.o.cacheDir, lockDir },
        // Its own log stays off: what matters reaches the hub's log, and the keys never do.
        logConfig: { enabled: false },
        inclusionUserCallbacks: {
          // The device's requested classes are granted as asked (as Z-Wave JS UI does by default); the PIN is the admin's.
          grantSecurityClasses: (requested: InclusionGrant) => Promise.resolve(requested),
          validateDSKAndEnterPIN: (dsk: string) =>
            new Promise<string | false>((resolve) => {
              this.pin = { dsk, resolve };
            }),
          abort: () => {
            this.pin = undefined;
          },
        },
        ...this.o.driverOptions,
      });
      this.driver = driver;
      driver.on('error', (err) => {
        if (generation === this.generation) this.failed(driver, err);
      });
      driver.once('driver ready', () => {
        if (generation === this.generation) this.ready(driver);
      });
      await driver.start();
    } catch (err) {
      if (generation === this.generation) this.failed(this.driver, err);
    }
  }

  /** The stick could not be opened, or the driver gave up on it: a status, every device offline, a new driver after the back-off. */
  private failed(driver: Driver | undefined, err: unknown): void {
    this.generation += 1;
    const message = messageOf(err);
    this.state = 'failed';
    this.error = /ENOENT|no such file/i.test(message)
      ? `${this.openPort} does not exist (is the stick plugged in?)`
      : /EBUSY|EACCES|locked|Resource temporarily unavailable/i.test(message)
        ? `${this.openPort} is held by another program or not accessible: ${message}`
        : message;
    this.o.log.error({ err: message, port: this.openPort }, 'Z-Wave controller not available');
    this.inclusionMode = 'idle';
    this.pin = undefined;
    for (const id of this.devicesById.keys()) this.context?.setOnline(id, false);
    if (this.driver === driver) this.driver = undefined;
    void driver?.destroy().catch(() => undefined);
    const delay = this.backoff.fail();
    const port = this.openPort;
    this.retry = this.o.timers.setTimeout(() => {
      this.retry = undefined;
      if (port && this.detach && this.openPort === port) void this.open(port);
    }, delay);
  }

  private ready(driver: Driver): void {
    this.state = 'running';
    this.error = undefined;
    this.backoff.succeed();
    const controller = driver.controller;
    this.homeId = controller.homeId?.toString(16).padStart(8, '0');
    controller.on('inclusion stopped', () => {
      if (this.inclusionMode === 'including') this.inclusionMode = 'idle';
    });
    controller.on('inclusion failed', () => {
      if (this.inclusionMode === 'including') this.inclusionMode = 'idle';
    });
    controller.on('exclusion stopped', () => {
      if (this.inclusionMode === 'excluding') this.inclusionMode = 'idle';
    });
    controller.on('exclusion failed', () => {
      if (this.inclusionMode === 'excluding') this.inclusionMode = 'idle';
    });
    controller.on('node added', (node) => {
      this.inclusionMode = 'idle';
      this.pin = undefined;
      this.lastIncluded = { nodeId: node.id, security: this.securityOf(node), at: this.o.clock.now() };
      this.o.log.info({ nodeId: node.id }, 'Z-Wave node included');
      this.follow(node);
    });
    controller.on('node removed', (node) => {
      if (this.inclusionMode === 'excluding') this.inclusionMode = 'idle';
      this.o.log.info({ nodeId: node.id }, 'Z-Wave node removed');
      this.forget(node.id);
    });
    for (const node of controller.nodes.values()) if (!node.isControllerNode) this.follow(node);
  }

  // --- nodes as devices ------------------------------------------------------------------------

  private deviceId(nodeId: number, key: string): string {
    return `${this.homeId ?? 'zwave'}-${nodeId}${key ? `-${key}` : ''}`;
  }

  /** Follows a node: its devices announced now, re-announced when its interview completes, its values as state, its status as presence. */
  private follow(node: ZWaveNode): void {
    const generation = this.generation;
    const live = () => generation === this.generation;
    this.announce(node);
    const update = () => live() && this.update(node);
    node.on('value updated', update);
    node.on('value added', update);
    node.on('value removed', update);
    node.on('metadata updated', update);
    node.on('ready', () => live() && this.announce(node));
    node.on('interview completed', () => live() && this.announce(node));
    node.on('value notification', (_n, args) => {
      if (!live()) return;
      const press = scenePress(args);
      if (press) this.context?.emit({ type: 'BUTTON_PRESSED', deviceId: this.deviceId(node.id, press.key), press: press.press });
    });
    const presence = () => live() && this.presence(node);
    node.on('dead', presence);
    node.on('alive', presence);
    node.on('sleep', presence);
    node.on('wake up', presence);
  }

  /** Its devices as the mapping sees the node now: new ones discovered, gone ones removed, the rest updated. */
  private announce(node: ZWaveNode): void {
    const parts = partsOf(node);
    const before = this.parts.get(node.id) ?? [];
    this.parts.set(node.id, parts);
    const keys = new Set(parts.map((p) => p.key));
    for (const gone of before.filter((p) => !keys.has(p.key))) this.remove(this.deviceId(node.id, gone.key));
    const label = node.name || node.deviceConfig?.label || node.label || `Node ${node.id}`;
    for (const part of parts) {
      const id = this.deviceId(node.id, part.key);
      const state = part.state();
      this.devicesById.set(id, { part, told: JSON.stringify(state) });
      this.context?.emit({
        type: 'DEVICE_DISCOVERED',
        device: {
          id,
          name: part.key === '' ? label : `${label} ${part.name}`,
          deviceClass: part.deviceClass,
          ...(part.attributes ? { attributes: part.attributes } : {}),
          commands: Object.keys(part.commands),
          properties: { integration: 'zwave', nodeId: node.id, ...(node.manufacturerId !== undefined ? { manufacturerId: node.manufacturerId } : {}), ...(node.deviceConfig?.manufacturer ? { manufacturer: node.deviceConfig.manufacturer } : {}) },
          state,
        },
      });
    }
    this.presence(node);
  }

  private update(node: ZWaveNode): void {
    for (const part of this.parts.get(node.id) ?? []) {
      const id = this.deviceId(node.id, part.key);
      const state = part.state();
      const text = JSON.stringify(state);
      const known = this.devicesById.get(id);
      if (!known || known.told === text) continue;
      known.told = text;
      this.context?.emit({ type: 'STATE_UPDATE', deviceId: id, state });
    }
  }

  /** Dead is offline; asleep is a battery device between wake-ups, which is normal: online. */
  private presence(node: ZWaveNode): void {
    const online = node.status !== this.zwave?.NodeStatus.Dead;
    for (const part of this.parts.get(node.id) ?? []) this.context?.setOnline(this.deviceId(node.id, part.key), online);
  }

  private forget(nodeId: number): void {
    for (const part of this.parts.get(nodeId) ?? []) this.remove(this.deviceId(nodeId, part.key));
    this.parts.delete(nodeId);
  }

  private remove(id: string): void {
    this.devicesById.delete(id);
    this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: id });
  }

  // --- the built-in driver ---------------------------------------------------------------------

  connect(context: BuiltInDriverContext): void {
    this.context = context;
  }

  disconnect(): void {
    this.context = null;
  }

  receive(message: ServerToDriverMessage): void {
    runBuiltInAction<{ part: NodePart }>(
      {
        context: () => this.context,
        timers: this.o.timers,
        timeoutMs: this.o.commandTimeoutMs,
        target: (deviceId) => {
          if (!this.driver || this.state !== 'running') throw new NetworkFailureError('unreachable', `the Z-Wave controller is not ready${this.error ? `: ${this.error}` : ''}`);
          const known = this.devicesById.get(deviceId);
          if (!known) throw new NetworkFailureError('unreachable', `no Z-Wave node has the device ${deviceId}`);
          return { part: known.part };
        },
        handler: (command, { part }) => {
          const run = part.commands[command];
          return run ? (_t, params) => run(params).catch((err: unknown) => Promise.reject(commandFailure(err))) : undefined;
        },
      },
      message,
    );
  }

  status(): IntegrationStatus {
    if (this.state === 'failed') return { status: 'failed', ...(this.error ? { lastError: this.error } : {}) };
    if (this.state !== 'running') return { status: 'off' };
    const dead = [...this.parts.keys()].filter((id) => this.driver?.controller.nodes.get(id)?.status === this.zwave?.NodeStatus.Dead);
    const devices = [...this.parts.values()].reduce((n, parts) => n + parts.length, 0);
    return dead.length === 0 ? { status: 'running', devices } : { status: 'degraded', devices, unreachable: dead.length, lastError: `node ${dead.join(', ')} does not answer` };
  }

  // --- admin -----------------------------------------------------------------------------------

  private securityOf(node: ZWaveNode): string {
    const cls = node.getHighestSecurityClass();
    return cls === undefined ? 'unknown' : (SECURITY_CLASSES[cls] ?? 'unknown');
  }

  private readyDriver(): Driver {
    if (!this.o.port()) throw zwaveErrors.ZWAVE_OFF();
    if (!this.driver || this.state !== 'running') throw zwaveErrors.ZWAVE_NOT_READY({ reason: this.state === 'standby' || this.lease.holder ? `another instance (${this.lease.holder}) runs it` : (this.error ?? 'it is still starting') });
    return this.driver;
  }

  private node(nodeId: number): ZWaveNode {
    const node = this.readyDriver().controller.nodes.get(nodeId);
    if (!node || node.isControllerNode) throw zwaveErrors.ZWAVE_NODE_NOT_FOUND({ nodeId });
    return node;
  }

  /** Starts including a device (S2 where it can, `insecure` to skip security); 409 while an inclusion or exclusion runs. */
  async startInclusion(security: 'default' | 'insecure'): Promise<void> {
    const driver = this.readyDriver();
    if (this.inclusionMode !== 'idle') throw zwaveErrors.ZWAVE_INCLUSION_ACTIVE({ mode: this.inclusionMode });
    this.inclusionMode = 'including';
    const strategy = security === 'insecure' ? this.zwave!.InclusionStrategy.Insecure : this.zwave!.InclusionStrategy.Default;
    const started = await driver.controller.beginInclusion({ strategy } as Parameters<Driver['controller']['beginInclusion']>[0]).catch((err: unknown) => {
      this.inclusionMode = 'idle';
      throw zwaveErrors.ZWAVE_CONTROLLER_REFUSED({ reason: messageOf(err) });
    });
    if (!started) {
      this.inclusionMode = 'idle';
      throw zwaveErrors.ZWAVE_INCLUSION_ACTIVE({ mode: 'busy with another inclusion or exclusion' });
    }
  }

  async startExclusion(): Promise<void> {
    const driver = this.readyDriver();
    if (this.inclusionMode !== 'idle') throw zwaveErrors.ZWAVE_INCLUSION_ACTIVE({ mode: this.inclusionMode });
    this.inclusionMode = 'excluding';
    const started = await driver.controller.beginExclusion().catch((err: unknown) => {
      this.inclusionMode = 'idle';
      throw zwaveErrors.ZWAVE_CONTROLLER_REFUSED({ reason: messageOf(err) });
    });
    if (!started) {
      this.inclusionMode = 'idle';
      throw zwaveErrors.ZWAVE_INCLUSION_ACTIVE({ mode: 'busy with another inclusion or exclusion' });
    }
  }

  /** Stops an inclusion or exclusion (nothing happens when none runs). */
  async stopInclusion(): Promise<void> {
    const driver = this.readyDriver();
    this.pin?.resolve(false);
    this.pin = undefined;
    if (this.inclusionMode === 'including') await driver.controller.stopInclusion();
    if (this.inclusionMode === 'excluding') await driver.controller.stopExclusion();
    this.inclusionMode = 'idle';
  }

  /** The PIN of the S2 device being included (the 5 digits on its label, which the DSK shown leaves out). */
  enterPin(pin: string): void {
    const asked = this.pin;
    if (!asked) throw zwaveErrors.ZWAVE_NO_PIN_ASKED();
    this.pin = undefined;
    asked.resolve(pin);
  }

  async reinterview(nodeId: number): Promise<void> {
    const node = this.node(nodeId);
    // Not awaited: an interview takes seconds to minutes (a sleeping node waits for its wake-up); the status shows its stage.
    void node.refreshInfo().catch((err: unknown) => this.o.log.warn({ nodeId, err: messageOf(err) }, 'Z-Wave re-interview failed'));
  }

  /** Rebuilds the node's routes ("heal"); resolves with whether it worked. */
  async heal(nodeId: number): Promise<boolean> {
    this.node(nodeId);
    return this.readyDriver().controller.rebuildNodeRoutes(nodeId);
  }

  /** Removes a node that no longer answers (broken, or reset without exclusion); 409 when it still answers. */
  async removeFailed(nodeId: number): Promise<void> {
    this.node(nodeId);
    const controller = this.readyDriver().controller;
    // Asked first: zwave-js pings the node before removing it and then fails the same way whatever the reason (ZW0360).
    if (!(await controller.isFailedNode(nodeId).catch(() => false))) throw zwaveErrors.ZWAVE_NODE_NOT_FAILED({ nodeId });
    await controller
      .removeFailedNode(nodeId)
      .catch((err: unknown) => {
        const code = (err as { code?: unknown }).code;
        if (code === this.zwave?.ZWaveErrorCodes.RemoveFailedNode_NodeOK) throw zwaveErrors.ZWAVE_NODE_NOT_FAILED({ nodeId });
        throw zwaveErrors.ZWAVE_CONTROLLER_REFUSED({ reason: messageOf(err) });
      });
    // zwave-js emits "node removed"; forget it here too in case it did not.
    this.forget(nodeId);
  }

  snapshot(): ZwaveStatus {
    const nodes: ZwaveNodeStatus[] = [];
    const driver = this.state === 'running' ? this.driver : undefined;
    const z = this.zwave;
    if (driver && z) {
      for (const node of driver.controller.nodes.values()) {
        if (node.isControllerNode) continue;
        const parts = this.parts.get(node.id) ?? [];
        nodes.push({
          nodeId: node.id,
          name: node.name || node.deviceConfig?.label || node.label || `Node ${node.id}`,
          status: (z.NodeStatus[node.status] ?? 'unknown').toLowerCase(),
          interviewStage: z.InterviewStage[node.interviewStage] ?? String(node.interviewStage),
          ready: node.ready,
          ...(node.deviceConfig?.manufacturer ? { manufacturer: node.deviceConfig.manufacturer } : {}),
          ...(node.deviceConfig?.label ? { product: node.deviceConfig.label } : {}),
          security: this.securityOf(node),
          devices: parts.map((p) => ({ id: this.deviceId(node.id, p.key), deviceClass: p.deviceClass, name: p.name })),
          unmapped: node.getSupportedCCInstances().map((cc) => cc.ccId).filter((id, i, all) => all.indexOf(id) === i && !MAPPED_COMMAND_CLASSES.includes(id)).filter((id) => !NOT_DEVICE_CCS.has(id)).map((id) => z.getCCConstructor(id)?.name.replace(/CC$/, '') ?? `0x${id.toString(16)}`),
        });
      }
    }
    return {
      state: this.lease.holder && !this.detach ? 'standby' : this.state,
      port: this.o.port() ?? null,
      ...(this.error ? { error: this.error } : {}),
      ...(this.homeId && this.state === 'running' ? { homeId: this.homeId } : {}),
      ...(this.lease.holder ? { holder: this.lease.holder } : {}),
      ...(this.o.requirements ? { requirements: this.o.requirements.status() } : {}),
      inclusion: { mode: this.inclusionMode, pinRequested: this.pin !== undefined, ...(this.pin ? { dsk: this.pin.dsk } : {}), ...(this.lastIncluded ? { last: this.lastIncluded } : {}) },
      nodes,
    };
  }
}

/** Command classes a node has for the protocol's sake (Z-Wave Plus Info, Version, Association, Security, Wake Up, Basic…), which are no device's feature: not listed as unmapped. */
const NOT_DEVICE_CCS = new Set([0x5e, 0x86, 0x72, 0x85, 0x8e, 0x59, 0x5a, 0x73, 0x7a, 0x70, 0x98, 0x9f, 0x6c, 0x55, 0x84, 0x20, 0x87, 0x74, 0x56, 0x60]);

/**
 * How old a lock of zwave-js's network cache must be to count as left by a dead process: its
 * holder refreshes it every 5 s (@alcalzone/jsonl-db's default `updateMs`, half its 10 s `staleMs`).
 */
const STALE_LOCK_MS = 10_000;
/** Which process opened the cache last, beside its locks: `{ "pid": 1234 }`. */
const LOCK_OWNER_FILE = 'owner.json';

/** Whether process `pid` is alive (signal 0 checks without sending anything). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the cache locks a hub killed without a word (SIGKILL, power loss) left behind, then
 * writes this process down as their owner. zwave-js takes a lock over only once stale by its own
 * rule (10 s, and 100 s under NODE_ENV=test) and fails the start until then. The locks are free
 * at once when the process that opened the cache last is gone; otherwise a lock refreshed within
 * STALE_LOCK_MS is left alone, so a second live process on the same folder still meets it.
 */
async function removeStaleLocks(lockDir: string, now: number, log: ModuleLog): Promise<void> {
  const ownerFile = path.join(lockDir, LOCK_OWNER_FILE);
  const owner = await fs
    .readFile(ownerFile, 'utf8')
    .then((text) => (JSON.parse(text) as { pid?: unknown }).pid)
    .catch(() => undefined);
  // Our own pid is a previous run too (in a container the hub starts with the same pid each time),
  // or a driver this process already closed: either way nobody alive holds those locks.
  const ownerGone = typeof owner === 'number' && (owner === process.pid || !processAlive(owner));
  const entries = await fs.readdir(lockDir).catch(() => [] as string[]);
  for (const entry of entries) {
    if (!entry.endsWith('.lock')) continue;
    const lock = path.join(lockDir, entry);
    const stat = await fs.stat(lock).catch(() => undefined);
    if (!stat || (!ownerGone && now - stat.mtimeMs < STALE_LOCK_MS)) continue;
    await fs.rm(lock, { recursive: true, force: true });
    log.warn({ lock: entry }, 'Z-Wave: removed a cache lock a stopped hub left behind');
  }
  await fs.mkdir(lockDir, { recursive: true });
  await fs.writeFile(ownerFile, JSON.stringify({ pid: process.pid }));
}
