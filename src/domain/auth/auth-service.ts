import { hash, randomBytes } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Principal } from '../../platform/operations.js';
import type { DomainEventBus } from '../events.js';
import { authErrors } from './errors.js';
import type { LoginLimiter, LoginLimits } from './login-limiter.js';
import { OS_API_SCOPE, type Role, type StoredToken, type TokenKind, type TokenRepository, type User, type UserRepository } from './model.js';
import { generatePassword, hashPassword, verifyPassword } from './passwords.js';

export interface AuthSettings extends LoginLimits {
  accessTokenTtlSeconds: number;
  streamTokenTtlSeconds: number;
}

export interface IssuedToken {
  accessToken: string;
  expiresIn: number;
  scope: string;
}

interface ActiveToken extends StoredToken {
  username: string;
  role: Role;
}

const MAX_STREAM_TOKEN_SECONDS = 300;

export function hashToken(token: string): string {
  return hash('sha256', token, 'base64url');
}

/** Tokens whose hash is remembered at most; a household presents a handful of tokens. */
const MAX_REMEMBERED_HASHES = 1024;

function scopeFor(role: Role): string {
  return role === 'admin' ? OS_API_SCOPE : 'app';
}

/**
 * Sessions: logins and tokens. Tokens are opaque random strings; only their SHA-256 is stored.
 * Active tokens are also held in memory, so authenticating a request is a hash and a map lookup,
 * not a query; in a cluster, the tokens another instance issues or revokes arrive through
 * `adoptToken` and `forgetTokens`.
 */
export class AuthService {
  private readonly active = new Map<string, ActiveToken>();
  // The hash of each token presented lately: every request of an app or panel presents the same
  // token, and its SHA-256 was most of what authenticating a request cost. It is a pure function
  // of the token, so nothing here goes stale when a token is revoked (`active` decides that).
  private readonly presentedHashes = new Map<string, string>();
  // Compared against when the username is unknown, so that the answer takes as long either way.
  private dummyHash: Promise<string> | undefined;

  constructor(
    private readonly users: UserRepository,
    private readonly tokens: TokenRepository,
    private readonly clock: Clock,
    private readonly settings: AuthSettings,
    private readonly events: DomainEventBus,
    /** Shared with registration, whose wrong invite codes count against the same client. */
    private readonly limiter: LoginLimiter,
  ) {}

  /** Loads tokens that are still valid; call once before serving. */
  async start(): Promise<void> {
    await this.tokens.deleteExpired(this.clock.now());
    await this.resyncTokens();
  }

  async login(username: string, password: string, clientAddress: string): Promise<IssuedToken & { userId: string; role: Role }> {
    this.limiter.assertAllowed(clientAddress, username);
    const user = await this.users.findByUsername(username);
    this.dummyHash ??= hashPassword(generatePassword());
    const ok = await verifyPassword(password, user?.passwordHash ?? (await this.dummyHash));
    // Read again after the slow check: an admin may have demoted, disabled or removed the account,
    // or changed its password, meanwhile; a token issued from the old record would outlive that.
    const current = user && ok ? await this.users.findById(user.id) : undefined;
    const at = this.clock.now();
    if (!user || !ok || !current || current.passwordHash !== user.passwordHash) {
      this.limiter.recordFailure(clientAddress, username);
      this.events.emit('auth.login_failed', { username, clientAddress, at });
      throw authErrors.INVALID_CREDENTIALS();
    }
    if (current.disabled) {
      // Not counted as a failure: whoever knows the password is not guessing it.
      this.events.emit('auth.login_failed', { username, clientAddress, at });
      throw authErrors.ACCOUNT_DISABLED();
    }
    this.limiter.recordSuccess(clientAddress, username);
    return this.signIn(current, clientAddress);
  }

  /** Issues an access token to an account whose credentials were checked (a login, a registration). */
  async signIn(user: User, clientAddress: string): Promise<IssuedToken & { userId: string; role: Role }> {
    const issued = await this.issue(user.id, user.username, user.role, 'access', this.settings.accessTokenTtlSeconds);
    this.events.emit('auth.logged_in', { userId: user.id, username: user.username, clientAddress, at: this.clock.now() });
    return { ...issued, userId: user.id, role: user.role };
  }

  /** Resolves a presented token to its principal when it is valid and of an accepted kind. */
  authenticate(token: string, accepted: readonly TokenKind[]): Principal | undefined {
    const tokenHash = this.hashOfPresented(token);
    const found = this.active.get(tokenHash);
    if (!found) return undefined;
    if (found.expiresAt <= this.clock.now()) {
      this.active.delete(tokenHash);
      return undefined;
    }
    if (!accepted.includes(found.kind)) return undefined;
    this.rememberHash(token, tokenHash);
    return { userId: found.userId, username: found.username, role: found.role, scope: found.scope, tokenHash };
  }

