export type Role = 'admin' | 'user';

export interface User {
  id: string;
  username: string;
  passwordHash: string;
  role: Role;
  createdAt: number;
  updatedAt: number;
}

/** `access` tokens authenticate REST and sockets; `stream` tokens only SSE streams. */
export type TokenKind = 'access' | 'stream';

export interface StoredToken {
  tokenHash: string;
  userId: string;
  kind: TokenKind;
  scope: string;
  createdAt: number;
  expiresAt: number;
}

export const OS_API_SCOPE = 'os_api_admin';

/** Storage ports of the auth aggregate; the domain depends on these, never on SQL. */
export interface UserRepository {
  findByUsername(username: string): Promise<User | undefined>;
  findById(id: string): Promise<User | undefined>;
  list(): Promise<User[]>;
  countByRole(role: Role): Promise<number>;
  insert(user: User): Promise<void>;
  updatePassword(id: string, passwordHash: string, at: number): Promise<void>;
}

export interface TokenRepository {
  insert(token: StoredToken): Promise<void>;
  /** Every token that has not expired at `now`. */
  listActive(now: number): Promise<StoredToken[]>;
  delete(tokenHash: string): Promise<void>;
  deleteForUser(userId: string): Promise<void>;
  deleteExpired(now: number): Promise<number>;
}
