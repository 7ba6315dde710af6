import path from 'node:path';
import { Type, type TSchema } from 'typebox';
import type { DocumentRepository } from '../platform/document-repository.js';
import { defineErrors } from '../platform/errors.js';
import { defineModule, type HubModule } from '../platform/module.js';
import { ADMIN_ACCOUNT, defineOperation, type Operation } from '../platform/operations.js';
import { SerialWrites } from '../platform/serial-writes.js';
import type { Requirements } from '../platform/requirements.js';
import type { IntegrationContext, IntegrationDefinition, IntegrationRoute, IntegrationSettingsView } from './contract.js';

/**
 * The hub's side of the integration contract (contract.ts): from each declaration, its settings
 * (the environment's, else the admin's, changed without a restart), its module (started after the
 * modules it uses, its operations registered with the others) and its routes.
 */

export const integrationErrors = defineErrors({
  SETTING_SET_BY_ENVIRONMENT: ['conflict', '{variable} is set in the environment, which decides this setting (unset it to choose here).'],
  SETTING_INVALID: ['invalid', '{variable}: {reason}'],
});

/** The environment values of every declared setting, checked; throws naming the variable, as config.ts does for its own. */
export function integrationEnvironment(definitions: readonly IntegrationDefinition[], env: Readonly<Record<string, string | undefined>>): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const d of definitions) {
    const values: Record<string, string> = {};
    for (const [key, setting] of Object.entries(d.settings)) {
      const raw = env[setting.env]?.trim();
      if (raw === undefined || raw === '') continue;
      const problem = setting.check?.(raw);
      if (problem) throw new Error(`${setting.env}: ${problem}`);
      values[key] = raw;
    }
    out[d.name] = values;
  }
  return out;
}

/** The DATA_DIR folders every integration keeps: backups carry them. */
export function integrationDataFolders(definitions: readonly IntegrationDefinition[]): string[] {
  return definitions.flatMap((d) => d.dataFolders);
}

interface StoredSettings {
  id: string;
  values: Record<string, string>;
}

/** An integration's settings: the environment's win; the rest are the admin's, kept in the database. */
class IntegrationSettings<K extends string> implements IntegrationSettingsView<K> {
  private saved: Record<string, string> = {};

  constructor(
    private readonly definition: IntegrationDefinition<K>,
    private readonly environment: Readonly<Record<string, string>>,
    private readonly repository: DocumentRepository<StoredSettings>,
  ) {}

  async load(): Promise<void> {
    this.saved = { ...((await this.repository.get(this.definition.name))?.values ?? {}) };
  }

  values(): Partial<Record<K, string>> {
    const out: Partial<Record<K, string>> = {};
    for (const key of Object.keys(this.definition.settings) as K[]) {
      const value = this.environment[key] ?? this.saved[key];
      if (value !== undefined) out[key] = value;
    }
    return out;
  }

  sources(): Partial<Record<K, 'environment' | 'admin'>> {
    const out: Partial<Record<K, 'environment' | 'admin'>> = {};
    for (const key of Object.keys(this.definition.settings) as K[]) {
      if (this.environment[key] !== undefined) out[key] = 'environment';
      else if (this.saved[key] !== undefined) out[key] = 'admin';
    }
    return out;
  }

  /** Checks every change first, so a refused one changes nothing; null clears a setting. */
  async save(changes: Record<string, string | null>, at: number): Promise<void> {
    const next = { ...this.saved };
    for (const [key, value] of Object.entries(changes)) {
      const setting = this.definition.settings[key as K];
      if (this.environment[key] !== undefined) throw integrationErrors.SETTING_SET_BY_ENVIRONMENT({ variable: setting.env });
      if (value === null || value.trim() === '') {
        delete next[key];
        continue;
      }
      const problem = setting.check?.(value.trim());
      if (problem) throw integrationErrors.SETTING_INVALID({ variable: setting.env, reason: problem }, { details: { field: `values.${key}` } });
      next[key] = value.trim();
    }
    await this.repository.save({ id: this.definition.name, values: next }, at);
    this.saved = next;
  }
}

/** The settings as `<name>.settings.get` answers them. */
function settingsSchema(definition: IntegrationDefinition): TSchema {
  return Type.Object({
    settings: Type.Array(
      Type.Object({
        key: Type.String(),
        variable: Type.String({ description: 'The environment variable that sets it (and then decides).' }),
        label: Type.String(),
        description: Type.String(),
        value: Type.Union([Type.String(), Type.Null()]),
        setBy: Type.Union([Type.Literal('environment'), Type.Literal('admin'), Type.Null()]),
      }),
    ),
  }, { description: `${definition.title}: its settings, and where each comes from.` });
}

