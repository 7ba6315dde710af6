import type { HubModule, NoOperations } from '../../platform/module.js';
import type { NodeProcessRunner } from './node-process-runner.js';

export interface ProcessesModule extends HubModule<NoOperations> {
  readonly runner: NodeProcessRunner;
}

/**
 * The hub's child processes: started before any module that spawns one, it first stops what a
 * previous run left behind (a hub killed with its reaper); stopped after them, it ends the reaper.
 */
export function processesModule(runner: NodeProcessRunner, log: { info(obj: object, msg: string): void }): ProcessesModule {
  return {
    name: 'processes',
    needs: [],
    operations: {},
    runner,
    async start() {
      const stopped = await runner.reapLeftovers();
      if (stopped > 0) log.info({ stopped }, 'stopped child processes a previous run of the hub left behind');
    },
    stop: () => runner.close(),
  };
}
