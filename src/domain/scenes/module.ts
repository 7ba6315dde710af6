import type { AudienceResolver } from '../access/audience.js';
import type { Clock } from '../../platform/clock.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import { SceneCatalog } from './catalog.js';
import { sceneOperations } from './operations.js';

/** Scenes devices expose: listed again whenever a scene-capable device comes online. */
export function scenesModule({ devices, audiences, events, clock, log }: { devices: DeviceService; audiences: AudienceResolver; events: DomainEventBus; clock: Clock; log: ModuleLog }) {
  const scenes = new SceneCatalog(devices, clock);
  let unwatch = () => {};
  return defineModule({
    name: 'scenes',
    needs: ['devices'],
    scenes,
    operations: { scenes: sceneOperations(scenes, audiences, (id) => devices.registry.find(id)) },
    async start() {
      unwatch = scenes.watch(events, (err) => log.warn({ err }, 'listing a device\'s scenes failed'));
    },
    async stop() {
      unwatch();
    },
  });
}
