import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { AudienceResolver } from '../access/audience.js';
import type { BuiltInIntegrations, IntegrationStatus } from '../drivers/builtin.js';
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
  /** Where the MPD targets are listed with their status, when there are any (`integrations.list`). */
  integrations?: BuiltInIntegrations;
}

/** The MPD targets as one built-in integration: each target a device, `degraded` while some are not connected. */
export function mpdTargetsStatus(targets: readonly MusicTarget[], started: boolean): IntegrationStatus {
  const devices = targets.length;
  if (!started) return { status: 'off', devices };
  const down = targets.map((t) => t.player.snapshot()).filter((s) => !s.connected);
  if (down.length === 0) return { status: 'running', devices };
  const lastError = down.map((s) => s.error).find((e): e is string => typeof e === 'string');
  return { status: 'degraded', devices, unreachable: down.length, ...(lastError ? { lastError } : {}) };
}

/**
 * Music: the local media controller (the hub box's MPD) and the music services over it and the
 * media roster. The player connects in the background: MPD being down never holds the hub's
 * start, and the controller reports `connected: false` until it is reached.
 */
export function musicModule({ player, targets = [], media, audiences, events, log, integrations }: MusicModuleDeps) {
  const controller = new MediaControllerService(player, events);
  const music = new MusicService(controller, media, targets);
  let started = false;
  if (targets.length > 0) integrations?.register({ key: 'mpd', name: 'MPD targets (MPD_TARGETS)', status: () => mpdTargetsStatus(targets, started) });
  return defineModule({
    name: 'music',
    needs: ['media'],
    controller,
    music,
    operations: { music: musicOperations(controller, music, audiences) },
    async start() {
      player.start();
      for (const target of targets) target.player.start();
      started = true;
      log.info({ server: controller.state().server }, 'local media controller connecting');
    },
    async stop() {
      started = false;
      await Promise.all([player, ...targets.map((t) => t.player)].map((p) => p.stop()));
    },
  });
}
