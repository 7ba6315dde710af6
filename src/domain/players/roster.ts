import type { Clock } from '../../platform/clock.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { StateAuthority } from '../state/state-authority.js';
import type { AccessDetails, PlayerRecord, PlayerStatus, RosterRecord, StatusSource } from './model.js';

/** What the roster reads of the runtime: the device registry and the state authority. */
export interface RuntimeDevices {
  readonly registry: Pick<DeviceRegistry, 'find' | 'get'>;
  readonly state: Pick<StateAuthority, 'peek'>;
}

/** What the roster reads of the home: space names. */
export interface SpaceNames {
  find(id: string): { name: string } | undefined;
}

export interface ResolvedStatus {
  online: boolean;
  status: PlayerStatus;
  statusSource: StatusSource;
  lastSeenAt: string | null;
}

export function normalizeAccessDetails(details: AccessDetails): Array<{ key: string; value: string }> {
  const pairs = Array.isArray(details) ? details : Object.entries(details).map(([key, value]) => ({ key, value }));
  return pairs.map(({ key, value }) => ({ key, value: String(value) }));
}

export const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * The player status authority and the roster view. A player's status is the runtime's when the
 * state authority vouches for its linked logical device (the device exists, is not removed, and
 * a driver reported it online: DEVICE_DISCOVERED or STATE_UPDATE on a link that is still up);
 * otherwise the record's persisted status; otherwise `offline`, source `unknown`. The player's
 * `connection.ip` is never probed: a LAN answer says nothing about the player the hub controls.
 */
export class Roster {
  constructor(
    private readonly devices: RuntimeDevices,
    private readonly spaces: SpaceNames,
    private readonly clock: Clock,
  ) {}

  /** Whether the state authority has the device online now. IR devices never count: no driver vouches for them. */
  isLive(deviceId: string): boolean {
    const device = this.devices.registry.find(deviceId);
    return !!device && !device.removed && this.devices.state.peek(deviceId)?.online === true;
  }

  status(record: PlayerRecord): ResolvedStatus {
    if (record.logicalDeviceId && this.isLive(record.logicalDeviceId)) {
      return { online: true, status: 'online', statusSource: 'runtime', lastSeenAt: isoOrNull(this.clock.now()) };
    }
    const persisted = record.persistedStatus;
    if (persisted) return { online: persisted.status === 'online', status: persisted.status, statusSource: 'persisted', lastSeenAt: isoOrNull(persisted.lastSeenAt) };
    return { online: false, status: 'offline', statusSource: 'unknown', lastSeenAt: null };
  }

  /** The record's room, or else its linked device's; none when the space is gone. */
  room(record: PlayerRecord): { room: string; roomId: string | null } {
    const roomId = record.roomId ?? (record.logicalDeviceId ? this.devices.registry.find(record.logicalDeviceId)?.room : undefined);
    const space = roomId ? this.spaces.find(roomId) : undefined;
    return space && roomId ? { room: space.name, roomId } : { room: '', roomId: null };
  }

  view(record: PlayerRecord): RosterRecord {
    const { ip, port, secure, timeoutMs } = record.connection;
    return {
      id: record.id,
      ...(record.logicalDeviceId ? { logicalDeviceId: record.logicalDeviceId } : {}),
      name: record.name,
      ...(record.brand ? { brand: record.brand } : {}),
      category: record.category,
      ...this.room(record),
      accessDetails: normalizeAccessDetails(record.accessDetails),
      connection: { ip, port, ...(secure === undefined ? {} : { secure }), ...(timeoutMs === undefined ? {} : { timeoutMs }) },
      ...this.status(record),
    };
  }
}
