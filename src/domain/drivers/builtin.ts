import type { Timers } from '../../platform/clock.js';
import { messageOf, networkFailureOf, NetworkFailureError, type NetworkFailure } from '../../platform/network-failures.js';
import type { DriverLink } from './driver-link.js';
import type { ActionFailure, DriverManager, DriverManagerLogger } from './driver-manager.js';
import type { DriverEvent, ServerToDriverMessage } from './messages.js';

/**
 * What the hub gives an integration built into it (Roku, Android TV, bridge endpoints): the
 * driver protocol's events, held to the same schemas as any driver's, plus the two things the
 * wire protocol cannot say and an integration that talks to the device itself knows.
 */
export interface BuiltInDriverContext {
  /** A driver event (DEVICE_DISCOVERED, STATE_UPDATE, ACTION_RESULT, …), applied in order. */
  emit(event: DriverEvent): void;
  /** The device answers again, or stopped answering: its `online` in the state authority. */
  setOnline(driverDeviceId: string, online: boolean): void;
  /** Fails an action: the device could not be reached (502), did not answer in time (504), or the command was refused (422). */
  fail(actionId: string, failure: ActionFailure, reason: string): void;
}

/**
 * How a built-in integration is doing, for `integrations.list`:
 * - `running`: in service, every device it controls answers (or it controls none);
 * - `degraded`: in service, `unreachable` of its devices do not answer (`lastError` says why);
 * - `failed`: it cannot do its work at all (`lastError` says why);
 * - `off`: not in service (not attached yet, or the hub is stopping).
 */
export type IntegrationState = 'running' | 'degraded' | 'failed' | 'off';

export interface IntegrationStatus {
  status: IntegrationState;
  /** Devices it controls; left out when the hub counts them in the device registry. */
  devices?: number;
  /** `degraded`: how many of them cannot be reached. */
  unreachable?: number;
  /** The last failure, when it is not `running`. */
  lastError?: string;
}

/**
 * An integration that runs in the hub's process and speaks a device's network protocol itself.
 * It receives ACTIONs like any driver and answers through its context (with `runBuiltInAction`,
 * so that every integration bounds, answers and fails its actions alike); everything it does with
 * the network is bounded in time, so a dead or slow device degrades that device only. It declares
 * the name an admin reads and reports its status (`integrations.list`); one that does not report
 * it is judged by the presence it reports of its devices.
 */
export interface BuiltInDriver {
  readonly driverKey: string;
  /** What `integrations.list` calls it ("Roku (ECP)"); the driverKey when left out. */
  readonly name?: string;
  /** Called once the link is in service. */
  connect(context: BuiltInDriverContext): void;
  /** An ACTION for one of its devices (or a status notice). Must not throw. */
  receive(message: ServerToDriverMessage): void;
  /** The link is gone (hub stopping): stop timers and sockets. */
  disconnect(): void;
  /** How it is doing now (see IntegrationStatus); `off` while not connected. */
  status?(): IntegrationStatus;
}

/** The one mapping of a failure's cause to the driver manager's action failure (502, 504, 422). */
export const ACTION_FAILURE: Readonly<Record<NetworkFailure, ActionFailure>> = {
  unreachable: 'unreachable',
  timeout: 'timeout',
  rejected: 'rejected',
  unsupported: 'rejected',
};

/**
 * Which of an integration's devices answer, told to the hub (`setOnline`) when it changes, and the
 * integration's status from it. A device is unknown until first heard of or failed; the polling
 * coordinator keeps one, and so do the integrations that learn of presence from their commands and
 * sessions (Cast, bridge endpoints).
 */
export class DeviceAvailability {
  private context: Pick<BuiltInDriverContext, 'setOnline'> | null = null;
  private readonly devices = new Map<string, { available: boolean | null; error?: string }>();

  /** Presence reaches the hub through this context while bound; unbound, the status is `off`. */
  bind(context: Pick<BuiltInDriverContext, 'setOnline'> | null): void {
    this.context = context;
  }

  get bound(): boolean {
    return this.context !== null;
  }

  /** Known from now on, its presence unknown (a device known already keeps its own). */
  track(id: string): void {
    if (!this.devices.has(id)) this.devices.set(id, { available: null });
  }

  forget(id: string): void {
    this.devices.delete(id);
  }

  has(id: string): boolean {
    return this.devices.has(id);
  }

  /** True answering, false not, null not known yet (or not tracked). */
  get(id: string): boolean | null {
    return this.devices.get(id)?.available ?? null;
  }

  /**
   * Records whether the device answers (and why not); the hub hears of a change, or of every call
   * with `force`. With `tell: false` only records it (the hub heard it already).
   */
  set(id: string, available: boolean, error?: unknown, options: { force?: boolean; tell?: boolean } = {}): boolean {
    const entry = this.devices.get(id) ?? { available: null };
    const changed = entry.available !== available;
    entry.available = available;
    if (available) delete entry.error;
    else if (error !== undefined) entry.error = messageOf(error);
    this.devices.set(id, entry);
    if ((changed || options.force) && options.tell !== false) this.context?.setOnline(id, available);
    return changed;
  }

