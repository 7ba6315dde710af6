import type { Clock } from '../../platform/clock.js';
import type { DriverManager } from '../drivers/driver-manager.js';
import type { DomainEventBus } from '../events.js';
import { irErrors } from '../ir/errors.js';
import { validateIrCommand, validateIrCommands, isValidExtenderIp, type IrCommand, type IrCommands } from '../ir/ir-command.js';
import type { IrTransmitter } from '../ir/transmitter.js';
import type { DeviceStateView, StateAuthority } from '../state/state-authority.js';
import { actionCapabilities, isActionInputProblem, parseAction, resolveAction, standardActionName, ACTIONS, type AbstractAction, type ActionName } from './actions.js';
import { DEVICE_CLASS_MODEL, deriveCapabilities, type CapabilityName, type DeviceAttributes, type DeviceClass } from './capabilities.js';
import type { DeviceRegistry } from './device-registry.js';
import { deviceErrors } from './errors.js';
import { GENERIC_IR, type DeviceMetadata, type LogicalDevice } from './model.js';
import { modelOf, type DeviceModel, type DeviceReading } from './readings.js';

/**
 * Driver command names behind the capability routes. A driver that offers a capability lists it
 * in `capabilities` (or offers commands with its prefix) and answers these commands.
 */
export const CAPABILITY_COMMANDS = {
  apps: { list: 'apps.list', icon: 'apps.icon', launch: 'apps.launch' },
  equalizer: { get: 'equalizer.get', set: 'equalizer.set' },
  scenes: { list: 'scenes.list', run: 'scenes.run' },
} as const;
export type Capability = keyof typeof CAPABILITY_COMMANDS;

export interface StateSnapshot {
  readonly at: number;
  readonly devices: Readonly<Record<string, Readonly<DeviceStateView>>>;
}

/** A device record as every surface shows it: what the registry holds, with the model's reading of it. */
export interface DeviceView extends Omit<LogicalDevice, 'declaredClass' | 'declaredAttributes'> {
  online: boolean;
  deviceClass: DeviceClass;
  attributes: DeviceAttributes;
  reading: DeviceReading;
}

/** Whether a device of its class takes the action: the class admits one of its capabilities and the device has it. */
function classTakes(model: DeviceModel, action: ActionName): boolean {
  const admitted = DEVICE_CLASS_MODEL[model.deviceClass].capabilities;
  return actionCapabilities(action).some((c) => admitted.includes(c) && model.capabilities.includes(c));
}

export interface IrDeviceInput {
  id?: string;
  name: string;
  extenderIp: string;
  irCommands: IrCommands;
  category?: string;
  room?: string | null;
  tags?: string[];
}

export interface AppIcon {
  contentType: string;
  bytes: Buffer;
}

/** Command names that belong to a device's equalizer or sound mode. */
const EQUALIZER_COMMAND = /^(equalizer|sound_?mode|bass|treble|balance|loudness)/i;
const ICON_CACHE_LIMIT = 256;
const ICON_TTL_MS = 60 * 60 * 1000;
const MAX_ICON_BYTES = 512 * 1024;

export function hasCapability(device: LogicalDevice, capability: string): boolean {
  return device.capabilities.includes(capability) || device.commands.some((c) => c.name.startsWith(`${capability}.`));
}

/** A device listing: the views, where each device is in it, and the devices changed since it was made. */
interface Listing {
  registryRevision: number;
  views: readonly DeviceView[];
  index: ReadonlyMap<string, number>;
  stale: Set<string>;
}

/**
 * Device use cases: views that join the registry with live state, command dispatch to a driver
 * or to an IR extender, the capability commands, metadata and hub-managed IR devices.
 */
export class DeviceService {
  private readonly icons = new Map<string, { icon: AppIcon; at: number }>();

  private readonly listings = new Map<boolean, Listing>();
  private readonly frozenViews = new WeakMap<LogicalDevice, { view: Readonly<DeviceView>; state: object }>();
  private stateSnapshotCache: { revision: string; snapshot: StateSnapshot } | undefined;

  constructor(
    readonly registry: DeviceRegistry,
    readonly state: StateAuthority,
    readonly drivers: DriverManager,
    private readonly ir: IrTransmitter,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
  ) {
    // A device's view carries its reading: the listings learn which devices changed, so that a
    // state change costs the views of those devices, not a pass over every device.
    const stale = ({ deviceId }: { deviceId: string }) => {
      for (const listing of this.listings.values()) listing.stale.add(deviceId);
    };
    events.on(this, 'device.state_changed', stale);
    events.on(this, 'device.online_changed', stale);
  }

