import type { Generated } from 'kysely';

/**
 * Table shapes as the query builder sees them. Columns use portable types (text, integer) so
 * that the same repositories can later run against PostgreSQL through Kysely's other dialect.
 * Times are integer milliseconds since the epoch.
 */
export interface UsersTable {
  id: string;
  username: string;
  password_hash: string;
  role: string;
  created_at: number;
  updated_at: number;
}

export interface TokensTable {
  token_hash: string;
  user_id: string;
  kind: string;
  scope: string;
  created_at: number;
  expires_at: number;
}

export interface SettingsTable {
  key: string;
  value: string;
  updated_at: number;
}

export interface AuditTable {
  id: Generated<number>;
  at: number;
  actor: string | null;
  action: string;
  detail: string | null;
}

export interface Database {
  users: UsersTable;
  tokens: TokensTable;
  settings: SettingsTable;
  audit_log: AuditTable;
}
