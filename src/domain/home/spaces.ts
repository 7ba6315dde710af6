import type { Clock } from '../../platform/clock.js';
import type { DeviceService, DeviceView } from '../devices/device-service.js';
import { deviceErrors } from '../devices/errors.js';
import type { DomainEventBus } from '../events.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import { offeredCommand, tryCommand } from '../devices/command-results.js';
import type { DeviceActionResult } from '../devices/model.js';
import { homeErrors } from './errors.js';
import type { RemoteSource, Space } from './model.js';

const POWER_ON = ['power_on', 'turn_on', 'on'];
const SELECT_INPUT = ['select_input', 'set_input', 'input'];

/** Something that refers to spaces and must let go of one that is removed. */
export interface SpaceDependent {
  spaceRemoved(spaceId: string): Promise<void>;
}

/** Rooms. A device belongs to at most one space: its primary room (`device.room`). */
export class SpaceService {
  constructor(
    readonly spaces: DocumentCollection<Space>,
    private readonly devices: DeviceService,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    /** Told of a removal before `space.removed` is emitted, so they have let go by then. */
    private readonly dependents: readonly SpaceDependent[],
  ) {}

  list(): Space[] {
    return this.spaces.list();
  }

  async save(input: { id?: string; name: string; icon?: string; floor?: string; order?: number }): Promise<Space> {
    const existing = input.id ? this.spaces.find(input.id) : undefined;
    const { item, created } = await this.spaces.save({ ...input, activeSourceId: existing?.activeSourceId ?? null });
    this.events.emit(created ? 'space.created' : 'space.updated', { space: item, at: this.clock.now() });
    return item;
  }

  /** Removes a space; its devices stay, unassigned. */
  async remove(id: string): Promise<{ removed: Space; unassignedDevices: string[] }> {
    const space = this.spaces.get(id);
    const unassigned: string[] = [];
    for (const device of this.devices.registry.list({ includeRemoved: true })) {
      if (device.room !== id) continue;
      await this.devices.registry.updateMetadata(device.id, { room: null });
      unassigned.push(device.id);
    }
    await this.spaces.remove(id);
    for (const dependent of this.dependents) await dependent.spaceRemoved(id);
    this.events.emit('space.removed', { spaceId: id, at: this.clock.now() });
    return { removed: space, unassignedDevices: unassigned };
  }

  /** Refuses (404 SPACE_NOT_FOUND naming every one) unless each id names a space. */
  requireAll(ids: Iterable<string>): void {
    const missing = [...new Set(ids)].filter((id) => !this.spaces.find(id));
    if (missing.length > 0) throw homeErrors.SPACE_NOT_FOUND({ id: missing.join(', ') }, { details: { spaceIds: missing } });
  }

  devicesOf(id: string): DeviceView[] {
    this.spaces.get(id);
    return [...this.devices.list({ room: id })];
  }

  /**
   * Moves one device into a space, or out of every space (`null`): its primary room. Told as
   * `space.devices_assigned` (into a space) or as the device's update (out of one), as an
   * assignment and a metadata change are.
   */
  async move(deviceId: string, spaceId: string | null): Promise<DeviceView> {
    if (spaceId !== null) {
      await this.assign(spaceId, [deviceId], 'add');
      return this.devices.view(this.devices.registry.get(deviceId));
    }
    return this.devices.updateMetadata(deviceId, { room: null });
  }

  /** Assigns devices to a space; `replace` also unassigns the space's other devices. */
  async assign(id: string, deviceIds: string[], mode: 'add' | 'replace'): Promise<DeviceView[]> {
    this.spaces.get(id);
    this.devices.registry.requireAll(deviceIds);
    const wanted = new Set(deviceIds);
    if (mode === 'replace') {
      for (const device of this.devices.registry.list()) {
        if (device.room === id && !wanted.has(device.id)) await this.devices.registry.updateMetadata(device.id, { room: null });
      }
    }
    for (const deviceId of wanted) await this.devices.registry.updateMetadata(deviceId, { room: id });
    this.events.emit('space.devices_assigned', { spaceId: id, deviceIds: [...wanted], mode, at: this.clock.now() });
    return this.devicesOf(id);
  }

  remoteSources(id: string): RemoteSource[] {
    const space = this.spaces.get(id);
    const sources: RemoteSource[] = [];
    for (const device of this.devices.registry.list()) {
      if (device.room !== id) continue;
      for (const meta of device.remoteSources) {
        const sourceId = `${device.id}:${meta.id}`;
        sources.push({
          id: sourceId,
          spaceId: id,
          deviceId: device.id,
          label: meta.label,
          ...(meta.input ? { input: meta.input } : {}),
          requires: meta.requires ?? [],
          active: space.activeSourceId === sourceId,
        });
      }
    }
    return sources;
  }

  /**
   * Brings a source up: powers on the devices it requires and the device itself, selects its
   * input, and makes it the space's active source. Device failures are reported, not thrown.
   */
  async activate(id: string, sourceId: string): Promise<{ source: RemoteSource; results: DeviceActionResult[] }> {
    const source = this.remoteSources(id).find((s) => s.id === sourceId);
    if (!source) throw homeErrors.REMOTE_SOURCE_NOT_FOUND({ spaceId: id, sourceId }, { details: { spaceId: id, sourceId } });
    const results: DeviceActionResult[] = [];
    // Checked before anything is switched on, so a refused activation changes nothing.
    let inputCommand: string | undefined;
    if (source.input) {
      const command = offeredCommand(this.devices, source.deviceId, SELECT_INPUT);
      if (!command) throw homeErrors.INPUT_SELECT_NOT_SUPPORTED({ deviceId: source.deviceId }, { details: { deviceId: source.deviceId } });
      inputCommand = command;
    }
    for (const deviceId of [...source.requires, source.deviceId]) {
      if (!this.devices.registry.find(deviceId)) {
        results.push({ deviceId, ok: false, error: deviceErrors.DEVICE_NOT_FOUND.info({ id: deviceId }) });
        continue;
      }
      const command = offeredCommand(this.devices, deviceId, POWER_ON);
      if (command) results.push(await tryCommand(this.devices, deviceId, command));
    }
    if (source.input && inputCommand) results.push(await tryCommand(this.devices, source.deviceId, inputCommand, { input: source.input }));
    await this.spaces.update(id, () => ({ activeSourceId: sourceId }));
    this.events.emit('space.source_activated', { spaceId: id, sourceId, deviceId: source.deviceId, at: this.clock.now() });
    return { source: { ...source, active: true }, results };
  }
}
