import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import semver from 'semver';
import addFormatsModule from 'ajv-formats';
import type { Clock } from '../../platform/clock.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import type { FileStore } from '../../platform/files.js';
import { OneAtATime } from '../../platform/one-at-a-time.js';
import { runInstaller, type InstallerDeps } from '../drivers/local/dependencies.js';
import type { DomainEventBus } from '../events.js';
import { accessoryHubErrors } from './errors.js';
import { toStandardJsonSchema } from './config-schema.js';
import { BRIDGE_PLUGIN, isHomebridgePlugin, PLUGIN_NAME, type HomebridgeSupervisor } from './homebridge.js';
import type { PackageMetadata, PluginRegistry, RegistryHit } from './ports.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;
const VERSION_SPEC = /^[0-9A-Za-z.^~<>=*|+ -]{1,50}$/;

export function checkPluginName(name: string): void {
  if (name.length > 214) throw accessoryHubErrors.INVALID_PLUGIN_NAME({ name: name.slice(0, 60), problem: 'longer than npm allows (214)' });
  if (!PLUGIN_NAME.test(name)) {
    throw accessoryHubErrors.INVALID_PLUGIN_NAME(
      { name, problem: 'npm names are lowercase letters, digits and . _ ~ -, and Homebridge plugins start with homebridge- (or @scope/homebridge-)' },
      { details: [{ field: 'pluginId', message: 'must match (@scope/)homebridge-name' }] },
    );
  }
}

export interface CatalogEntry {
  /** The package name. */
  id: string;
  description?: string;
  verified?: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface PluginView {
  name: string;
  installed: boolean;
  version?: string;
  description?: string;
  enabled: boolean;
  catalogued: boolean;
  verified?: boolean;
  hasConfigSchema: boolean;
  /** The platform or accessory blocks of config.json that belong to it. */
  configBlocks: number;
  /** The Homebridge versions the installed plugin declares (`engines.homebridge`, else its peer dependency). */
  homebridgeRange?: string;
  /** Whether the running Homebridge is in that range. Homebridge 2 loads a plugin outside it (a `^1` one) with a warning in its log. */
  fitsHomebridge?: boolean;
}

/** The version `npm install name@spec` would take: a version, the newest in a range, or a dist-tag's. */
function versionToInstall(meta: PackageMetadata, spec: string | undefined): string | undefined {
  const wanted = spec ?? 'latest';
  if (meta.distTags[wanted]) return meta.distTags[wanted];
  if (semver.valid(wanted)) return meta.versions.includes(wanted) ? wanted : undefined;
  return semver.validRange(wanted) ? (semver.maxSatisfying(meta.versions, wanted) ?? undefined) : undefined;
}

export interface PluginDeps extends InstallerDeps {
  dir: string;
  /** The plugin folder's package.json and lock, and the installed plugins' package.json and config.schema.json. */
  files: FileStore;
  homebridge: HomebridgeSupervisor;
  registry: PluginRegistry;
  registryUrl: string;
  catalog: DocumentCollection<CatalogEntry>;
  events: DomainEventBus;
  clock: Clock;
  installTimeoutMs: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * The accessory hub's plugins: found through the npm registry (search and metadata), installed
 * and removed with npm in Homebridge's own plugin folder (never through a shell; npm's output
 * lines stream as hub events), enabled and disabled, and configured through their
 * config.schema.json. Homebridge restarts after each change, since it reads them only at start.
 */
export class PluginManager {
  private readonly exclusive = new OneAtATime(() => accessoryHubErrors.PLUGIN_OPERATION_BUSY());
  /** Compiled config schemas by plugin, with the schema text they came from. */
  private readonly validators = new Map<string, { source: string; validate: ValidateFunction }>();

  constructor(private readonly deps: PluginDeps) {}

  async start(): Promise<void> {
    await this.deps.catalog.load();
    const manifest = path.join(this.deps.dir, 'package.json');
    await this.deps.files.makeFolder(this.deps.dir);
    await this.deps.files.updateAtomic(manifest, (text) => text ?? `${JSON.stringify({ name: 'hcs-accessory-hub-plugins', private: true, dependencies: {} }, null, 2)}\n`);
  }

  async search(q: string): Promise<RegistryHit[]> {
    const hits = await this.registryCall(() => this.deps.registry.search(this.deps.registryUrl, `keywords:homebridge-plugin ${q}`.trim(), 25));
    return hits.filter((h) => PLUGIN_NAME.test(h.name));
  }

