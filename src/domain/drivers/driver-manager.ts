import { randomUUID } from 'node:crypto';
import { Compile } from 'typebox/compile';
import { afterAnswer } from '../../platform/after-answer.js';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import type { DomainError, FailureInfo } from '../../platform/errors.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { LogicalDevice } from '../devices/model.js';
import type { DomainEventBus } from '../events.js';
import type { StateAuthority } from '../state/state-authority.js';
import type { DriverLink } from './driver-link.js';
import { driverErrors, driverProtocolErrors } from './errors.js';
import { DRIVER_EVENT_SCHEMAS, DriverRegistration, PROTOCOL_VERSION, type DriverEvent, type DriverEventType } from './messages.js';

export interface DriverManagerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Why a built-in integration failed an action (see `failAction`). */
export type ActionFailure = 'unreachable' | 'timeout' | 'rejected';

/** The outcome of a message from a driver, so the transport can answer a bad one its own way. */
export type Receipt = { ok: true } | ({ ok: false } & FailureInfo<'INVALID_MESSAGE' | 'UNKNOWN_TYPE'>);

interface PendingAction {
  link: DriverLink;
  deviceId: string;
  command: string;
  startedAt: number;
  resolve(result: unknown): void;
  reject(err: DomainError): void;
  timer: TimerHandle;
}

/**
 * Drivers connected to other instances of a cluster: a command for a device whose driver has no
 * link here goes to the instance that holds one, and comes back with the same time-outs and errors.
 */
export interface RemoteDrivers {
  /** Whether another instance holds a link of this driver. */
  holds(driverKey: string): boolean;
  execute(device: LogicalDevice, command: string, params: Record<string, unknown>, options: { timeoutMs?: number; kind?: 'ACTION' | 'COMMAND_EXECUTE' }): Promise<unknown>;
}

export interface DriverInfo {
  driverKey: string;
  instanceId: string;
  transport: string;
  connectedAt: number;
  devices: number;
  /** WebSocket links: the peer's IP address. */
  address?: string;
  /** The driver token the instance registered with (DRIVER_AUTH=token). */
  tokenId?: string;
}

const registrationCheck = Compile(DriverRegistration);
/** Driver messages whose effect is written to storage before the next message of the link may apply. */
const STORED_FIRST: ReadonlySet<DriverEventType> = new Set(['DEVICE_DISCOVERED', 'DEVICE_UPDATED', 'DEVICE_REMOVED']);
const eventChecks = Object.fromEntries(
  Object.entries(DRIVER_EVENT_SCHEMAS).map(([type, schema]) => [type, Compile(schema)]),
) as Record<DriverEventType, ReturnType<typeof Compile>>;

/**
 * Connected drivers and the traffic with them, whatever their transport: registration and
 * replacement of instances, the events they send (into the device registry and the state
 * authority), and actions sent to them with their results correlated and timed out.
 */
export class DriverManager {
  private readonly links = new Map<string, { link: DriverLink; connectedAt: number }>();
  /** Which driver instance last spoke for a hub device: actions go there. */
  private readonly deviceLink = new Map<string, string>();
  private readonly pending = new Map<string, PendingAction>();
  /** Messages of one link apply in order: a STATE_UPDATE must not overtake its DEVICE_DISCOVERED. */
  private readonly inflight = new Map<DriverLink, Promise<void>>();
  private remote: RemoteDrivers | undefined;

  constructor(
    private readonly devices: DeviceRegistry,
    private readonly state: StateAuthority,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    private readonly log: DriverManagerLogger,
    private readonly actionTimeoutMs: number,
    private readonly timers: Timers,
  ) {}

  /** Routes commands for drivers connected elsewhere (the cluster sets it). */
  routeRemote(remote: RemoteDrivers | undefined): void {
    this.remote = remote;
  }

