import { randomBytes, randomInt } from 'node:crypto';
import path from 'node:path';
import { Backoff } from '../../platform/backoff.js';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import type { FileStore } from '../../platform/files.js';
import { OutputTail, type ProcessExit, type ProcessRunner, type RunningProcess } from '../../platform/processes.js';
import { npmCommand } from '../drivers/local/dependencies.js';
import type { RequirementsStatus } from '../../platform/requirements.js';
import { accessoryHubErrors } from './errors.js';
import type { FreePortFinder, HapAccessory, HapClient, NodeRuntime, NodeRuntimeProvider } from './ports.js';

export interface HomebridgeInstall {
  /** The `homebridge` program (its bin script, run with this Node). */
  bin: string;
  version: string;
  /** Its `engines.node` (Homebridge 2: `^22 || ^24`): the Node it is run with must satisfy it. */
  node?: string;
}

/**
 * Homebridge as the hub has it: at its pinned version, in the hub's own node_modules or
 * installed under DATA_DIR on first use (a home box installed with `npm ci --omit=dev`).
 */
export interface HomebridgeSource {
  /** The version the hub runs: known before it is installed. */
  readonly version: string;
  /** The install, when present (nothing is installed). */
  present(): HomebridgeInstall | undefined;
  /** The install, installing it first when it is missing; `progress` sees npm's lines. Rejects with npm's reason. */
  ensure(progress?: (line: string) => void): Promise<HomebridgeInstall>;
  status(): RequirementsStatus;
}

export interface AccessoryHubSettings {
  name: string;
  port: number;
  pin: string;
  advertiser: 'ciao' | 'bonjour-hap' | 'avahi' | 'resolved';
}

export interface AccessoryHubDeps {
  /** `DATA_DIR/accessory-hub`: Homebridge's storage path, config.json and plugins live here. */
  dir: string;
  /** Its folder's files: config.json, the plugin folder's package.json, the plugins, the hub's own plugin. */
  files: FileStore;
  homebridge: HomebridgeSource;
  hap: HapClient;
  /** Runs Homebridge (src/adapters/process): in its own process group, never outliving the hub. */
  processes: ProcessRunner;
  clock: Clock;
  timers: Timers;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Interfaces Homebridge's servers bind to (the tests: 127.0.0.1); unset, all. */
  bind?: string[];
  defaultPort: number;
  /** Picks the HAP port of a new config.json: the default one when it is free. */
  freePorts: FreePortFinder;
  /**
   * Finds the Node that runs Homebridge and builds its plugins: the hub's own when it satisfies
   * Homebridge's `engines.node`, else one installed on first use (src/adapters/node-runtime).
   * Unset, the hub's own Node runs it.
   */
  runtime?: NodeRuntimeProvider;
  /** ACCESSORY_HUB=on: Homebridge runs whether or not anything uses it. */
  forced?: boolean;
  /** Whether the hub's devices are shown in Apple Home (the plugin bridge then has work). */
  homekitShown?: () => boolean;
}

/** What Homebridge runs for: without any of these it is not started (a fresh hub never runs it). */
export interface HomebridgeUsage {
  inUse: boolean;
  /** The household's plugins installed. */
  plugins: number;
  homekit: boolean;
  /** ACCESSORY_HUB=on. */
  forced: boolean;
}

/** `failed`: it cannot start as configured (its HAP port is taken) and is not retried until something changes. */
export type HomebridgeState = 'stopped' | 'starting' | 'running' | 'backoff' | 'failed';

/** The hub's own plugin (the plugin bridge): part of the hub, not one of the household's plugins. */
export const BRIDGE_PLUGIN = 'homebridge-home-control-bridge';

/** npm's package name rules, and Homebridge's: `homebridge-…` or `@scope/homebridge-…`. */
export const PLUGIN_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?homebridge-[a-z0-9][a-z0-9._~-]*$/;

/** A Homebridge plugin, as Homebridge itself tells one: a plugin name and the keyword `homebridge-plugin` (a plugin's dependencies, like homebridge-lib, are not). */
export function isHomebridgePlugin(name: string, pkg: { keywords?: unknown } | undefined): boolean {
  return PLUGIN_NAME.test(name) && Array.isArray(pkg?.keywords) && pkg.keywords.includes('homebridge-plugin');
}

