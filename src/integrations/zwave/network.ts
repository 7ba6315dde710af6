import { childProgram } from '../../adapters/process/child-program.js';
import { requirementFoldersForChild } from '../../adapters/requirements/resolution.js';
import { attachBuiltInDriver, runBuiltInAction, type BuiltInDriver, type BuiltInDriverContext, type IntegrationStatus } from '../../domain/drivers/builtin.js';
import type { DriverManager } from '../../domain/drivers/driver-manager.js';
import type { BuiltInIntegrations } from '../../domain/drivers/builtin.js';
import type { ServerToDriverMessage } from '../../domain/drivers/messages.js';
import { Backoff } from '../../platform/backoff.js';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import { LeasedRuntime, type RuntimeLeases } from '../../platform/leased-runtime.js';
import type { ModuleLog } from '../../platform/module.js';
import { messageOf, NetworkFailureError } from '../../platform/network-failures.js';
import type { ProcessRunner, RunningProcess } from '../../platform/processes.js';
import type { Requirements, RequirementsStatus } from '../../platform/requirements.js';
import { MAX_LINE_BYTES, type AdminCall, type CallFailure, type ChildToHub, type HubToChild, type NetworkSnapshot, type ZwaveNodeStatus } from './child-protocol.js';
import { zwaveErrors } from './errors.js';
import type { ZwaveSecurityKeys } from './keys.js';

export type { InclusionMode, ZwaveNodeStatus } from './child-protocol.js';
export type ZwaveState = 'off' | 'starting' | 'running' | 'failed' | 'standby';

export interface ZwaveStatus {
  state: ZwaveState;
  port: string | null;
  error?: string;
  homeId?: string;
  holder?: string;
  requirements?: RequirementsStatus;
  inclusion: NetworkSnapshot['inclusion'];
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
  processes: ProcessRunner;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
  /** The bound of one command, request and answer (ms). */
  commandTimeoutMs: number;
  /** More zwave-js options (tests shorten its timeouts). */
  driverOptions?: Record<string, unknown>;
}

const RECONNECT = { initialMs: 2_000, maxMs: 60_000 };
/** An admin call's bound (an inclusion start, a heal: the controller answers within seconds). */
const CALL_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const EMPTY: NetworkSnapshot = { inclusion: { mode: 'idle', pinRequested: false }, nodes: [], dead: [] };

/**
 * The hub's Z-Wave network: zwave-js on ZWAVE_PORT, in a process of its own (network-child.ts),
 * its nodes as hub devices (by mapping.ts), and the controller's inclusion, exclusion and
 * repairs. It is a built-in driver (driverKey `zwave`), so the devices, their commands and their
 * state take every driver's path. A stick that cannot be opened, a driver that gave up on it
 * (zwave-js destroys itself after about 10 s of a port that does not answer) or a process that
 * crashed is a failed status naming why, and a new process after the back-off; the hub keeps
 * running. It runs on one instance of a cluster (a lease): a stick has one host.
 */
