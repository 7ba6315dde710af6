import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { DomainEventBus } from '../events.js';
import type { AuthService, IssuedToken } from './auth-service.js';
import { authErrors } from './errors.js';
import type { InviteBook } from './invites.js';
import type { LoginLimiter } from './login-limiter.js';
import type { RegistrationMode, Role, User, UserRepository, UserView } from './model.js';
import { generatePassword, hashPassword, verifyPassword } from './passwords.js';
import type { SerialWrites } from '../../platform/serial-writes.js';

function viewOf({ passwordHash: _hash, ...user }: User): UserView {
  return user;
}

const isEnabledAdmin = (user: User) => user.role === 'admin' && !user.disabled;

export interface RegistrationLimits {
  /** Registrations, whatever their outcome, one client address may attempt within the window. */
  maxPerClient: number;
  windowMs: number;
}

export interface Registration {
  username: string;
  password: string;
  inviteCode?: string;
}

/**
 * The hub's accounts: what admins do to them and how new ones come to be (registration,
 * invites, the configured admin). Every change that alters what an account's tokens stand for
 * (its role, its password, its being enabled) ends its sessions at once. The hub always keeps
 * one enabled admin: the last one can be neither demoted, disabled nor removed.
 */
export class AccountService {
  /** Accounts to ask for a password of their own at sign-in (`auth.me` answers it at once, from here). */
  private readonly passwordPrompts = new Set<string>();

  constructor(
    private readonly users: UserRepository,
    private readonly sessions: AuthService,
    private readonly invites: InviteBook,
    private readonly limiter: LoginLimiter,
    private readonly writes: SerialWrites,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    private readonly registration: RegistrationMode,
    /** Counts `open` registrations per client address (a LoginLimiter of its own, every attempt a "failure"). */
    private readonly registrations: LoginLimiter,
  ) {
    // Any instance's change (a password chosen, an admin reset) is told as user.updated.
    events.on(this, 'user.updated', (e) => {
      if (e.mustChangePassword) this.passwordPrompts.add(e.userId);
      else this.passwordPrompts.delete(e.userId);
    });
  }

  /** Reads which accounts still have a password the hub generated (at start). */
  async loadPasswordPrompts(): Promise<void> {
    this.passwordPrompts.clear();
    for (const user of await this.users.list()) if (user.mustChangePassword) this.passwordPrompts.add(user.id);
  }

  /** Whether the account is to choose its own password: its password is the one the hub generated. */
  mustChangePassword(userId: string): boolean {
    return this.passwordPrompts.has(userId);
  }

  /**
   * A person changes their own password, proving the current one (failures count against the
   * login limiter, as sign-ins do). Every session of the account ends, as with any password
   * change, and a new one is issued to the caller, who stays signed in.
   */
  async changeOwnPassword(userId: string, change: { currentPassword: string; newPassword: string }, clientAddress: string): Promise<IssuedToken> {
    const user = await this.existing(userId);
    this.limiter.assertAllowed(clientAddress, user.username);
    if (!(await verifyPassword(change.currentPassword, user.passwordHash))) {
      this.limiter.recordFailure(clientAddress, user.username);
      throw authErrors.CURRENT_PASSWORD_WRONG({}, { details: [{ field: 'currentPassword', message: 'is not the current password' }] });
    }
    if (change.newPassword === change.currentPassword) {
      throw authErrors.PASSWORD_UNCHANGED({}, { details: [{ field: 'newPassword', message: 'is the current password' }] });
    }
    const passwordHash = await hashPassword(change.newPassword);
    const saved = await this.writes.run(async () => this.save({ ...(await this.existing(userId)), passwordHash, mustChangePassword: false }));
    this.limiter.recordSuccess(clientAddress, user.username);
    return this.sessions.signIn(saved, clientAddress);
  }

  async list(): Promise<UserView[]> {
    return (await this.users.list()).map(viewOf);
  }

  async get(id: string): Promise<UserView> {
    return viewOf(await this.existing(id));
  }

  async create(fields: { username: string; password: string; role: Role }): Promise<UserView> {
    // Hashed before queueing: it is slow and needs nothing the queue protects.
    const passwordHash = await hashPassword(fields.password);
    return viewOf(await this.writes.run(() => this.insert(fields.username, passwordHash, fields.role)));
  }

  async update(id: string, change: { role?: Role; disabled?: boolean }): Promise<UserView> {
    return this.writes.run(async () => {
      const current = await this.existing(id);
      const next = { ...current, role: change.role ?? current.role, disabled: change.disabled ?? current.disabled };
      if (next.role === current.role && next.disabled === current.disabled) return viewOf(current);
      await this.keepAnAdmin(current, next);
      return viewOf(await this.save(next));
    });
  }

  async setPassword(id: string, password: string): Promise<UserView> {
    const passwordHash = await hashPassword(password);
    return this.writes.run(async () => viewOf(await this.save({ ...(await this.existing(id)), passwordHash })));
  }

