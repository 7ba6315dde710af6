/** A remote controller paired with the hub. Its token is only ever stored as a SHA-256 hash. */
export interface PairedRemote {
  id: string;
  name: string;
  kind?: string;
  tokenHash: string;
  /** The account that confirmed the pairing, or `code` when the remote entered the code shown on the hub. */
  pairedBy: string;
  activeSpaceId: string | null;
  createdAt: number;
  updatedAt: number;
  lastSeenAt: number | null;
  lastAddress: string | null;
}

export type PairingStatus = 'pending' | 'paired' | 'rejected' | 'expired';
export type PairingRejection = 'rejected_by_household' | 'too_many_attempts';
/** What settled or changed a request, for the surfaces that tell the remote. */
export type PairingChange = 'code' | 'household' | 'attempts' | 'expiry';

/** An open (or recently settled) pairing request; held in memory only. */
export interface PairingRequest {
  id: string;
  name: string;
  kind?: string;
  code: string;
  clientAddress: string;
  openedAt: number;
  expiresAt: number;
  status: PairingStatus;
  reason?: PairingRejection;
  wrongCodes: number;
  remoteId?: string;
  /** The new remote's token, until it has been handed over once. */
  token?: string;
  tokenDelivered: boolean;
}

/** What a remote learns of its request (REST answer, poll, `remote:pairing:status`). */
export interface PairingView {
  requestId: string;
  status: PairingStatus;
  expiresAt: string;
  codeLength: number;
  attemptsLeft?: number;
  reason?: PairingRejection;
  /** Only in the first answer after pairing. */
  token?: string;
  tokenDelivered?: boolean;
  remote?: { id: string; name: string; activeSpaceId: string | null };
}
