import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
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
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config);
  const listener = new HttpListener();
  try {
    await listener.listen(config.port, config.host);
  } catch (err) {
    log.fatal({ err }, 'start failed');
    process.exit(1);
  }

  const { createApp } = await import('./app.js');
  const app = await createApp(config, { logger: log, listener });

  const shutdown = (signal: string) => {
    log.info({ signal }, 'stopping');
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
