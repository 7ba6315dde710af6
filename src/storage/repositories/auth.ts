import type { Kysely, Selectable } from 'kysely';
import type { Role, StoredToken, TokenKind, TokenRepository, User, UserRepository } from '../../domain/auth/model.js';
import type { Database, TokensTable, UsersTable } from '../schema.js';

const toUser = (row: Selectable<UsersTable>): User => ({
  id: row.id,
  username: row.username,
  passwordHash: row.password_hash,
  role: row.role as Role,
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

export class KyselyUserRepository implements UserRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async findByUsername(username: string) {
    const row = await this.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
    return row && toUser(row);
  }

  async findById(id: string) {
    const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toUser(row);
  }

  async list() {
    return (await this.db.selectFrom('users').selectAll().orderBy('username').execute()).map(toUser);
  }

  async countByRole(role: Role) {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('role', '=', role)
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
        created_at: user.createdAt,
        updated_at: user.updatedAt,
      })
      .execute();
  }

  async updatePassword(id: string, passwordHash: string, at: number) {
    await this.db.updateTable('users').set({ password_hash: passwordHash, updated_at: at }).where('id', '=', id).execute();
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
