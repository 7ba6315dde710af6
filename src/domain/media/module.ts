import type { Clock, Timers } from '../../platform/clock.js';
import { DocumentCollection } from '../../platform/document-collection.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { AudienceResolver } from '../access/audience.js';
import { attachBuiltInDriver } from '../drivers/builtin.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import { mediaErrors } from './errors.js';
import { MediaService, type MediaSettings } from './media-service.js';
import type { MediaEndpoint } from './model.js';
import { mediaOperations } from './operations.js';
import type { EndpointController, EndpointDiscovery } from './ports.js';

export interface MediaModuleDeps {
  repository: DocumentRepository<MediaEndpoint>;
  devices: DeviceService;
  spaces: { find(id: string): { name: string } | undefined };
  discovery: EndpointDiscovery;
  /** One built-in integration per endpoint kind it controls (Roku, Android TV, bridge). */
  controllers: readonly EndpointController[];
  settings: MediaSettings;
  audiences: AudienceResolver;
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
}

/**
 * Media players and playback endpoints: the roster, normalized commands, discovery, bridge
 * endpoints and cast pairing. Each built-in integration is a driver link of its own, so the
 * devices it makes of endpoints are commanded and watched like every driver's.
 */
export function mediaModule(deps: MediaModuleDeps) {
  const { devices, events, clock, log } = deps;
  const media = new MediaService(
    new DocumentCollection(deps.repository, clock, mediaErrors.ENDPOINT_NOT_FOUND),
    devices,
    deps.spaces,
    deps.discovery,
    deps.controllers,
    deps.settings,
    events,
    clock,
    log,
  );
  const detachments: Array<() => void> = [];
  return defineModule({
    name: 'media',
    needs: ['storage', 'devices', 'home'],
    media,
    operations: { media: mediaOperations(media, deps.audiences) },
    async start() {
      for (const controller of deps.controllers) detachments.push(attachBuiltInDriver(devices.drivers, controller, log));
      await media.load();
      log.info({ endpoints: media.endpointViews().length, integrations: deps.controllers.map((c) => c.driverKey) }, 'media endpoints loaded');
    },
    async stop() {
      for (const detach of detachments.splice(0).reverse()) detach();
      await media.settled();
    },
  });
}
