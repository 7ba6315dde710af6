import { isValidTimezone } from './platform/timezones.js';
import { Cron } from 'croner';
import path from 'node:path';
import { INTEGRATIONS } from './integrations/index.js';
import { integrationEnvironment } from './integrations/host.js';

/**
 * All configuration is read and validated here, once, at start. A bad value stops the start
 * with a message naming the variable; nothing else in the service reads process.env.
 */
export interface Config {
  port: number;
  host: string;
  /** Separate port for the driver WebSocket; undefined means the main HTTP server. */
  driverWsPort: number | undefined;
  /** HTTPS beside HTTP (docs/https.md). */
  https: HttpsConfig;
  dataDir: string;
  /** MQTT (docs/mqtt.md): off when `url` is undefined. */
  mqtt: MqttConfig;
  /** The Matter bridge (docs/matter.md). */
  matter: MatterConfig;
  /** PostgreSQL's URL when set (DATABASE_URL); SQLite under dataDir otherwise. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** Cluster (PostgreSQL): how long a lease or heartbeat holds (local drivers move after it), and the forwarding margin. */
  clusterLeaseMs: number;
  clusterForwardMarginMs: number;
  /** Scheduled backups (BACKUP_SCHEDULE, a cron pattern) and their retention. */
  backupSchedule: string | undefined;
  backupKeep: number;
  backupKeepDays: number;
  driversDir: string;
  nodeEnv: string;
  isDevelopment: boolean;
  adminUsername: string;
  adminPassword: string | undefined;
  /** Who may create an account through the App API's `/auth/register` (docs/accounts.md). */
  appRegistration: 'closed' | 'invite' | 'open';
  logLevel: string;
  /** A request slower than this logs at `warn`; quick successful reads log at `debug`. */
  slowRequestMs: number;
  accessTokenTtlSeconds: number;
  streamTokenTtlSeconds: number;
  bodyLimitBytes: number;
  /** Largest driver upload (one file or archive) the admin panel takes, and the most its archive may unpack to. */
  driverUploadMaxBytes: number;
  /** How long installing a driver's dependencies (npm, pip) may take. */
  driverInstallTimeoutMs: number;
  /** Whether the hub runs Homebridge (default: when it is installed). */
  accessoryHub: 'on' | 'off' | 'auto';
  accessoryHubPort: number;
  /** How often imported accessories' state is read over HAP. */
  accessoryHubPollMs: number;
  /** The npm registry plugins are searched and installed from. */
  accessoryHubRegistry: string;
  /** The npm registry an integration's requirements (matter.js, Homebridge) install from on first use: npm's own setting. */
  npmRegistry: string;
  /** Interfaces Homebridge's servers bind to (`all` for every one). */
  accessoryHubBind: string[];
  /** ACCESSORY_HUB_NODE: the Node that runs Homebridge (a path); unset, the hub's own when Homebridge supports it, else one the hub installs under DATA_DIR/runtimes. */
  accessoryHubNode?: string;
  /** Who may read GET /metrics: a bearer of scope `metrics` (`token`), or any caller on loopback (`loopback`), or nobody (`off`). */
  metricsAccess: 'token' | 'loopback' | 'off';
  /** The assistant's backend: the local intent engine, or an Ollama-compatible server. */
  aiBackend: 'intents' | 'ollama';
  aiOllamaUrl: string;
  aiModel: string;
  aiRecommendedModels: string[];
  /** How often a healthy bridge link checks its peer hub. */
  bridgePollIntervalMs: number;
  /** Longest wait between retries of a lost bridge link. */
  bridgeMaxBackoffMs: number;
  /** Bound of one call to a peer hub (commands get the action time-out on top). */
  bridgeRequestTimeoutMs: number;
  /** Largest backup a restore takes (it is read into memory to be validated). */
  backupMaxBytes: number;
  /** The npm registry driver dependencies install from; unset, npm's own configuration decides. */
  driverNpmRegistry?: string;
  loginMaxFailuresPerClient: number;
  loginMaxFailuresPerClientUser: number;
  loginFailureWindowSeconds: number;
  /** Remote pairing (docs/remote.md): how many requests may be open, and how many wrong codes are allowed. */
  remotePairing: { maxOpenPerClient: number; maxOpen: number; maxWrongCodesPerRequest: number; maxWrongCodesPerClient: number; wrongCodeWindowSeconds: number; lifetimeSeconds: number };
  /** Registrations one client address may attempt per window in `open` mode. */
  appRegistrationLimit: number;
  appRegistrationWindowSeconds: number;
  shutdownTimeoutMs: number;
  actionTimeoutMs: number;
  driverRegistrationTimeoutMs: number;
  driverPingIntervalMs: number;
  /** Who may register on the driver WebSocket: anyone (`open`, the spec's default) or a driver presenting a token issued for its driverKey (`token`). */
  driverAuth: 'open' | 'token';
  telemetryMaxEntries: number;
  telemetryMaxAgeSeconds: number;
  irExtenderPort: number;
  irReplyTimeoutMs: number;
  alertsMaxCount: number;
  alertsMaxAgeDays: number;
  ssePingIntervalMs: number;
  sseMaxBufferBytes: number;
  streamBatchMs: number;
  /** How long a request that arrives while the hub starts waits for it before 503 NOT_READY; 0 answers 503 at once. */
  startupHoldMs: number;
  media: MediaConfig;
  /** Where the home is until an admin saves it in the home settings (sun triggers; docs/automations.md). */
  home: { latitude?: number; longitude?: number; timezone?: string };
  /** Each integration's settings from the environment, by its declaration (src/integrations): name → setting key → value. */
  integrations: Record<string, Record<string, string>>;
  /** Runaway protection and the webhooks' rate (docs/automations.md). */
  automations: { runawayMaxFires: number; runawayWindowMs: number; webhookMaxCalls: number; webhookWindowMs: number };
}

