import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import { accessoryHubErrors } from './errors.js';
import type { FreePortFinder, HapAccessory, HapClient } from './ports.js';

export interface HomebridgeInstall {
  /** The `homebridge` program (its bin script, run with this Node). */
  bin: string;
  version: string;
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
  install: HomebridgeInstall;
  hap: HapClient;
  clock: Clock;
  timers: Timers;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Interfaces Homebridge's servers bind to (the tests: 127.0.0.1); unset, all. */
  bind?: string[];
  defaultPort: number;
  /** Picks the HAP port of a new config.json: the default one when it is free. */
  freePorts: FreePortFinder;
  nodePath?: string;
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
  private child: ChildProcess | undefined;
  private state: HomebridgeState = 'stopped';
  private wanted = false;
  private startedAt: number | undefined;
  private restarts = 0;
  private delayMs = FIRST_RESTART_MS;
  private timer: TimerHandle | undefined;
  private lastExit: { code: number | null; signal: string | null; at: number } | undefined;
  private lastError: string | undefined;
  private setupUri: string | undefined;
  private readonly tail: string[] = [];
  private exited: Promise<void> = Promise.resolve();
  /** The bridge's HAP port as config.json had it at the last start. */
  private hapPort: number | undefined;
  /** Why it is not restarted (its HAP port is taken), until a restart, a start or a config change. */
  private halted: string | undefined;
  private readonly configFollowers: Array<(config: Record<string, unknown>) => void> = [];

