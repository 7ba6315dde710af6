import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { VERSION } from './version.js';
import { createHub, type Hub } from './hub.js';
import { createLogger, type LogRing } from './logger.js';
import { systemClock, systemTimers, type Clock, type Timers } from './platform/clock.js';
import { createDriverSocketSurface, type DriverSocketSurface } from './surfaces/driver-ws/index.js';
import { HttpListener } from './surfaces/http/listener.js';
import { buildHttpSurface, type HttpSurface } from './surfaces/http/server.js';
import { FeedFanout } from './surfaces/realtime/feed-fanout.js';
import { createSocketSurface, type SocketSurface } from './surfaces/socket/index.js';
import { SseStream } from './surfaces/sse/sse.js';

export interface AppOptions {
  clock?: Clock;
  /** Every timer of the hub (program steps and timers, macro delays, action and IR time-outs, state write-behind, clean-ups, local driver restarts); a ManualClock serves as both in tests. */
  timers?: Timers;
  logger?: Logger;
  /** The HTTP server, when main.ts has it listening already; otherwise `start` listens. */
  listener?: HttpListener;
  /** The newest log lines, for the admin panel. */
  logRing?: LogRing;
  /** Restarts the service within the process (main.ts): how a restored backup takes effect. */
  restart?: (reason: string) => void;
}

export { createLogger };

export interface App {
  hub: Hub;
  http: HttpSurface;
  driverSocket: DriverSocketSurface;
  sockets: SocketSurface;
  /** Port of the driver WebSocket (the HTTP port unless DRIVER_WS_PORT is set); known after start. */
  driverPort?: number;
  /** Listens (unless listening already), then starts the hub; resolves with the bound HTTP address once ready. */
  start(): Promise<AddressInfo>;
  /** Stops accepting, closes connections and child processes, then the database. */
  stop(): Promise<void>;
}

export { VERSION };

export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const log = options.logger ?? createLogger(config);
  const ring = options.logRing;
  const hub = createHub(config, options.clock ?? systemClock, options.timers ?? systemTimers, log, {
    ...(ring ? { recentLogs: () => ring.recent() } : {}),
    ...(options.restart ? { restart: options.restart } : {}),
    httpPort: () => {
      const address = listener.listening ? listener.server.address() : null;
      return address && typeof address === 'object' ? address.port : undefined;
    },
  });
  const fanout = new FeedFanout(hub.feed, config.streamBatchMs, log);
  const listener = options.listener ?? new HttpListener();
  const http = await buildHttpSurface(hub, VERSION, fanout, listener.serverFactory);
  const driverSocket = createDriverSocketSurface(hub);
  const sockets = createSocketSurface(hub, http.app.server, fanout);
  hub.census.register('socket.io', () => sockets.io.engine.clientsCount);
  // Each namespace's sockets, for the metrics.
  for (const [name, namespace] of (sockets.io as unknown as { _nsps: Map<string, { sockets: Map<string, unknown> }> })._nsps) {
    hub.census.register(`socket.io${name}`, () => namespace.sockets.size);
  }
  hub.census.register('sse', () => SseStream.openCount);
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
      const address = listener.listening ? (listener.server.address() as AddressInfo) : await listener.listen(config.port, config.host);
      await http.app.ready();
      const held = listener.open();
      if (held > 0) log.info({ requests: held }, 'answering the requests that came while the service was loading');
      app.driverPort = config.driverWsPort === undefined ? address.port : await driverSocket.listenSeparately(config.driverWsPort, config.host);
      fanout.start();
      try {
        await hub.start();
      } catch (err) {
        await driverSocket.close();
        await listener.close();
        await http.app.close();
        await hub.stop();
        throw err;
      }
      log.info({ port: address.port, driverPort: app.driverPort, host: config.host, version: VERSION }, 'home control service ready');
      // HTTPS after the answer that the hub is ready: a first start makes its CA meanwhile.
      void hub.https.serve(http.app.server);
      return address;
    },
    stop() {
      stopping ??= (async () => {
        fanout.stop();
        await sockets.close();
        await driverSocket.close();
        // Fastify closes neither connections nor server it did not listen on (serverFactory).
        await listener.close();
        await http.app.close();
        await hub.stop();
      })();
      return stopping;
    },
  };
  return app;
}
