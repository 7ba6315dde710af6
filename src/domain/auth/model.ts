export type Role = 'admin' | 'user';

export interface User {
  id: string;
  username: string;
  passwordHash: string;
  role: Role;
  /** A disabled account cannot log in and holds no tokens; it keeps its records until removed. */
  disabled: boolean;
  /** The hub generated its password (the first admin's): the person is asked to choose their own. */
  mustChangePassword: boolean;
  createdAt: number;
  updatedAt: number;
}

/** An account as answered to clients: never the password hash. */
export type UserView = Omit<User, 'passwordHash'>;

/** The ADMIN_USERNAME rule of config.ts, for every account name. */
export const USERNAME_PATTERN = '^[A-Za-z0-9._@-]{1,64}$';
export const MIN_PASSWORD_LENGTH = 8;

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

/** Who may create an account through `auth.register` (APP_REGISTRATION). */
export type RegistrationMode = 'closed' | 'invite' | 'open';

export interface Invite {
  id: string;
  /** SHA-256 of the normalised code; the code itself is shown once, at creation. */
  codeHash: string;
  role: Role;
  note: string | null;
  createdBy: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  usedBy: string | null;
  revokedAt: number | null;
}

/** Storage ports of the auth aggregate; the domain depends on these, never on SQL. */
export interface UserRepository {
  /** Matches case-insensitively (names are unique that way); an exact match wins. */
  findByUsername(username: string): Promise<User | undefined>;
  findById(id: string): Promise<User | undefined>;
  list(): Promise<User[]>;
  countEnabledAdmins(): Promise<number>;
  insert(user: User): Promise<void>;
  /** Writes every field but the id and createdAt. */
  update(user: User): Promise<void>;
  /** Removes the account and, with it, its tokens. */
  remove(id: string): Promise<void>;
}

export interface TokenRepository {
  insert(token: StoredToken): Promise<void>;
  /** Every token that has not expired at `now`. */
  listActive(now: number): Promise<StoredToken[]>;
  find(tokenHash: string): Promise<StoredToken | undefined>;
  delete(tokenHash: string): Promise<void>;
  deleteForUser(userId: string): Promise<void>;
  deleteExpired(now: number): Promise<number>;
}

export interface InviteRepository {
  list(): Promise<Invite[]>;
  findById(id: string): Promise<Invite | undefined>;
  findByCodeHash(codeHash: string): Promise<Invite | undefined>;
  insert(invite: Invite): Promise<void>;
  update(invite: Invite): Promise<void>;
  /** Deletes invites that stopped being usable (used, revoked or expired) before `before`. */
  deleteSettledBefore(before: number): Promise<number>;
}