  view(device: LogicalDevice): DeviceView {
    return this.buildView(device, this.isOnline(device));
  }

  /** The model's reading of a device now (capabilities, class, attributes, reading). */
  model(device: LogicalDevice): DeviceModel {
    return modelOf(device, this.state.get(device.id).state);
  }

  /**
   * One object literal with its keys always in this order: V8 then gives every view one hidden
   * class (rest-and-spread of the record gave each view its own, ~500 bytes more per device).
   */
  private buildView(d: LogicalDevice, online: boolean): DeviceView {
    const { deviceClass, attributes, reading } = this.model(d);
    return {
      id: d.id,
      name: d.name,
      driverKey: d.driverKey,
      driverDeviceId: d.driverDeviceId,
      category: d.category,
      room: d.room,
      tags: d.tags,
      capabilities: d.capabilities,
      properties: d.properties,
      commands: d.commands,
      remoteSources: d.remoteSources,
      removed: d.removed,
      createdAt: d.createdAt,
      updatedAt: d.updatedAt,
      online,
      deviceClass,
      attributes,
      reading,
    };
  }

  isOnline(device: LogicalDevice): boolean {
    if (device.removed) return false;
    // IR devices have no driver to vouch for them; they are as online as their configuration.
    if (device.driverKey === GENERIC_IR) return true;
    return this.state.peek(device.id)?.online ?? false;
  }

  list(options: { includeRemoved?: boolean; category?: string; room?: string } = {}): readonly DeviceView[] {
    const all = this.listing(options.includeRemoved === true);
    if (!options.category && !options.room) return all;
    return all.filter((d) => (!options.category || d.category === options.category) && (!options.room || d.room === options.room));
  }

  /**
   * Every device's view, built once per change of the registry or of connectivity and frozen, so
   * that callers can share it (and surfaces can reuse its serialisation): with 10,000 devices,
   * building the views and their JSON per request was most of a list request's time and memory.
   */
  /**
   * Every listed device's state view by id, frozen, with the time it was taken. It is rebuilt
   * (from the per-device frozen views) only after a device, its state or its connectivity
   * changed: an unchanged home answers with the same value, and `at` says since when it holds.
   */
  stateSnapshot(): StateSnapshot {
    const revision = `${this.registry.revision}:${this.state.revision}`;
    if (this.stateSnapshotCache?.revision === revision) return this.stateSnapshotCache.snapshot;
    const devices: Record<string, Readonly<DeviceStateView>> = {};
    // From the registry, not the device listing: the snapshot carries raw state only, so it never
    // waits for the model's reading of the devices that changed.
    for (const device of this.registry.list({ includeRemoved: false })) {
      const view = this.state.view(device.id);
      const online = this.isOnline(device);
      // Devices without a driver (IR) are as online as their configuration.
      devices[device.id] = view.online === online ? view : Object.freeze({ ...view, online });
    }
    const snapshot = Object.freeze({ at: this.clock.now(), devices: Object.freeze(devices) });
    this.stateSnapshotCache = { revision, snapshot };
    return snapshot;
  }

  private listing(includeRemoved: boolean): readonly DeviceView[] {
    const registryRevision = this.registry.revision;
    const cached = this.listings.get(includeRemoved);
    if (cached?.registryRevision === registryRevision) {
      if (cached.stale.size === 0) return cached.views;
      // The same devices, some of whose state changed: only their views are made again.
      if (cached.stale.size <= cached.views.length / 4) {
        const views = cached.views.slice();
        for (const id of cached.stale) {
          const at = cached.index.get(id);
          const device = this.registry.find(id);
          if (at !== undefined && device) views[at] = this.frozenView(device);
        }
        return this.keep(includeRemoved, { registryRevision, views: Object.freeze(views), index: cached.index, stale: new Set() });
      }
    }
    const devices = this.registry.list({ includeRemoved });
    const views = Object.freeze(devices.map((device) => this.frozenView(device)));
    return this.keep(includeRemoved, { registryRevision, views, index: new Map(devices.map((d, i) => [d.id, i])), stale: new Set() });
  }

  private keep(includeRemoved: boolean, listing: Listing): readonly DeviceView[] {
    this.listings.set(includeRemoved, listing);
    return listing.views;
  }

