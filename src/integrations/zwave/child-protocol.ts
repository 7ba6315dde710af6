import type { DriverEvent } from '../../domain/drivers/messages.js';
import type { NetworkFailure } from '../../platform/network-failures.js';

/**
 * What the hub and its Z-Wave process (network-child.ts, which runs zwave-js) say to each other:
 * one JSON object per line, the hub's on the child's stdin, the child's on its stdout. The keys
 * travel on the pipe, never in the arguments or the environment, which other users of the box
 * can read.
 */

export type InclusionMode = 'idle' | 'including' | 'excluding';

export interface ZwaveNodeStatus {
  nodeId: number;
  name: string;
  /** zwave-js's node status: `alive`, `dead`, `asleep`, `awake` or `unknown`. */
  status: string;
  /** zwave-js's interview stage: `Complete` once interviewed. */
  interviewStage: string;
  ready: boolean;
  manufacturer?: string;
  product?: string;
  /** The highest security class it was included with: `S2_AccessControl`, `S2_Authenticated`, `S2_Unauthenticated`, `S0_Legacy`, `None`. */
  security?: string;
  /** The hub devices it became. */
  devices: Array<{ id: string; deviceClass: string; name: string }>;
  /** Command classes it has that the mapping does not use. */
  unmapped: string[];
}

/** The network as the child sees it: what the status shows of the controller and the nodes. */
export interface NetworkSnapshot {
  homeId?: string;
  inclusion: { mode: InclusionMode; pinRequested: boolean; dsk?: string; last?: { nodeId: number; security: string; at: number } };
  nodes: ZwaveNodeStatus[];
  /** Nodes that do not answer (their devices are offline). */
  dead: number[];
}

export interface OpenOptions {
  port: string;
  cacheDir: string;
  /** Hex of each of the S0 and S2 keys. */
  keys: Record<string, string>;
  commandTimeoutMs: number;
  driverOptions?: Record<string, unknown>;
}

/** The admin's calls, run by the child on the controller. */
export type AdminCall =
  | { call: 'startInclusion'; security: 'default' | 'insecure' }
  | { call: 'startExclusion' }
  | { call: 'stopInclusion' }
  | { call: 'enterPin'; pin: string }
  | { call: 'reinterview'; nodeId: number }
  | { call: 'heal'; nodeId: number }
  | { call: 'removeFailed'; nodeId: number };

export type HubToChild =
  | { t: 'open'; options: OpenOptions }
  /** A standard command for one of its devices. */
  | { t: 'command'; id: number; deviceId: string; command: string; params: Record<string, unknown> }
  | ({ t: 'call'; id: number } & AdminCall)
  | { t: 'close' };

/** Why a call failed: a catalogued Z-Wave error (its code and parameters), or the device's absence (a network failure). */
export type CallFailure = { code: string; params?: Record<string, string | number> } | { network: NetworkFailure; message: string };

export type ChildToHub =
  /** The driver is ready: the controller answered and the nodes are known. */
  | { t: 'ready'; snapshot: NetworkSnapshot }
  /** The stick could not be opened, or the driver gave up on it; the child exits after this. */
  | { t: 'failed'; error: string }
  | { t: 'snapshot'; snapshot: NetworkSnapshot }
  /** What its devices do, as a driver says it (DEVICE_DISCOVERED, STATE_UPDATE, DEVICE_REMOVED, BUTTON_PRESSED). */
  | { t: 'driver'; event: DriverEvent }
  | { t: 'online'; deviceIds: string[]; online: boolean }
  | { t: 'answer'; id: number; result?: unknown; error?: CallFailure; snapshot: NetworkSnapshot }
  | { t: 'log'; level: 'info' | 'warn' | 'error'; obj: object; msg: string };

/** The longest line either side writes: a snapshot of a few hundred nodes. */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;