  private hashOfPresented(token: string): string {
    return this.presentedHashes.get(token) ?? hashToken(token);
  }

  /** Remembers the hash of a token that turned out to be valid (a made-up token is not worth a place). */
  private rememberHash(token: string, tokenHash: string): void {
    if (this.presentedHashes.has(token)) return;
    // Bounded: past the limit the map starts over.
    if (this.presentedHashes.size >= MAX_REMEMBERED_HASHES) this.presentedHashes.clear();
    this.presentedHashes.set(token, tokenHash);
  }

  /** A token another instance issued: read back from the database, held here too. */
  async adoptToken(tokenHash: string): Promise<void> {
    const token = await this.tokens.find(tokenHash);
    const user = token && (await this.users.findById(token.userId));
    if (!token || !user || user.disabled || token.expiresAt <= this.clock.now()) return;
    this.active.set(tokenHash, { ...token, username: user.username, role: user.role });
  }

  /** Every valid token read from the database: at start, and when tokens issued or revoked elsewhere may have been missed. */
  async resyncTokens(): Promise<void> {
    const now = this.clock.now();
    const users = new Map((await this.users.list()).map((u) => [u.id, u]));
    const fresh = new Map<string, ActiveToken>();
    for (const token of await this.tokens.listActive(now)) {
      const user = users.get(token.userId);
      if (user && !user.disabled) fresh.set(token.tokenHash, { ...token, username: user.username, role: user.role });
    }
    this.active.clear();
    for (const [hash, token] of fresh) this.active.set(hash, token);
  }

  /** Tokens another instance revoked: one by its hash, or every token of an account. */
  forgetTokens(which: { tokenHash: string } | { userId: string }): void {
    if ('tokenHash' in which) {
      this.active.delete(which.tokenHash);
      return;
    }
    for (const [hash, token] of this.active) if (token.userId === which.userId) this.active.delete(hash);
  }

  async issueStreamToken(principal: Principal): Promise<IssuedToken> {
    const ttl = Math.min(this.settings.streamTokenTtlSeconds, MAX_STREAM_TOKEN_SECONDS);
    return this.issue(principal.userId, principal.username, principal.role, 'stream', ttl);
  }

  /** Revokes the token the principal presented. */
  async logout(principal: Principal): Promise<void> {
    this.active.delete(principal.tokenHash);
    await this.tokens.delete(principal.tokenHash);
    this.events.emit('auth.logged_out', { userId: principal.userId, username: principal.username, at: this.clock.now() });
  }

  async purgeExpired(): Promise<number> {
    const now = this.clock.now();
    for (const [hash, token] of this.active) if (token.expiresAt <= now) this.active.delete(hash);
    return this.tokens.deleteExpired(now);
  }

  /** Ends every session of an account at once: its role, password or standing changed. */
  async revokeAllFor(userId: string): Promise<void> {
    for (const [hash, token] of this.active) if (token.userId === userId) this.active.delete(hash);
    await this.tokens.deleteForUser(userId);
  }

  /**
   * A token of another audience for the principal's account (a `bridge` token another hub
   * presents): opaque, stored as its hash, expiring, revoked with `revoke` or with the account's
   * other tokens. Its id is its hash, which names it without revealing it.
   */
  async issueScoped(principal: Principal, scope: string, ttlSeconds: number): Promise<IssuedToken & { id: string; expiresAt: number }> {
    const issued = await this.issue(principal.userId, principal.username, principal.role, 'access', ttlSeconds, scope);
    const id = hashToken(issued.accessToken);
    return { ...issued, id, expiresAt: this.active.get(id)!.expiresAt };
  }

  /** Revokes a token by its id (its hash), when it has the given scope; false when there is none. */
  async revoke(id: string, scope: string): Promise<boolean> {
    const found = this.active.get(id);
    if (!found || found.scope !== scope) return false;
    this.active.delete(id);
    await this.tokens.delete(id);
    this.events.emit('auth.logged_out', { userId: found.userId, username: found.username, at: this.clock.now() });
    return true;
  }

  private async issue(userId: string, username: string, role: Role, kind: TokenKind, ttlSeconds: number, scope = scopeFor(role)): Promise<IssuedToken> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const stored: StoredToken = {
      tokenHash: hashToken(token),
      userId,
      kind,
      scope,
      createdAt: now,
      expiresAt: now + ttlSeconds * 1000,
    };
    // Persist before answering: an acknowledged token survives a crash of the process.
    await this.tokens.insert(stored);
    this.active.set(stored.tokenHash, { ...stored, username, role });
    return { accessToken: token, expiresIn: ttlSeconds, scope: stored.scope };
  }
}