  /** Removing oneself is allowed while another enabled admin remains; it ends one's own sessions too. */
  async remove(id: string): Promise<UserView> {
    return this.writes.run(async () => {
      const current = await this.existing(id);
      await this.keepAnAdmin(current, undefined);
      await this.sessions.revokeAllFor(id);
      await this.users.remove(id);
      this.events.emit('user.removed', { userId: id, username: current.username, at: this.clock.now() });
      return viewOf(current);
    });
  }

  /**
   * A new account of role `user` (or the invite's role), signed in at once. In `invite` mode the
   * code is checked before the name, so that a caller without a code learns nothing of which
   * names exist, and a wrong code counts against the client in the login limiter. In `open` mode
   * every attempt (made or refused, a taken name too) counts against the client address, so one
   * client cannot make accounts in bulk: past the limit, 429 TOO_MANY_REGISTRATIONS until the
   * oldest attempt leaves the window.
   */
  async register(input: Registration, clientAddress: string): Promise<IssuedToken> {
    if (this.registration === 'closed') throw authErrors.REGISTRATION_CLOSED();
    if (this.registration === 'open') {
      const retryAfterSeconds = this.registrations.retryAfterSeconds(clientAddress, '');
      if (retryAfterSeconds > 0) throw authErrors.TOO_MANY_REGISTRATIONS({ retryAfterSeconds }, { details: { retryAfterSeconds }, retryAfterSeconds });
      this.registrations.recordClientFailure(clientAddress);
    }
    if (this.registration === 'invite') {
      this.limiter.assertAllowed(clientAddress, input.username);
      if (!(await this.invites.findUsable(input.inviteCode))) {
        this.limiter.recordClientFailure(clientAddress);
        throw authErrors.INVITE_INVALID();
      }
    }
    const passwordHash = await hashPassword(input.password);
    const user = await this.writes.run(async () => {
      if (this.registration === 'open') return this.insert(input.username, passwordHash, 'user');
      // Looked up again in the queue: another registration may have used it meanwhile.
      const invite = await this.invites.findUsable(input.inviteCode);
      if (!invite) throw authErrors.INVITE_INVALID();
      const created = await this.insert(input.username, passwordHash, invite.role);
      await this.invites.markUsed(invite, created.id);
      return created;
    });
    return this.sessions.signIn(user, clientAddress);
  }

  /**
   * The configured admin (ADMIN_USERNAME, ADMIN_PASSWORD): created when missing, its password
   * reset when one is given and differs. When no enabled admin is left (a database edited by
   * hand), it is made an enabled admin again, so a restart is the way back in. Without a password
   * and without an admin, one is generated and returned so that the caller can show it once.
   */
  async ensureAdmin(username: string, password: string | undefined): Promise<{ created: boolean; generatedPassword?: string }> {
    return this.writes.run(async () => {
      const existing = await this.users.findByUsername(username);
      if (existing) {
        let next = existing;
        // A configured password is the admin's own choice: nothing left to ask.
        if (password !== undefined && !(await verifyPassword(password, existing.passwordHash))) next = { ...next, passwordHash: await hashPassword(password), mustChangePassword: false };
        if ((await this.users.countEnabledAdmins()) === 0) next = { ...next, role: 'admin', disabled: false };
        if (next !== existing) await this.save(next);
        return { created: false };
      }
      if (password === undefined && (await this.users.countEnabledAdmins()) > 0) return { created: false };
      const generated = password === undefined ? generatePassword() : undefined;
      await this.insert(username, await hashPassword(password ?? generated!), 'admin', generated !== undefined);
      return generated ? { created: true, generatedPassword: generated } : { created: true };
    });
  }

  private async existing(id: string): Promise<User> {
    const user = await this.users.findById(id);
    if (!user) throw authErrors.USER_NOT_FOUND({ id }, { details: { userId: id } });
    return user;
  }

  /** Names are unique whatever their case: `Anna` and `anna` would be one person to a household. */
  private async insert(username: string, passwordHash: string, role: Role, mustChangePassword = false): Promise<User> {
    if (await this.users.findByUsername(username)) throw authErrors.USERNAME_TAKEN({ username }, { details: { username } });
    const now = this.clock.now();
    const user: User = { id: randomUUID(), username, passwordHash, role, disabled: false, mustChangePassword, createdAt: now, updatedAt: now };
    if (mustChangePassword) this.passwordPrompts.add(user.id);
    await this.users.insert(user);
    this.events.emit('user.created', { userId: user.id, username, role, at: now });
    return user;
  }

  /** Writes a changed account and ends its sessions: every change saved here alters what they stood for. */
  private async save(changed: User): Promise<User> {
    const user = { ...changed, updatedAt: this.clock.now() };
    // Revoked first: the in-memory part is immediate, so no request slips in while storage writes.
    await this.sessions.revokeAllFor(user.id);
    await this.users.update(user);
    this.events.emit('user.updated', { userId: user.id, username: user.username, role: user.role, disabled: user.disabled, mustChangePassword: user.mustChangePassword, at: user.updatedAt });
    return user;
  }

  private async keepAnAdmin(current: User, next: User | undefined): Promise<void> {
    if (!isEnabledAdmin(current) || (next && isEnabledAdmin(next))) return;
    if ((await this.users.countEnabledAdmins()) <= 1) throw authErrors.LAST_ADMIN({}, { details: { userId: current.id } });
  }
}