/** Media discovery and the built-in player integrations (docs/media.md). */
export interface MediaConfig {
  discoveryTimeoutMs: number;
  /** Local IPv4 address whose interface discovery sends from and listens on; undefined: the OS's choice. */
  discoveryInterface: string | undefined;
  ssdpAddress: { address: string; port: number };
  mdnsAddress: { address: string; port: number };
  rokuPollIntervalMs: number;
  rokuRequestTimeoutMs: number;
  castStepTimeoutMs: number;
  castCodeTimeoutMs: number;
  mpd: { host: string; port: number; password: string | undefined; timeoutMs: number };
  /** Other MPD instances music can play on: `MPD_TARGETS=kitchen=10.0.0.5:6600,garage=10.0.0.6:6600`. */
  mpdTargets: Array<{ id: string; host: string; port: number }>;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const REGISTRATION_MODES = ['closed', 'invite', 'open'] as const;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `expected a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function coordinate(env: Env, name: string, limit: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw.trim());
  if (!/^-?\d+(\.\d+)?$/.test(raw.trim()) || Math.abs(value) > limit) throw new ConfigError(name, `expected degrees between -${limit} and ${limit}, got "${raw}"`);
  return value;
}

/** HOME_LATITUDE, HOME_LONGITUDE (both or neither) and HOME_TIMEZONE. */
function homeLocation(env: Env): Config['home'] {
  const latitude = coordinate(env, 'HOME_LATITUDE', 90);
  const longitude = coordinate(env, 'HOME_LONGITUDE', 180);
  if ((latitude === undefined) !== (longitude === undefined)) throw new ConfigError(latitude === undefined ? 'HOME_LATITUDE' : 'HOME_LONGITUDE', 'give HOME_LATITUDE and HOME_LONGITUDE together');
  const timezone = env.HOME_TIMEZONE === undefined || env.HOME_TIMEZONE === '' ? undefined : env.HOME_TIMEZONE.trim();
  if (timezone !== undefined && !isValidTimezone(timezone)) throw new ConfigError('HOME_TIMEZONE', `unknown time zone "${timezone}" (use an IANA name such as "Europe/Berlin")`);
  return { ...(latitude !== undefined ? { latitude } : {}), ...(longitude !== undefined ? { longitude } : {}), ...(timezone ? { timezone } : {}) };
}

export interface HttpsConfig {
  /** HTTPS_PORT (default 8443); undefined when `off`. */
  port: number | undefined;
  /** TLS_CERT_FILE and TLS_KEY_FILE: the admin's own certificate, in place of the local CA's (reloaded when they change). */
  certFile?: string;
  keyFile?: string;
  /** HTTPS_NAMES: further DNS names the local CA's certificate covers, beside the host name and `<name>.local`. */
  extraNames: string[];
}

const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

function httpsConfig(env: Env): HttpsConfig {
  const raw = text(env, 'HTTPS_PORT', '8443').trim().toLowerCase();
  const port = raw === 'off' ? undefined : integer(env, 'HTTPS_PORT', 8443, 0, 65535);
  const certFile = env.TLS_CERT_FILE?.trim() || undefined;
  const keyFile = env.TLS_KEY_FILE?.trim() || undefined;
  if ((certFile === undefined) !== (keyFile === undefined)) throw new ConfigError(certFile === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE', 'give TLS_CERT_FILE and TLS_KEY_FILE together');
  const extraNames = (env.HTTPS_NAMES ?? '').split(',').map((n) => n.trim().toLowerCase()).filter(Boolean);
  for (const name of extraNames) if (!DNS_NAME.test(name)) throw new ConfigError('HTTPS_NAMES', `"${name}" is not a DNS name`);
  return { port, ...(certFile ? { certFile, keyFile } : {}), extraNames };
}

function optionalPort(env: Env, name: string): number | undefined {
  if (env[name] === undefined || env[name] === '') return undefined;
  return integer(env, name, 0, 0, 65535);
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/** `address:port` of a discovery group (or, in tests, of a responder on loopback). */
function udpAddress(env: Env, name: string, fallback: string): { address: string; port: number } {
  const raw = text(env, name, fallback).trim();
  const match = /^(.+):(\d{1,5})$/.exec(raw);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || !IPV4.test(match[1]!) || port < 1 || port > 65535) throw new ConfigError(name, `expected an IPv4 address and port like ${fallback}, got "${raw}"`);
  return { address: match[1]!, port };
}

function oneOf<T extends string, D extends string>(env: Env, name: string, values: readonly T[], fallback: D): T | D {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw)) throw new ConfigError(name, `expected one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

/** npm's own registry setting (npm puts it in the environment of `npm start`), when it is a URL; else npm's default. */
function npmRegistry(env: Env): string {
  try {
    return env.npm_config_registry ? url(env, 'npm_config_registry') : 'https://registry.npmjs.org/';
  } catch {
    return 'https://registry.npmjs.org/';
  }
}

function url(env: Env, name: string): string {
  const raw = text(env, name, '').trim();
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `expected an http(s) URL, got "${raw}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(name, `expected an http(s) URL, got "${raw}"`);
  return parsed.toString();
}

/** A cron pattern (croner's: 5 or 6 fields); unset or empty: none. */
function cronPattern(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  try {
    new Cron(raw, { paused: true }).stop();
  } catch (err) {
    throw new ConfigError(name, `expected a cron pattern such as "0 3 * * *": ${(err as Error).message}`);
  }
  return raw;
}

/** `DATABASE_URL`: a postgres:// (or postgresql://) URL selects PostgreSQL; unset or empty keeps SQLite. */
function databaseUrl(env: Env): string | undefined {
  const raw = env.DATABASE_URL?.trim();
  if (!raw) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError('DATABASE_URL', 'expected a postgres://user:password@host:port/database URL');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw new ConfigError('DATABASE_URL', `expected a postgres:// URL (unset keeps SQLite), got a ${parsed.protocol} URL`);
  return raw;
}

function text(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const nodeEnv = text(env, 'NODE_ENV', 'production');
  const dataDir = path.resolve(cwd, text(env, 'DATA_DIR', './data'));
  const logLevel = text(env, 'LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const adminUsername = text(env, 'ADMIN_USERNAME', 'admin');
  if (!/^[A-Za-z0-9._@-]{1,64}$/.test(adminUsername)) {
    throw new ConfigError('ADMIN_USERNAME', 'use 1 to 64 letters, digits, dots, dashes, underscores or @');
  }
  const adminPassword = env.ADMIN_PASSWORD === '' ? undefined : env.ADMIN_PASSWORD;
  if (adminPassword !== undefined && adminPassword.length < 8) {
    throw new ConfigError('ADMIN_PASSWORD', 'must be at least 8 characters long');
  }
  const appRegistration = text(env, 'APP_REGISTRATION', 'closed') as Config['appRegistration'];
  if (!REGISTRATION_MODES.includes(appRegistration)) {
    throw new ConfigError('APP_REGISTRATION', `must be one of ${REGISTRATION_MODES.join(', ')}, got "${appRegistration}"`);
  }
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: text(env, 'HOST', '0.0.0.0'),
    driverWsPort: optionalPort(env, 'DRIVER_WS_PORT'),
    https: httpsConfig(env),
    dataDir,
    databaseUrl: databaseUrl(env),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    clusterLeaseMs: integer(env, 'CLUSTER_LEASE_MS', 15_000, 300, 600_000),
    clusterForwardMarginMs: integer(env, 'CLUSTER_FORWARD_MARGIN_MS', 2000, 50, 60_000),
    driversDir: path.resolve(cwd, text(env, 'DRIVERS_DIR', path.join(dataDir, 'drivers'))),
    nodeEnv,
    isDevelopment: nodeEnv === 'development',
    adminUsername,
    adminPassword,
    appRegistration,
    logLevel,
    slowRequestMs: integer(env, 'SLOW_REQUEST_MS', 1000, 1, 600_000),
    accessTokenTtlSeconds: integer(env, 'ACCESS_TOKEN_TTL_SECONDS', 3600, 60, 30 * 24 * 3600),
    streamTokenTtlSeconds: integer(env, 'STREAM_TOKEN_TTL_SECONDS', 300, 10, 300),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    driverUploadMaxBytes: integer(env, 'DRIVER_UPLOAD_MAX_BYTES', 20 * 1024 * 1024, 1024, 512 * 1024 * 1024),
    driverInstallTimeoutMs: integer(env, 'DRIVER_INSTALL_TIMEOUT_MS', 300_000, 1000, 3_600_000),
    accessoryHub: oneOf(env, 'ACCESSORY_HUB', ['on', 'off', 'auto'], 'auto'),
    accessoryHubPort: integer(env, 'ACCESSORY_HUB_PORT', 51826, 1024, 65535),
    accessoryHubPollMs: integer(env, 'ACCESSORY_HUB_POLL_MS', 2000, 100, 600_000),
    accessoryHubRegistry: env.ACCESSORY_HUB_REGISTRY ? url(env, 'ACCESSORY_HUB_REGISTRY') : npmRegistry(env),
    npmRegistry: npmRegistry(env),
    // Loopback unless told: insecure mode answers anyone who has the setup code, so the LAN gets it only by choice.
    accessoryHubBind: text(env, 'ACCESSORY_HUB_BIND', '127.0.0.1').split(',').map((s) => s.trim()).filter(Boolean),
    ...(env.ACCESSORY_HUB_NODE?.trim() ? { accessoryHubNode: path.resolve(cwd, env.ACCESSORY_HUB_NODE.trim()) } : {}),
    metricsAccess: oneOf(env, 'METRICS_ACCESS', ['token', 'loopback', 'off'], 'token'),
    aiBackend: oneOf(env, 'AI_BACKEND', ['intents', 'ollama'], 'intents'),
    aiOllamaUrl: (env.AI_OLLAMA_URL ? url(env, 'AI_OLLAMA_URL') : 'http://127.0.0.1:11434/').replace(/\/+$/, ''),
    aiModel: text(env, 'AI_MODEL', 'llama3.2:3b'),
    aiRecommendedModels: text(env, 'AI_RECOMMENDED_MODELS', 'llama3.2:3b,qwen2.5:3b').split(',').map((s) => s.trim()).filter(Boolean),
    bridgePollIntervalMs: integer(env, 'BRIDGE_POLL_INTERVAL_MS', 15_000, 100, 3_600_000),
    bridgeMaxBackoffMs: integer(env, 'BRIDGE_MAX_BACKOFF_MS', 60_000, 100, 3_600_000),
    bridgeRequestTimeoutMs: integer(env, 'BRIDGE_REQUEST_TIMEOUT_MS', 5000, 100, 120_000),
    backupMaxBytes: integer(env, 'BACKUP_MAX_BYTES', 256 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
    backupSchedule: cronPattern(env, 'BACKUP_SCHEDULE'),
    backupKeep: integer(env, 'BACKUP_KEEP', 7, 1, 10_000),
    backupKeepDays: integer(env, 'BACKUP_KEEP_DAYS', 30, 1, 36_500),
    ...(env.DRIVER_NPM_REGISTRY ? { driverNpmRegistry: url(env, 'DRIVER_NPM_REGISTRY') } : {}),
    loginMaxFailuresPerClient: integer(env, 'LOGIN_MAX_FAILURES_PER_CLIENT', 20, 1, 10_000),
    loginMaxFailuresPerClientUser: integer(env, 'LOGIN_MAX_FAILURES_PER_USER', 5, 1, 10_000),
    loginFailureWindowSeconds: integer(env, 'LOGIN_FAILURE_WINDOW_SECONDS', 900, 1, 86_400),
    remotePairing: {
      maxOpenPerClient: integer(env, 'REMOTE_PAIRING_MAX_OPEN_PER_CLIENT', 5, 1, 1000),
      maxOpen: integer(env, 'REMOTE_PAIRING_MAX_OPEN', 50, 1, 10_000),
      maxWrongCodesPerRequest: integer(env, 'REMOTE_PAIRING_MAX_WRONG_CODES', 5, 1, 100),
      maxWrongCodesPerClient: integer(env, 'REMOTE_PAIRING_MAX_WRONG_CODES_PER_CLIENT', 10, 1, 10_000),
      wrongCodeWindowSeconds: integer(env, 'REMOTE_PAIRING_WRONG_CODE_WINDOW_SECONDS', 600, 1, 86_400),
      lifetimeSeconds: integer(env, 'REMOTE_PAIRING_LIFETIME_SECONDS', 120, 10, 3600),
    },
    appRegistrationLimit: integer(env, 'APP_REGISTRATION_LIMIT', 5, 1, 10_000),
    appRegistrationWindowSeconds: integer(env, 'APP_REGISTRATION_WINDOW_SECONDS', 3600, 1, 7 * 86_400),
    shutdownTimeoutMs: 5000,
    actionTimeoutMs: integer(env, 'ACTION_TIMEOUT_MS', 10_000, 100, 600_000),
    driverRegistrationTimeoutMs: integer(env, 'DRIVER_REGISTRATION_TIMEOUT_MS', 10_000, 100, 600_000),
    driverPingIntervalMs: integer(env, 'DRIVER_PING_INTERVAL_MS', 30_000, 100, 3_600_000),
    driverAuth: oneOf(env, 'DRIVER_AUTH', ['open', 'token'], 'open'),
    telemetryMaxEntries: integer(env, 'TELEMETRY_MAX_ENTRIES', 500, 1, 100_000),
    telemetryMaxAgeSeconds: integer(env, 'TELEMETRY_MAX_AGE_SECONDS', 86_400, 1, 30 * 86_400),
    irExtenderPort: integer(env, 'IR_EXTENDER_PORT', 4998, 1, 65535),
    irReplyTimeoutMs: integer(env, 'IR_REPLY_TIMEOUT_MS', 5000, 50, 60_000),
    alertsMaxCount: integer(env, 'ALERTS_MAX_COUNT', 10_000, 10, 10_000_000),
    alertsMaxAgeDays: integer(env, 'ALERTS_MAX_AGE_DAYS', 90, 1, 3650),
    ssePingIntervalMs: integer(env, 'SSE_PING_INTERVAL_MS', 15_000, 100, 600_000),
    sseMaxBufferBytes: integer(env, 'SSE_MAX_BUFFER_BYTES', 1024 * 1024, 4096, 256 * 1024 * 1024),
    streamBatchMs: integer(env, 'STREAM_BATCH_MS', 25, 0, 1000),
    startupHoldMs: integer(env, 'STARTUP_HOLD_MS', 10_000, 0, 120_000),
    media: mediaConfig(env),
    home: homeLocation(env),
    integrations: integrationEnvironment(INTEGRATIONS, env),
    automations: {
      runawayMaxFires: integer(env, 'AUTOMATION_RUNAWAY_MAX_FIRES', 30, 2, 100_000),
      runawayWindowMs: integer(env, 'AUTOMATION_RUNAWAY_WINDOW_SECONDS', 10, 1, 3600) * 1000,
      webhookMaxCalls: integer(env, 'WEBHOOK_MAX_CALLS', 20, 1, 100_000),
      webhookWindowMs: integer(env, 'WEBHOOK_WINDOW_SECONDS', 60, 1, 3600) * 1000,
    },
    mqtt: mqttConfig(env),
    matter: {
      mode: env.MATTER === undefined || env.MATTER === '' ? undefined : oneOf(env, 'MATTER', ['on', 'off'] as const, 'off' as const),
      port: integer(env, 'MATTER_PORT', 5540, 0, 65535),
      bind: env.MATTER_BIND === undefined || env.MATTER_BIND === '' ? undefined : matterBind(env.MATTER_BIND),
      mdnsInterface: env.MATTER_MDNS_INTERFACE === undefined || env.MATTER_MDNS_INTERFACE === '' ? undefined : env.MATTER_MDNS_INTERFACE,
      storageDir: path.resolve(cwd, text(env, 'MATTER_STORAGE_DIR', path.join(dataDir, 'matter'))),
      process: oneOf(env, 'MATTER_PROCESS', ['child', 'inline'], 'child'),
    },
  };
}

export interface MatterConfig {
  /** MATTER=on|off; unset: what an admin chose in the admin panel (off until then). */
  mode: 'on' | 'off' | undefined;
  /** The bridge's UDP port (MATTER_PORT, default 5540; 0: any free port). */
  port: number;
  /** MATTER_BIND: the IPv4 address the bridge listens on (`127.0.0.1` also listens on `::1`); unset: every address. */
  bind: string | undefined;
  /** MATTER_MDNS_INTERFACE: the network interface mDNS announces the bridge on; unset: every one. */
  mdnsInterface: string | undefined;
  /** MATTER_STORAGE_DIR: the bridge's fabrics, keys and endpoint numbers (default DATA_DIR/matter; a cluster points its instances at one shared folder). */
  storageDir: string;
  /** MATTER_PROCESS: `child` (default) runs the bridge in a supervised process of its own; `inline` in the hub's process (to compare, and where processes cannot be started). */
  process: 'child' | 'inline';
}

function matterBind(raw: string): string {
  if (!IPV4.test(raw)) throw new ConfigError('MATTER_BIND', `expected an IPv4 address, got "${raw}"`);
  return raw;
}

export interface MqttConfig {
  /** MQTT_URL: the household's broker (`mqtt://user:pass@host:1883`, `mqtts://…`), `embedded`, or undefined (off). */
  url: string | undefined;
  /** The embedded broker's port and address (MQTT_URL=embedded). */
  port: number;
  bind: string;
  discoveryPrefix: string;
  /** MQTT_EXPOSE=on: the hub's own devices are published as discovery configs. */
  expose: boolean;
  /** Where the exposed devices' state and command topics live. */
  baseTopic: string;
  /** Bounds of what the hub reads: a discovery config, a state payload. */
  maxConfigBytes: number;
  maxPayloadBytes: number;
}

const MQTT_TOPIC_LEVEL = /^[A-Za-z0-9_-]{1,64}(\/[A-Za-z0-9_-]{1,64}){0,3}$/;

function mqttConfig(env: Env): MqttConfig {
  const raw = text(env, 'MQTT_URL', '').trim();
  let mqttUrl: string | undefined;
  if (raw === 'embedded') mqttUrl = 'embedded';
  else if (raw !== '') {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError('MQTT_URL', 'expected mqtt://[user:pass@]host[:port], mqtts://…, ws(s)://… or "embedded"');
    }
    if (!['mqtt:', 'mqtts:', 'ws:', 'wss:', 'tcp:', 'ssl:'].includes(parsed.protocol)) throw new ConfigError('MQTT_URL', `expected an mqtt://, mqtts://, ws:// or wss:// URL, got a ${parsed.protocol} URL`);
    mqttUrl = raw;
  }
  const prefix = text(env, 'MQTT_DISCOVERY_PREFIX', 'homeassistant');
  if (!MQTT_TOPIC_LEVEL.test(prefix)) throw new ConfigError('MQTT_DISCOVERY_PREFIX', 'use letters, digits, _ and - (up to four levels separated by /)');
  const baseTopic = text(env, 'MQTT_BASE_TOPIC', 'hcs');
  if (!MQTT_TOPIC_LEVEL.test(baseTopic)) throw new ConfigError('MQTT_BASE_TOPIC', 'use letters, digits, _ and - (up to four levels separated by /)');
  return {
    url: mqttUrl,
    port: integer(env, 'MQTT_PORT', 1883, 0, 65535),
    bind: text(env, 'MQTT_BIND', '0.0.0.0'),
    discoveryPrefix: prefix,
    expose: oneOf(env, 'MQTT_EXPOSE', ['on', 'off'], 'off') === 'on',
    baseTopic,
    maxConfigBytes: integer(env, 'MQTT_MAX_CONFIG_BYTES', 64 * 1024, 1024, 1024 * 1024),
    maxPayloadBytes: integer(env, 'MQTT_MAX_PAYLOAD_BYTES', 256 * 1024, 1024, 16 * 1024 * 1024),
  };
}

function mediaConfig(env: Env): MediaConfig {
  const discoveryInterface = env.MEDIA_DISCOVERY_INTERFACE === undefined || env.MEDIA_DISCOVERY_INTERFACE === '' ? undefined : env.MEDIA_DISCOVERY_INTERFACE.trim();
  if (discoveryInterface !== undefined && !IPV4.test(discoveryInterface)) {
    throw new ConfigError('MEDIA_DISCOVERY_INTERFACE', `expected the IPv4 address of a local interface, got "${discoveryInterface}"`);
  }
  return {
    discoveryTimeoutMs: integer(env, 'MEDIA_DISCOVERY_TIMEOUT_MS', 5000, 100, 60_000),
    discoveryInterface,
    ssdpAddress: udpAddress(env, 'MEDIA_SSDP_ADDRESS', '239.255.255.250:1900'),
    mdnsAddress: udpAddress(env, 'MEDIA_MDNS_ADDRESS', '224.0.0.251:5353'),
    rokuPollIntervalMs: integer(env, 'ROKU_POLL_INTERVAL_MS', 5000, 100, 3_600_000),
    rokuRequestTimeoutMs: integer(env, 'ROKU_REQUEST_TIMEOUT_MS', 3000, 50, 60_000),
    castStepTimeoutMs: integer(env, 'CAST_PAIRING_STEP_TIMEOUT_MS', 10_000, 50, 120_000),
    castCodeTimeoutMs: integer(env, 'CAST_PAIRING_CODE_TIMEOUT_MS', 120_000, 1000, 600_000),
    mpd: {
      host: text(env, 'MPD_HOST', '127.0.0.1'),
      port: integer(env, 'MPD_PORT', 6600, 1, 65535),
      password: env.MPD_PASSWORD === undefined || env.MPD_PASSWORD === '' ? undefined : env.MPD_PASSWORD,
      timeoutMs: integer(env, 'MPD_TIMEOUT_MS', 5000, 50, 60_000),
    },
    mpdTargets: mpdTargets(env),
  };
}

function mpdTargets(env: Env): MediaConfig['mpdTargets'] {
  const raw = text(env, 'MPD_TARGETS', '').trim();
  if (raw === '') return [];
  return raw.split(',').map((entry) => {
    const m = /^([a-z0-9][a-z0-9-]{0,31})=([A-Za-z0-9.-]+|\[[0-9A-Fa-f:]+\]):(\d{1,5})$/.exec(entry.trim());
    const port = m ? Number(m[3]) : 0;
    if (!m || port < 1 || port > 65535) throw new ConfigError('MPD_TARGETS', `expected id=host:port entries separated by commas (id: lowercase letters, digits, dashes), got "${entry.trim()}"`);
    return { id: m[1]!, host: m[2]!.replace(/^\[|\]$/g, ''), port };
  });
}
