/**
 * The Z-Wave process: zwave-js and the controller, in a process of its own (network.ts starts it
 * through the hub's process runner), so that a fault in the protocol stack or a node flooding
 * reports costs this process, never the hub. It speaks child-protocol.ts on its stdin and stdout;
 * whatever else is written goes to stderr, which the hub logs.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import type * as ZwaveJs from 'zwave-js';
import type { Driver, InclusionGrant, ZWaveNode } from 'zwave-js';
import type { DriverEvent } from '../../domain/drivers/messages.js';
import { messageOf, NetworkFailureError } from '../../platform/network-failures.js';
import type { AdminCall, CallFailure, ChildToHub, HubToChild, InclusionMode, NetworkSnapshot, OpenOptions, ZwaveNodeStatus } from './child-protocol.js';
import { MAPPED_COMMAND_CLASSES, partsOf, scenePress, type NodePart } from './mapping.js';

type ZwaveModule = typeof ZwaveJs;
/** zwave-js's security classes (SecurityClass in @zwave-js/core), by number. */
const SECURITY_CLASSES: Readonly<Record<number, string>> = { [-1]: 'None', 0: 'S2_Unauthenticated', 1: 'S2_Authenticated', 2: 'S2_AccessControl', 7: 'S0_Legacy' };
/** Command classes a node has for the protocol's sake (Z-Wave Plus Info, Version, Association, Security, Wake Up, Basic…), which are no device's feature: not listed as unmapped. */
const NOT_DEVICE_CCS = new Set([0x5e, 0x86, 0x72, 0x85, 0x8e, 0x59, 0x5a, 0x73, 0x7a, 0x70, 0x98, 0x9f, 0x6c, 0x55, 0x84, 0x20, 0x87, 0x74, 0x56, 0x60]);

// Only the protocol goes to stdout: a library's stray console output goes to stderr.
const stdout = process.stdout.write.bind(process.stdout);
console.log = console.info = console.debug = (...args: unknown[]) => process.stderr.write(`${args.map(String).join(' ')}\n`);
function send(message: ChildToHub): void {
  stdout(`${JSON.stringify(message)}\n`);
}
const log = (level: 'info' | 'warn' | 'error', obj: object, msg: string) => send({ t: 'log', level, obj, msg });

/** A catalogued refusal (its code in src/integrations/zwave/errors.ts), raised by the hub from what is sent. */
class Refusal extends Error {
  constructor(
    readonly code: string,
    readonly params?: Record<string, string | number>,
  ) {
    super(code);
  }
}

function failureOf(err: unknown): CallFailure {
  if (err instanceof Refusal) return { code: err.code, ...(err.params ? { params: err.params } : {}) };
  if (err instanceof NetworkFailureError) return { network: err.networkFailure, message: err.message };
  // Failures of a command class call (ZWaveError codes 200–209: no ACK, no answer, dropped) are the device's absence, not a refusal.
  const code = (err as { code?: unknown }).code;
  const message = messageOf(err);
  if (typeof code === 'number' && code >= 200 && code < 210) return { network: /timeout|timed out/i.test(message) ? 'timeout' : 'unreachable', message };
  return { network: 'rejected', message };
}

class Network {
  private zwave: ZwaveModule | undefined;
  private driver: Driver | undefined;
  private homeId: string | undefined;
  private readonly parts = new Map<number, NodePart[]>();
  /** Each device's part, and the state last told of it (JSON): commands find their part here, updates skip what did not change. */
  private readonly devicesById = new Map<string, { part: NodePart; told: string }>();
  private inclusionMode: InclusionMode = 'idle';
  private pin: { dsk: string; resolve(pin: string | false): void } | undefined;
  private lastIncluded: NetworkSnapshot['inclusion']['last'];
  private snapshotQueued = false;

  async open(o: OpenOptions): Promise<void> {
    try {
      this.zwave = await import('zwave-js');
      const lockDir = path.join(o.cacheDir, 'locks');
      await removeStaleLocks(lockDir, Date.now());
      const keys = Object.fromEntries(Object.entries(o.keys).map(([name, hex]) => [name, new Uint8Array(Buffer.from(hex, 'hex'))]));
      const driver = new this.zwave.Driver(o.port, {
        securityKeys: keys,
        storage: { cacheDir: o.cacheDir, lockDir },
        // Its own log stays off: what matters reaches the hub's log, and the keys never do.
        logConfig: { enabled: false },
        inclusionUserCallbacks: {
          // The device's requested classes are granted as asked (as Z-Wave JS UI does by default); the PIN is the admin's.
          grantSecurityClasses: (requested: InclusionGrant) => Promise.resolve(requested),
          validateDSKAndEnterPIN: (dsk: string) =>
            new Promise<string | false>((resolve) => {
              this.pin = { dsk, resolve };
              this.changed();
            }),
          abort: () => {
            this.pin = undefined;
            this.changed();
          },
        },
        ...o.driverOptions,
      });
      this.driver = driver;
      driver.on('error', (err) => this.fail(err));
      driver.once('driver ready', () => this.ready(driver));
      await driver.start();
    } catch (err) {
      this.fail(err);
    }
  }

