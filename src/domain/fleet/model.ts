/** A device as the fleet sees it: any hub's, named by a fleet id that stays the same for its life. */
export interface FleetDevice {
  /** `<hubId>:<deviceId>`: the hub it lives on, and its id there. */
  fleetDeviceId: string;
  hubId: string;
  deviceId: string;
  name: string;
  category: string | null;
  driverKey: string | null;
  commands: Array<{ name: string; label?: string; params?: Record<string, unknown> }>;
  online: boolean;
  /** `local` (this hub's), `peer` (the linked hub's, as it last told), `registered` (a hub announced it here). */
  origin: 'local' | 'peer' | 'registered';
}

/** `needs_token`: the stored token cannot be opened with this hub's secret key (a restore on another box); saving the link again fixes it. */
export type LinkState = 'unlinked' | 'linking' | 'linked' | 'error' | 'needs_token';

/** This hub's link to a peer hub, as stored. */
export interface BridgeLinkRecord {
  id: 'link';
  peerUrl: string | null;
  /**
   * The bridge token the peer issued us (we present it; the peer stores only its hash), sealed
   * with this hub's secret key (`SecretBox`, context `linkTokenContext(peerUrl)`). A database from
   * before sealing holds it in clear: it is read as it is and sealed at the next start.
   */
  token: string | null;
  peerHubId: string | null;
  createdAt: number;
  updatedAt: number;
}

/** What a link's sealed token is bound to: this record and its peer, so it opens for no other. */
export const linkTokenContext = (peerUrl: string) => `fleet_link:link:${peerUrl}`;

export type ReleaseStatus = 'pending' | 'installing' | 'installed' | 'failed' | 'rolled_back';

/**
 * How a device's integration release moves: a release is queued (pending), installed, and may
 * fail or be rolled back; a failed or rolled-back one may be queued again, an installed one
 * queued again for a new version.
 */
export const RELEASE_TRANSITIONS: Record<ReleaseStatus | 'none', readonly ReleaseStatus[]> = {
  none: ['pending'],
  pending: ['installing', 'failed'],
  installing: ['installed', 'failed'],
  installed: ['rolled_back', 'pending'],
  failed: ['pending', 'rolled_back'],
  rolled_back: ['pending'],
};

export interface FleetReleaseStatus {
  /** `<key>:<deviceId>`. */
  id: string;
  key: string;
  deviceId: string;
  status: ReleaseStatus;
  error: string | null;
  history: Array<{ status: ReleaseStatus; at: number; error?: string }>;
  createdAt: number;
  updatedAt: number;
}

/** A device another hub announced here with /bridge/devices/register. */
export interface RegisteredFleetDevice {
  /** The fleet id. */
  id: string;
  hubId: string;
  deviceId: string;
  name: string;
  category: string | null;
  commands: FleetDevice['commands'];
  online: boolean;
  state: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/** The hub's identity in a fleet, made once. */
export interface HubIdentityRecord {
  id: 'hub';
  hubId: string;
  createdAt: number;
  updatedAt: number;
}
