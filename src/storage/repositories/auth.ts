import { sql, type Kysely, type Selectable } from 'kysely';
import type { Invite, InviteRepository, Role, StoredToken, TokenKind, TokenRepository, User, UserRepository } from '../../domain/auth/model.js';
import type { Database, InvitesTable, TokensTable, UsersTable } from '../schema.js';

const toUser = (row: Selectable<UsersTable>): User => ({
  id: row.id,
  username: row.username,
  passwordHash: row.password_hash,
  role: row.role as Role,
  disabled: Number(row.disabled) === 1,
  mustChangePassword: Number(row.must_change_password) === 1,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

const toToken = (row: Selectable<TokensTable>): StoredToken => ({
  tokenHash: row.token_hash,
  userId: row.user_id,
  kind: row.kind as TokenKind,
  scope: row.scope,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
});

const nullableTime = (value: number | null) => (value === null ? null : Number(value));

const toInvite = (row: Selectable<InvitesTable>): Invite => ({
  id: row.id,
  codeHash: row.code_hash,
  role: row.role as Role,
  note: row.note,
  createdBy: row.created_by,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  usedAt: nullableTime(row.used_at),
  usedBy: row.used_by,
  revokedAt: nullableTime(row.revoked_at),
});

export class KyselyUserRepository implements UserRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async findByUsername(username: string) {
    // Names are ASCII (USERNAME_PATTERN), which SQLite's lower() folds; an exact match wins
    // should a database from before the case-insensitive rule hold two spellings.
    const row = await this.db
      .selectFrom('users')
      .selectAll()
      .where(sql<string>`lower(username)`, '=', username.toLowerCase())
      .orderBy(sql`username = ${username}`, 'desc')
      .limit(1)
      .executeTakeFirst();
    return row && toUser(row);
  }

  async findById(id: string) {
    const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toUser(row);
  }

  async list() {
    return (await this.db.selectFrom('users').selectAll().orderBy('username').execute()).map(toUser);
  }

  async countEnabledAdmins() {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('role', '=', 'admin')
      .where('disabled', '=', 0)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insert(user: User) {
    await this.db
      .insertInto('users')
      .values({
        id: user.id,
        username: user.username,
        password_hash: user.passwordHash,
        role: user.role,
        disabled: user.disabled ? 1 : 0,
        must_change_password: user.mustChangePassword ? 1 : 0,
        created_at: user.createdAt,
        updated_at: user.updatedAt,
      })
      .execute();
  }

  async update(user: User) {
    await this.db
      .updateTable('users')
      .set({ username: user.username, password_hash: user.passwordHash, role: user.role, disabled: user.disabled ? 1 : 0, must_change_password: user.mustChangePassword ? 1 : 0, updated_at: user.updatedAt })
      .where('id', '=', user.id)
      .execute();
  }

  async remove(id: string) {
    // The tokens go with it (foreign key, on delete cascade).
    await this.db.deleteFrom('users').where('id', '=', id).execute();
  }
}

export class KyselyTokenRepository implements TokenRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(token: StoredToken) {
    await this.db
      .insertInto('tokens')
      .values({
        token_hash: token.tokenHash,
        user_id: token.userId,
        kind: token.kind,
        scope: token.scope,
        created_at: token.createdAt,
        expires_at: token.expiresAt,
      })
      .execute();
  }

  async listActive(now: number) {
    return (await this.db.selectFrom('tokens').selectAll().where('expires_at', '>', now).execute()).map(toToken);
  }

  async find(tokenHash: string) {
    const row = await this.db.selectFrom('tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return row && toToken(row);
  }

  async delete(tokenHash: string) {
    await this.db.deleteFrom('tokens').where('token_hash', '=', tokenHash).execute();
  }

  async deleteForUser(userId: string) {
    await this.db.deleteFrom('tokens').where('user_id', '=', userId).execute();
  }

  async deleteExpired(now: number) {
    const result = await this.db.deleteFrom('tokens').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

const inviteRow = (invite: Invite): InvitesTable => ({
  id: invite.id,
  code_hash: invite.codeHash,
  role: invite.role,
  note: invite.note,
  created_by: invite.createdBy,
  created_at: invite.createdAt,
  expires_at: invite.expiresAt,
  used_at: invite.usedAt,
  used_by: invite.usedBy,
  revoked_at: invite.revokedAt,
});

export class KyselyInviteRepository implements InviteRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async list() {
    return (await this.db.selectFrom('invites').selectAll().orderBy('created_at', 'desc').orderBy('id').execute()).map(toInvite);
  }

  async findById(id: string) {
    const row = await this.db.selectFrom('invites').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toInvite(row);
  }

  async findByCodeHash(codeHash: string) {
    const row = await this.db.selectFrom('invites').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    return row && toInvite(row);
  }

  async insert(invite: Invite) {
    await this.db.insertInto('invites').values(inviteRow(invite)).execute();
  }

  async update(invite: Invite) {
    const { id: _id, code_hash: _hash, ...changes } = inviteRow(invite);
    await this.db.updateTable('invites').set(changes).where('id', '=', invite.id).execute();
  }

  async deleteSettledBefore(before: number) {
    const result = await this.db
      .deleteFrom('invites')
      .where((eb) => eb.or([eb('used_at', '<', before), eb('revoked_at', '<', before), eb('expires_at', '<', before)]))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