  async resolve(name: string): Promise<PackageMetadata & { verified: boolean | null }> {
    checkPluginName(name);
    const meta = await this.registryCall(() => this.deps.registry.metadata(this.deps.registryUrl, name));
    if (!meta) throw accessoryHubErrors.PLUGIN_NOT_IN_REGISTRY({ name, version: '' });
    return { ...meta, verified: this.deps.catalog.find(name)?.verified ?? null };
  }

  async list(): Promise<PluginView[]> {
    const installed = await this.installedNames();
    const names = [...new Set([...installed, ...this.deps.catalog.list().map((c) => c.id)])].sort();
    return Promise.all(names.map((n) => this.view(n)));
  }

  async get(name: string): Promise<PluginView> {
    checkPluginName(name);
    if (name === BRIDGE_PLUGIN) throw accessoryHubErrors.PLUGIN_NOT_FOUND({ name });
    const view = await this.view(name);
    if (!view.installed && !view.catalogued) throw accessoryHubErrors.PLUGIN_NOT_FOUND({ name });
    return view;
  }

  async addCustom(entry: { name: string; description?: string; verified?: boolean }): Promise<PluginView> {
    checkPluginName(entry.name);
    await this.deps.catalog.save({ id: entry.name, ...(entry.description ? { description: entry.description } : {}), ...(entry.verified !== undefined ? { verified: entry.verified } : {}) });
    return this.view(entry.name);
  }

  async removeCustom(name: string): Promise<{ name: string; removed: true }> {
    checkPluginName(name);
    if (!this.deps.catalog.find(name)) throw accessoryHubErrors.PLUGIN_NOT_FOUND({ name });
    await this.deps.catalog.remove(name);
    return { name, removed: true };
  }

  /** `npm install <name>@<version>` into the plugin folder; on failure package.json and the lock are put back as they were. */
  install(name: string, version: string | undefined): Promise<PluginView> {
    checkPluginName(name);
    if (name === BRIDGE_PLUGIN) throw accessoryHubErrors.INVALID_PLUGIN_NAME({ name, problem: "it is the hub's own plugin, installed by the hub" });
    if (version !== undefined && !VERSION_SPEC.test(version)) throw accessoryHubErrors.INVALID_PLUGIN_NAME({ name: `${name}@${version}`, problem: 'the version is not a version or range' });
    return this.exclusive.run(async () => {
      const meta = await this.registryCall(() => this.deps.registry.metadata(this.deps.registryUrl, name));
      if (!meta) throw accessoryHubErrors.PLUGIN_NOT_IN_REGISTRY({ name, version: version ? `@${version}` : '' });
      // Homebridge refuses to load a plugin that declares no Homebridge version at all: such a
      // version is not installed. One that declares only `^1` is (Homebridge 2 loads it, warning).
      const target = versionToInstall(meta, version);
      const requires = target ? meta.requires?.[target] : undefined;
      if (target && meta.requires && !requires?.homebridge) {
        throw accessoryHubErrors.PLUGIN_NOT_FOR_THIS_HOMEBRIDGE({ name, version: target, homebridge: this.deps.homebridge.version, engines: requires?.node ? `node ${requires.node}, no homebridge` : 'none' });
      }
      const spec = `${name}@${version ?? meta.distTags.latest ?? 'latest'}`;
      await this.npm('install', name, ['install', '--ignore-scripts=false', '--omit=dev', '--no-audit', '--no-fund', '--save', `--registry=${this.deps.registryUrl}`, spec]);
      await this.deps.homebridge.restart();
      return this.view(name);
    });
  }

  uninstall(name: string): Promise<PluginView> {
    checkPluginName(name);
    return this.exclusive.run(async () => {
      // What npm installed at the hub's request goes too, even when it turned out to be no plugin.
      if (!(await this.installedNames()).includes(name) && !(await this.manifestDependencies()).includes(name)) throw accessoryHubErrors.PLUGIN_NOT_INSTALLED({ name });
      await this.npm('uninstall', name, ['uninstall', '--no-audit', '--no-fund', '--save', `--registry=${this.deps.registryUrl}`, name]);
      await this.deps.homebridge.restart();
      return this.view(name);
    });
  }