/** The Homebridge version that last ran on the folder, as the hub recorded it. */
const VERSION_FILE = '.homebridge-version';
const STOP_GRACE_MS = 3000;
const FIRST_RESTART_MS = 1000;
const MAX_RESTART_MS = 30_000;
/** Running this long resets the back-off. */
const STABLE_MS = 60_000;
const LOG_TAIL = 50;
const ADVERTISERS = ['ciao', 'bonjour-hap', 'avahi', 'resolved'] as const;

/** A HomeKit setup code: eight digits as XXX-XX-XXX, none of the codes HAP forbids. */
function newPin(): string {
  for (;;) {
    const digits = String(randomInt(0, 100_000_000)).padStart(8, '0');
    if (/^(\d)\1{7}$/.test(digits) || digits === '12345678' || digits === '87654321') continue;
    return `${digits.slice(0, 3)}-${digits.slice(3, 5)}-${digits.slice(5)}`;
  }
}

const newUsername = () =>
  [...randomBytes(6)]
    .map((b, i) => (i === 0 ? b & 0xfe : b).toString(16).padStart(2, '0').toUpperCase())
    .join(':');

/**
 * Homebridge, run by the hub as a child process with its own storage path, config.json and
 * plugin folder under DATA_DIR/accessory-hub, in insecure mode (`-I`) so the hub reads and writes
 * accessories over HAP's HTTP API. Like a local driver, it is supervised: a crash restarts it with
 * back-off (1 s doubling to 30 s, reset after a minute of running), and nothing it does reaches
 * the hub's own fate.
 */
export class HomebridgeSupervisor {
  private child: RunningProcess | undefined;
  private state: HomebridgeState = 'stopped';
  private wanted = false;
  private startedAt: number | undefined;
  private restarts = 0;
  private readonly backoff = new Backoff({ initialMs: FIRST_RESTART_MS, maxMs: MAX_RESTART_MS });
  private timer: TimerHandle | undefined;
  private lastExit: { code: number | null; signal: string | null; at: number } | undefined;
  private lastError: string | undefined;
  private setupUri: string | undefined;
  private readonly tail = new OutputTail(LOG_TAIL);
  /** The bridge's HAP port as config.json had it at the last start. */
  private hapPort: number | undefined;
  /** Why it is not restarted (its HAP port is taken), until a restart, a start or a config change. */
  private halted: string | undefined;
  private lifecycle: Promise<unknown> = Promise.resolve();
  private queuedRestart: Promise<void> | undefined;
  private readonly configFollowers: Array<(config: Record<string, unknown>) => void> = [];
  private readonly launchSteps: Array<() => Promise<void>> = [];
  /** The Homebridge version that ran on this folder before the current one, when it changed since the hub started. */
  private migratedFrom: string | undefined;
  /** The version the record names ('' for a folder Homebridge never ran on), read at the first start. */
  private ranBefore: string | undefined;
  /** The Node Homebridge runs on, once found (or installed). */
  private node: NodeRuntime | undefined;
  private finding: Promise<NodeRuntime> | undefined;
  /** Homebridge's program and engines, once present (installed at the first start that needs it). */
  private install: HomebridgeInstall | undefined;

  constructor(private readonly deps: AccessoryHubDeps) {}

  /** The managed Homebridge's version. */
  get version(): string {
    return this.deps.homebridge.version;
  }

  private get configFile() {
    return path.join(this.deps.dir, 'config.json');
  }

  get pluginsDir(): string {
    return path.join(this.deps.dir, 'node_modules');
  }

  /** The hub's own plugins (the plugin bridge), kept apart and linked into the plugin folder as `file:` dependencies, so npm never prunes them. */
  get builtinPluginsDir(): string {
    return path.join(this.deps.dir, 'builtin-plugins');
  }

  /** Its folders and config.json, before anything else writes there. */
  async prepare(): Promise<void> {
    await this.deps.files.makeFolder(this.pluginsDir);
    await this.deps.files.makeFolder(this.builtinPluginsDir);
    await this.ensureConfig();
    this.ranBefore ??= await this.versionThatRanBefore();
  }

