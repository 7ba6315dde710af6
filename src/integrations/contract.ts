import type { FastifyInstance } from 'fastify';
import type { Hub } from '../hub.js';
import type { adminForm, bindPage } from '../surfaces/http/admin/panel-kit.js';
import type { DeviceService } from '../domain/devices/device-service.js';
import type { BuiltInIntegrations } from '../domain/drivers/builtin.js';
import type { DriverManager } from '../domain/drivers/driver-manager.js';
import type { DomainEventBus } from '../domain/events.js';
import type { Clock, Timers } from '../platform/clock.js';
import type { DocumentRepository } from '../platform/document-repository.js';
import type { ErrorFactory } from '../platform/errors.js';
import type { RuntimeLeases } from '../platform/leased-runtime.js';
import type { ModuleLog, OperationGroups } from '../platform/module.js';
import type { Operation } from '../platform/operations.js';
import type { Requirements } from '../platform/requirements.js';
import type { ProcessRunner } from '../platform/processes.js';
import type { SecretBox } from '../platform/secret-box.js';

/**
 * What an integration folder (`src/integrations/<name>/`) declares, after Home Assistant's
 * integration manifests and Zigbee2MQTT's extension list: its settings, the folders it keeps
 * under DATA_DIR, its npm requirements, whether it runs once per cluster, its errors, its
 * routes and its admin page. The hub derives the wiring from the declaration (src/integrations/host.ts):
 * the settings are read from the environment by config.ts and can be changed by an admin
 * without a restart, the folders go into backups, the errors into docs/errors.md, the routes
 * into the OS API and OpenAPI, the page into the admin panel. Adding one is its folder and one
 * line in src/integrations/index.ts.
 */

/** One setting of an integration: an environment variable, also settable in the admin panel. */
export interface IntegrationSetting {
  /** The environment variable that sets it; when set, it wins over what an admin chose (409 `SETTING_SET_BY_ENVIRONMENT`). */
  readonly env: string;
  /** What the admin panel calls it. */
  readonly label: string;
  /** For the README's settings table and the panel: what it does, what leaving it empty means. */
  readonly description: string;
  readonly example?: string;
  /** Why a value is not acceptable (undefined when it is): an environment value fails the start, an admin's gets 400. */
  check?(value: string): string | undefined;
}

export type SettingsDeclaration<K extends string> = Readonly<Record<K, IntegrationSetting>>;

/** An integration's settings now: from the environment where set, else as an admin saved them. */
export interface IntegrationSettingsView<K extends string> {
  /** Each setting's value; absent when neither the environment nor an admin gave one. */
  values(): Readonly<Partial<Record<K, string>>>;
  /** Where each given value comes from. */
  sources(): Readonly<Partial<Record<K, 'environment' | 'admin'>>>;
}

/** What the hub gives an integration to build itself from (every port it may use, nothing else). */
export interface IntegrationContext<K extends string> {
  readonly settings: IntegrationSettingsView<K>;
  /** The absolute path of one of its declared `dataFolders` (under DATA_DIR; backups carry it). */
  folder(name: string): string;
  readonly devices: DeviceService;
  /** Where its built-in driver attaches (`attachBuiltInDriver`), so its devices take every driver's path. */
  readonly manager: DriverManager;
  /** Where it is listed with its status (`integrations.list`). */
  readonly integrations: BuiltInIntegrations;
  /** A document aggregate of its own (kept in the database, carried by backups, replicated in a cluster). */
  documents<T extends { id: string }>(kind: string): DocumentRepository<T>;
  /** Seals what it must keep secret (keys, tokens) with the hub's key; usable once the `secrets` module started. */
  readonly secrets: SecretBox;
  /** Its declared npm requirements, installed under DATA_DIR on first use; absent when it declares none. */
  readonly requirements?: Requirements;
  /** The cluster's leases, when it runs once per cluster and the hub is part of one (PostgreSQL). */
  readonly leases?: RuntimeLeases;
  readonly events: DomainEventBus;
  /** Runs its child processes (a protocol stack of its own), which never outlive the hub. */
  readonly processes: ProcessRunner;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly log: ModuleLog;
}

/** A route of the integration, bound in the OS API (and OpenAPI) under its three bases, tagged with its name. */
export interface IntegrationRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly url: string;
  readonly operation: Operation;
  readonly successStatus?: number;
}

/** What `create` answers: the integration running in the hub, started and stopped as a module. */
export interface IntegrationInstance<G extends OperationGroups = OperationGroups> {
  readonly operations: G;
  readonly routes: readonly IntegrationRoute[];
  /** Starts it (after the modules it needs). Must not wait for the devices: a stick that is slow to answer is a status, not a slow start. */
  start?(): Promise<void>;
  stop?(): Promise<void>;
  /** An admin changed its settings: apply them now (stop what ran on the old ones, start on the new). */
  reconfigure?(): Promise<void>;
}

/** What an integration's admin page binds itself with (the admin panel hands it over; the page imports none of the panel's code). */
export interface AdminPanelKit {
  readonly bindPage: typeof bindPage;
  readonly adminForm: typeof adminForm;
}

/** A page of the admin panel, loaded only when the panel is mounted. */
export interface IntegrationAdminPage {
  /** The panel's menu entry. */
  readonly label: string;
  /** Its path under `/admin`: `/panel/<name>`. */
  readonly url: string;
  load(): Promise<{ bindAdminPage(kit: AdminPanelKit, app: FastifyInstance, hub: Hub): void }>;
}

export interface IntegrationDefinition<K extends string = string, G extends OperationGroups = OperationGroups> {
  /** Its module name, operation prefix and OpenAPI tag: `zwave`. */
  readonly name: string;
  readonly title: string;
  /** Its documentation page: `docs/zwave.md`. */
  readonly doc: string;
  readonly settings: SettingsDeclaration<K>;
  /** Folders it keeps under DATA_DIR; backups carry them and a restore brings them back. */
  readonly dataFolders: readonly string[];
  /** npm packages it loads that a home box (`npm ci --omit=dev`) does not have; installed on first use, pinned. */
  readonly requirements: readonly string[];
  /** Whether one instance of a cluster runs it (through a lease); otherwise every instance does. */
  readonly oncePerCluster: boolean;
  /** Its error catalogue (defineErrors): docs/errors.md lists it. */
  readonly errors: Readonly<Record<string, ErrorFactory>>;
  readonly adminPage?: IntegrationAdminPage;
  create(context: IntegrationContext<K>): IntegrationInstance<G>;
}

/** Declares an integration; the literal types of its settings and operations stay for its own code and tests. */
export function defineIntegration<const K extends string, G extends OperationGroups>(definition: IntegrationDefinition<K, G>): IntegrationDefinition<K, G> {
  return definition;
}
