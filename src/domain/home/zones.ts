import type { Clock } from '../../platform/clock.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import { errorInfo, offeredCommand } from '../devices/command-results.js';
import type { DeviceActionResult } from '../devices/model.js';
import { homeErrors } from './errors.js';
import type { Zone, ZoneGroup } from './model.js';
import type { ProgramDirectory } from './ports.js';

const VOLUME_SET = ['volume_set', 'set_volume'];
const MAX_STEP_PRESSES = 20;

export interface ResolvedZone extends Zone {
  devices: Array<{ id: string; name: string; online: boolean; volumeCapable: boolean; volume: number | null }>;
  program: { id: string; name: string } | null;
}

/** Zones: devices grouped for volume and an assigned program. Zone groups: zones grouped. */
export class ZoneService {
  constructor(
    readonly zones: DocumentCollection<Zone>,
    readonly groups: DocumentCollection<ZoneGroup>,
    private readonly devices: DeviceService,
    private readonly programs: ProgramDirectory,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
  ) {}

  resolve(zone: Zone): ResolvedZone {
    const program = zone.programId ? this.programs.find(zone.programId) : undefined;
    return {
      ...zone,
      devices: zone.deviceIds.flatMap((id) => {
        const device = this.devices.registry.find(id);
        if (!device || device.removed) return [];
        const volume = this.devices.state.get(id).state.volume;
        return [{ id, name: device.name, online: this.devices.isOnline(device), volumeCapable: this.isVolumeCapable(id), volume: typeof volume === 'number' ? volume : null }];
      }),
      program: program ? { id: program.id, name: program.name } : null,
    };
  }

  list(): ResolvedZone[] {
    return this.zones.list().map((z) => this.resolve(z));
  }

  async save(input: { id?: string; name: string; deviceIds: string[]; programId?: string | null }): Promise<ResolvedZone> {
    this.devices.registry.requireAll(input.deviceIds);
    if (input.programId) this.programs.require(input.programId);
    const { item, created } = await this.zones.save({ ...input, deviceIds: [...new Set(input.deviceIds)], programId: input.programId ?? null });
    this.events.emit(created ? 'zone.created' : 'zone.updated', { zone: item, at: this.clock.now() });
    return this.resolve(item);
  }

  /** Removes a zone and takes it out of every zone group; refused (409 ZONE_IN_USE) while programs use it. */
  async remove(id: string): Promise<void> {
    this.zones.get(id);
    const users = this.programs.programsUsingZone(id).map((p) => ({ kind: 'program', id: p.id, name: p.name }));
    if (users.length > 0) throw homeErrors.ZONE_IN_USE({ id, users: users.map((u) => `program ${u.name}`).join(', ') }, { details: { users } });
    await this.zones.remove(id);
    for (const group of this.groups.list()) {
      if (group.zoneIds.includes(id)) await this.groups.update(group.id, (g) => ({ zoneIds: g.zoneIds.filter((z) => z !== id) }));
    }
    this.events.emit('zone.removed', { zoneId: id, at: this.clock.now() });
  }

  /**
   * Sets absolute (`volume`) or relative (`delta`) volume on the zone's volume-capable devices, or
   * on the given subset. Each device gets its own result; a device without volume is an error
   * entry, not a failure of the call.
   */
  async setVolume(id: string, change: { volume?: number; delta?: number; deviceIds?: string[] }): Promise<{ zoneId: string; results: DeviceActionResult[] }> {
    const zone = this.zones.get(id);
    if ((change.volume === undefined) === (change.delta === undefined)) {
      throw homeErrors.VOLUME_CHANGE_REQUIRED({}, { details: { fields: ['volume', 'delta'] } });
    }
    const targets = change.deviceIds ?? zone.deviceIds;
    const outside = targets.filter((d) => !zone.deviceIds.includes(d));
    if (outside.length > 0) throw homeErrors.DEVICE_NOT_IN_ZONE({ deviceIds: outside.join(', '), zone: zone.name }, { details: { deviceIds: outside } });
    const results = await Promise.all(targets.map((deviceId) => this.volumeOf(deviceId, change)));
    this.events.emit('zone.volume_changed', { zoneId: id, results, at: this.clock.now() });
    return { zoneId: id, results };
  }

  async saveGroup(input: { id?: string; name: string; zoneIds?: string[] }): Promise<ZoneGroup> {
    const zoneIds = input.zoneIds ?? (input.id ? this.groups.find(input.id)?.zoneIds : undefined) ?? [];
    this.checkZones(zoneIds);
    const { item, created } = await this.groups.save({ id: input.id, name: input.name, zoneIds: [...new Set(zoneIds)] });
    this.events.emit(created ? 'zone_group.created' : 'zone_group.updated', { group: item, at: this.clock.now() });
    return item;
  }

  async removeGroup(id: string): Promise<void> {
    await this.groups.remove(id);
    this.events.emit('zone_group.removed', { groupId: id, at: this.clock.now() });
  }

  async assignZones(id: string, zoneIds: string[], mode: 'add' | 'replace'): Promise<ZoneGroup> {
    this.checkZones(zoneIds);
    const group = await this.groups.update(id, (g) => ({ zoneIds: [...new Set(mode === 'replace' ? zoneIds : [...g.zoneIds, ...zoneIds])] }));
    this.events.emit('zone_group.updated', { group, at: this.clock.now() });
    return group;
  }

  /** Zones and their users that reference a program (for integrity checks). */
  zonesUsingProgram(programId: string): Zone[] {
    return this.zones.list().filter((z) => z.programId === programId);
  }

  isVolumeCapable(deviceId: string): boolean {
    const device = this.devices.registry.find(deviceId);
    if (!device) return false;
    return device.capabilities.includes('volume') || device.commands.some((c) => VOLUME_SET.includes(c.name) || c.name === 'volume_up');
  }

  private async volumeOf(deviceId: string, change: { volume?: number; delta?: number }): Promise<DeviceActionResult> {
    if (!this.isVolumeCapable(deviceId)) {
      return { deviceId, ok: false, error: homeErrors.VOLUME_NOT_SUPPORTED.info({ problem: 'has no volume control' }) };
    }
    try {
      const setter = offeredCommand(this.devices, deviceId, VOLUME_SET);
      const current = this.devices.state.get(deviceId).state.volume;
      if (change.volume !== undefined || (typeof current === 'number' && setter)) {
        if (!setter) return { deviceId, ok: false, error: homeErrors.VOLUME_NOT_SUPPORTED.info({ problem: 'only steps its volume; send a delta' }) };
        const target = clamp(change.volume ?? (current as number) + (change.delta ?? 0));
        const result = await this.devices.command(deviceId, setter, { volume: target });
        return { deviceId, ok: true, command: setter, result: result ?? { volume: target } };
      }
      // No absolute control or no known level: press volume up/down as often as the delta says.
      const delta = change.delta ?? 0;
      const command = delta >= 0 ? 'volume_up' : 'volume_down';
      const presses = Math.min(Math.abs(delta), MAX_STEP_PRESSES);
      for (let i = 0; i < presses; i++) await this.devices.command(deviceId, command, {});
      return { deviceId, ok: true, command, result: { presses } };
    } catch (err) {
      return { deviceId, ok: false, error: errorInfo(err) };
    }
  }

  private checkZones(zoneIds: string[]): void {
    const missing = zoneIds.filter((z) => !this.zones.find(z));
    if (missing.length > 0) throw homeErrors.ZONE_NOT_FOUND({ id: missing.join(', ') }, { details: { zoneIds: missing } });
  }
}

function clamp(volume: number): number {
  return Math.max(0, Math.min(100, Math.round(volume)));
}