  /**
   * After a DEVICE_DISCOVERED (which puts a device online in the hub): a device not known to
   * answer is said to be offline again.
   */
  reassert(id: string): void {
    if (this.get(id) !== true) this.context?.setOnline(id, false);
  }

  status(): IntegrationStatus {
    const devices = this.devices.size;
    if (!this.context) return { status: 'off', devices };
    const down = [...this.devices.values()].filter((d) => d.available === false);
    if (down.length === 0) return { status: 'running', devices };
    const lastError = down.map((d) => d.error).find((e) => e !== undefined);
    return { status: 'degraded', devices, unreachable: down.length, ...(lastError ? { lastError } : {}) };
  }
}

export type BuiltInAction = Extract<ServerToDriverMessage, { type: 'ACTION' | 'COMMAND_EXECUTE' }>;

/** Runs one command on its target; aborted (`signal`) when the action's bound passes. */
export type CommandHandler<T> = (target: T, params: Record<string, unknown>, scope: { signal: AbortSignal; action: BuiltInAction }) => unknown;

export type ActionOutcome = { ok: true } | { ok: false; failure: NetworkFailure | undefined; error: unknown };

/** How an integration runs its actions (see `runBuiltInAction`). */
export interface ActionSpec<T> {
  /** The integration's context while it is connected. */
  context(): BuiltInDriverContext | null;
  timers: Timers;
  /** The bound of one action, command and all its requests (ms): the integration's, or the target's own. */
  timeoutMs: number | ((target: T) => number);
  /** What the action's device id names; throws a NetworkFailureError when there is nothing to run it on. */
  target(deviceId: string): T;
  /** The command's handler; undefined when there is no such command (`unsupported`). May throw a NetworkFailureError to say why. */
  handler(command: string, target: T): CommandHandler<T> | undefined;
  /** After the action, before it is answered: where an integration follows the device's presence (a failure's cause says whether it is gone). */
  settled?(target: T, outcome: ActionOutcome): void;
}

const MAX_ERROR_CHARS = 2000;

/** An action's failure, answered by its cause (`fail`), or as the device's own error (ACTION_RESULT ok:false) when it has none. */
function answerFailure(context: BuiltInDriverContext | null, action: BuiltInAction, failure: NetworkFailure | undefined, err: unknown): void {
  if (!context) return;
  const reason = messageOf(err).slice(0, MAX_ERROR_CHARS);
  if (failure) context.fail(action.actionId, ACTION_FAILURE[failure], reason);
  else context.emit({ type: 'ACTION_RESULT', actionId: action.actionId, ok: false, error: reason });
}

/**
 * The one way a built-in integration handles an ACTION (or COMMAND_EXECUTE): finds the target
 * and the command's handler, runs it within the bound (on the injected timers; the handler's
 * `signal` aborts when it passes), and answers ACTION_RESULT with what the handler returned, or
 * fails the action by the cause of what it threw (`networkFailureOf`, `ACTION_FAILURE`).
 * Answers false for a message that is no action. Never throws.
 */
export function runBuiltInAction<T>(spec: ActionSpec<T>, message: ServerToDriverMessage): boolean {
  if (message.type !== 'ACTION' && message.type !== 'COMMAND_EXECUTE') return false;
  const action = message;
  if (!spec.context()) return true;
  let target: T;
  let handler: CommandHandler<T> | undefined;
  try {
    target = spec.target(action.deviceId);
    handler = spec.handler(action.command, target);
  } catch (err) {
    answerFailure(spec.context(), action, networkFailureOf(err) ?? 'rejected', err);
    return true;
  }
  if (!handler) {
    answerFailure(spec.context(), action, 'unsupported', new NetworkFailureError('unsupported', `unknown command ${action.command}`));
    return true;
  }
  const run = handler;
  const boundMs = typeof spec.timeoutMs === 'function' ? spec.timeoutMs(target) : spec.timeoutMs;
  const controller = new AbortController();
  let done = false;
  const finish = (outcome: ActionOutcome, result?: unknown) => {
    if (done) return;
    done = true;
    spec.timers.clearTimeout(timer);
    try {
      spec.settled?.(target, outcome);
    } finally {
      const context = spec.context();
      if (outcome.ok) context?.emit({ type: 'ACTION_RESULT', actionId: action.actionId, ok: true, ...(result === undefined ? {} : { result }) });
      else answerFailure(context, action, outcome.failure, outcome.error);
    }
  };
  const timer = spec.timers.setTimeout(() => {
    const error = new NetworkFailureError('timeout', `no answer within ${boundMs} ms`);
    controller.abort(error);
    finish({ ok: false, failure: 'timeout', error });
  }, boundMs);
  new Promise<unknown>((resolve) => resolve(run(target, action.params ?? {}, { signal: controller.signal, action }))).then(
    (result) => finish({ ok: true }, result),
    (err: unknown) => finish({ ok: false, failure: networkFailureOf(err), error: err }),
  );
  return true;
}