  /**
   * Devices and state views are replaced, never mutated, on change: a device whose record and
   * state did not change keeps its frozen view (and with it the JSON the surfaces made of it).
   */
  private frozenView(device: LogicalDevice): Readonly<DeviceView> {
    const online = this.isOnline(device);
    const state = this.state.view(device.id);
    const previous = this.frozenViews.get(device);
    if (previous?.view.online === online && previous.state === state) return previous.view;
    const view = Object.freeze(this.buildView(device, online));
    this.frozenViews.set(device, { view, state });
    return view;
  }

  /**
   * Runs a command. A standard command of the device's class (`turn_on`, `set_brightness
   * {brightness}`, `lock`, `set_position {position}`…) is checked against the class and the
   * device's attributes and translated to the device's own command; any other command goes to the
   * device as it is (see `sendOwnCommand`).
   */
  command(id: string, command: string, params: Record<string, unknown> = {}, timeoutMs?: number): Promise<unknown> {
    // Not `async`: it returns the promise it hands on rather than a promise of it (an `async`
    // function returning a promise costs a command extra microtask turns); a failure before that
    // still arrives as a rejection.
    try {
      const device = this.registry.get(id);
      const standard = standardActionName(command);
      if (standard && this.speaksStandard(device, command, standard, params)) return this.standardCommand(device, command, standard, params, timeoutMs);
      return this.sendOwnCommand(device, command, params, timeoutMs);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * A command in the class's standard form: the device does not offer that exact name, or the
   * call carries the standard parameter (so its range is checked even when the names match).
   */
  private speaksStandard(device: LogicalDevice, command: string, action: ActionName, params: Record<string, unknown>): boolean {
    if (!this.offersOwnCommand(device, command)) return true;
    const param = ACTIONS[action].param;
    return ACTIONS[action].value === 'params' || (param !== undefined && param in params);
  }

  private async standardCommand(device: LogicalDevice, command: string, name: ActionName, params: Record<string, unknown>, timeoutMs?: number): Promise<unknown> {
    const model = this.model(device);
    // A device the model knows nothing of (no class, no command list) takes any command as it is.
    if (model.deviceClass === 'generic' && device.commands.length === 0 && device.driverKey !== GENERIC_IR && !classTakes(model, name)) {
      return this.sendOwnCommand(device, command, params, timeoutMs);
    }
    if (!classTakes(model, name)) {
      throw deviceErrors.COMMAND_NOT_IN_CLASS(
        { command, device: device.name, deviceClass: model.deviceClass },
        { details: { deviceId: device.id, command, deviceClass: model.deviceClass, capabilities: model.capabilities } },
      );
    }
    const action = parseAction(name, { params }, model.attributes);
    if (isActionInputProblem(action)) {
      throw deviceErrors.INVALID_COMMAND_PARAMS({ command, problem: action.problem }, { details: { deviceId: device.id, command, field: `params.${action.field}` } });
    }
    const unsupported = () =>
      deviceErrors.COMMAND_NOT_SUPPORTED({ device: device.name, what: `command ${command}` }, { details: { deviceId: device.id, command, supported: this.ownCommandNames(device) } });
    return (await this.perform(device, action, { capabilities: model.capabilities, unsupported, ...(timeoutMs === undefined ? {} : { timeoutMs }) })).result;
  }

  /** Whether the device has a command of this name (a scan of its short list: no array is made per command). */
  private offersOwnCommand(device: LogicalDevice, command: string): boolean {
    if (device.driverKey === GENERIC_IR) return Object.hasOwn((device.properties.irCommands as object | undefined) ?? {}, command);
    for (const c of device.commands) if (c.name === command) return true;
    return false;
  }

  private ownCommandNames(device: LogicalDevice): string[] {
    return device.driverKey === GENERIC_IR ? Object.keys((device.properties.irCommands as object | undefined) ?? {}) : device.commands.map((c) => c.name);
  }

  /**
   * Carries out an abstract action with the device's own command (pressed `repeat` times for step
   * commands); `{unchanged: true}` when the device is already there and its only way is a toggle.
   */
  async perform(
    device: LogicalDevice,
    action: AbstractAction,
    options: { capabilities?: readonly CapabilityName[]; timeoutMs?: number; unsupported?: () => Error } = {},
  ): Promise<{ command?: string; result?: unknown }> {
    const { timeoutMs } = options;
    const state = this.state.get(device.id).state;
    const resolved = resolveAction(device, action, state, options.capabilities ?? deriveCapabilities(device, state));
    if (!resolved) {
      throw options.unsupported?.() ?? deviceErrors.ACTION_NOT_SUPPORTED({ device: device.name, action: action.action.replace(/_/g, ' ') }, { details: { deviceId: device.id, action: action.action } });
    }
    if (resolved.noop) return { result: { unchanged: true } };
    const presses = resolved.repeat ?? 1;
    let result: unknown;
    for (let i = 0; i < presses; i++) result = await this.sendOwnCommand(device, resolved.command, resolved.params, timeoutMs);
    return { command: resolved.command, ...(presses > 1 ? { result: { presses } } : result === undefined ? {} : { result }) };
  }

  /**
   * Sends one of the device's own commands. For GENERIC_IR devices the command is a key of
   * `properties.irCommands`, sent to the extender; for every other device it becomes an ACTION to
   * its driver (a device with a command list takes only those, and the capability commands).
   */
  sendOwnCommand(device: LogicalDevice, command: string, params: Record<string, unknown> = {}, timeoutMs?: number): Promise<unknown> {
    // Not `async`, like `command`: the driver's promise itself, and failures as rejections.
    try {
      if (device.driverKey === GENERIC_IR) return this.sendIrKey(device, command);
      if (device.commands.length > 0 && !device.commands.some((c) => c.name === command) && !isCapabilityCommand(command)) {
        throw deviceErrors.COMMAND_NOT_SUPPORTED(
          { device: device.name, what: `command ${command}` },
          { details: { deviceId: device.id, command, supported: device.commands.map((c) => c.name) } },
        );
      }
      return this.drivers.execute(device, command, params, timeoutMs === undefined ? {} : { timeoutMs });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Equalizer and sound-mode commands a device offers, by name. */
  equalizerCommands(id: string): string[] {
    return this.registry
      .get(id)
      .commands.map((c) => c.name)
      .filter((name) => EQUALIZER_COMMAND.test(name));
  }

  /**
   * Runs one of the device's equalizer or sound-mode commands: only those, so that the
   * equalizer route cannot be used to send any command at all.
   */
  async equalizerCommand(id: string, command: string, params: Record<string, unknown>): Promise<unknown> {
    const offered = this.equalizerCommands(id);
    if (!offered.includes(command)) {
      throw deviceErrors.COMMAND_NOT_SUPPORTED(
        { device: this.registry.get(id).name, what: `equalizer or sound-mode command ${command}` },
        { details: { deviceId: id, command, supported: offered } },
      );
    }
    return this.command(id, command, params);
  }

  hasCapability(id: string, capability: Capability): boolean {
    return hasCapability(this.registry.get(id), capability);
  }

  async capability(id: string, capability: Capability, command: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const device = this.registry.get(id);
    if (!hasCapability(device, capability)) {
      throw deviceErrors.CAPABILITY_NOT_SUPPORTED({ device: device.name, capability }, { details: { deviceId: id, capability } });
    }
    return this.drivers.execute(device, command, params);
  }

  /** An app icon as bytes, asked of the driver once and cached for an hour. */
  async appIcon(id: string, appId: string): Promise<AppIcon> {
    const key = `${id}\u0000${appId}`;
    const cached = this.icons.get(key);
    if (cached && this.clock.now() - cached.at < ICON_TTL_MS) return cached.icon;
    const result = (await this.capability(id, 'apps', CAPABILITY_COMMANDS.apps.icon, { appId })) as { contentType?: unknown; data?: unknown } | null;
    if (!result || typeof result.data !== 'string' || typeof result.contentType !== 'string' || !/^image\/[\w.+-]+$/.test(result.contentType)) {
      throw deviceErrors.INVALID_DRIVER_RESULT(
        { command: CAPABILITY_COMMANDS.apps.icon, problem: 'it is not {contentType: "image/…", data: base64}' },
        { details: { deviceId: id, appId } },
      );
    }
    const bytes = Buffer.from(result.data, 'base64');
    if (bytes.length === 0 || bytes.length > MAX_ICON_BYTES) {
      throw deviceErrors.INVALID_DRIVER_RESULT(
        { command: CAPABILITY_COMMANDS.apps.icon, problem: `the icon is empty or larger than ${MAX_ICON_BYTES} bytes` },
        { details: { deviceId: id, appId } },
      );
    }
    const icon = { contentType: result.contentType, bytes };
    if (this.icons.size >= ICON_CACHE_LIMIT) this.icons.delete(this.icons.keys().next().value!);
    this.icons.set(key, { icon, at: this.clock.now() });
    return icon;
  }

  async updateMetadata(id: string, meta: DeviceMetadata): Promise<DeviceView> {
    this.registry.get(id);
    return this.view(await this.registry.updateMetadata(id, meta));
  }

  /** Creates or edits a GENERIC_IR device. */
  async saveIrDevice(input: IrDeviceInput): Promise<DeviceView> {
    if (!isValidExtenderIp(input.extenderIp)) throw irErrors.INVALID_EXTENDER_IP({ extenderIp: input.extenderIp }, { details: { field: 'extenderIp' } });
    const problems = validateIrCommands(input.irCommands);
    if (problems.length > 0) throw irErrors.INVALID_IR_COMMAND({ problem: problems[0]! }, { details: { field: 'irCommands', problems } });
    const properties: Record<string, unknown> = { extenderIp: input.extenderIp, irCommands: input.irCommands };
    const commands = Object.keys(input.irCommands).map((name) => ({ name }));
    if (input.id) {
      const existing = this.registry.get(input.id);
      if (existing.driverKey !== GENERIC_IR) throw deviceErrors.NOT_AN_IR_DEVICE({ id: input.id }, { details: { deviceId: input.id } });
      return this.view(
        await this.registry.replace(input.id, {
          name: input.name,
          properties: { ...existing.properties, ...properties },
          commands,
          ...(input.category !== undefined ? { category: input.category } : {}),
          ...(input.room !== undefined ? { room: input.room } : {}),
          ...(input.tags !== undefined ? { tags: input.tags } : {}),
        }),
      );
    }
    return this.view(
      await this.registry.create({
        name: input.name,
        driverKey: GENERIC_IR,
        driverDeviceId: null,
        category: input.category ?? 'ir',
        room: input.room ?? null,
        tags: input.tags ?? [],
        capabilities: ['ir'],
        properties,
        commands,
        remoteSources: [],
      }),
    );
  }

  /** Sends raw IR data without a device (IR test tool). */
  async transmitIr(extenderIp: string, cmd: IrCommand, origin: { deviceId: string | null; key: string | null } = { deviceId: null, key: null }) {
    if (!isValidExtenderIp(extenderIp)) throw irErrors.INVALID_EXTENDER_IP({ extenderIp }, { details: { field: 'extenderIp' } });
    const problems = validateIrCommand(cmd);
    if (problems.length > 0) throw irErrors.INVALID_IR_COMMAND({ problem: problems[0]! }, { details: { problems } });
    const sent = await this.ir.send(extenderIp, cmd);
    this.events.emit('ir.transmitted', { ...origin, host: extenderIp, freqKhz: cmd.freq_khz, raw: cmd.raw, line: sent.line, at: this.clock.now() });
    return sent;
  }

  /**
   * The IR test tool: a key of an IR device (`deviceId` + `key`), or raw data to an extender
   * (`extenderIp`, `freq_khz`, `raw`). Either way the transmission reaches `ir.transmitted`.
   */
  async testIr(input: { deviceId?: string; key?: string; extenderIp?: string; freq_khz?: number; raw?: number[] }): Promise<unknown> {
    if (input.deviceId !== undefined && input.key !== undefined) return this.command(input.deviceId, input.key);
    const sent = await this.transmitIr(input.extenderIp ?? '', { freq_khz: input.freq_khz ?? Number.NaN, raw: input.raw ?? [] });
    return { line: sent.line.replace(/\r$/, ''), reply: sent.reply };
  }

  private async sendIrKey(device: LogicalDevice, key: string): Promise<unknown> {
    const props = device.properties as { extenderIp?: unknown; irCommands?: Record<string, IrCommand> };
    const cmd = props.irCommands && Object.hasOwn(props.irCommands, key) ? props.irCommands[key] : undefined;
    if (!cmd) {
      throw deviceErrors.COMMAND_NOT_SUPPORTED(
        { device: device.name, what: `IR key ${key}` },
        { details: { deviceId: device.id, command: key, supported: Object.keys(props.irCommands ?? {}) } },
      );
    }
    if (typeof props.extenderIp !== 'string') throw deviceErrors.IR_DEVICE_MISCONFIGURED({ device: device.name }, { details: { deviceId: device.id } });
    const sent = await this.transmitIr(props.extenderIp, cmd, { deviceId: device.id, key });
    return { key, extenderIp: props.extenderIp, line: sent.line.replace(/\r$/, '') };
  }
}

function isCapabilityCommand(command: string): boolean {
  return Object.values(CAPABILITY_COMMANDS).some((group) => Object.values(group).includes(command as never));
}
