import type { Clock, Timers } from '../../platform/clock.js';
import { DocumentCollection } from '../../platform/document-collection.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { defineModule, type ModuleLog } from '../../platform/module.js';
import type { AudienceResolver } from '../access/audience.js';
import type { AuthService } from '../auth/auth-service.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import { fleetErrors } from './errors.js';
import { FleetService, type FleetSettings } from './fleet-service.js';
import type { BridgeLinkRecord, FleetReleaseStatus, HubIdentityRecord, RegisteredFleetDevice } from './model.js';
import { fleetOperations } from './operations.js';
import type { BridgePeerClient, SecretBox } from './ports.js';

export interface FleetModuleDeps {
  repositories: {
    hub: DocumentRepository<HubIdentityRecord>;
    link: DocumentRepository<BridgeLinkRecord>;
    statuses: DocumentRepository<FleetReleaseStatus>;
    registered: DocumentRepository<RegisteredFleetDevice>;
  };
  devices: DeviceService;
  auth: AuthService;
  audiences: AudienceResolver;
  peer: BridgePeerClient;
  /** Seals the link's token (the `secrets` module's box). */
  secrets: SecretBox;
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  log: ModuleLog;
  settings: FleetSettings;
}

/** The fleet and the bridge between hubs (docs/fleet.md): loaded at start, the link checked in the background; stopped, it stops checking. */
export function fleetModule(deps: FleetModuleDeps) {
  const missing = (what: string) => ({ id }: { id: string }) => fleetErrors.FLEET_DEVICE_NOT_FOUND({ fleetDeviceId: `${what} ${id}` });
  const fleet = new FleetService(
    {
      hub: new DocumentCollection(deps.repositories.hub, deps.clock, missing('hub')),
      link: new DocumentCollection(deps.repositories.link, deps.clock, missing('link')),
      statuses: new DocumentCollection(deps.repositories.statuses, deps.clock, missing('status')),
      registered: new DocumentCollection(deps.repositories.registered, deps.clock, missing('registered')),
    },
    deps.devices,
    deps.peer,
    deps.secrets,
    deps.clock,
    deps.timers,
    deps.events,
    deps.log,
    deps.settings,
  );
  return defineModule({
    name: 'fleet',
    needs: ['storage', 'auth', 'devices', 'secrets'],
    fleet,
    operations: { fleet: fleetOperations(fleet, deps.devices, deps.auth, deps.audiences) },
    async start() {
      await fleet.start();
    },
    async stop() {
      fleet.stop();
    },
  });
}
