import { every, type Clock, type Timers } from '../../platform/clock.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { DomainEventBus } from '../events.js';
import { AccountService, type RegistrationLimits } from './accounts.js';
import { AuthService, type AuthSettings } from './auth-service.js';
import { InviteBook } from './invites.js';
import { LoginLimiter } from './login-limiter.js';
import type { InviteRepository, RegistrationMode, TokenRepository, UserRepository } from './model.js';
import { authOperations, inviteOperations, userOperations } from './operations.js';
import { SerialWrites } from '../../platform/serial-writes.js';

const PURGE_INTERVAL_MS = 10 * 60 * 1000;

export interface AuthModuleDeps {
  users: UserRepository;
  tokens: TokenRepository;
  invites: InviteRepository;
  settings: AuthSettings;
  /** APP_REGISTRATION: who may create an account through `auth.register`. */
  registration: RegistrationMode;
  /** APP_REGISTRATION_LIMIT per APP_REGISTRATION_WINDOW_SECONDS: open registrations one client address may attempt. */
  registrationLimits: RegistrationLimits;
  /** The account created on first start; without a password, one is generated and logged once. */
  admin: { username: string; password: string | undefined };
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
}

/** Accounts, invites and tokens: the first admin, valid tokens loaded, expired tokens and old invites purged every 10 minutes. */
export function authModule({ users, tokens, invites, settings, registration, registrationLimits, admin, events, clock, timers, log }: AuthModuleDeps) {
  const limiter = new LoginLimiter(settings, clock);
  // The login limiter's sliding window again, with its own limits: every attempt is counted against the address.
  const registrations = new LoginLimiter(
    { maxFailuresPerClient: registrationLimits.maxPerClient, maxFailuresPerClientUser: registrationLimits.maxPerClient, windowMs: registrationLimits.windowMs },
    clock,
  );
  const writes = new SerialWrites();
  const auth = new AuthService(users, tokens, clock, settings, events, limiter);
  const inviteBook = new InviteBook(invites, clock, writes);
  const accounts = new AccountService(users, auth, inviteBook, limiter, writes, events, clock, registration, registrations);
  let stopPurge = () => {};
  return defineModule({
    name: 'auth',
    needs: ['storage'],
    auth,
    accounts,
    operations: { auth: authOperations(auth, accounts), users: userOperations(accounts), invites: inviteOperations(inviteBook) },
    async start() {
      const created = await accounts.ensureAdmin(admin.username, admin.password);
      if (created.generatedPassword) {
        // Shown once, at creation: only the hash is stored, so it cannot be shown again.
        log.warn({ username: admin.username }, `created admin account "${admin.username}" with generated password ${created.generatedPassword} (shown once; set ADMIN_PASSWORD to choose one, or sign in with it and the web pages ask for a new one)`);
      } else if (created.created) {
        log.info({ username: admin.username }, 'created admin account');
      }
      await accounts.loadPasswordPrompts();
      await auth.start();
      stopPurge = every(
        timers,
        PURGE_INTERVAL_MS,
        async () => {
          await auth.purgeExpired();
          await inviteBook.purgeSettled();
        },
        (err) => log.error({ err }, 'purge of expired tokens and invites failed'),
      );
    },
    async stop() {
      stopPurge();
    },
  });
}
