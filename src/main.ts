import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, LogRing } from './logger.js';
import type { AddressInfo } from 'node:net';
import type { App } from './app.js';
import { HttpListener } from './surfaces/http/listener.js';

/**
 * Process entry: configuration, start, and an orderly stop on SIGINT/SIGTERM within 5 s.
 *
 * The HTTP port listens before the rest of the service is even loaded (`/healthz` answers, other
 * requests wait for the service; see HttpListener): a hub restarted by its supervisor is back as
 * soon as Node is. Only this file, the configuration, the logger and the listener are loaded
 * first; `npm run build` puts app.js and everything it imports in a chunk of its own.
 */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logRing = new LogRing();
  const log = createLogger(config, undefined, logRing);
  let listener = new HttpListener();
  try {
    await listener.listen(config.port, config.host);
  } catch (err) {
    log.fatal({ err }, 'start failed');
    process.exit(1);
  }
  // A restart listens again on the port bound now (PORT=0 picks one once).
  const port = (listener.server.address() as AddressInfo).port;

  const { createApp } = await import('./app.js');
  const { applyPendingRestore } = await import('./storage/restore.js');
  let app!: App;
  let restarting = false;
  const build = async () => {
    const restored = applyPendingRestore(config.dataDir, config.driversDir, config.databaseUrl ? 'postgres' : 'sqlite');
    if (restored) log.warn({ keptIn: restored.keptIn }, 'a backup was restored; the state it replaced is kept');
    app = await createApp(config, { logger: log, listener, logRing, restart });
  };
  // Within the process: every module stops as at shutdown, a staged restore is applied, and
  // the service is built and started again on the same port.
  function restart(reason: string): void {
    if (restarting) return;
    restarting = true;
    log.warn({ reason }, 'restarting the service');
    void (async () => {
      await app.stop();
      listener = new HttpListener();
      await listener.listen(port, config.host);
      await build();
      await app.start();
    })().then(
      () => (restarting = false),
      (err: unknown) => {
        log.fatal({ err }, 'restart failed');
        process.exit(1);
      },
    );
  }
  await build();

  const shutdown = (signal: string) => {
    log.info({ signal }, 'stopping');
    // Node's timer: it bounds the hub's own stop, so it must not wait on the hub's (injected) timers.
    const force = setTimeout(() => {
      log.error('stop took longer than allowed; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    app.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));

  try {
    await app.start();
  } catch (err) {
    log.fatal({ err }, 'start failed');
    process.exit(1);
  }
}

void main();
