import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import { hashToken } from './auth-service.js';
import { authErrors } from './errors.js';
import type { Invite, InviteRepository, Role } from './model.js';
import type { SerialWrites } from '../../platform/serial-writes.js';

export const INVITE_DEFAULT_HOURS = 72;
export const INVITE_MAX_HOURS = 720;
/** Invites that can no longer be used are kept this long for the admin's list, then purged. */
const SETTLED_INVITE_RETENTION_MS = 30 * 86_400_000;

export type InviteState = 'active' | 'used' | 'expired' | 'revoked';
export type InviteView = Omit<Invite, 'codeHash'> & { state: InviteState };

// Crockford's base32: no I, L, O or U, so a code read aloud or copied by hand survives.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_GROUPS = 3;
const GROUP_LENGTH = 4;

/** 12 characters, 60 bits, as `XXXX-XXXX-XXXX`; guessing is bounded by expiry and the login limiter. */
function generateInviteCode(): string {
  // 32 divides 256, so masking a byte picks every character equally often.
  const chars = [...randomBytes(CODE_GROUPS * GROUP_LENGTH)].map((byte) => ALPHABET[byte & 31]);
  const groups = Array.from({ length: CODE_GROUPS }, (_, i) => chars.slice(i * GROUP_LENGTH, (i + 1) * GROUP_LENGTH).join(''));
  return groups.join('-');
}

/** The code as typed, in its one canonical form: case, dashes and spaces ignored, O read as 0 and I, L as 1. */
function canonicalCode(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
}

function stateOf(invite: Invite, now: number): InviteState {
  if (invite.usedAt !== null) return 'used';
  if (invite.revokedAt !== null) return 'revoked';
  return invite.expiresAt <= now ? 'expired' : 'active';
}

/** Invite codes an admin hands out for registration: single use, expiring, stored as a hash only. */
export class InviteBook {
  constructor(
    private readonly repo: InviteRepository,
    private readonly clock: Clock,
    private readonly writes: SerialWrites,
  ) {}

  async list(): Promise<InviteView[]> {
    const now = this.clock.now();
    return (await this.repo.list()).map((invite) => this.view(invite, now));
  }

  /** The code is in the answer only here: only its hash is kept. */
  async create(fields: { expiresInHours: number; role: Role; note?: string }, createdBy: string): Promise<InviteView & { code: string }> {
    const code = generateInviteCode();
    const now = this.clock.now();
    const invite: Invite = {
      id: randomUUID(),
      codeHash: hashToken(canonicalCode(code)),
      role: fields.role,
      note: fields.note ?? null,
      createdBy,
      createdAt: now,
      expiresAt: now + fields.expiresInHours * 3_600_000,
      usedAt: null,
      usedBy: null,
      revokedAt: null,
    };
    await this.writes.run(() => this.repo.insert(invite));
    return { ...this.view(invite, now), code };
  }

  /** Revoking an expired or already revoked invite is allowed and changes nothing visible; a used one is history. */
  async revoke(id: string): Promise<InviteView> {
    return this.writes.run(async () => {
      const invite = await this.repo.findById(id);
      if (!invite) throw authErrors.INVITE_NOT_FOUND({ id }, { details: { id } });
      if (invite.usedAt !== null) throw authErrors.INVITE_USED({ id }, { details: { id } });
      const now = this.clock.now();
      const revoked = invite.revokedAt === null ? { ...invite, revokedAt: now } : invite;
      if (revoked !== invite) await this.repo.update(revoked);
      return this.view(revoked, now);
    });
  }

  /** The invite a typed code names while it can still be used. Call inside the serial writes when about to use it. */
  async findUsable(typed: string | undefined): Promise<Invite | undefined> {
    if (!typed) return undefined;
    const invite = await this.repo.findByCodeHash(hashToken(canonicalCode(typed)));
    return invite && stateOf(invite, this.clock.now()) === 'active' ? invite : undefined;
  }

  /** Marks an invite found usable as used by the account it created; the caller holds the serial writes. */
  async markUsed(invite: Invite, userId: string): Promise<void> {
    await this.repo.update({ ...invite, usedAt: this.clock.now(), usedBy: userId });
  }

  async purgeSettled(): Promise<number> {
    return this.writes.run(() => this.repo.deleteSettledBefore(this.clock.now() - SETTLED_INVITE_RETENTION_MS));
  }

  private view(invite: Invite, now: number): InviteView {
    const { codeHash: _hash, ...shown } = invite;
    return { ...shown, state: stateOf(invite, now) };
  }
}
