import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { AudienceResolver } from '../access/audience.js';
import type { DomainEventBus } from '../events.js';
import type { MediaService } from '../media/media-service.js';
import { MediaControllerService } from './media-controller.js';
import { MusicService, type MusicTarget } from './music-service.js';
import { musicOperations } from './operations.js';
import type { LocalPlayer } from './ports.js';

export interface MusicModuleDeps {
  player: LocalPlayer;
  /** Other MPD instances (`MPD_TARGETS`). */
  targets?: readonly MusicTarget[];
  media: MediaService;
  audiences: AudienceResolver;
  events: DomainEventBus;
  log: ModuleLog;
}

/**
 * Music: the local media controller (the hub box's MPD) and the music services over it and the
 * media roster. The player connects in the background: MPD being down never holds the hub's
 * start, and the controller reports `connected: false` until it is reached.
 */
export function musicModule({ player, targets = [], media, audiences, events, log }: MusicModuleDeps) {
  const controller = new MediaControllerService(player, events);
  const music = new MusicService(controller, media, targets);
  return defineModule({
    name: 'music',
    needs: ['media'],
    controller,
    music,
    operations: { music: musicOperations(controller, music, audiences) },
    async start() {
      player.start();
      for (const target of targets) target.player.start();
      log.info({ server: controller.state().server }, 'local media controller connecting');
    },
    async stop() {
      await Promise.all([player, ...targets.map((t) => t.player)].map((p) => p.stop()));
    },
  });
}
