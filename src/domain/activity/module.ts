import type { Clock, Timers } from '../../platform/clock.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { OperationRegistry } from '../../platform/operations.js';
import { ActivityLog, type ActivityRepository, type SubjectNames } from './activity-log.js';
import { activityOperations } from './operations.js';

export interface ActivityModuleDeps {
  repository: ActivityRepository;
  operations: OperationRegistry;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
  names?: SubjectNames;
}

/** The activity log: uses of the home, observed at the registry. */
export function activityModule({ repository, operations, clock, timers, log, names }: ActivityModuleDeps) {
  const activity = new ActivityLog(repository, clock, timers, log, names);
  let stopObserving: (() => void) | undefined;
  return defineModule({
    name: 'activity',
    needs: ['storage'],
    activity,
    operations: { activity: activityOperations(activity) },
    async start() {
      stopObserving = operations.observeChanges(activity.onCall);
    },
    async stop() {
      stopObserving?.();
      await activity.settled();
    },
  });
}
