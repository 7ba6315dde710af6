// Typings of hub-driver.mjs, the Home Control Service driver SDK. See docs/drivers.md.

/** The protocol version the SDK speaks (`protocolVersion` of `driver.register`). */
export declare const PROTOCOL_VERSION: 1;
/** Largest message the hub accepts, in bytes (1 MiB). */
export declare const MAX_MESSAGE_BYTES: number;

export type JsonObject = Record<string, unknown>;

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFunction = (level: LogLevel, message: string, extra?: unknown) => void;
export interface LoggerObject {
  debug?(...args: unknown[]): void;
  info?(...args: unknown[]): void;
  warn?(...args: unknown[]): void;
  error?(...args: unknown[]): void;
}

/** A command a device offers: a name, or an object with a name (and an optional label and params description). */
export type DeviceCommand = string | { name: string; label?: string; params?: JsonObject };

/** What the device is (docs/devices.md); undeclared, the hub derives it from commands, category and state. */
export type DeviceClass =
  | 'light'
  | 'switch'
  | 'outlet'
  | 'cover'
  | 'climate'
  | 'fan'
  | 'lock'
  | 'sensor'
  | 'binary_sensor'
  | 'button'
  | 'media_player'
  | 'remote'
  | 'generic';

/** Ranges, units and supported modes of the class (docs/devices.md); fields that do not fit are ignored. */
export interface DeviceAttributes {
  colorModes?: Array<'onoff' | 'brightness' | 'color_temp' | 'hs'>;
  minKelvin?: number;
  maxKelvin?: number;
  tilt?: boolean;
  minTemperature?: number;
  maxTemperature?: number;
  temperatureStep?: number;
  temperatureUnit?: '°C' | '°F';
  hvacModes?: string[];
  oscillate?: boolean;
  direction?: boolean;
  sensorClass?: 'temperature' | 'humidity' | 'illuminance' | 'power' | 'energy' | 'battery' | 'co2' | 'pm25' | 'pressure' | 'motion' | 'occupancy' | 'contact' | 'leak' | 'smoke' | 'tamper';
  unit?: string;
  presses?: Array<'single' | 'double' | 'long'>;
}

/** What DEVICE_DISCOVERED carries. */
export interface Device {
  /** The driver's own, stable id of the device (1–200 characters). */
  id: string;
  /** 1–200 characters. */
  name: string;
  /** Declared, it always wins over the derived class. */
  deviceClass?: DeviceClass;
  attributes?: DeviceAttributes;
  category?: string;
  commands?: DeviceCommand[];
  properties?: JsonObject;
  /** e.g. `["apps", "equalizer", "scenes"]`: enables the capability routes of the hub. */
  capabilities?: string[];
  /** The initial state; later changes go through reportState(). */
  state?: JsonObject;
}

/** What DEVICE_UPDATED carries: the id and the fields that changed. */
export type DeviceChange = { id: string } & Partial<Omit<Device, 'id'>>;

export interface ActionRequest {
  /** `COMMAND_EXECUTE` for commands of the manifest's command catalog (local processes), else `ACTION`. */
  type: 'ACTION' | 'COMMAND_EXECUTE';
  actionId: string;
  /** The driver's own device id. */
  deviceId: string;
  command: string;
  params: JsonObject;
}

/** The value (or promise of it) becomes the `result` of `ACTION_RESULT {ok:true}`; a throw becomes `{ok:false, error}`. */
export type ActionHandler = (request: ActionRequest) => unknown;

export interface DriverStatusMessage {
  type: 'DRIVER_STATUS';
  /** `registered`, `error` (with `code`) or `replaced`. */
  status: string;
  message?: string;
  code?: string;
}

export interface DriverMessage {
  type: 'DRIVER_MESSAGE';
  payload: unknown;
}

export interface DriverOptions {
  /** `^[A-Za-z0-9_.:-]{1,100}$`. Default: the environment variable HCS_DRIVER_KEY (set by the hub for local processes). */
  driverKey?: string;
  /** WebSocket only. Default `<driverKey>@<hostname>`. Must not start with `local:` (reserved for local processes). */
  instanceId?: string;
  /** Default `'stdio'`. */
  transport?: 'stdio' | { url: string };
  /** Sent with the registration (WebSocket). */
  name?: string;
  /** Sent with the registration (WebSocket). */
  version?: string;
  /** Driver token sent with the registration (WebSocket), for a hub with DRIVER_AUTH=token: the token an admin issued for this driverKey. */
  token?: string;
  /** Default: stderr (debug lines only with HUB_DRIVER_DEBUG set); `false` silences the SDK. */
  log?: false | LogFunction | LoggerObject;
  /** WebSocket reconnection; default `{ initialDelayMs: 500, maxDelayMs: 30000 }`; `false` disables. */
  reconnect?: false | { initialDelayMs?: number; maxDelayMs?: number };
  /** Messages held while the WebSocket is down. Default 1000 (the oldest are dropped first). */
  maxQueue?: number;
  /** WebSocket via the `ws` package: reconnect after this long without a ping or message from the hub. 0 (default) disables. */
  heartbeatTimeoutMs?: number;
  /** stdio: send console.log/info/debug to stderr. Default true. */
  redirectConsole?: boolean;
  /** stdio: exit once pending actions have answered when the hub closes stdin. Default true. */
  exitOnStdinEnd?: boolean;
}

export interface Driver {
  readonly driverKey: string;
  readonly instanceId: string;
  readonly transport: 'stdio' | 'websocket';
  /** True while messages reach the hub (stdio: after start; WebSocket: while registered). */
  readonly connected: boolean;
  /** The SDK's logger (stderr by default). */
  readonly log: Record<LogLevel, (message: string, extra?: unknown) => void>;
  /**
   * stdio: starts reading stdin and resolves at once (never sends driver.register).
   * WebSocket: connects, registers, resolves on `DRIVER_STATUS registered`; retries while the hub
   * is unreachable; rejects when the registration is refused or the driver is closed first.
   */
  start(): Promise<void>;
  /** DEVICE_DISCOVERED (the hub upserts by id). Remembered and re-announced after a reconnect. */
  discover(device: Device): void;
  /** DEVICE_UPDATED (fields merged; `state` merged into the state). */
  update(device: DeviceChange): void;
  /** DEVICE_REMOVED. */
  remove(deviceId: string): void;
  /** STATE_UPDATE with a partial state (merged by the hub). */
  reportState(deviceId: string, state: JsonObject): void;
  /** METRIC_UPDATE. */
  reportMetrics(deviceId: string, metrics: JsonObject): void;
  /** BUTTON_PRESSED for a `button` device (dropped while the hub is away). */
  pressButton(deviceId: string, press: 'single' | 'double' | 'long'): void;
  /** Handles ACTION and COMMAND_EXECUTE; one handler, a new call replaces it. */
  onAction(handler: ActionHandler): Driver;
  /** Handles DRIVER_MESSAGE (free-form messages from the hub). */
  onMessage(handler: (payload: unknown, message: DriverMessage) => unknown): Driver;
  /** Handles DRIVER_STATUS. */
  onStatus(handler: (message: DriverStatusMessage) => void): Driver;
  /** Called once when the driver stops for good: `undefined` after close()/end of stdin, an Error when the SDK gave up. */
  onClose(handler: (error: Error | undefined) => void): Driver;
  /** Closes the WebSocket (no reconnect) or stops reading stdin. */
  close(): Promise<void>;
}

export declare function createDriver(options?: DriverOptions): Driver;
export default createDriver;
