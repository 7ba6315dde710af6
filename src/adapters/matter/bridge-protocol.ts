import type { DeviceView } from '../../domain/devices/device-service.js';
import type { MatterRuntimeStatus } from '../../domain/matter/ports.js';

/**
 * What the hub and its Matter bridge process say to each other: one JSON object per line, the
 * hub's on the child's stdin, the child's on its stdout (the child sends everything else it or
 * matter.js writes to stderr, which the hub logs). Device changes go in batches, one per turn of
 * the hub's event loop, each device at most once in a batch with its latest view.
 */

/** The bridge's state as the child last told it: what `status()` answers without asking. */
export type BridgeSnapshot = Pick<MatterRuntimeStatus, 'port' | 'commissioned' | 'fabrics' | 'pairing' | 'devices' | 'unmapped'>;

export interface BridgeStartOptions {
  storageDir: string;
  hubId: string;
  port: number;
  bind: string | undefined;
  mdnsInterface: string | undefined;
}

export type HubToBridge =
  | { t: 'start'; options: BridgeStartOptions; devices: DeviceView[] }
  /** Devices whose view changed (the latest view each), devices gone, and button presses, in the order they came. */
  | { t: 'changes'; views: DeviceView[]; removed: string[]; presses: Array<{ deviceId: string; press: 'single' | 'double' | 'long' }> }
  | { t: 'call'; id: number; call: 'openCommissioningWindow' | 'close' }
  | { t: 'call'; id: number; call: 'removeFabric'; fabricIndex: number }
  /** The hub's answer to a controller's command. */
  | { t: 'commanded'; id: number; error?: string };

export type BridgeToHub =
  | { t: 'started'; snapshot: BridgeSnapshot }
  | { t: 'failed'; error: string }
  | { t: 'snapshot'; snapshot: BridgeSnapshot }
  | { t: 'called'; id: number; error?: string; snapshot: BridgeSnapshot }
  /** A controller's command, to run as the hub's standard command. */
  | { t: 'command'; id: number; deviceId: string; command: string; params: Record<string, unknown>; from: string }
  | { t: 'log'; level: 'info' | 'warn' | 'error'; obj: object; msg: string };

/** The longest line either side writes: a batch or a snapshot of a few thousand devices. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