  /**
   * Another Homebridge version than the one that last ran on this folder (1.11 before 2.x): the
   * folder is taken over as it is. Homebridge 2 reads 1.x's config.json, its pairings and
   * identifier caches (persist/) and its cached accessories unchanged, so phones stay paired and
   * accessories keep their ids; only the version the hub records changes, once the new one runs
   * (a Homebridge 2 that never started, for want of a Node, took nothing over). Told once, in the
   * log and the status (`migratedFrom`).
   */
  private async versionThatRanBefore(): Promise<string> {
    const recorded = (await this.deps.files.readText(path.join(this.deps.dir, VERSION_FILE)).catch(() => undefined))?.trim();
    // A folder Homebridge ran on without the record is one of the hubs before it, which ran 1.11.
    return recorded || ((await this.deps.files.exists(path.join(this.deps.dir, 'persist'))) ? '1.11' : '');
  }

  private async recordVersionRunning(): Promise<void> {
    const current = this.deps.homebridge.version;
    const previous = this.ranBefore;
    if (previous === undefined || previous === current) return;
    this.ranBefore = current;
    if (previous) {
      this.migratedFrom = previous;
      this.deps.log.info({ from: previous, to: current }, `Homebridge ${previous} to ${current}: config.json, the pairings and the cached accessories are kept as they are`);
    }
    await this.deps.files.writeAtomic(path.join(this.deps.dir, VERSION_FILE), `${current}\n`).catch((err: Error) => this.deps.log.warn({ err: err.message }, 'the Homebridge version record was not written'));
  }

  /**
   * Start, stop and restart run one after another (a settings change, a plugin install and a
   * resync may ask at once); restarts asked for before the queued one began join it, since it
   * reads config.json after their changes were written.
   */
  private inOrder<T>(work: () => Promise<T>): Promise<T> {
    const next = this.lifecycle.then(work, work);
    this.lifecycle = next.catch(() => undefined);
    return next;
  }

  /** Starts Homebridge when something uses it (a plugin, Apple Home, ACCESSORY_HUB=on); otherwise it stays stopped. */
  start(): Promise<void> {
    return this.inOrder(async () => {
      if ((await this.usage()).inUse) await this.startNow();
    });
  }

  stop(): Promise<void> {
    return this.inOrder(() => this.stopNow());
  }

  /** Reloads config.json: Homebridge reads it only at start. One that nothing uses any more stops instead. */
  restart(): Promise<void> {
    this.queuedRestart ??= this.inOrder(async () => {
      this.queuedRestart = undefined;
      await this.stopNow();
      if (!(await this.usage()).inUse) return;
      this.restarts++;
      this.backoff.succeed();
      await this.startNow();
    });
    return this.queuedRestart;
  }

  /** Starts or stops Homebridge to match what uses it now (Apple Home turned on or off), leaving a running one alone. */
  follow(): Promise<void> {
    return this.inOrder(async () => {
      const { inUse } = await this.usage();
      if (inUse && !this.wanted) await this.startNow();
      else if (!inUse && this.wanted) await this.stopNow();
    });
  }

  async usage(): Promise<HomebridgeUsage> {
    const plugins = (await this.installedPlugins()).length;
    const homekit = this.deps.homekitShown?.() ?? false;
    const forced = this.deps.forced ?? false;
    return { inUse: forced || homekit || plugins > 0, plugins, homekit, forced };
  }

  /** Work done before each launch, after config.json and the folders exist (the plugin bridge copies itself in and gets a token). */
  beforeLaunch(step: () => Promise<void>): void {
    this.launchSteps.push(step);
  }

  private async startNow(): Promise<void> {
    await this.prepare();
    for (const step of this.launchSteps) await step();
    this.hapPort = (await this.settings()).port;
    this.halted = undefined;
    if (!this.install) {
      this.state = 'starting';
      try {
        this.install = await this.deps.homebridge.ensure((line) => this.tail.push(line));
      } catch (err) {
        // Tried again at the next start, restart or resync (the registry may be back).
        this.state = 'failed';
        this.lastError = `Homebridge ${this.deps.homebridge.version} could not be installed: ${(err as Error).message}`;
        this.deps.log.error({ err: this.lastError }, 'Homebridge cannot start: not installed');
        return;
      }
    }
    if (!this.node) {
      this.state = 'starting';
      try {
        await this.nodeRuntime();
      } catch (err) {
        // Nothing to restart into: failed, and tried again at the next start, restart or resync.
        this.state = 'failed';
        this.lastError = (err as Error).message;
        this.deps.log.error({ err: this.lastError }, 'Homebridge cannot start: no Node it supports');
        return;
      }
    }
    this.wanted = true;
    if (!this.child?.running) this.launch();
  }