  /** The stick could not be opened, or the driver gave up on it: the hub is told, and starts a new process after its back-off. */
  private fail(err: unknown): void {
    send({ t: 'failed', error: messageOf(err) });
    void this.close().finally(() => process.exit(1));
  }

  async close(): Promise<void> {
    this.pin?.resolve(false);
    const driver = this.driver;
    this.driver = undefined;
    if (driver) await driver.destroy().catch((err: unknown) => log('warn', { err: messageOf(err) }, 'Z-Wave: the driver did not close cleanly'));
  }

  private ready(driver: Driver): void {
    const controller = driver.controller;
    this.homeId = controller.homeId?.toString(16).padStart(8, '0');
    const idle = (mode: InclusionMode) => () => {
      if (this.inclusionMode === mode) this.inclusionMode = 'idle';
      this.changed();
    };
    controller.on('inclusion stopped', idle('including'));
    controller.on('inclusion failed', idle('including'));
    controller.on('exclusion stopped', idle('excluding'));
    controller.on('exclusion failed', idle('excluding'));
    controller.on('node added', (node) => {
      this.inclusionMode = 'idle';
      this.pin = undefined;
      this.lastIncluded = { nodeId: node.id, security: this.securityOf(node), at: Date.now() };
      log('info', { nodeId: node.id }, 'Z-Wave node included');
      this.follow(node);
    });
    controller.on('node removed', (node) => {
      if (this.inclusionMode === 'excluding') this.inclusionMode = 'idle';
      log('info', { nodeId: node.id }, 'Z-Wave node removed');
      this.forget(node.id);
      this.changed();
    });
    for (const node of controller.nodes.values()) if (!node.isControllerNode) this.follow(node);
    send({ t: 'ready', snapshot: this.snapshot() });
  }

  /** The status changed: one snapshot after this turn, however many events came in it. */
  private changed(): void {
    if (this.snapshotQueued) return;
    this.snapshotQueued = true;
    setImmediate(() => {
      this.snapshotQueued = false;
      send({ t: 'snapshot', snapshot: this.snapshot() });
    });
  }

  // --- nodes as devices ------------------------------------------------------------------------

  private deviceId(nodeId: number, key: string): string {
    return `${this.homeId ?? 'zwave'}-${nodeId}${key ? `-${key}` : ''}`;
  }

  private emit(event: DriverEvent): void {
    send({ t: 'driver', event });
  }