/** What the hub gives every integration (the rest of IntegrationContext is made per integration). */
export type IntegrationHostContext = Omit<IntegrationContext<string>, 'settings' | 'folder' | 'documents' | 'requirements' | 'leases' | 'log'> & {
  dataDir: string;
  environment: Readonly<Record<string, Record<string, string>>>;
  documents<T extends { id: string }>(kind: string): DocumentRepository<T>;
  /** The npm requirements of an integration (PackageRequirements under DATA_DIR/requirements/<name>). */
  requirements(definition: IntegrationDefinition): Requirements | undefined;
  leases?: IntegrationContext<string>['leases'];
  log(name: string): IntegrationContext<string>['log'];
};

export interface HostedIntegration {
  readonly definition: IntegrationDefinition;
  readonly module: HubModule;
  /** Its own routes and its settings routes, for the OS API. */
  readonly routes: readonly IntegrationRoute[];
}

/** Modules every integration starts after: its settings and keys are in the database, its devices go to the driver manager, its children run through the process runner. */
const INTEGRATION_NEEDS = ['storage', 'processes', 'secrets', 'devices', 'drivers'] as const;

/** Builds one integration from its declaration: its settings, its instance, its module and its routes. */
export function hostIntegration(definition: IntegrationDefinition, host: IntegrationHostContext): HostedIntegration {
  const settings = new IntegrationSettings(definition, host.environment[definition.name] ?? {}, host.documents<StoredSettings>('integration_settings'));
  const requirements = definition.requirements.length > 0 ? host.requirements(definition) : undefined;
  const context: IntegrationContext<string> = {
    settings,
    folder: (name) => {
      if (!definition.dataFolders.includes(name)) throw new Error(`${definition.name} does not declare the data folder ${name}`);
      return path.join(host.dataDir, name);
    },
    devices: host.devices,
    manager: host.manager,
    integrations: host.integrations,
    documents: <T extends { id: string }>(kind: string) => host.documents<T>(`${definition.name}_${kind}`),
    secrets: host.secrets,
    ...(requirements ? { requirements } : {}),
    ...(definition.oncePerCluster && host.leases ? { leases: host.leases } : {}),
    events: host.events,
    processes: host.processes,
    clock: host.clock,
    timers: host.timers,
    log: host.log(definition.name),
  };
  const instance = definition.create(context);
  const keys = Object.keys(definition.settings);
  const changes = new SerialWrites();
  const getSettings = defineOperation({
    name: `${definition.name}.settings.get`,
    summary: `${definition.title}: its settings, and whether the environment or an admin set each.`,
    access: ADMIN_ACCOUNT,
    input: Type.Object({}),
    output: settingsSchema(definition),
    handler: () => {
      const values = settings.values() as Record<string, string | undefined>;
      const sources = settings.sources() as Record<string, 'environment' | 'admin' | undefined>;
      return {
        settings: keys.map((key) => {
          const s = definition.settings[key]!;
          return { key, variable: s.env, label: s.label, description: s.description, value: values[key] ?? null, setBy: sources[key] ?? null };
        }),
      };
    },
  });
  const setSettings = defineOperation({
    name: `${definition.name}.settings.set`,
    summary: `${definition.title}: change its settings; they apply at once, without a restart (409 SETTING_SET_BY_ENVIRONMENT for one its environment variable sets; null clears one).`,
    access: ADMIN_ACCOUNT,
    input: Type.Object(
      { values: Type.Object(Object.fromEntries(keys.map((key) => [key, Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]))])), { additionalProperties: false }) },
      { additionalProperties: false },
    ),
    output: settingsSchema(definition),
    // One change at a time: each is built on the one before, and the instance applies them in order.
    handler: (input: { values: Record<string, string | null> }, ctx) =>
      changes.run(async () => {
        await settings.save(input.values, host.clock.now());
        await instance.reconfigure?.();
        return getSettings.handler({}, ctx);
      }),
  });
  const operations = { ...instance.operations, [`${definition.name}Settings`]: { get: getSettings as Operation, set: setSettings as Operation } };
  const module = defineModule({
    name: definition.name,
    needs: [...INTEGRATION_NEEDS],
    operations,
    async start() {
      await settings.load();
      await instance.start?.();
    },
    async stop() {
      await instance.stop?.();
    },
  });
  const routes: IntegrationRoute[] = [
    { method: 'GET', url: `/integrations/${definition.name}/settings`, operation: getSettings as Operation },
    { method: 'POST', url: `/integrations/${definition.name}/settings`, operation: setSettings as Operation },
    ...instance.routes,
  ];
  return { definition, module, routes };
}
