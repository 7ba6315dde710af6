import type { AddressInfo } from 'node:net';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { Config } from './config.js';
import { VERSION } from './version.js';
import { createHub, type Hub } from './hub.js';
import { systemClock, systemTimers, type Clock, type Timers } from './platform/clock.js';
import { createDriverSocketSurface, type DriverSocketSurface } from './surfaces/driver-ws/index.js';
import { buildHttpSurface, type HttpSurface } from './surfaces/http/server.js';
import { FeedFanout } from './surfaces/realtime/feed-fanout.js';
import { createSocketSurface, type SocketSurface } from './surfaces/socket/index.js';

export interface AppOptions {
  clock?: Clock;
  /** Every timer of the hub (program steps and timers, macro delays, action and IR time-outs, state write-behind, clean-ups, local driver restarts); a ManualClock serves as both in tests. */
  timers?: Timers;
  logger?: Logger;
}

export interface App {
  hub: Hub;
  http: HttpSurface;
  driverSocket: DriverSocketSurface;
  sockets: SocketSurface;
  /** Port of the driver WebSocket (the HTTP port unless DRIVER_WS_PORT is set); known after start. */
  driverPort?: number;
  /** Listens, then starts the hub; resolves with the bound HTTP address once ready. */
  start(): Promise<AddressInfo>;
  /** Stops accepting, closes connections and child processes, then the database. */
  stop(): Promise<void>;
}

export { VERSION };

const SECRET_KEYS = new Set(['password', 'token', 'accesstoken', 'authorization', 'cookie', 'apikey', 'secret']);

/** Masks secret-named fields (two levels deep) of a log object; cheap enough for every line. */
function maskSecrets(obj: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in obj) {
    const value = obj[key];
    if (SECRET_KEYS.has(key.toLowerCase())) {
      out ??= { ...obj };
      out[key] = '[redacted]';
    } else if (value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Error)) {
      for (const inner in value as Record<string, unknown>) {
        if (!SECRET_KEYS.has(inner.toLowerCase())) continue;
        out ??= { ...obj };
        out[key] = { ...(value as Record<string, unknown>), [inner]: '[redacted]' };
      }
    }
  }
  return out ?? obj;
}

/** How long a log line may wait in the buffer before it is written. */
const LOG_FLUSH_INTERVAL_MS = 200;

/** The service's logger; `to` replaces standard output (tests read the lines). */
export function createLogger(config: Pick<Config, 'logLevel'>, to?: DestinationStream): Logger {
  if (to) return pino(loggerOptions(config), to);
  // Buffered, asynchronous stdout: lines are gathered into 4 KiB writes, and whatever is
  // buffered is written at least every 200 ms and at exit. Measured on `GET /auth/me`, a
  // synchronous write per request line cost about as much as the rest of the request.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  // Node's own timer, not the injected clock: flushing log output is about the process's
  // stdout, not domain time, and it must keep running when a test's ManualClock stands still.
  const flush = setInterval(() => {
    try {
      destination.flush();
    } catch {
      // Not open yet: nothing to flush.
    }
  }, LOG_FLUSH_INTERVAL_MS);
  flush.unref();
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // Not open yet (nothing was written): nothing to flush.
    }
  });
  return pino(loggerOptions(config), destination);
}

function loggerOptions(config: Pick<Config, 'logLevel'>): LoggerOptions {
  // Secrets are masked by a formatter rather than pino's `redact`, whose per-request child
  // loggers cost several µs a request.
  // No hostname on every line: a hub is one box, and the bytes are paid per request.
  return { level: config.logLevel, base: { pid: process.pid }, formatters: { log: maskSecrets } };
}

export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const log = options.logger ?? createLogger(config);
  const hub = createHub(config, options.clock ?? systemClock, options.timers ?? systemTimers, log);
  const fanout = new FeedFanout(hub.feed, config.streamBatchMs, log);
  const http = await buildHttpSurface(hub, VERSION, fanout);
  const driverSocket = createDriverSocketSurface(hub);
  const sockets = createSocketSurface(hub, http.app.server, fanout);
  http.app.server.on('upgrade', (request, socket, head) => {
    if (config.driverWsPort === undefined && driverSocket.handleUpgrade(request, socket, head)) return;
    // Socket.IO answers its own path (it leaves other upgrades alone); nothing else upgrades.
    if (!(request.url ?? '').startsWith('/socket.io/')) socket.destroy();
  });
  let stopping: Promise<void> | undefined;

  const app: App = {
    hub,
    http,
    driverSocket,
    sockets,
    async start() {
      await http.app.listen({ port: config.port, host: config.host });
      const address = http.app.server.address() as AddressInfo;
      app.driverPort = config.driverWsPort === undefined ? address.port : await driverSocket.listenSeparately(config.driverWsPort, config.host);
      fanout.start();
      try {
        await hub.start();
      } catch (err) {
        await driverSocket.close();
        await http.app.close();
        await hub.stop();
        throw err;
      }
      log.info({ port: address.port, driverPort: app.driverPort, host: config.host, version: VERSION }, 'home control service ready');
      return address;
    },
    stop() {
      stopping ??= (async () => {
        fanout.stop();
        await sockets.close();
        await driverSocket.close();
        await http.app.close();
        await hub.stop();
      })();
      return stopping;
    },
  };
  return app;
}