  /** Follows a node: its devices announced now, re-announced when its interview completes, its values as state, its status as presence. */
  private follow(node: ZWaveNode): void {
    this.announce(node);
    const update = () => this.update(node);
    node.on('value updated', update);
    node.on('value added', update);
    node.on('value removed', update);
    node.on('metadata updated', update);
    node.on('ready', () => this.announce(node));
    node.on('interview completed', () => this.announce(node));
    node.on('interview stage completed', () => this.changed());
    node.on('value notification', (_n, args) => {
      const press = scenePress(args);
      if (press) this.emit({ type: 'BUTTON_PRESSED', deviceId: this.deviceId(node.id, press.key), press: press.press });
    });
    const presence = () => this.presence(node);
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
      this.emit({
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
      this.emit({ type: 'STATE_UPDATE', deviceId: id, state });
    }
  }

  /** Dead is offline; asleep is a battery device between wake-ups, which is normal: online. */
  private presence(node: ZWaveNode): void {
    const online = node.status !== this.zwave?.NodeStatus.Dead;
    send({ t: 'online', deviceIds: (this.parts.get(node.id) ?? []).map((part) => this.deviceId(node.id, part.key)), online });
    this.changed();
  }

  private forget(nodeId: number): void {
    for (const part of this.parts.get(nodeId) ?? []) this.remove(this.deviceId(nodeId, part.key));
    this.parts.delete(nodeId);
  }

  private remove(id: string): void {
    this.devicesById.delete(id);
    this.emit({ type: 'DEVICE_REMOVED', deviceId: id });
  }

  /** A standard command for one of its devices: the command class call of its part. */
  async command(deviceId: string, command: string, params: Record<string, unknown>): Promise<unknown> {
    if (!this.driver) throw new NetworkFailureError('unreachable', 'the Z-Wave controller is not ready');
    const known = this.devicesById.get(deviceId);
    if (!known) throw new NetworkFailureError('unreachable', `no Z-Wave node has the device ${deviceId}`);
    const run = known.part.commands[command];
    if (!run) throw new NetworkFailureError('unsupported', `unknown command ${command}`);
    return run(params);
  }

  // --- admin -----------------------------------------------------------------------------------

  private securityOf(node: ZWaveNode): string {
    const cls = node.getHighestSecurityClass();
    return cls === undefined ? 'unknown' : (SECURITY_CLASSES[cls] ?? 'unknown');
  }

  private readyDriver(): Driver {
    if (!this.driver) throw new Refusal('ZWAVE_NOT_READY', { reason: 'it is still starting' });
    return this.driver;
  }

  private node(nodeId: number): ZWaveNode {
    const node = this.readyDriver().controller.nodes.get(nodeId);
    if (!node || node.isControllerNode) throw new Refusal('ZWAVE_NODE_NOT_FOUND', { nodeId });
    return node;
  }

  async call(c: AdminCall): Promise<unknown> {
    switch (c.call) {
      case 'startInclusion':
        return this.startInclusion(c.security);
      case 'startExclusion':
        return this.startExclusion();
      case 'stopInclusion':
        return this.stopInclusion();
      case 'enterPin': {
        const asked = this.pin;
        if (!asked) throw new Refusal('ZWAVE_NO_PIN_ASKED');
        this.pin = undefined;
        asked.resolve(c.pin);
        return undefined;
      }
      case 'reinterview': {
        const node = this.node(c.nodeId);
        // Not awaited: an interview takes seconds to minutes (a sleeping node waits for its wake-up); the status shows its stage.
        void node.refreshInfo().catch((err: unknown) => log('warn', { nodeId: c.nodeId, err: messageOf(err) }, 'Z-Wave re-interview failed'));
        return undefined;
      }
      case 'heal':
        this.node(c.nodeId);
        return this.readyDriver().controller.rebuildNodeRoutes(c.nodeId);
      case 'removeFailed':
        return this.removeFailed(c.nodeId);
    }
  }

  /** Starts including a device (S2 where it can, `insecure` to skip security); refused while an inclusion or exclusion runs. */
  private async startInclusion(security: 'default' | 'insecure'): Promise<void> {
    const driver = this.readyDriver();
    if (this.inclusionMode !== 'idle') throw new Refusal('ZWAVE_INCLUSION_ACTIVE', { mode: this.inclusionMode });
    this.inclusionMode = 'including';
    const strategy = security === 'insecure' ? this.zwave!.InclusionStrategy.Insecure : this.zwave!.InclusionStrategy.Default;
    const started = await driver.controller.beginInclusion({ strategy } as Parameters<Driver['controller']['beginInclusion']>[0]).catch((err: unknown) => {
      this.inclusionMode = 'idle';
      throw new Refusal('ZWAVE_CONTROLLER_REFUSED', { reason: messageOf(err) });
    });
    if (!started) {
      this.inclusionMode = 'idle';
      throw new Refusal('ZWAVE_INCLUSION_ACTIVE', { mode: 'busy with another inclusion or exclusion' });
    }
  }

  private async startExclusion(): Promise<void> {
    const driver = this.readyDriver();
    if (this.inclusionMode !== 'idle') throw new Refusal('ZWAVE_INCLUSION_ACTIVE', { mode: this.inclusionMode });
    this.inclusionMode = 'excluding';
    const started = await driver.controller.beginExclusion().catch((err: unknown) => {
      this.inclusionMode = 'idle';
      throw new Refusal('ZWAVE_CONTROLLER_REFUSED', { reason: messageOf(err) });
    });
    if (!started) {
      this.inclusionMode = 'idle';
      throw new Refusal('ZWAVE_INCLUSION_ACTIVE', { mode: 'busy with another inclusion or exclusion' });
    }
  }

  /** Stops an inclusion or exclusion (nothing happens when none runs). */
  private async stopInclusion(): Promise<void> {
    const driver = this.readyDriver();
    this.pin?.resolve(false);
    this.pin = undefined;
    if (this.inclusionMode === 'including') await driver.controller.stopInclusion();
    if (this.inclusionMode === 'excluding') await driver.controller.stopExclusion();
    this.inclusionMode = 'idle';
  }

  /** Removes a node that no longer answers (broken, or reset without exclusion); refused when it still answers. */
  private async removeFailed(nodeId: number): Promise<void> {
    this.node(nodeId);
    const controller = this.readyDriver().controller;
    // Asked first: zwave-js pings the node before removing it and then fails the same way whatever the reason (ZW0360).
    if (!(await controller.isFailedNode(nodeId).catch(() => false))) throw new Refusal('ZWAVE_NODE_NOT_FAILED', { nodeId });
    await controller.removeFailedNode(nodeId).catch((err: unknown) => {
      const code = (err as { code?: unknown }).code;
      if (code === this.zwave?.ZWaveErrorCodes.RemoveFailedNode_NodeOK) throw new Refusal('ZWAVE_NODE_NOT_FAILED', { nodeId });
      throw new Refusal('ZWAVE_CONTROLLER_REFUSED', { reason: messageOf(err) });
    });
    // zwave-js emits "node removed"; forget it here too in case it did not.
    this.forget(nodeId);
  }

  snapshot(): NetworkSnapshot {
    const nodes: ZwaveNodeStatus[] = [];
    const dead: number[] = [];
    const driver = this.driver;
    const z = this.zwave;
    if (driver && z && this.homeId) {
      for (const node of driver.controller.nodes.values()) {
        if (node.isControllerNode) continue;
        const parts = this.parts.get(node.id) ?? [];
        if (node.status === z.NodeStatus.Dead) dead.push(node.id);
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
          unmapped: node
            .getSupportedCCInstances()
            .map((cc) => cc.ccId)
            .filter((id, i, all) => all.indexOf(id) === i && !MAPPED_COMMAND_CLASSES.includes(id) && !NOT_DEVICE_CCS.has(id))
            .map((id) => z.getCCConstructor(id)?.name.replace(/CC$/, '') ?? `0x${id.toString(16)}`),
        });
      }
    }
    return {
      ...(this.homeId ? { homeId: this.homeId } : {}),
      inclusion: { mode: this.inclusionMode, pinRequested: this.pin !== undefined, ...(this.pin ? { dsk: this.pin.dsk } : {}), ...(this.lastIncluded ? { last: this.lastIncluded } : {}) },
      nodes,
      dead,
    };
  }
}

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
 * Removes the cache locks a Z-Wave process killed without a word (the hub SIGKILLed, a power cut)
 * left behind, then writes this process down as their owner. zwave-js takes a lock over only once
 * stale by its own rule (10 s, and 100 s under NODE_ENV=test) and fails the start until then. The
 * locks are free at once when the process that opened the cache last is gone; otherwise a lock
 * refreshed within STALE_LOCK_MS is left alone, so a second live process on the folder meets it.
 */
