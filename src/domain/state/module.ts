import { every, type Clock, type Timers } from '../../platform/clock.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { StateRepository } from './model.js';
import type { DomainEventBus } from '../events.js';
import { StateAuthority } from './state-authority.js';
import type { TelemetryLimits } from './telemetry.js';

const TELEMETRY_PRUNE_INTERVAL_MS = 60 * 1000;

export interface StateModuleDeps {
  repository: StateRepository;
  telemetry: TelemetryLimits;
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
}

/**
 * The state authority: last known state loaded (unconfirmed until a driver reports), changes
 * written behind, telemetry pruned every minute, the rest written at stop. Its operations
 * (`state.*`) join each state with its device, so the devices module offers them.
 */
export function stateModule({ repository, telemetry, events, clock, timers, log }: StateModuleDeps) {
  const authority = new StateAuthority(repository, clock, events, log, telemetry, timers);
  let stopPrune = () => {};
  return defineModule({
    name: 'state',
    needs: ['storage'],
    authority,
    operations: {},
    async start() {
      await authority.load();
      authority.start();
      stopPrune = every(timers, TELEMETRY_PRUNE_INTERVAL_MS, () => authority.telemetry.prune(clock.now()), (err) => log.error({ err }, 'telemetry prune failed'));
    },
    async stop() {
      stopPrune();
      await authority.stop();
    },
  });
}
