import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { createHub, type Hub } from './hub.js';
import { systemClock, type Clock } from './platform/clock.js';
import { buildHttpSurface, type HttpSurface } from './surfaces/http/server.js';

export interface AppOptions {
  clock?: Clock;
  logger?: Logger;
}

export interface App {
  hub: Hub;
  http: HttpSurface;
  /** Listens, then starts the hub; resolves with the bound HTTP address once ready. */
  start(): Promise<AddressInfo>;
  /** Stops accepting, closes connections and child processes, then the database. */
  stop(): Promise<void>;
}

export const VERSION: string = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export function createLogger(config: Config): Logger {
  return pino({
    level: config.logLevel,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.accessToken', '*.token', 'password', 'accessToken', 'token'],
      censor: '[redacted]',
    },
  });
}

export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const log = options.logger ?? createLogger(config);
  const hub = createHub(config, options.clock ?? systemClock, log);
  const http = await buildHttpSurface(hub, VERSION);
  let stopping: Promise<void> | undefined;

  return {
    hub,
    http,
    async start() {
      await http.app.listen({ port: config.port, host: config.host });
      const address = http.app.server.address() as AddressInfo;
      try {
        await hub.start();
      } catch (err) {
        await http.app.close();
        await hub.stop();
        throw err;
      }
      log.info({ port: address.port, host: config.host, version: VERSION }, 'home control service ready');
      return address;
    },
    stop() {
      stopping ??= (async () => {
        await http.app.close();
        await hub.stop();
      })();
      return stopping;
    },
  };
}
