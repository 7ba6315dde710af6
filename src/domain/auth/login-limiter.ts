import type { Clock } from '../../platform/clock.js';
import { authErrors } from './errors.js';

export interface LoginLimits {
  /** Failures one client address may make, whatever the usernames, within the window. */
  maxFailuresPerClient: number;
  /** Failures one client address may make for one username within the window. */
  maxFailuresPerClientUser: number;
  windowMs: number;
}

/**
 * Counts failed logins in a sliding window. Buckets are keyed by client address, and by client
 * address with username, so that a guessing client is slowed down while another client
 * logging in as the same user is never locked out by it.
 */
export class LoginLimiter {
  private readonly failures = new Map<string, number[]>();
  private static readonly MAX_BUCKETS = 50_000;

  constructor(
    private readonly limits: LoginLimits,
    private readonly clock: Clock,
  ) {}

  /** Seconds until the next attempt is allowed, or 0 when it is allowed now. */
  retryAfterSeconds(client: string, username: string): number {
    const now = this.clock.now();
    const waits = [
      this.wait(`c:${client}`, this.limits.maxFailuresPerClient, now),
      this.wait(`u:${client}\u0000${username.toLowerCase()}`, this.limits.maxFailuresPerClientUser, now),
    ];
    return Math.max(...waits);
  }

  /** Throws TOO_MANY_LOGIN_ATTEMPTS, with the wait, while the client may not try again. */
  assertAllowed(client: string, username: string): void {
    const wait = this.retryAfterSeconds(client, username);
    if (wait > 0) throw authErrors.TOO_MANY_LOGIN_ATTEMPTS({}, { details: { retryAfterSeconds: wait }, retryAfterSeconds: wait });
  }

  recordFailure(client: string, username: string): void {
    const now = this.clock.now();
    this.push(`c:${client}`, now);
    this.push(`u:${client}\u0000${username.toLowerCase()}`, now);
  }

  /** A failure that names no account (a wrong invite code): only the client's own bucket fills. */
  recordClientFailure(client: string): void {
    this.push(`c:${client}`, this.clock.now());
  }

  recordSuccess(client: string, username: string): void {
    this.failures.delete(`u:${client}\u0000${username.toLowerCase()}`);
  }

  private recent(key: string, now: number): number[] {
    const list = this.failures.get(key);
    if (!list) return [];
    const cutoff = now - this.limits.windowMs;
    while (list.length > 0 && list[0]! <= cutoff) list.shift();
    if (list.length === 0) this.failures.delete(key);
    return list;
  }

  private wait(key: string, max: number, now: number): number {
    const list = this.recent(key, now);
    if (list.length < max) return 0;
    // Allowed again when the oldest failure that keeps the bucket full leaves the window.
    const oldest = list[list.length - max]!;
    return Math.max(1, Math.ceil((oldest + this.limits.windowMs - now) / 1000));
  }

  private push(key: string, now: number): void {
    if (!this.failures.has(key) && this.failures.size >= LoginLimiter.MAX_BUCKETS) this.prune(now);
    const list = this.recent(key, now);
    list.push(now);
    this.failures.set(key, list);
  }

  private prune(now: number): void {
    for (const key of [...this.failures.keys()]) this.recent(key, now);
    // Still full after dropping stale buckets: forget the oldest ones rather than grow forever.
    for (const key of this.failures.keys()) {
      if (this.failures.size < LoginLimiter.MAX_BUCKETS) break;
      this.failures.delete(key);
    }
  }
}