/** One integration's line in `integrations.list`. */
export interface IntegrationReport extends IntegrationStatus {
  key: string;
  name: string;
}

/** An integration built into the hub, as `integrations.list` asks it how it is doing. */
export interface IntegrationSource {
  /** Its driverKey (GENERIC_IR, roku, …), or its own key when it is no driver (`mpd`). */
  key: string;
  name: string;
  status(): IntegrationStatus | Promise<IntegrationStatus>;
}

/**
 * The integrations built into the hub that are configured, each with its status: those attached
 * as driver links (`attachBuiltInDriver` registers them) and those that are no driver link (IR
 * extenders, MPD targets), which their module or the composition root registers.
 */
export class BuiltInIntegrations {
  private readonly sources = new Map<string, IntegrationSource>();

  /** Lists it (replacing one with its key); answers the function that unlists it. */
  register(source: IntegrationSource): () => void {
    this.sources.set(source.key, source);
    return () => {
      if (this.sources.get(source.key) === source) this.sources.delete(source.key);
    };
  }

  async list(): Promise<IntegrationReport[]> {
    return Promise.all(
      [...this.sources.values()].map(async ({ key, name, status }): Promise<IntegrationReport> => {
        try {
          return { key, name, ...(await status()) };
        } catch (err) {
          return { key, name, status: 'failed', lastError: messageOf(err) };
        }
      }),
    );
  }
}

export interface AttachOptions {
  /** Where it is listed with its status while attached (`off` once detached). */
  integrations?: BuiltInIntegrations;
  /** Its name there, when the driver declares none. */
  name?: string;
  /** Adds what its module knows to its status (the accessory hub: whether Homebridge runs). */
  status?(own: IntegrationStatus): IntegrationStatus | Promise<IntegrationStatus>;
}

/**
 * Puts a built-in integration in service as a driver link (transport `builtin`), so that its
 * devices, their commands and their state take the same path as every driver's, and lists it
 * with its status. Returns the function that takes it out of service.
 */
export function attachBuiltInDriver(manager: DriverManager, driver: BuiltInDriver, log: DriverManagerLogger, options: AttachOptions = {}): () => void {
  let open = true;
  let connectError: string | undefined;
  // What it told the hub of its devices: its status, when it reports none itself.
  const told = new DeviceAvailability();
  told.bind({ setOnline: () => undefined });
  const link: DriverLink = {
    driverKey: driver.driverKey,
    instanceId: `builtin:${driver.driverKey}`,
    transport: 'builtin',
    send(message) {
      if (!open || message.type === 'DRIVER_STATUS') return;
      // Asynchronous like every other transport: the caller's promise is set up before the answer.
      queueMicrotask(() => {
        try {
          driver.receive(message);
        } catch (err) {
          log.error({ err, driverKey: driver.driverKey }, 'built-in driver threw on a message');
        }
      });
    },
    close() {
      open = false;
    },
  };
  manager.attach(link);
  options.integrations?.register({
    key: driver.driverKey,
    name: driver.name ?? options.name ?? driver.driverKey,
    status: () => {
      if (!open) return { status: 'off', devices: told.status().devices ?? 0 };
      if (connectError !== undefined) return { status: 'failed', lastError: connectError };
      const own = driver.status?.() ?? told.status();
      return options.status ? options.status(own) : own;
    },
  });
  // setOnline waits for the events emitted before it, so "offline" cannot overtake the discovery.
  let applied: Promise<unknown> = Promise.resolve();
  try {
    driver.connect({
      emit(event) {
        if (!open) return;
        if (event.type === 'DEVICE_DISCOVERED') told.set(event.device.id, true, undefined, { tell: false });
        else if (event.type === 'DEVICE_REMOVED') told.forget(event.deviceId);
        applied = manager.receive(link, event).then((receipt) => {
          if (!receipt.ok) log.error({ driverKey: driver.driverKey, code: receipt.code, message: receipt.message }, 'built-in driver sent an invalid message');
        });
      },
      setOnline(driverDeviceId, online) {
        if (!open) return;
        told.set(driverDeviceId, online, undefined, { tell: false });
        applied = applied.then(() => manager.reportOnline(link, driverDeviceId, online));
      },
      fail(actionId, failure, reason) {
        if (open) manager.failAction(link, actionId, failure, reason);
      },
    });
  } catch (err) {
    connectError = messageOf(err);
    log.error({ err, driverKey: driver.driverKey }, 'built-in driver failed to start');
  }
  return () => {
    if (!open) return;
    manager.detach(link, 'integration stopped');
    open = false;
    // Still listed, as `off`, until it is attached again (which lists it anew).
    driver.disconnect();
  };
}