  /** Validates a registration message: the registration, or why it is refused. */
  checkRegistration(message: unknown): { registration: DriverRegistration } | { refused: FailureInfo<'INVALID_REGISTRATION' | 'UNSUPPORTED_PROTOCOL_VERSION'> } {
    if (!registrationCheck.Check(message)) {
      const first = registrationCheck.Errors(message)[0];
      const problem = `registration must be {method:"driver.register", driverKey, instanceId, protocolVersion}${first ? `: ${first.instancePath || '/'} ${first.message}` : ''}`;
      return { refused: driverProtocolErrors.INVALID_REGISTRATION.info({ problem }) };
    }
    const registration = message as DriverRegistration;
    if (registration.instanceId.startsWith('local:') || registration.instanceId.startsWith('builtin:')) {
      // Reserved for processes the hub launches and its built-in integrations; a socket must not be able to replace one.
      return { refused: driverProtocolErrors.INVALID_REGISTRATION.info({ problem: 'instanceId must not start with "local:" or "builtin:"; those prefixes are reserved for the drivers the hub runs itself' }) };
    }
    if (registration.protocolVersion !== PROTOCOL_VERSION) {
      return { refused: driverProtocolErrors.UNSUPPORTED_PROTOCOL_VERSION.info({ version: registration.protocolVersion, supported: PROTOCOL_VERSION }) };
    }
    return { registration };
  }

  /** Takes a registered link into service; a link with the same instanceId is replaced. */
  attach(link: DriverLink): void {
    const previous = this.links.get(link.instanceId);
    if (previous && previous.link !== link) {
      this.log.info({ driverKey: link.driverKey, instanceId: link.instanceId }, 'driver instance replaced by a new connection');
      this.detach(previous.link, 'replaced by a new connection');
      previous.link.send({ type: 'DRIVER_STATUS', status: 'replaced', message: 'Another connection registered with this instanceId.' });
      previous.link.close('replaced');
    }
    const at = this.clock.now();
    this.links.set(link.instanceId, { link, connectedAt: at });
    link.send({ type: 'DRIVER_STATUS', status: 'registered', message: `Registered ${link.driverKey}/${link.instanceId}.` });
    this.events.emit('driver.connected', { driverKey: link.driverKey, instanceId: link.instanceId, transport: link.transport, ...(link.actionTimeoutMs !== undefined ? { actionTimeoutMs: link.actionTimeoutMs } : {}), ...(link.remoteAddress !== undefined ? { remoteAddress: link.remoteAddress } : {}), at });
  }

  /** The link is gone: its devices go offline and its pending actions fail now, not at timeout. */
  detach(link: DriverLink, reason: string): void {
    const current = this.links.get(link.instanceId);
    if (!current || current.link !== link) return;
    this.links.delete(link.instanceId);
    this.inflight.delete(link);
    for (const [deviceId, instanceId] of this.deviceLink) {
      if (instanceId !== link.instanceId) continue;
      this.deviceLink.delete(deviceId);
      this.state.setOnline(deviceId, false);
    }
    for (const [actionId, action] of this.pending) {
      if (action.link !== link) continue;
      this.settle(actionId);
      action.reject(driverErrors.DRIVER_DISCONNECTED({ driverKey: link.driverKey }, { details: { driverKey: link.driverKey } }));
    }
    this.events.emit('driver.disconnected', { driverKey: link.driverKey, instanceId: link.instanceId, reason, at: this.clock.now() });
  }