  async setEnabled(name: string, enabled: boolean): Promise<PluginView> {
    checkPluginName(name);
    if (!(await this.installedNames()).includes(name)) throw accessoryHubErrors.PLUGIN_NOT_INSTALLED({ name });
    await this.deps.homebridge.editConfig((config) => {
      const disabled = new Set((config.disabledPlugins as string[] | undefined) ?? []);
      if (enabled) disabled.delete(name);
      else disabled.add(name);
      config.disabledPlugins = [...disabled];
    });
    await this.deps.homebridge.restart();
    return this.view(name);
  }

  async configSchema(name: string): Promise<Record<string, unknown>> {
    checkPluginName(name);
    const schema = await this.readSchema(name);
    if (!schema) throw accessoryHubErrors.PLUGIN_HAS_NO_CONFIG_SCHEMA({ name });
    return schema;
  }

  /**
   * Validates a plugin's configuration against its config.schema.json (400 naming the field) and
   * writes it as the plugin's platform or accessory block of config.json (replacing the block of
   * the same platform, or of the same accessory name); Homebridge restarts into it.
   */
  async configure(name: string, body: Record<string, unknown>): Promise<{ name: string; block: Record<string, unknown> }> {
    const schema = await this.configSchema(name);
    const alias = String(schema.pluginAlias ?? '');
    const type = schema.pluginType === 'accessory' ? 'accessory' : 'platform';
    const validate = this.validator(name, schema.schema ?? {});
    if (!validate(body)) {
      const issue = validate.errors?.[0];
      const field = ['body', ...(issue?.instancePath ?? '').split('/').filter(Boolean), ...(typeof issue?.params?.missingProperty === 'string' ? [issue.params.missingProperty] : [])].join('.');
      throw accessoryHubErrors.INVALID_PLUGIN_CONFIG({ name, problem: `${field} ${issue?.message ?? 'is invalid'}` }, { details: (validate.errors ?? []).map((e) => ({ field: ['body', ...e.instancePath.split('/').filter(Boolean)].join('.'), message: e.message })) });
    }
    const block = { [type]: alias, ...body };
    await this.deps.homebridge.editConfig((config) => {
      const key = type === 'platform' ? 'platforms' : 'accessories';
      const blocks = ((config[key] as Array<Record<string, unknown>> | undefined) ?? []).filter((b) => !(b[type] === alias && (type === 'platform' || b.name === body.name)));
      config[key] = [...blocks, block];
    });
    await this.deps.homebridge.restart();
    return { name, block };
  }

  /** The plugin's block of config.json without its platform or accessory key; {} when it has none. */
  async currentConfig(name: string): Promise<Record<string, unknown>> {
    const schema = await this.configSchema(name);
    const type = schema.pluginType === 'accessory' ? 'accessory' : 'platform';
    const config = await this.deps.homebridge.config();
    const blocks = (config[type === 'platform' ? 'platforms' : 'accessories'] as Array<Record<string, unknown>> | undefined) ?? [];
    const block = blocks.find((b) => b[type] === schema.pluginAlias);
    if (!block) return {};
    const { [type]: _alias, ...rest } = block;
    return rest;
  }

  /** The plugin's schema compiled in standard JSON Schema (cached while its text stays the same); 422 when ajv cannot compile it. */
  private validator(name: string, schema: unknown): ValidateFunction {
    const source = JSON.stringify(schema);
    const cached = this.validators.get(name);
    if (cached?.source === source) return cached.validate;
    const standard = toStandardJsonSchema(schema);
    // Homebridge reads every schema in its own dialect, whatever draft `$schema` names.
    if (typeof standard === 'object' && standard !== null && !Array.isArray(standard)) delete (standard as Record<string, unknown>).$schema;
    let validate: ValidateFunction;
    try {
      // An instance per schema: two plugins may use the same $id.
      validate = addFormats(new Ajv({ allErrors: false, strict: false, logger: false })).compile(standard as object);
    } catch (err) {
      throw accessoryHubErrors.PLUGIN_CONFIG_SCHEMA_UNUSABLE({ name, problem: (err as Error).message });
    }
    this.validators.set(name, { source, validate });
    return validate;
  }

