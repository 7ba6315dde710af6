import type { Logger } from 'pino';
import type { Config } from './config.js';
import { AuthService } from './domain/auth/auth-service.js';
import { authOperations, type AuthOperations } from './domain/auth/operations.js';
import { createDomainEventBus, type DomainEventBus } from './domain/events.js';
import type { Clock } from './platform/clock.js';
import { OperationRegistry } from './platform/operations.js';
import { Readiness } from './platform/readiness.js';
import { openStorage, type Storage } from './storage/database.js';
import { KyselyTokenRepository, KyselyUserRepository } from './storage/repositories/auth.js';

/**
 * The domain core, assembled: storage, services, their operations and the event bus. Surfaces
 * receive a Hub and adapt it; nothing in here knows about HTTP, Socket.IO or WebSockets.
 * `createHub` only wires; `start` does the slow work (migrations, loading), so the surfaces can
 * already answer /healthz and /readyz while it runs.
 */
export interface Hub {
  config: Config;
  clock: Clock;
  log: Logger;
  events: DomainEventBus;
  storage: Storage;
  readiness: Readiness;
  auth: AuthService;
  operations: OperationRegistry;
  ops: { auth: AuthOperations };
  /** Migration names applied to the database, once started. */
  appliedMigrations: string[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

const TOKEN_PURGE_INTERVAL_MS = 10 * 60 * 1000;

export function createHub(config: Config, clock: Clock, log: Logger): Hub {
  const readiness = new Readiness(['storage', 'auth']);
  const events = createDomainEventBus(log);
  const storage = openStorage(config.dataDir);
  const auth = new AuthService(
    new KyselyUserRepository(storage.db),
    new KyselyTokenRepository(storage.db),
    clock,
    {
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      streamTokenTtlSeconds: config.streamTokenTtlSeconds,
      maxFailuresPerClient: config.loginMaxFailuresPerClient,
      maxFailuresPerClientUser: config.loginMaxFailuresPerClientUser,
      windowMs: config.loginFailureWindowSeconds * 1000,
    },
    events,
  );

  const ops = { auth: authOperations(auth) };
  const operations = new OperationRegistry();
  operations.register(...Object.values(ops.auth));

  let purge: NodeJS.Timeout | undefined;

  const hub: Hub = {
    config,
    clock,
    log,
    events,
    storage,
    readiness,
    auth,
    operations,
    ops,
    appliedMigrations: [],
    async start() {
      hub.appliedMigrations = await storage.migrate();
      readiness.markReady('storage');
      log.info({ dataDir: config.dataDir, migrations: hub.appliedMigrations.length }, 'storage ready');

      const admin = await auth.ensureAdmin(config.adminUsername, config.adminPassword);
      if (admin.generatedPassword) {
        // Shown once, at creation: only the hash is stored, so it cannot be shown again.
        log.warn(`created admin account "${config.adminUsername}" with generated password ${admin.generatedPassword} (shown once; set ADMIN_PASSWORD to choose one)`);
      } else if (admin.created) {
        log.info({ username: config.adminUsername }, 'created admin account');
      }
      await auth.start();
      purge = setInterval(() => {
        auth.purgeExpired().catch((err: unknown) => log.error({ err }, 'token purge failed'));
      }, TOKEN_PURGE_INTERVAL_MS);
      purge.unref();
      readiness.markReady('auth');
    },
    async stop() {
      if (purge) clearInterval(purge);
      events.removeAllListeners();
      await storage.close();
    },
  };
  return hub;
}