  /** Handles one parsed message from a registered driver. */
  receive(link: DriverLink, message: unknown): Promise<Receipt> {
    try {
      const receipt = this.receiveNow(link, message);
      return receipt instanceof Promise ? receipt : Promise.resolve(receipt);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * `receive`, answering in the same turn for a message applied at once (state updates, action
   * results: most of the traffic, a command's answer among it) and with a promise only for one
   * that waits its turn behind storage: a transport then needs no promise per message. It
   * throws only what `receive` would reject with.
   */
  receiveNow(link: DriverLink, message: unknown): Receipt | Promise<Receipt> {
    const type = (message as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || !(type in eventChecks)) {
      return { ok: false, ...driverProtocolErrors.UNKNOWN_TYPE.info({ type: JSON.stringify(type ?? null), types: Object.keys(eventChecks).join(', ') }) };
    }
    const check = eventChecks[type as DriverEventType];
    if (!check.Check(message)) {
      const first = check.Errors(message)[0];
      return { ok: false, ...driverProtocolErrors.INVALID_MESSAGE.info({ type, problem: first ? `${first.instancePath || '/'} ${first.message}` : 'invalid' }) };
    }
    const prior = this.inflight.get(link);
    const event = message as DriverEvent;
    // Most traffic (state updates, action results) applies at once; with nothing of the link's
    // still applying, it needs no place in the queue (and no promises: a command's answer and a
    // state flood take this path).
    if (!prior && !STORED_FIRST.has(event.type)) {
      try {
        this.applyAtOnce(link, event);
      } catch (err) {
        this.log.error({ err, driverKey: link.driverKey, type }, 'applying a driver message failed');
      }
      return { ok: true };
    }
    return this.applyInTurn(link, event, prior);
  }

  /** A message applied after the link's earlier ones (and storage) are done. */
  private async applyInTurn(link: DriverLink, event: DriverEvent, prior: Promise<void> | undefined): Promise<Receipt> {
    const { type } = event;
    const run = prior ? prior.then(() => this.apply(link, event)) : this.apply(link, event);
    const tracked = run.catch((err: unknown) => this.log.error({ err, driverKey: link.driverKey, type }, 'applying a driver message failed'));
    this.inflight.set(link, tracked);
    await tracked;
    if (this.inflight.get(link) === tracked) this.inflight.delete(link);
    return { ok: true };
  }

  /**
   * Sends a command to the driver of a device and waits for its ACTION_RESULT.
   * Rejects with: unavailable DRIVER_OFFLINE, timeout DRIVER_TIMEOUT, upstream_failed DRIVER_ERROR.
   */
  execute(device: LogicalDevice, command: string, params: Record<string, unknown>, options: { timeoutMs?: number; kind?: 'ACTION' | 'COMMAND_EXECUTE' } = {}): Promise<unknown> {
    const link = this.linkFor(device);
    if (!link && device.driverDeviceId !== null && this.remote?.holds(device.driverKey)) {
      return this.remote.execute(device, command, params, options);
    }
    if (!link || device.driverDeviceId === null) {
      return Promise.reject(driverErrors.DRIVER_OFFLINE({ driverKey: device.driverKey }, { details: { deviceId: device.id, driverKey: device.driverKey }, retryAfterSeconds: 5 }));
    }
    const actionId = randomUUID();
    const timeoutMs = options.timeoutMs ?? link.actionTimeoutMs ?? this.actionTimeoutMs;
    const startedAt = this.clock.now();
    return new Promise((resolve, reject) => {
      const timer = this.timers.setTimeout(() => {
        this.settle(actionId);
        this.events.emit('device.command_timed_out', { deviceId: device.id, command, timeoutMs, at: this.clock.now() });
        reject(driverErrors.DRIVER_TIMEOUT({ driverKey: device.driverKey, command, timeoutMs }, { details: { deviceId: device.id, command, timeoutMs } }));
      }, timeoutMs);
      this.pending.set(actionId, { link, deviceId: device.id, command, startedAt, resolve, reject, timer });
      link.send({ type: options.kind ?? 'ACTION', actionId, deviceId: device.driverDeviceId!, command, params });
    });
  }

  /**
   * A device of the link became reachable or unreachable while the link stays up. Only the
   * integrations built into the hub say this: the wire protocol has no message for it (a wire
   * driver's devices are online while its link is).
   */
  reportOnline(link: DriverLink, driverDeviceId: string, online: boolean): void {
    if (this.links.get(link.instanceId)?.link !== link) return;
    const device = this.devices.findByDriver(link.driverKey, driverDeviceId);
    if (!device || device.removed) return;
    if (online) this.claim(link, device.id);
    this.state.setOnline(device.id, online);
  }

  /**
   * Fails a pending action with what went wrong between the integration and the device
   * (unreachable: 502 DEVICE_UNREACHABLE; no answer in time: 504 DEVICE_TIMEOUT; parameters or
   * command refused: 422 COMMAND_REJECTED), which an ACTION_RESULT's error text cannot say.
   * Built-in integrations only.
   */
  failAction(link: DriverLink, actionId: string, failure: ActionFailure, reason: string): void {
    const action = this.pending.get(actionId);
    if (!action || action.link !== link) return;
    this.settle(actionId);
    const device = this.devices.find(action.deviceId);
    const name = device?.name ?? action.deviceId;
    this.events.emit('device.command_executed', { deviceId: action.deviceId, command: action.command, ok: false, durationMs: this.clock.now() - action.startedAt, at: this.clock.now() });
    const details = { deviceId: action.deviceId, driverKey: link.driverKey, command: action.command, reason };
    action.reject(
      failure === 'timeout'
        ? driverErrors.DEVICE_TIMEOUT({ device: name, command: action.command, reason }, { details })
        : failure === 'rejected'
          ? driverErrors.COMMAND_REJECTED({ device: name, command: action.command, reason }, { details })
          : driverErrors.DEVICE_UNREACHABLE({ device: name, reason }, { details, retryAfterSeconds: 5 }),
    );
  }

  /** The instances of a driver connected here now, whatever their transport. */
  instancesOf(driverKey: string): DriverLink[] {
    return [...this.links.values()].filter(({ link }) => link.driverKey === driverKey).map(({ link }) => link);
  }

  /**
   * Takes out of service every instance that registered with a driver token (it was revoked):
   * each is told why, then closed. Returns how many there were.
   */
  disconnectToken(tokenId: string, status: { code: string; message: string }): number {
    let closed = 0;
    for (const { link } of [...this.links.values()]) {
      if (link.tokenId !== tokenId) continue;
      this.log.warn({ driverKey: link.driverKey, instanceId: link.instanceId, tokenId }, 'driver token revoked; closing the instance that registered with it');
      this.detach(link, 'driver token revoked');
      link.send({ type: 'DRIVER_STATUS', status: 'error', ...status });
      link.close('token revoked');
      closed++;
    }
    return closed;
  }

  /** Sends a free-form message to every connected instance of a driver. */
  message(driverKey: string, payload: unknown): number {
    let sent = 0;
    for (const { link } of this.links.values()) {
      if (link.driverKey !== driverKey) continue;
      link.send({ type: 'DRIVER_MESSAGE', payload });
      sent++;
    }
    return sent;
  }

  /** A connected instance of the driver (the one named, or the first), for tools that act as it (the debug routes). */
  linkOf(driverKey: string, instanceId?: string): DriverLink | undefined {
    for (const { link } of this.links.values()) if (link.driverKey === driverKey && (instanceId === undefined || link.instanceId === instanceId)) return link;
    return undefined;
  }

  /** Connected here, or (in a cluster) to another instance. */
  isConnected(driverKey: string): boolean {
    for (const { link } of this.links.values()) if (link.driverKey === driverKey) return true;
    return this.remote?.holds(driverKey) ?? false;
  }

  list(): DriverInfo[] {
    const counts = new Map<string, number>();
    for (const instanceId of this.deviceLink.values()) counts.set(instanceId, (counts.get(instanceId) ?? 0) + 1);
    return [...this.links.values()].map(({ link, connectedAt }) => ({
      driverKey: link.driverKey,
      instanceId: link.instanceId,
      transport: link.transport,
      connectedAt,
      devices: counts.get(link.instanceId) ?? 0,
      ...(link.remoteAddress === undefined ? {} : { address: link.remoteAddress }),
      ...(link.tokenId === undefined ? {} : { tokenId: link.tokenId }),
    }));
  }

  /** Closes every link (at shutdown) and fails what is pending. */
  stop(): void {
    for (const { link } of [...this.links.values()]) {
      this.detach(link, 'hub stopping');
      link.close('hub stopping');
    }
  }

  private linkFor(device: LogicalDevice): DriverLink | undefined {
    const instanceId = this.deviceLink.get(device.id);
    const preferred = instanceId ? this.links.get(instanceId)?.link : undefined;
    if (preferred) return preferred;
    for (const { link } of this.links.values()) if (link.driverKey === device.driverKey) return link;
    return undefined;
  }

  private settle(actionId: string): PendingAction | undefined {
    const action = this.pending.get(actionId);
    if (!action) return undefined;
    this.timers.clearTimeout(action.timer);
    this.pending.delete(actionId);
    return action;
  }

  private claim(link: DriverLink, deviceId: string): void {
    if (this.deviceLink.get(deviceId) !== link.instanceId) this.deviceLink.set(deviceId, link.instanceId);
  }

  private async apply(link: DriverLink, event: DriverEvent): Promise<void> {
    if (!STORED_FIRST.has(event.type)) return this.applyAtOnce(link, event);
    switch (event.type) {
      case 'DEVICE_DISCOVERED': {
        const { id, state, ...fields } = event.device;
        const { device } = await this.devices.upsertDiscovered(link.driverKey, id, fields);
        this.claim(link, device.id);
        if (state && Object.keys(state).length > 0) this.state.update(device.id, state);
        else this.state.setOnline(device.id, true);
        return;
      }
      case 'DEVICE_UPDATED': {
        const { id, state, ...fields } = event.device;
        const device = await this.devices.updateFromDriver(link.driverKey, id, fields);
        if (!device) return this.unknownDevice(link, id, event.type);
        this.claim(link, device.id);
        if (state && Object.keys(state).length > 0) this.state.update(device.id, state);
        return;
      }
      case 'DEVICE_REMOVED': {
        const device = this.devices.findByDriver(link.driverKey, event.deviceId);
        if (!device) return this.unknownDevice(link, event.deviceId, event.type);
        this.deviceLink.delete(device.id);
        this.state.setOnline(device.id, false);
        await this.devices.markRemoved(device.id);
        return;
      }
    }
  }

  /** The messages that change nothing stored first: applied in the turn they arrive. */
  private applyAtOnce(link: DriverLink, event: DriverEvent): void {
    switch (event.type) {
      case 'STATE_UPDATE': {
        const device = this.devices.findByDriver(link.driverKey, event.deviceId);
        if (!device || device.removed) return this.unknownDevice(link, event.deviceId, event.type);
        this.claim(link, device.id);
        this.state.update(device.id, event.state);
        return;
      }
      case 'BUTTON_PRESSED': {
        const device = this.devices.findByDriver(link.driverKey, event.deviceId);
        if (!device) return this.unknownDevice(link, event.deviceId, event.type);
        // The press is an event; the state keeps the last one so a tile can show it.
        this.state.update(device.id, { last_press: event.press });
        this.events.emit('device.button_pressed', { deviceId: device.id, press: event.press, at: this.clock.now() });
        return;
      }
      case 'METRIC_UPDATE': {
        const device = this.devices.findByDriver(link.driverKey, event.deviceId);
        if (!device) return this.unknownDevice(link, event.deviceId, event.type);
        this.state.recordMetrics(device.id, event.metrics);
        return;
      }
      case 'ACTION_RESULT': {
        const action = this.pending.get(event.actionId);
        if (!action || action.link !== link) {
          this.log.warn({ driverKey: link.driverKey, actionId: event.actionId }, 'ACTION_RESULT for no pending action (late or foreign); ignored');
          return;
        }
        this.settle(event.actionId);
        const at = this.clock.now();
        const durationMs = at - action.startedAt;
        // Metrics and streams hear of it once the caller's answer is on its way.
        afterAnswer(() => this.events.emit('device.command_executed', { deviceId: action.deviceId, command: action.command, ok: event.ok, durationMs, at }));
        if (event.ok) action.resolve(event.result);
        else {
          action.reject(
            driverErrors.DRIVER_ERROR(
              { driverMessage: event.error ?? `The driver failed to execute ${action.command}.` },
              {
                details: {
                  driverKey: link.driverKey,
                  command: action.command,
                  driverError: event.error ?? null,
                  ...(event.result === undefined ? {} : { result: event.result }),
                },
              },
            ),
          );
        }
        return;
      }
      case 'PONG':
        return;
    }
  }

  private unknownDevice(link: DriverLink, driverDeviceId: string, type: string): void {
    this.log.warn({ driverKey: link.driverKey, driverDeviceId, type }, 'message for a device the driver never discovered; ignored');
  }
}
