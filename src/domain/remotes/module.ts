import type { Clock, Timers } from '../../platform/clock.js';
import { DocumentCollection } from '../../platform/document-collection.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { defineModule } from '../../platform/module.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import type { PreferencesService } from '../home/preferences.js';
import type { SpaceService } from '../home/spaces.js';
import type { ActionMapRunner } from '../programs/action-maps.js';
import type { RoutineReach } from '../home/routine-reach.js';
import { EVERYTHING, NOTHING, type Audience } from '../access/audience.js';
import type { Role } from '../../platform/operations.js';
import { RemoteControl, type RemoteAudience } from './control.js';
import { RemoteDirectory } from './directory.js';
import { remoteErrors } from './errors.js';
import type { PairedRemote } from './model.js';
import { remoteAdminOperations, remoteSessionOperations } from './operations.js';
import { PAIRING_LIMITS, PairingService, type PairingLimits } from './pairing.js';

/**
 * The paired remotes and their tokens. Built before the operation registry, which authenticates
 * remote tokens through it; the remotes module loads it at start.
 */
export function remoteDirectory({ repository, events, clock }: { repository: DocumentRepository<PairedRemote>; events: DomainEventBus; clock: Clock }) {
  return new RemoteDirectory(new DocumentCollection(repository, clock, remoteErrors.REMOTE_NOT_FOUND), events, clock);
}

export interface RemotesModuleDeps {
  directory: RemoteDirectory;
  devices: DeviceService;
  spaces: SpaceService;
  preferences: PreferencesService;
  actionMaps: ActionMapRunner;
  routines: RoutineReach;
  /** The accounts remotes are paired by; an unknown account fails (USER_NOT_FOUND). */
  accounts: { get(id: string): Promise<{ id: string; role: Role; disabled: boolean }> };
  audiences: { audienceOfAccount(account: { userId: string; role: Role }): Audience };
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  /** Pairing limits other than the defaults (REMOTE_PAIRING_* settings). */
  pairingLimits?: Partial<PairingLimits>;
}

/** Remote controllers: pairing, their tokens, their sessions and key dispatch. */
export function remotesModule({ directory, devices, spaces, preferences, actionMaps, routines, accounts, audiences, events, clock, timers, pairingLimits }: RemotesModuleDeps) {
  const startingSpace = (spaceId?: string): string | null => {
    if (spaceId) return spaces.spaces.get(spaceId).id;
    const preferred = preferences.get().defaultSpaceId;
    return preferred && spaces.spaces.find(preferred) ? preferred : null;
  };
  const pairing = new PairingService(directory, startingSpace, events, clock, timers, { ...PAIRING_LIMITS, ...pairingLimits });
  // Live, not cached at pairing: the pairing account's grants, role and being enabled apply as they are now.
  const remoteAudience: RemoteAudience = async ({ pairedBy }) => {
    if (pairedBy === 'code') return EVERYTHING;
    const account = await accounts.get(pairedBy).catch(() => undefined);
    return account && !account.disabled ? audiences.audienceOfAccount({ userId: account.id, role: account.role }) : NOTHING;
  };
  const control = new RemoteControl(directory, spaces, actionMaps, devices, events, clock, remoteAudience, routines);
  const owner = {};
  return defineModule({
    name: 'remotes',
    needs: ['storage', 'auth', 'access', 'devices', 'home', 'programs'],
    directory,
    pairing,
    control,
    operations: { remotes: remoteAdminOperations(pairing, directory, audiences), remote: remoteSessionOperations(control) },
    async start() {
      await directory.load();
      // A removed account's remotes go with it: they acted in its name.
      events.on(owner, 'user.removed', ({ userId }) => {
        for (const remote of directory.list()) {
          if (remote.pairedBy === userId) directory.revoke(remote.id).catch(() => {});
        }
      }, { origin: 'local' });
    },
    async stop() {
      events.removeOwner(owner);
      pairing.stop();
    },
  });
}
