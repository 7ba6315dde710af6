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
  /** 0 or 1. */
  disabled: Generated<number>;
  /** 0 or 1: the hub generated its password, and the person is to choose one. */
  must_change_password: Generated<number>;
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

export interface InvitesTable {
  id: string;
  code_hash: string;
  role: string;
  note: string | null;
  created_by: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  used_by: string | null;
  revoked_at: number | null;
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

export interface ActivityTable {
  id: Generated<number>;
  at: number;
  actor: string | null;
  operation: string;
  subject: string | null;
  detail: string;
}

export interface DevicesTable {
  id: string;
  driver_key: string;
  driver_device_id: string | null;
  name: string;
  removed: number;
  record: string;
  updated_at: number;
}

export interface DeviceStateTable {
  device_id: string;
  state: string;
  updated_at: number;
}

export interface DriverSettingsTable {
  driver_key: string;
  values: string;
  updated_at: number;
}

export interface DocumentsTable {
  kind: string;
  id: string;
  body: string;
  updated_at: number;
}

export interface ProgramRunsTable {
  id: string;
  program_id: string;
  started_at: number;
  /** The run's status, also in its body: the notable ones are kept apart (migration 0008). */
  status: string;
  body: string;
}

/** The fields automations watch: each one's last value (JSON) and since when it holds. */
export interface AutomationFieldsTable {
  device_id: string;
  field: string;
  value: string;
  since: number;
}

export interface TimerFiresTable {
  program_id: string;
  last_fire_at: number;
}

export interface AlertsTable {
  id: string;
  at: number;
  type: string;
  severity: string;
  device_id: string | null;
  source: string | null;
  body: string;
}

export interface ClusterInstancesTable {
  id: string;
  started_at: number;
  heartbeat_at: number;
  /** JSON: version, host name, pid. */
  info: string;
}

export interface ClusterLeasesTable {
  name: string;
  holder: string;
  expires_at: number;
}

export interface ClusterOutboxTable {
  id: Generated<number>;
  created_at: number;
  payload: string;
}

export interface Database {
  documents: DocumentsTable;
  program_runs: ProgramRunsTable;
  automation_fields: AutomationFieldsTable;
  timer_fires: TimerFiresTable;
  alerts: AlertsTable;
  devices: DevicesTable;
  device_state: DeviceStateTable;
  driver_settings: DriverSettingsTable;
  users: UsersTable;
  tokens: TokensTable;
  invites: InvitesTable;
  settings: SettingsTable;
  audit_log: AuditTable;
  activity_log: ActivityTable;
  cluster_instances: ClusterInstancesTable;
  cluster_leases: ClusterLeasesTable;
  cluster_outbox: ClusterOutboxTable;
}