  private async npm(action: 'install' | 'uninstall', pluginId: string, args: string[]): Promise<void> {
    const files = ['package.json', 'package-lock.json'].map((f) => path.join(this.deps.dir, f));
    const store = this.deps.files;
    const saved = await Promise.all(files.map((f) => store.readBytes(f).catch(() => undefined)));
    const emit = (extra: { line?: string; outcome?: 'succeeded' | 'failed'; error?: string }) =>
      this.deps.events.emit('accessory_hub.plugin_progress', { pluginId, action, ...extra, at: this.deps.clock.now() });
    // npm run by the Node that runs Homebridge: a plugin's native part is built for the Node that loads it.
    const runtime = await this.deps.homebridge.nodeRuntime().catch((err: Error) => {
      throw accessoryHubErrors.PLUGIN_INSTALL_FAILED({ name: pluginId, problem: err.message });
    });
    const { command, args: npmArgs, env } = runtime.npm;
    const outcome = await runInstaller(this.deps, command, [...npmArgs, ...args], this.deps.dir, this.deps.installTimeoutMs, (line) => emit({ line }), env);
    if (!outcome.ok) {
      // npm rolls its own tree back; the manifests are put back as they were too.
      await Promise.all(files.map((f, i) => (saved[i] ? store.writeAtomic(f, saved[i]!) : store.remove(f))));
      emit({ outcome: 'failed', error: outcome.problem ?? 'failed' });
      this.deps.log.warn({ plugin: pluginId, action, problem: outcome.problem }, 'accessory hub plugin operation failed; the previous plugins stay');
      throw accessoryHubErrors.PLUGIN_INSTALL_FAILED({ name: pluginId, problem: outcome.problem ?? 'failed' }, { details: { log: outcome.log.slice(-4000) } });
    }
    emit({ outcome: 'succeeded' });
    this.deps.log.info({ plugin: pluginId, action }, `accessory hub plugin ${action}ed`);
  }

  private async registryCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw accessoryHubErrors.REGISTRY_UNREACHABLE({ registry: this.deps.registryUrl, reason: (err as Error).message });
    }
  }

  private installedNames(): Promise<string[]> {
    return this.deps.homebridge.installedPlugins();
  }

  private async manifestDependencies(): Promise<string[]> {
    const manifest = JSON.parse(await this.deps.files.readText(path.join(this.deps.dir, 'package.json')).catch(() => '{}')) as { dependencies?: Record<string, string> };
    return Object.keys(manifest.dependencies ?? {}).filter((n) => n !== BRIDGE_PLUGIN);
  }

  private async readPackage(name: string): Promise<{ name?: string; version?: string; description?: string; keywords?: unknown; engines?: Record<string, unknown>; peerDependencies?: Record<string, unknown> } | undefined> {
    return JSON.parse(await this.deps.files.readText(path.join(this.deps.dir, 'node_modules', ...name.split('/'), 'package.json')).catch(() => 'null')) ?? undefined;
  }

  private async readSchema(name: string): Promise<Record<string, unknown> | undefined> {
    return JSON.parse(await this.deps.files.readText(path.join(this.deps.dir, 'node_modules', ...name.split('/'), 'config.schema.json')).catch(() => 'null')) ?? undefined;
  }

  private async view(name: string): Promise<PluginView> {
    // A package in the folder that is no plugin (a plugin's dependency) is not installed as a plugin.
    const found = await this.readPackage(name);
    const pkg = found && name !== BRIDGE_PLUGIN && isHomebridgePlugin(name, found) ? found : undefined;
    const entry = this.deps.catalog.find(name);
    const config = await this.deps.homebridge.config();
    const schema = pkg ? await this.readSchema(name) : undefined;
    const alias = schema?.pluginAlias;
    const range = pkg?.engines?.homebridge ?? pkg?.peerDependencies?.homebridge;
    const blocks = alias ? [...((config.platforms as Array<Record<string, unknown>>) ?? []), ...((config.accessories as Array<Record<string, unknown>>) ?? [])].filter((b) => b.platform === alias || b.accessory === alias).length : 0;
    return {
      name,
      installed: pkg !== undefined,
      ...(pkg?.version ? { version: pkg.version } : {}),
      ...((pkg?.description ?? entry?.description) ? { description: pkg?.description ?? entry?.description } : {}),
      enabled: !((config.disabledPlugins as string[] | undefined) ?? []).includes(name),
      catalogued: entry !== undefined,
      ...(entry?.verified !== undefined ? { verified: entry.verified } : {}),
      hasConfigSchema: schema !== undefined,
      configBlocks: blocks,
      ...(typeof range === 'string' ? { homebridgeRange: range, fitsHomebridge: semver.validRange(range) !== null && semver.satisfies(this.deps.homebridge.version, range, { includePrerelease: true }) } : {}),
    };
  }
}
