import type { Clock, Timers } from '../../platform/clock.js';
import { DocumentCollection } from '../../platform/document-collection.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { AudienceResolver } from '../access/audience.js';
import { attachBuiltInDriver, type BuiltInIntegrations } from '../drivers/builtin.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import { CastPairingService, type CastPairingSettings } from './cast-pairing.js';
import { mediaErrors } from './errors.js';
import { MediaService, type MediaSettings } from './media-service.js';
import type { MediaEndpoint } from './model.js';
import { mediaOperations } from './operations.js';
import type { CastPairer, EndpointController, EndpointDiscovery } from './ports.js';

export interface MediaModuleDeps {
  repository: DocumentRepository<MediaEndpoint>;
  devices: DeviceService;
  spaces: { find(id: string): { name: string } | undefined };
  discovery: EndpointDiscovery;
  /** One built-in integration per endpoint kind it controls (Roku, Android TV, Cast, bridge). */
  controllers: readonly EndpointController[];
  /** Where the integrations are listed with their status while attached (`integrations.list`). */
  integrations?: BuiltInIntegrations;
  pairer: CastPairer;
  settings: MediaSettings & { pairing: CastPairingSettings };
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
  const { devices, events, clock, timers, log } = deps;
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
  const pairing = new CastPairingService(media, deps.pairer, deps.settings.pairing, events, clock, timers);
  const detachments: Array<() => void> = [];
  return defineModule({
    name: 'media',
    needs: ['storage', 'devices', 'home'],
    media,
    pairing,
    operations: { media: mediaOperations(media, pairing, deps.audiences) },
    async start() {
      for (const controller of deps.controllers) detachments.push(attachBuiltInDriver(devices.drivers, controller, log, { ...(deps.integrations ? { integrations: deps.integrations } : {}) }));
      await media.load();
      log.info({ endpoints: media.endpointViews().length, integrations: deps.controllers.map((c) => c.driverKey) }, 'media endpoints loaded');
    },
    async stop() {
      pairing.stop();
      for (const detach of detachments.splice(0).reverse()) detach();
      await media.settled();
    },
  });
}
