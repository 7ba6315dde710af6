/** Access details as an admin gave them: a map, or a list of key/value pairs. */
export type AccessDetailValue = string | number | boolean;
export type AccessDetails = Record<string, AccessDetailValue> | Array<{ key: string; value: AccessDetailValue }>;

export interface PlayerConnection {
  ip: string;
  port: number;
  secure?: boolean;
  timeoutMs?: number;
}

export type PlayerStatus = 'online' | 'offline';

/**
 * The last status known of a player, kept with the record so that an answer survives the
 * device's disappearance and hub restarts. `origin` says who wrote it: the hub watching the
 * linked logical device (`runtime`), or a fleet peer or admin (`report`).
 */
export interface PersistedStatus {
  status: PlayerStatus;
  /** Epoch ms; null when the player was never seen online. */
  lastSeenAt: number | null;
  origin: 'runtime' | 'report';
}

/** A fleet player, as the admin manages it. `id` is its fleet identity: chosen once, never changed. */
export interface PlayerRecord {
  id: string;
  logicalDeviceId?: string;
  name: string;
  brand?: string;
  category: string;
  roomId?: string;
  accessDetails: AccessDetails;
  connection: PlayerConnection;
  persistedStatus?: PersistedStatus;
  createdAt: number;
  updatedAt: number;
}

/** Which players one user has; the document id is the user id. */
export interface PlayerAssignment {
  id: string;
  playerIds: string[];
  createdAt: number;
  updatedAt: number;
}

/**
 * Where a roster answer's status came from: `runtime` (the linked logical device is live in the
 * state authority), `persisted` (the record's last known status) or `unknown` (neither).
 */
export type StatusSource = 'runtime' | 'persisted' | 'unknown';

/** The spec's player roster record: exactly these fields. */
export interface RosterRecord {
  id: string;
  logicalDeviceId?: string;
  name: string;
  brand?: string;
  category: string;
  room: string;
  roomId: string | null;
  accessDetails: Array<{ key: string; value: string }>;
  connection: PlayerConnection;
  online: boolean;
  status: PlayerStatus;
  statusSource: StatusSource;
  /** ISO 8601; null when never seen. */
  lastSeenAt: string | null;
}
