import { randomBytes } from 'node:crypto';
import type { DocumentCollection } from '../../platform/document-collection.js';
import { hashToken } from '../auth/auth-service.js';

/**
 * A credential an admin issued for one driverKey, which an external driver presents when it
 * registers on the driver WebSocket (DRIVER_AUTH=token). Stored as a document; the token itself
 * only ever as its SHA-256 (the hashing of account, metrics and remote tokens).
 */
export interface DriverToken {
  id: string;
  driverKey: string;
  label: string | null;
  tokenHash: string;
  /** The account that issued it. */
  createdBy: string | null;
  createdAt: number;
  updatedAt: number;
}

/** What listings show of a token: everything but its hash. */
export type DriverTokenView = Omit<DriverToken, 'tokenHash' | 'updatedAt'>;

/** What a presented token is: the token of this driverKey, or why not. */
export type DriverTokenCheck = { valid: true; token: DriverTokenView } | { valid: false; reason: 'unknown' } | { valid: false; reason: 'other_driver'; token: DriverTokenView };

export function driverTokenView({ tokenHash: _hidden, updatedAt: _updated, ...view }: DriverToken): DriverTokenView {
  return view;
}

/**
 * The driver tokens. Checking one is a hash and a pass over memory (there are a handful); issuing
 * returns the token once; revoking removes it from memory and storage and tells the listeners
 * (the driver manager closes the connections that registered with it). In a cluster, tokens
 * issued or revoked on another instance arrive through the collection.
 */
export class DriverTokens {
  private readonly revokedListeners = new Set<(id: string) => void>();
  private loaded = false;
  private readonly loading: Promise<void>;
  private markLoaded!: () => void;

  constructor(readonly tokens: DocumentCollection<DriverToken>) {
    this.loading = new Promise((resolve) => (this.markLoaded = resolve));
    // Revoked on another instance sharing the database.
    tokens.followChanges((id, before, after) => {
      if (before && !after) for (const listener of this.revokedListeners) listener(id);
    });
  }

  async load(): Promise<void> {
    await this.tokens.load();
    this.loaded = true;
    this.markLoaded();
  }

  /** Undefined once the tokens are loaded; before, the promise of it (a driver may connect while the hub starts). */
  whenLoaded(): Promise<void> | undefined {
    return this.loaded ? undefined : this.loading;
  }

  /** Calls `listener` with the id of every token revoked, here or on another instance. */
  onRevoked(listener: (id: string) => void): void {
    this.revokedListeners.add(listener);
  }

  list(): DriverTokenView[] {
    return this.tokens.list().map(driverTokenView);
  }

  /** Issues a token for the driverKey; the answer is the only time the token exists outside the driver. */
  async create(fields: { driverKey: string; label?: string }, createdBy: string | null): Promise<{ record: DriverTokenView; token: string }> {
    const token = randomBytes(32).toString('base64url');
    const { item } = await this.tokens.save({ driverKey: fields.driverKey, label: fields.label ?? null, tokenHash: hashToken(token), createdBy });
    return { record: driverTokenView(item), token };
  }

  async revoke(id: string): Promise<DriverTokenView> {
    const removed = await this.tokens.remove(id);
    for (const listener of this.revokedListeners) listener(id);
    return driverTokenView(removed);
  }

  check(driverKey: string, token: string): DriverTokenCheck {
    const tokenHash = hashToken(token);
    const found = this.tokens.list().find((t) => t.tokenHash === tokenHash);
    if (!found) return { valid: false, reason: 'unknown' };
    if (found.driverKey !== driverKey) return { valid: false, reason: 'other_driver', token: driverTokenView(found) };
    return { valid: true, token: driverTokenView(found) };
  }
}
