/** The home model: spaces, zones, zone groups, macros, action maps, alerts, preferences, design. */

export interface Space {
  id: string;
  name: string;
  icon?: string;
  floor?: string;
  order?: number;
  /** The remote source currently active in this space (see `RemoteSource.id`). */
  activeSourceId: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A source a handheld remote can control in a space, built from a device's remote-source metadata. */
export interface RemoteSource {
  /** `<deviceId>:<source id>`. */
  id: string;
  spaceId: string;
  deviceId: string;
  label: string;
  input?: string;
  requires: string[];
  active: boolean;
}

export interface Zone {
  id: string;
  name: string;
  deviceIds: string[];
  programId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface ZoneGroup {
  id: string;
  name: string;
  zoneIds: string[];
  createdAt: number;
  updatedAt: number;
}

export interface MacroStep {
  deviceId: string;
  command: string;
  params?: Record<string, unknown>;
  /** Pause before this step. */
  delayMs?: number;
}

export interface Macro {
  id: string;
  name: string;
  steps: MacroStep[];
  /** Stop at the first failing step instead of pressing on. */
  stopOnError: boolean;
  createdAt: number;
  updatedAt: number;
}

/**
 * A mapped control: a control key (a remote button, a panel tile) bound to exactly one target: a
 * device command (`deviceId` + `command`), a macro (`macroId`) or a program (`programId`). Records
 * saved before macro and program targets existed are device commands, so the fields stay flat.
 */
export interface ActionMap {
  id: string;
  name: string;
  controlKey: string;
  deviceId?: string;
  command?: string;
  params?: Record<string, unknown>;
  macroId?: string;
  programId?: string;
  spaceId?: string | null;
  /** Applies only while this remote source (`<deviceId>:<source id>`) is its space's active one. */
  sourceId?: string | null;
  createdAt: number;
  updatedAt: number;
}

export type ActionMapTarget =
  | { kind: 'device_command'; deviceId: string; command: string; params?: Record<string, unknown> }
  | { kind: 'macro'; macroId: string }
  | { kind: 'program'; programId: string };

export type AlertSeverity = 'info' | 'warning' | 'critical';

export interface Alert {
  id: string;
  at: number;
  type: string;
  severity: AlertSeverity;
  message: string;
  deviceId?: string | null;
  source?: string | null;
  payload?: Record<string, unknown>;
}

export interface AlertQuery {
  limit: number;
  /** Only alerts older than this id's alert (cursor paging, newest first). */
  before?: string;
  type?: string;
  severity?: AlertSeverity;
  deviceId?: string;
  since?: number;
}

export interface AlertRepository {
  insert(alert: Alert): Promise<void>;
  query(q: AlertQuery): Promise<{ alerts: Alert[]; hasMore: boolean }>;
  get(id: string): Promise<Alert | undefined>;
  prune(olderThan: number, keepNewest: number): Promise<number>;
}

export interface HomePreferences {
  layout: 'grid' | 'list';
  theme: 'system' | 'light' | 'dark';
  temperatureUnit: 'C' | 'F';
  showOfflineDevices: boolean;
  defaultSpaceId: string | null;
  /** Home screen sections in display order. */
  sections: string[];
  favorites: string[];
  updatedAt: number;
}

export interface DesignProfile {
  id: string;
  name: string;
  description: string;
  builtIn: boolean;
  tokens: {
    colorScheme: 'light' | 'dark';
    background: string;
    surface: string;
    accent: string;
    text: string;
    radius: number;
    fontFamily: string;
  };
}