  /**
   * The Node that runs Homebridge and the npm that installs its plugins (with that Node, so that
   * a plugin's native part is built for the Node that loads it). Found once; the first start of a
   * hub on an older Node installs one (its output goes to the status's recent output).
   */
  async nodeRuntime(): Promise<NodeRuntime> {
    if (this.node) return this.node;
    // Its engines decide the Node: Homebridge is installed first when the box does not have it yet (a plugin install may come first).
    this.install ??= await this.deps.homebridge.ensure((line) => this.tail.push(line));
    const range = this.install.node;
    if (!range || !this.deps.runtime) {
      this.node = { node: process.execPath, version: process.version, source: 'hub', npm: { command: npmCommand(), args: [], env: {} } };
      return this.node;
    }
    this.finding ??= this.deps.runtime
      .runtimeFor(range, (line) => this.tail.push(line))
      .then(
        (found) => {
          this.node = found;
          if (found.source !== 'hub') this.deps.log.info({ node: found.version, source: found.source }, `Homebridge ${this.deps.homebridge.version} runs on Node ${found.version} (it needs ${range}; the hub runs ${process.version})`);
          return found;
        },
        (err: Error) => {
          throw new Error(`Homebridge ${this.deps.homebridge.version} needs Node ${range}, and the hub runs Node ${process.version}: ${err.message}. Set ACCESSORY_HUB_NODE to a Node that fits, or let the hub reach the npm registry.`);
        },
      )
      .finally(() => {
        this.finding = undefined;
      });
    return this.finding;
  }

  private async stopNow(): Promise<void> {
    this.wanted = false;
    if (this.timer) this.deps.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.child?.stop(STOP_GRACE_MS);
    this.state = 'stopped';
  }

  /** Records a dependency in the plugin folder's package.json (npm keeps what is listed there), in one atomic read-modify-write. */
  async addDependency(name: string, spec: string): Promise<void> {
    await this.deps.files.updateAtomic(path.join(this.deps.dir, 'package.json'), (text) => {
      const manifest = JSON.parse(text ?? '{"name":"hcs-accessory-hub-plugins","private":true}') as { dependencies?: Record<string, string> };
      manifest.dependencies = { ...manifest.dependencies, [name]: spec };
      return `${JSON.stringify(manifest, null, 2)}\n`;
    });
  }

  /** Runs on every config.json written: what must follow the bridge settings (the plugin bridge's HAP port and code) follows them. */
  followConfig(follow: (config: Record<string, unknown>) => void): void {
    this.configFollowers.push(follow);
  }

  /** The household's plugins in the plugin folder: Homebridge plugins, not their dependencies, and not the hub's own bridge plugin. */
  async installedPlugins(): Promise<string[]> {
    const names: string[] = [];
    const files = this.deps.files;
    for (const entry of await files.list(this.pluginsDir).catch(() => [] as string[])) {
      if (entry.startsWith('@')) for (const inner of await files.list(path.join(this.pluginsDir, entry)).catch(() => [] as string[])) names.push(`${entry}/${inner}`);
      else names.push(entry);
    }
    const plugins = await Promise.all(
      names
        .filter((name) => PLUGIN_NAME.test(name) && name !== BRIDGE_PLUGIN)
        .map(async (name) => {
          const pkg = JSON.parse(await files.readText(path.join(this.pluginsDir, ...name.split('/'), 'package.json')).catch(() => 'null')) as { keywords?: unknown } | null;
          return isHomebridgePlugin(name, pkg ?? undefined) ? name : undefined;
        }),
    );
    return plugins.filter((n): n is string => n !== undefined).sort();
  }

  /** Homebridge's config.json as it is. */
  async config(): Promise<Record<string, unknown>> {
    return this.readConfig();
  }

  /** Changes config.json in one write (Homebridge reads it at its next start); changes made at once all land. */
  async editConfig(change: (config: Record<string, unknown>) => void): Promise<void> {
    await this.changeConfig((text) => {
      const config = parseConfig(text);
      change(config);
      return config;
    });
  }