async function removeStaleLocks(lockDir: string, now: number): Promise<void> {
  const ownerFile = path.join(lockDir, LOCK_OWNER_FILE);
  const owner = await fs
    .readFile(ownerFile, 'utf8')
    .then((text) => (JSON.parse(text) as { pid?: unknown }).pid)
    .catch(() => undefined);
  // Our own pid is a previous run too (in a container a process may start with the same pid each time).
  const ownerGone = typeof owner === 'number' && (owner === process.pid || !processAlive(owner));
  const entries = await fs.readdir(lockDir).catch(() => [] as string[]);
  for (const entry of entries) {
    if (!entry.endsWith('.lock')) continue;
    const lock = path.join(lockDir, entry);
    const stat = await fs.stat(lock).catch(() => undefined);
    if (!stat || (!ownerGone && now - stat.mtimeMs < STALE_LOCK_MS)) continue;
    await fs.rm(lock, { recursive: true, force: true });
    log('warn', { lock: entry }, 'Z-Wave: removed a cache lock a stopped process left behind');
  }
  await fs.mkdir(lockDir, { recursive: true });
  await fs.writeFile(ownerFile, JSON.stringify({ pid: process.pid }));
}

const network = new Network();
const answer = (id: number, run: () => Promise<unknown>) =>
  run().then(
    (result) => send({ t: 'answer', id, ...(result === undefined ? {} : { result }), snapshot: network.snapshot() }),
    (err: unknown) => send({ t: 'answer', id, error: failureOf(err), snapshot: network.snapshot() }),
  );

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on('line', (line) => {
  let message: HubToChild;
  try {
    message = JSON.parse(line) as HubToChild;
  } catch {
    return log('warn', { line: line.slice(0, 200) }, 'Z-Wave process: a line from the hub that is not the protocol');
  }
  switch (message.t) {
    case 'open':
      void network.open(message.options);
      return;
    case 'command':
      void answer(message.id, () => network.command(message.deviceId, message.command, message.params));
      return;
    case 'call':
      void answer(message.id, () => network.call(message));
      return;
    case 'close':
      void network.close().finally(() => process.exit(0));
      return;
  }
});
// The hub is gone (its end of the pipe closed): so is this process.
input.on('close', () => void network.close().finally(() => process.exit(0)));