  constructor(private readonly deps: AccessoryHubDeps) {}

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
    await fs.mkdir(this.pluginsDir, { recursive: true });
    await fs.mkdir(this.builtinPluginsDir, { recursive: true });
    await this.ensureConfig();
  }

  async start(): Promise<void> {
    await this.prepare();
    this.hapPort = (await this.settings()).port;
    this.halted = undefined;
    this.wanted = true;
    this.launch();
  }

  async stop(): Promise<void> {
    this.wanted = false;
    if (this.timer) this.deps.timers.clearTimeout(this.timer);
    this.timer = undefined;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await this.exited;
      clearTimeout(force);
    }
    this.state = 'stopped';
  }

  /** Reloads config.json: Homebridge reads it only at start. */
  async restart(): Promise<void> {
    await this.stop();
    this.restarts++;
    this.delayMs = FIRST_RESTART_MS;
    await this.start();
  }

  /** Records a dependency in the plugin folder's package.json (npm keeps what is listed there). */
  async addDependency(name: string, spec: string): Promise<void> {
    const file = path.join(this.deps.dir, 'package.json');
    const manifest = JSON.parse(await fs.readFile(file, 'utf8').catch(() => '{"name":"hcs-accessory-hub-plugins","private":true}')) as { dependencies?: Record<string, string> };
    manifest.dependencies = { ...manifest.dependencies, [name]: spec };
    await fs.writeFile(file, `${JSON.stringify(manifest, null, 2)}\n`);
  }

  /** Runs on every config.json written: what must follow the bridge settings (the plugin bridge's HAP port and code) follows them. */
  followConfig(follow: (config: Record<string, unknown>) => void): void {
    this.configFollowers.push(follow);
  }

  /** The household's plugins in the plugin folder: Homebridge plugins, not their dependencies, and not the hub's own bridge plugin. */
  async installedPlugins(): Promise<string[]> {
    const names: string[] = [];
    for (const entry of await fs.readdir(this.pluginsDir).catch(() => [] as string[])) {
      if (entry.startsWith('@')) for (const inner of await fs.readdir(path.join(this.pluginsDir, entry)).catch(() => [] as string[])) names.push(`${entry}/${inner}`);
      else names.push(entry);
    }
    const plugins = await Promise.all(
      names
        .filter((name) => PLUGIN_NAME.test(name) && name !== BRIDGE_PLUGIN)
        .map(async (name) => {
          const pkg = JSON.parse(await fs.readFile(path.join(this.pluginsDir, ...name.split('/'), 'package.json'), 'utf8').catch(() => 'null')) as { keywords?: unknown } | null;
          return isHomebridgePlugin(name, pkg ?? undefined) ? name : undefined;
        }),
    );
    return plugins.filter((n): n is string => n !== undefined).sort();
  }

  /** Homebridge's config.json as it is. */
  async config(): Promise<Record<string, unknown>> {
    return this.readConfig();
  }

  /** Changes config.json in one write (Homebridge reads it at its next start). */
  async editConfig(change: (config: Record<string, unknown>) => void): Promise<void> {
    const config = await this.readConfig();
    change(config);
    await this.writeConfig(config);
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
    const config = await this.readConfig();
    config.bridge = { ...(config.bridge as object), ...change };
    await this.writeConfig(config);
    this.deps.log.info({ change: { ...change, ...(change.pin ? { pin: '***' } : {}) } }, 'accessory hub settings changed; restarting Homebridge');
    if (this.wanted) await this.restart();
    return this.settings();
  }

  async status() {
    const settings = await this.settings();
    const plugins = await this.installedPlugins();
    return {
      enabled: true,
      state: this.state,
      ...(this.child?.pid !== undefined && (this.state === 'starting' || this.state === 'running') ? { pid: this.child.pid } : {}),
      ...(this.startedAt !== undefined && this.state === 'running' ? { uptimeSeconds: Math.round((this.deps.clock.now() - this.startedAt) / 1000) } : {}),
      version: this.deps.install.version,
      restarts: this.restarts,
      bridge: { name: settings.name, port: settings.port, pin: settings.pin, ...(this.setupUri ? { setupUri: this.setupUri } : {}) },
      pluginCount: plugins.length,
      ...(this.lastExit ? { lastExit: this.lastExit } : {}),
      ...(this.lastError ? { lastError: this.lastError } : {}),
      recentOutput: [...this.tail],
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
    const args = [this.deps.install.bin, '-I', '-Q', '-U', this.deps.dir, '-P', this.pluginsDir, '--strict-plugin-resolution'];
    const child = spawn(this.deps.nodePath ?? process.execPath, args, { cwd: this.deps.dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    this.child = child;
    let done!: () => void;
    this.exited = new Promise((resolve) => (done = resolve));
    let pending = '';
    let payloadNext = false;
    const onLine = (line: string) => {
      // eslint-disable-next-line no-control-regex
      const text = line.replace(/\u001b\[[0-9;]*m/g, '').trim();
      if (!text) return;
      this.tail.push(text.length > 500 ? `${text.slice(0, 500)}…` : text);
      if (this.tail.length > LOG_TAIL) this.tail.shift();
      if (payloadNext && text.startsWith('X-HM://')) this.setupUri = text;
      payloadNext = text === 'Setup Payload:';
      if (this.state === 'starting' && !this.halted && text.includes('EADDRINUSE')) this.haltIfHapPortTaken(text, child);
      if (/is running on port \d+/.test(text) && this.state === 'starting') {
        this.state = 'running';
        this.startedAt = this.deps.clock.now();
        this.lastError = undefined;
        this.deps.log.info({ pid: child.pid }, 'Homebridge is running');
      }
    };
    const read = (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      let i;
      while ((i = pending.indexOf('\n')) >= 0) {
        onLine(pending.slice(0, i));
        pending = pending.slice(i + 1);
      }
      if (pending.length > 8192) pending = '';
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.on('error', (err) => {
      this.lastError = `could not start Homebridge: ${err.message}`;
    });
    child.on('exit', (code, signal) => {
      // Its last lines (the EADDRINUSE that explains the exit) may still be in the pipes.
      const drained = Promise.all([child.stdout!, child.stderr!].map((s) => (s.closed ? undefined : new Promise((r) => s.once('close', r)))));
      let bound: ReturnType<typeof setTimeout> | undefined;
      void Promise.race([drained, new Promise((r) => (bound = setTimeout(r, 500)))]).then(() => {
        clearTimeout(bound);
        done();
        this.exitedWith(code, signal);
      });
    });
  }

  private exitedWith(code: number | null, signal: string | null): void {
    const at = this.deps.clock.now();
    this.lastExit = { code, signal, at };
    if (!this.wanted) return;
    if (this.halted) {
      this.state = 'failed';
      this.lastError = this.halted;
      return;
    }
    const ranMs = this.startedAt !== undefined && this.state === 'running' ? at - this.startedAt : 0;
    if (ranMs >= STABLE_MS) this.delayMs = FIRST_RESTART_MS;
    this.lastError ??= signal ? `Homebridge was killed by ${signal}` : `Homebridge exited with code ${code}`;
    this.deps.log.warn({ code, signal, restartInMs: this.delayMs }, 'Homebridge stopped; restarting it');
    this.state = 'backoff';
    this.restarts++;
    const delay = this.delayMs;
    this.delayMs = Math.min(MAX_RESTART_MS, this.delayMs * 2);
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
  private haltIfHapPortTaken(line: string, child: ChildProcess): void {
    const port = Number(/:(\d+)\s*$/.exec(line)?.[1]);
    if (port !== this.hapPort) return;
    this.halted = `HAP port ${port} is in use by another program (EADDRINUSE): Homebridge is not restarted until the port or the configuration changes, or an admin restarts it`;
    this.lastError = this.halted;
    this.deps.log.error({ port }, 'Homebridge cannot listen: its HAP port is in use; not restarting it');
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      child.once('exit', () => clearTimeout(force));
    }
  }

  private async ensureConfig(): Promise<void> {
    let config: Record<string, unknown>;
    try {
      config = await this.readConfig();
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
    await this.writeConfig(config);
  }

  private async readConfig(): Promise<Record<string, unknown>> {
    const parsed = JSON.parse(await fs.readFile(this.configFile, 'utf8')) as Record<string, unknown>;
    if (!parsed || typeof parsed.bridge !== 'object') throw new Error('config.json has no bridge');
    return parsed;
  }

  private async writeConfig(config: Record<string, unknown>): Promise<void> {
    for (const follow of this.configFollowers) follow(config);
    const temp = `${this.configFile}.tmp`;
    await fs.writeFile(temp, `${JSON.stringify(config, null, 2)}\n`);
    await fs.rename(temp, this.configFile);
  }
}