  async settings(): Promise<AccessoryHubSettings> {
    const config = await this.readConfig();
    const bridge = config.bridge as Record<string, unknown>;
    return { name: String(bridge.name), port: Number(bridge.port), pin: String(bridge.pin), advertiser: (bridge.advertiser as AccessoryHubSettings['advertiser']) ?? 'ciao' };
  }

  /** Changes the bridge settings in config.json (validated) and restarts Homebridge into them. */
  async updateSettings(change: Partial<AccessoryHubSettings>): Promise<AccessoryHubSettings> {
    if (change.pin !== undefined && !/^\d{3}-\d{2}-\d{3}$/.test(change.pin)) throw accessoryHubErrors.INVALID_ACCESSORY_HUB_SETTINGS({ problem: 'pin must read like 031-45-154' }, { details: [{ field: 'body.pin', message: 'must be XXX-XX-XXX' }] });
    if (change.advertiser !== undefined && !ADVERTISERS.includes(change.advertiser)) throw accessoryHubErrors.INVALID_ACCESSORY_HUB_SETTINGS({ problem: `advertiser must be one of ${ADVERTISERS.join(', ')}` });
    await this.editConfig((config) => {
      config.bridge = { ...(config.bridge as object), ...change };
    });
    this.deps.log.info({ change: { ...change, ...(change.pin ? { pin: '***' } : {}) } }, 'accessory hub settings changed; restarting Homebridge');
    if (this.wanted) await this.restart();
    return this.settings();
  }

  async status() {
    const settings = await this.settings().catch(() => undefined);
    const usage = await this.usage();
    return {
      enabled: true,
      state: this.state,
      usedFor: { plugins: usage.plugins > 0, homekit: usage.homekit, environment: usage.forced },
      ...(this.child?.pid !== undefined && (this.state === 'starting' || this.state === 'running') ? { pid: this.child.pid } : {}),
      ...(this.startedAt !== undefined && this.state === 'running' ? { uptimeSeconds: Math.round((this.deps.clock.now() - this.startedAt) / 1000) } : {}),
      version: this.deps.homebridge.version,
      requirements: this.deps.homebridge.status(),
      ...(this.migratedFrom ? { migratedFrom: this.migratedFrom } : {}),
      ...(this.node ? { node: { version: this.node.version, source: this.node.source } } : {}),
      restarts: this.restarts,
      ...(settings ? { bridge: { name: settings.name, port: settings.port, pin: settings.pin, ...(this.setupUri ? { setupUri: this.setupUri } : {}) } } : {}),
      pluginCount: usage.plugins,
      ...(this.lastExit ? { lastExit: this.lastExit } : {}),
      ...(this.lastError ? { lastError: this.lastError } : {}),
      recentOutput: this.tail.toArray(),
    };
  }

  /** The accessories Homebridge serves, read over HAP. */
  async accessories(): Promise<HapAccessory[]> {
    if (this.state !== 'running') throw accessoryHubErrors.ACCESSORY_HUB_NOT_RUNNING({ state: this.state });
    const { port, pin } = await this.settings();
    try {
      return await this.deps.hap.accessories(port, pin);
    } catch (err) {
      throw accessoryHubErrors.ACCESSORY_HUB_UNREACHABLE({ reason: (err as Error).message });
    }
  }

