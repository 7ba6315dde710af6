import { createHash } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import { DocumentCollection } from '../../platform/document-collection.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { hashPassword, verifyPassword } from '../auth/passwords.js';
import { mqttErrors } from './errors.js';

/** An account of the embedded broker (MQTT_URL=embedded): a device or dashboard that connects to the hub's broker. */
export interface BrokerUser {
  /** The username, which is also its id. */
  id: string;
  passwordHash: string;
  createdAt: number;
  updatedAt: number;
}

export interface BrokerUserView {
  username: string;
  createdAt: number;
}

/** How long a checked username and password is remembered: devices reconnect often, scrypt is slow on purpose. */
const VERIFIED_TTL_MS = 10 * 60_000;

/**
 * The embedded broker's users, which an admin creates (docs/mqtt.md). Stored with the other
 * documents (so a backup carries them), passwords as scrypt hashes like the hub's accounts.
 */
export class BrokerUsers {
  private readonly users: DocumentCollection<BrokerUser>;
  private readonly verified = new Map<string, number>();
  private readonly creating = new Set<string>();

  constructor(
    repository: DocumentRepository<BrokerUser>,
    private readonly clock: Clock,
  ) {
    this.users = new DocumentCollection(repository, clock, mqttErrors.MQTT_USER_NOT_FOUND);
  }

  load(): Promise<void> {
    return this.users.load();
  }

  list(): BrokerUserView[] {
    return this.users.list().map((u) => ({ username: u.id, createdAt: u.createdAt }));
  }

  get size(): number {
    return this.users.list().length;
  }

  async create(username: string, password: string): Promise<BrokerUserView> {
    // Claimed before the (slow) hash: of two creations of one name at once, the second is refused.
    if (this.users.find(username) || this.creating.has(username)) throw mqttErrors.MQTT_USER_EXISTS({ username }, { details: { username } });
    this.creating.add(username);
    try {
      const { item } = await this.users.save({ id: username, passwordHash: await hashPassword(password) });
      return { username: item.id, createdAt: item.createdAt };
    } finally {
      this.creating.delete(username);
    }
  }

  async remove(username: string): Promise<BrokerUserView> {
    const removed = await this.users.remove(username);
    for (const key of [...this.verified.keys()]) if (key.startsWith(`${username}\u0000`)) this.verified.delete(key);
    return { username: removed.id, createdAt: removed.createdAt };
  }

  /** Whether the broker lets this client in. */
  async verify(username: string, password: string): Promise<boolean> {
    const user = this.users.find(username);
    if (!user) return false;
    const key = `${username}\u0000${createHash('sha256').update(`${user.passwordHash}\u0000${password}`).digest('base64url')}`;
    const until = this.verified.get(key);
    if (until !== undefined && until > this.clock.now()) return true;
    const ok = await verifyPassword(password, user.passwordHash);
    if (ok) {
      if (this.verified.size > 1000) this.verified.clear();
      this.verified.set(key, this.clock.now() + VERIFIED_TTL_MS);
    }
    return ok;
  }
}
