import type { Clock } from '../../platform/clock.js';
import { defineModule } from '../../platform/module.js';
import type { OperationRegistry } from '../../platform/operations.js';
import type { DomainEventBus } from '../events.js';
import { AiService } from './ai-service.js';
import { IntentsBackend } from './intents-backend.js';
import { aiOperations } from './operations.js';
import type { AiBackend } from './ports.js';

/** The assistant (docs/ai.md): the intent engine by default, started with the hub. */
export function aiModule(deps: { backend?: AiBackend; graphLoaded: () => boolean; events: DomainEventBus; clock: Clock; registry: OperationRegistry }) {
  const ai = new AiService(deps.backend ?? new IntentsBackend(deps.graphLoaded), deps.events, deps.clock);
  return defineModule({
    name: 'ai',
    needs: ['intents'],
    ai,
    operations: { ai: aiOperations(ai, deps.registry) },
    async start() {
      // A model server may be slow to load or away: the hub does not wait for it (the status tells).
      void ai.start().catch(() => undefined);
    },
    async stop() {
      await ai.stop();
    },
  });
}
