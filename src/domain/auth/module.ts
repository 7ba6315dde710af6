import { every, type Clock, type Timers } from '../../platform/clock.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { DomainEventBus } from '../events.js';
import { AuthService, type AuthSettings } from './auth-service.js';
import type { TokenRepository, UserRepository } from './model.js';
import { authOperations } from './operations.js';

const TOKEN_PURGE_INTERVAL_MS = 10 * 60 * 1000;

export interface AuthModuleDeps {
  users: UserRepository;
  tokens: TokenRepository;
  settings: AuthSettings;
  /** The account created on first start; without a password, one is generated and logged once. */
  admin: { username: string; password: string | undefined };
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
}

/** Accounts and tokens: the first admin, valid tokens loaded, expired ones purged every 10 minutes. */
export function authModule({ users, tokens, settings, admin, events, clock, timers, log }: AuthModuleDeps) {
  const auth = new AuthService(users, tokens, clock, settings, events);
  let stopPurge = () => {};
  return defineModule({
    name: 'auth',
    needs: ['storage'],
    auth,
    operations: { auth: authOperations(auth) },
    async start() {
      const created = await auth.ensureAdmin(admin.username, admin.password);
      if (created.generatedPassword) {
        // Shown once, at creation: only the hash is stored, so it cannot be shown again.
        log.warn({ username: admin.username }, `created admin account "${admin.username}" with generated password ${created.generatedPassword} (shown once; set ADMIN_PASSWORD to choose one)`);
      } else if (created.created) {
        log.info({ username: admin.username }, 'created admin account');
      }
      await auth.start();
      stopPurge = every(timers, TOKEN_PURGE_INTERVAL_MS, () => auth.purgeExpired(), (err) => log.error({ err }, 'expired token purge failed'));
    },
    async stop() {
      stopPurge();
    },
  });
}