  private launch(): void {
    if (!this.wanted) return;
    this.state = 'starting';
    this.setupUri = undefined;
    const install = this.install;
    if (!install) return;
    const args = [install.bin, '-I', '-Q', '-U', this.deps.dir, '-P', this.pluginsDir, '--strict-plugin-resolution'];
    let payloadNext = false;
    const onLine = (line: string) => {
      // eslint-disable-next-line no-control-regex
      const text = line.replace(/\u001b\[[0-9;]*m/g, '').trim();
      if (!text) return;
      this.tail.push(text);
      if (payloadNext && text.startsWith('X-HM://')) this.setupUri = text;
      payloadNext = text === 'Setup Payload:';
      if (this.state === 'starting' && !this.halted && text.includes('EADDRINUSE')) this.haltIfHapPortTaken(text, child);
      if (/is running on port \d+/.test(text) && this.state === 'starting') {
        this.state = 'running';
        this.startedAt = this.deps.clock.now();
        this.lastError = undefined;
        this.deps.log.info({ pid: child.pid }, 'Homebridge is running');
        void this.recordVersionRunning();
      }
    };
    const node = this.node?.node ?? process.execPath;
    const child = this.deps.processes.start(
      { label: 'homebridge', command: node, args, cwd: this.deps.dir, env: { ...process.env, NODE_OPTIONS: '' } },
      {
        onStdoutLine: (line) => onLine(line.toString('utf8')),
        onStderrLine: onLine,
        // Its last lines (the EADDRINUSE that explains the exit) were read before this runs.
        onExit: (exit) => this.exitedWith(child, exit),
      },
    );
    this.child = child;
  }

  private exitedWith(child: RunningProcess, { code, signal, startError }: ProcessExit): void {
    if (this.child !== child) return;
    const at = this.deps.clock.now();
    if (startError) this.lastError = `could not start Homebridge: ${startError.message}`;
    this.lastExit = { code, signal, at };
    if (!this.wanted) return;
    if (this.halted) {
      this.state = 'failed';
      this.lastError = this.halted;
      return;
    }
    const ranMs = this.startedAt !== undefined && this.state === 'running' ? at - this.startedAt : 0;
    if (ranMs >= STABLE_MS) this.backoff.succeed();
    this.lastError ??= signal ? `Homebridge was killed by ${signal}` : `Homebridge exited with code ${code}`;
    const delay = this.backoff.fail();
    this.deps.log.warn({ code, signal, restartInMs: delay }, 'Homebridge stopped; restarting it');
    this.state = 'backoff';
    this.restarts++;
    this.timer = this.deps.timers.setTimeout(() => {
      this.timer = undefined;
      this.launch();
    }, delay);
  }

  /**
   * Homebridge does not exit when its HAP port is taken (or exits, to be started into the same
   * failure): restarting cannot help, so it is stopped and left so until the port or the config
   * changes (both restart it) or an admin restarts it.
   */
  private haltIfHapPortTaken(line: string, child: RunningProcess): void {
    const port = Number(/:(\d+)\s*$/.exec(line)?.[1]);
    if (port !== this.hapPort) return;
    this.halted = `HAP port ${port} is in use by another program (EADDRINUSE): Homebridge is not restarted until the port or the configuration changes, or an admin restarts it`;
    this.lastError = this.halted;
    this.deps.log.error({ port }, 'Homebridge cannot listen: its HAP port is in use; not restarting it');
    void child.stop(STOP_GRACE_MS);
  }

  private async ensureConfig(): Promise<void> {
    await this.changeConfig(async (text) => {
      let config: Record<string, unknown>;
      try {
        config = parseConfig(text);
      } catch {
        // Another hub or Homebridge on the machine may hold the default port; the port found is kept in config.json.
        const port = await this.deps.freePorts.freePort(this.deps.defaultPort).catch((err: Error) => {
          this.deps.log.warn({ err: err.message, port: this.deps.defaultPort }, 'could not look for a free HAP port; using the default one');
          return this.deps.defaultPort;
        });
        config = { bridge: { name: 'Home Control Accessory Hub', username: newUsername(), port, pin: newPin(), advertiser: 'ciao' }, accessories: [], platforms: [] };
      }
      const bridge = config.bridge as Record<string, unknown>;
      if (this.deps.bind) bridge.bind = this.deps.bind;
      else delete bridge.bind;
      return config;
    });
  }

  private async readConfig(): Promise<Record<string, unknown>> {
    return parseConfig(await this.deps.files.readText(this.configFile));
  }

  /**
   * The one way config.json is written: a read-modify-write queued behind every other write of it
   * (so two changes made at once both land), the settings' followers applied, then an atomic
   * replacement (a unique temp file renamed over it), so Homebridge never reads half a file.
   */
  private async changeConfig(change: (text: string | undefined) => Record<string, unknown> | Promise<Record<string, unknown>>): Promise<void> {
    await this.deps.files.updateAtomic(this.configFile, async (text) => {
      const config = await change(text);
      for (const follow of this.configFollowers) follow(config);
      return `${JSON.stringify(config, null, 2)}\n`;
    });
  }
}

/** config.json's text as an object with a bridge; throws when it is missing, not JSON, or has no bridge. */
function parseConfig(text: string | undefined): Record<string, unknown> {
  if (text === undefined) throw new Error('config.json does not exist');
  const parsed = JSON.parse(text) as Record<string, unknown>;
  if (!parsed || typeof parsed.bridge !== 'object') throw new Error('config.json has no bridge');
  return parsed;
}
