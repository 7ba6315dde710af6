import type { Clock } from '../../platform/clock.js';
import { DocumentCollection } from '../../platform/document-collection.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { DomainEventBus } from '../events.js';
import type { Space } from '../home/model.js';
import { playerErrors } from './errors.js';
import { authErrors } from '../auth/errors.js';
import type { PlayerAssignment, PlayerRecord } from './model.js';
import { playerOperations } from './operations.js';
import { PlayerService, type UserDirectory } from './player-service.js';
import { Roster, type RuntimeDevices } from './roster.js';
import { StatusKeeper } from './status-keeper.js';

export interface PlayersModuleDeps {
  repositories: { players: DocumentRepository<PlayerRecord>; assignments: DocumentRepository<PlayerAssignment> };
  devices: RuntimeDevices;
  spaces: Pick<DocumentCollection<Space>, 'find' | 'get'>;
  users: UserDirectory;
  events: DomainEventBus;
  clock: Clock;
  log: ModuleLog;
}

/**
 * The fleet's players, who has them, and their status: the roster the App API answers. Persisted
 * status follows the linked devices while the module runs; assignments follow accounts.
 */
export function playersModule({ repositories, devices, spaces, users, events, clock, log }: PlayersModuleDeps) {
  const roster = new Roster(devices, spaces, clock);
  const players = new PlayerService(
    new DocumentCollection(repositories.players, clock, playerErrors.PLAYER_NOT_FOUND),
    // An assignment is looked up with find, never get: a user without one has no players.
    new DocumentCollection(repositories.assignments, clock, authErrors.USER_NOT_FOUND),
    roster,
    devices,
    spaces,
    users,
    clock,
  );
  const keeper = new StatusKeeper(players, events, clock, log);
  const owner = {};
  return defineModule({
    name: 'players',
    needs: ['storage', 'auth', 'devices', 'home'],
    players,
    operations: { players: playerOperations(players) },
    async start() {
      await players.load();
      await keeper.start();
      events.on(owner, 'user.removed', ({ userId }) => {
        players.userRemoved(userId).catch((err: unknown) => log.warn({ err, userId }, "dropping a removed user's players failed"));
      }, { origin: 'local' });
      events.on(owner, 'space.removed', ({ spaceId }) => {
        players.spaceRemoved(spaceId).catch((err: unknown) => log.warn({ err, spaceId }, "clearing a removed space from players failed"));
      }, { origin: 'local' });
      log.info({ players: players.list().length }, 'players loaded');
    },
    async stop() {
      events.removeOwner(owner);
      await keeper.stop();
    },
  });
}