export class ZwaveNetwork implements BuiltInDriver {
  readonly driverKey = 'zwave';
  readonly name = 'Z-Wave';
  private child: RunningProcess | undefined;
  private context: BuiltInDriverContext | null = null;
  private detach: (() => void) | undefined;
  private state: ZwaveState = 'off';
  private error: string | undefined;
  private openPort: string | undefined;
  /** What the process last told of the network (after every change, and with every answer). */
  private network: NetworkSnapshot = EMPTY;
  /** The devices the process announced: a command for another is refused here, without a round trip. */
  private readonly deviceIds = new Set<string>();
  private readonly calls = new Map<number, { resolve(result: unknown): void; reject(err: unknown): void; timer: TimerHandle }>();
  private nextCall = 1;
  private readonly backoff = new Backoff(RECONNECT);
  private retry: TimerHandle | undefined;
  private readonly lease: LeasedRuntime;
  /** Each process's generation: messages of a process that was replaced are ignored. */
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
    await this.endChild('Z-Wave is stopping');
    this.detach?.();
    this.detach = undefined;
    this.openPort = undefined;
    this.state = 'off';
    this.error = undefined;
  }

  /** Asks the process to close the stick, and stops it after a grace; its pending calls fail with `why`. */
  private async endChild(why: string): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.network = EMPTY;
    this.failCalls(why);
    if (!child) return;
    this.write(child, { t: 'close' });
    await child.stop(STOP_GRACE_MS);
  }

  private failCalls(why: string): void {
    for (const call of this.calls.values()) {
      this.o.timers.clearTimeout(call.timer);
      call.reject(zwaveErrors.ZWAVE_NOT_READY({ reason: why }));
    }
    this.calls.clear();
  }

  private write(child: RunningProcess, message: HubToChild): void {
    const stdin = child.stdin;
    if (stdin && !stdin.destroyed && stdin.writable) stdin.write(`${JSON.stringify(message)}\n`);
  }

  private async open(port: string): Promise<void> {
    const generation = ++this.generation;
    this.state = 'starting';
    try {
      // zwave-js is installed on first use; the process finds it in these folders (a missing one is its failed start).
      const folders = this.o.requirements ? await this.o.requirements.ensure() : [];
      const keys = await this.o.keys();
      if (generation !== this.generation) return;
      const resolution = requirementFoldersForChild(folders);
      const child = this.o.processes.start(
        { label: 'zwave', command: process.execPath, args: [...resolution.args, ...childProgram(import.meta.url, 'network-child')], env: { ...process.env, NODE_OPTIONS: '', ...resolution.env }, stdin: 'pipe', maxStdoutLineBytes: MAX_LINE_BYTES },
        {
          onStdoutLine: (line) => {
            if (generation !== this.generation) return;
            let message: ChildToHub;
            try {
              message = JSON.parse(line.toString('utf8')) as ChildToHub;
            } catch {
              return this.o.log.warn({ line: line.toString('utf8').slice(0, 200) }, 'Z-Wave process: a line that is not the protocol');
            }
            this.receiveFromChild(message);
          },
          onStdoutOverflow: () => this.o.log.error({}, 'Z-Wave process: a message longer than the limit was dropped'),
          onStderrLine: (line) => this.o.log.info({ zwave: line.slice(0, 2000) }, 'Z-Wave process output'),
          onExit: (exit) => {
            if (generation !== this.generation) return;
            this.failed(exit.startError ? `the Z-Wave process could not be started: ${exit.startError.message}` : this.error && this.state === 'failed' ? this.error : `the Z-Wave process ${exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`}`);
          },
        },
      );
      child.stdin?.on('error', () => undefined); // a broken pipe is its exit's business
      this.child = child;
      const hex = Object.fromEntries(Object.entries(keys).map(([name, key]) => [name, Buffer.from(key as Uint8Array).toString('hex')]));
      this.write(child, { t: 'open', options: { port, cacheDir: this.o.cacheDir, keys: hex, commandTimeoutMs: this.o.commandTimeoutMs, ...(this.o.driverOptions ? { driverOptions: this.o.driverOptions } : {}) } });
    } catch (err) {
      if (generation === this.generation) this.failed(messageOf(err));
    }
  }

  private receiveFromChild(message: ChildToHub): void {
    switch (message.t) {
      case 'ready':
        this.state = 'running';
        this.error = undefined;
        this.backoff.succeed();
        this.network = message.snapshot;
        return;
      case 'failed':
        // The process exits after this; its exit schedules the next one.
        this.state = 'failed';
        this.error = this.explain(message.error);
        return;
      case 'snapshot':
        this.network = message.snapshot;
        return;
      case 'driver':
        if (message.event.type === 'DEVICE_DISCOVERED') this.deviceIds.add(message.event.device.id);
        if (message.event.type === 'DEVICE_REMOVED') this.deviceIds.delete(message.event.deviceId);
        this.context?.emit(message.event);
        return;
      case 'online':
        for (const id of message.deviceIds) this.context?.setOnline(id, message.online);
        return;
      case 'answer': {
        this.network = message.snapshot;
        const call = this.calls.get(message.id);
        this.calls.delete(message.id);
        if (!call) return;
        this.o.timers.clearTimeout(call.timer);
        if (message.error) call.reject(this.raise(message.error));
        else call.resolve(message.result);
        return;
      }
      case 'log':
        this.o.log[message.level](message.obj, message.msg);
        return;
    }
  }

  /** A failure the process sent, as the hub's: a catalogued Z-Wave error, or the device's absence. */
  private raise(failure: CallFailure): Error {
    if ('network' in failure) return new NetworkFailureError(failure.network, failure.message);
    const make = (zwaveErrors as unknown as Record<string, ((params?: Record<string, string | number>) => Error) | undefined>)[failure.code];
    return make ? make(failure.params) : zwaveErrors.ZWAVE_CONTROLLER_REFUSED({ reason: failure.code });
  }

  private explain(message: string): string {
    return /ENOENT|no such file/i.test(message)
      ? `${this.openPort} does not exist (is the stick plugged in?)`
      : /EBUSY|EACCES|locked|Resource temporarily unavailable/i.test(message)
        ? `${this.openPort} is held by another program or not accessible: ${message}`
        : message;
  }

  /** The stick could not be opened, the driver gave up on it, or the process ended: a status, every device offline, a new process after the back-off. */
  private failed(why: string): void {
    this.generation += 1;
    this.state = 'failed';
    this.error = this.explain(why);
    this.o.log.error({ err: this.error, port: this.openPort }, 'Z-Wave controller not available');
    for (const id of this.deviceIds) this.context?.setOnline(id, false);
    const child = this.child;
    void this.endChild(this.error);
    child?.kill();
    const delay = this.backoff.fail();
    const port = this.openPort;
    this.retry = this.o.timers.setTimeout(() => {
      this.retry = undefined;
      if (port && this.detach && this.openPort === port) void this.open(port);
    }, delay);
  }

  /** Runs `message` in the process, answered within `timeoutMs`. */
  private ask(message: { t: 'command'; deviceId: string; command: string; params: Record<string, unknown> } | ({ t: 'call' } & AdminCall), timeoutMs: number): Promise<unknown> {
    const child = this.child;
    if (!child || this.state !== 'running') return Promise.reject(zwaveErrors.ZWAVE_NOT_READY({ reason: this.notReadyReason() }));
    const id = this.nextCall++;
    return new Promise((resolve, reject) => {
      const timer = this.o.timers.setTimeout(() => {
        this.calls.delete(id);
        reject(new NetworkFailureError('timeout', `the Z-Wave process did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.calls.set(id, { resolve, reject, timer });
      this.write(child, { ...message, id } as HubToChild);
    });
  }

  private notReadyReason(): string {
    return this.state === 'standby' || this.lease.holder ? `another instance (${this.lease.holder}) runs it` : (this.error ?? 'it is still starting');
  }

  // --- the built-in driver ---------------------------------------------------------------------

  connect(context: BuiltInDriverContext): void {
    this.context = context;
  }

  disconnect(): void {
    this.context = null;
  }

  receive(message: ServerToDriverMessage): void {
    runBuiltInAction<string>(
      {
        context: () => this.context,
        timers: this.o.timers,
        timeoutMs: this.o.commandTimeoutMs,
        target: (deviceId) => {
          if (!this.child || this.state !== 'running') throw new NetworkFailureError('unreachable', `the Z-Wave controller is not ready${this.error ? `: ${this.error}` : ''}`);
          if (!this.deviceIds.has(deviceId)) throw new NetworkFailureError('unreachable', `no Z-Wave node has the device ${deviceId}`);
          return deviceId;
        },
        // The bound is runBuiltInAction's; the process's answer after it is dropped.
        handler: (command, deviceId) => (_t, params) => this.ask({ t: 'command', deviceId, command, params }, this.o.commandTimeoutMs * 2),
      },
      message,
    );
  }

  status(): IntegrationStatus {
    if (this.state === 'failed') return { status: 'failed', ...(this.error ? { lastError: this.error } : {}) };
    if (this.state !== 'running') return { status: 'off' };
    const dead = this.network.dead;
    const devices = this.deviceIds.size;
    return dead.length === 0 ? { status: 'running', devices } : { status: 'degraded', devices, unreachable: dead.length, lastError: `node ${dead.join(', ')} does not answer` };
  }

  // --- admin -----------------------------------------------------------------------------------

  private admin(call: AdminCall): Promise<unknown> {
    if (!this.o.port()) return Promise.reject(zwaveErrors.ZWAVE_OFF());
    return this.ask({ t: 'call', ...call }, CALL_TIMEOUT_MS);
  }

  /** Starts including a device (S2 where it can, `insecure` to skip security); 409 while an inclusion or exclusion runs. */
  async startInclusion(security: 'default' | 'insecure'): Promise<void> {
    await this.admin({ call: 'startInclusion', security });
  }

  async startExclusion(): Promise<void> {
    await this.admin({ call: 'startExclusion' });
  }

  /** Stops an inclusion or exclusion (nothing happens when none runs). */
  async stopInclusion(): Promise<void> {
    await this.admin({ call: 'stopInclusion' });
  }

  /** The PIN of the S2 device being included (the 5 digits on its label, which the DSK shown leaves out). */
  async enterPin(pin: string): Promise<void> {
    await this.admin({ call: 'enterPin', pin });
  }

  async reinterview(nodeId: number): Promise<void> {
    await this.admin({ call: 'reinterview', nodeId });
  }

  /** Rebuilds the node's routes ("heal"); resolves with whether it worked. */
  async heal(nodeId: number): Promise<boolean> {
    return (await this.admin({ call: 'heal', nodeId })) === true;
  }

  /** Removes a node that no longer answers (broken, or reset without exclusion); 409 when it still answers. */
  async removeFailed(nodeId: number): Promise<void> {
    await this.admin({ call: 'removeFailed', nodeId });
  }

  snapshot(): ZwaveStatus {
    const running = this.state === 'running';
    return {
      state: this.lease.holder && !this.detach ? 'standby' : this.state,
      port: this.o.port() ?? null,
      ...(this.error ? { error: this.error } : {}),
      ...(this.network.homeId && running ? { homeId: this.network.homeId } : {}),
      ...(this.lease.holder ? { holder: this.lease.holder } : {}),
      ...(this.o.requirements ? { requirements: this.o.requirements.status() } : {}),
      inclusion: running ? this.network.inclusion : EMPTY.inclusion,
      nodes: running ? this.network.nodes : [],
    };
  }
}
