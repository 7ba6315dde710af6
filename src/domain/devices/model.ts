import type { DeviceAttributes, DeviceClass } from './capabilities.js';

/** A command a device offers, as its driver declared it (or the IR key list for GENERIC_IR). */
export interface DeviceCommandSpec {
  name: string;
  label?: string;
  /** JSON-Schema-like description of the params, as the driver gave it. */
  params?: Record<string, unknown>;
}

/** A source that a handheld remote can control in a space (e.g. the TV, or the receiver's HDMI 2). */
export interface RemoteSourceMeta {
  id: string;
  label: string;
  /** Input to select on this device when the source is activated, if any. */
  input?: string;
  /** Other devices (hub ids) that must be powered on for this source. */
  requires?: string[];
}

export interface DeviceMetadata {
  tags?: string[];
  /** What kind of device it is (light, tv, …); a driver's later report of its own category replaces it. */
  category?: string;
  /** Primary room (space id). */
  room?: string | null;
  remoteSources?: RemoteSourceMeta[];
}

export interface LogicalDevice {
  id: string;
  name: string;
  driverKey: string;
  /** The id the driver reported, when the device came from a driver. */
  driverDeviceId: string | null;
  category: string;
  room: string | null;
  tags: string[];
  capabilities: string[];
  properties: Record<string, unknown>;
  commands: DeviceCommandSpec[];
  remoteSources: RemoteSourceMeta[];
  /** The class its driver (or integration) declared; absent when derived. */
  declaredClass?: DeviceClass;
  /** Ranges, units and modes its driver declared; the rest is derived. */
  declaredAttributes?: DeviceAttributes;
  removed: boolean;
  createdAt: number;
  updatedAt: number;
}

export const GENERIC_IR = 'GENERIC_IR';

export interface DeviceRepository {
  loadAll(): Promise<LogicalDevice[]>;
  save(device: LogicalDevice): Promise<void>;
}

/** Result of one device action inside a multi-device operation: failures are entries, not throws. */
export interface DeviceActionResult {
  deviceId: string;
  ok: boolean;
  command?: string;
  result?: unknown;
  error?: { code: string; message: string };
}
