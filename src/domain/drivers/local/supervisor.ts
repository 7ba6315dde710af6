import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock, Timers } from '../../../platform/clock.js';
import type { ProcessRunner } from '../../../platform/processes.js';
import type { DriverManager } from '../driver-manager.js';
import type { DriverSettingsRepository } from '../driver-settings.js';
import { driverErrors } from '../errors.js';
import { checkPropertyValue, loadManifests, type DriverProperties, type ManifestError, type ResolvedIo } from './manifest.js';
import { DriverRunner, STOP_GRACE_MS, type DriverPlacement, type DriverRunnerDeps, type LocalDriverInfo, type SupervisorLogger } from './driver-process.js';

export type { DriverPlacement, LocalDriverInfo, LocalDriverStatus, SupervisorLogger } from './driver-process.js';

/** What secret setting values read as. Sending it back in an update keeps the stored value. */
export const SECRET_MASK = '********';

export const LUA_HOST_PATH = fileURLToPath(new URL('./lua-host.mjs', import.meta.url));

export interface LocalDriverSupervisorDeps {
  driversDir: string;
  manager: DriverManager;
  settings: DriverSettingsRepository;
  clock: Clock;
  timers: Timers;
  /** Spawns the driver processes (src/adapters/process). */
  processes: ProcessRunner;
  log: SupervisorLogger;
  /** Runs javascript drivers and the Lua host. Default process.execPath. */
  nodePath?: string;
  /** Default `python3`. */
  pythonPath?: string;
  /** Default restart backoff of manifests that do not set `io.restart`. */
  defaultRestart?: Partial<ResolvedIo['restart']>;
  /** Grace between SIGTERM and SIGKILL. Default 2000 ms. */
  stopGraceMs?: number;
  /** Override of the Lua host script (tests, packaging). */
  luaHostPath?: string;
  /** In a cluster: which instance runs each driver (a lease in the database). Absent, this process runs them all. */
  placement?: DriverPlacement;
}


export interface LocalDriverSettings {
  driverKey: string;
  properties: DriverProperties;
  /** The stored values; secrets read as `"********"`. */
  values: Record<string, unknown>;
}

type Entry = { kind: 'valid'; runner: DriverRunner; fingerprint: string } | { kind: 'invalid'; error: ManifestError };

/**
 * Launches local drivers from their manifests, feeds their stdout into the driver manager,
 * and keeps them running: a crash, a flood, an over-long line or garbage affects only that
 * driver, which is restarted with capped exponential backoff.
 */
export class LocalDriverSupervisor {
  private readonly deps: DriverRunnerDeps;
  private readonly driversDir: string;
  private readonly defaultRestart: Partial<ResolvedIo['restart']> | undefined;
  private entries: Entry[] = [];
  private stopped = true;
  private loading: Promise<unknown> = Promise.resolve();

  constructor(deps: LocalDriverSupervisorDeps) {
    this.driversDir = path.resolve(deps.driversDir);
    this.defaultRestart = deps.defaultRestart;
    this.deps = {
      manager: deps.manager,
      settings: deps.settings,
      clock: deps.clock,
      log: deps.log,
      timers: deps.timers,
      processes: deps.processes,
      nodePath: deps.nodePath ?? process.execPath,
      pythonPath: deps.pythonPath ?? 'python3',
      luaHostPath: deps.luaHostPath ?? LUA_HOST_PATH,
      stopGraceMs: deps.stopGraceMs ?? STOP_GRACE_MS,
      halted: () => this.stopped,
      placement: deps.placement,
    };
    deps.placement?.watch(() => this.rebalance());
    // Another instance changed the shared folder: read the manifests again (new drivers stand by here).
    deps.placement?.watchFolder(() => {
      if (!this.stopped) void this.reload();
    });
  }

  /**
   * Leases changed hands: a driver standing by tries to take its lease (its instance died or let
   * go); a driver whose lease this instance lost stops, so that it never runs twice.
   */
  private rebalance(): void {
    const placement = this.deps.placement;
    if (this.stopped || !placement) return;
    for (const e of this.entries) {
      if (e.kind !== 'valid') continue;
      const r = e.runner;
      if (r.status === 'standby') {
        void r.serialized(() => (r.status === 'standby' && !this.stopped ? r.start() : Promise.resolve()));
      } else if (r.wanted && !placement.holds(r.driverKey)) {
        this.deps.log.warn({ driver: r.driverKey }, 'the local driver lease went to another instance; stopping the driver here');
        void r.serialized(async () => {
          await r.stop();
          if (!this.stopped) await r.start();
        });
      }
    }
  }

  /** Loads the manifests and launches every valid one; resolves once every process was spawned. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.reload();
  }

  /**
   * Loads the manifests again: new drivers start, removed ones stop, changed ones restart,
   * unchanged ones are left running. Returns the manifest errors.
   */
  reload(options: { restart?: string } = {}): Promise<ManifestError[]> {
    const work = async (): Promise<ManifestError[]> => {
      let loaded: Awaited<ReturnType<typeof loadManifests>>;
      try {
        loaded = await loadManifests(this.driversDir, this.defaultRestart ? { defaultRestart: this.defaultRestart } : {});
      } catch (err) {
        this.deps.log.error({ err, dir: this.driversDir }, 'could not load local driver manifests');
        return [];
      }
      for (const e of loaded.errors) this.deps.log.warn({ file: e.file, driverKey: e.driverKey, error: e.error }, `invalid local driver manifest ${e.file}: ${e.error}`);

      const previous = new Map<string, Extract<Entry, { kind: 'valid' }>>();
      for (const e of this.entries) if (e.kind === 'valid') previous.set(e.runner.driverKey, e);
      const next: Entry[] = [];
      const toStart: DriverRunner[] = [];
      const toStop: DriverRunner[] = [];
      for (const manifest of loaded.manifests) {
        const fingerprint = JSON.stringify(manifest);
        const old = previous.get(manifest.driverKey);
        if (old && old.fingerprint === fingerprint && manifest.driverKey !== options.restart) {
          previous.delete(manifest.driverKey);
          next.push(old);
          if (!this.stopped && !old.runner.wanted) toStart.push(old.runner);
          continue;
        }
        if (old) {
          previous.delete(manifest.driverKey);
          toStop.push(old.runner);
        }
        const runner = new DriverRunner(manifest, this.deps);
        next.push({ kind: 'valid', runner, fingerprint });
        toStart.push(runner);
      }
      for (const old of previous.values()) toStop.push(old.runner);
      for (const error of loaded.errors) next.push({ kind: 'invalid', error });
      next.sort((a, b) => {
        const fa = a.kind === 'valid' ? a.runner.manifest.file : a.error.file;
        const fb = b.kind === 'valid' ? b.runner.manifest.file : b.error.file;
        return fa < fb ? -1 : fa > fb ? 1 : 0;
      });
      this.entries = next;

      await Promise.all(toStop.map((r) => r.serialized(() => r.stop()).catch(() => undefined)));
      if (!this.stopped) {
        await Promise.all(
          toStart.map((r) =>
            r.serialized(() => r.start()).catch((err: unknown) => this.deps.log.error({ driver: r.driverKey, err }, 'starting a local driver failed')),
          ),
        );
      }
      return loaded.errors;
    };
    const run = this.loading.then(work, work);
    this.loading = run.catch(() => undefined);
    return run;
  }

  /**
   * After a driver's files were replaced: loads the manifests again and restarts that driver even
   * when its manifest reads the same (its program or dependencies changed). Throws when the
   * driver is not there or invalid.
   */
  async reloadAndRestart(driverKey: string): Promise<LocalDriverInfo> {
    await this.reload({ restart: driverKey });
    this.deps.placement?.announceFolderChange();
    return this.get(driverKey);
  }

  /** After a driver was removed from the folder: reads the manifests again, here and on the other instances. */
  async reloadAfterRemoval(): Promise<ManifestError[]> {
    const errors = await this.reload();
    this.deps.placement?.announceFolderChange();
    return errors;
  }

  /** Every manifest found, valid or not, in path order. */
  list(): LocalDriverInfo[] {
    return this.entries.map((e) => (e.kind === 'valid' ? e.runner.info() : invalidInfo(e.error)));
  }

  get(driverKey: string): LocalDriverInfo {
    return this.runnerFor(driverKey).info();
  }

  async getSettings(driverKey: string): Promise<LocalDriverSettings> {
    const runner = this.runnerFor(driverKey);
    const stored = (await this.deps.settings.get(driverKey)) ?? {};
    return { driverKey, properties: runner.manifest.properties, values: mask(runner.manifest.properties, stored) };
  }

  /**
   * Replaces the stored settings of a driver (omitted or null values are unset; a secret sent
   * as "********" keeps its stored value) and restarts that driver.
   */
  async updateSettings(driverKey: string, values: Record<string, unknown>): Promise<LocalDriverInfo> {
    const runner = this.runnerFor(driverKey);
    const properties = runner.manifest.properties;
    if (!values || typeof values !== 'object' || Array.isArray(values)) {
      throw driverErrors.INVALID_DRIVER_SETTINGS({ driverKey, problem: 'give an object of property values' }, { details: [{ field: '', message: 'must be an object' }] });
    }
    const stored = (await this.deps.settings.get(driverKey)) ?? {};
    const problems: { field: string; message: string }[] = [];
    const next: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(values)) {
      const schema = properties[name];
      if (!schema) {
        problems.push({ field: name, message: 'is not a setup property of this driver' });
        continue;
      }
      if (value === null || value === undefined) continue;
      if (schema.secret && value === SECRET_MASK) {
        if (stored[name] !== undefined && stored[name] !== null) next[name] = stored[name];
        continue;
      }
      const problem = checkPropertyValue(schema, value);
      if (problem) problems.push({ field: name, message: problem });
      else next[name] = value;
    }
    for (const [name, schema] of Object.entries(properties)) {
      if (schema.required && next[name] === undefined && schema.default === undefined && !problems.some((p) => p.field === name)) {
        problems.push({ field: name, message: 'is required' });
      }
    }
    if (problems.length > 0) {
      const first = problems[0]!;
      throw driverErrors.INVALID_DRIVER_SETTINGS({ driverKey, problem: `${first.field} ${first.message}` }, { details: problems });
    }
    await this.deps.settings.save(driverKey, next, this.deps.clock.now());
    this.deps.log.info({ driver: driverKey, properties: Object.keys(next) }, 'local driver settings updated; restarting it');
    if (this.stopped) return runner.info();
    return this.restart(driverKey);
  }

  /** Stops and starts one driver now (backoff is reset). */
  async restart(driverKey: string): Promise<LocalDriverInfo> {
    const runner = this.runnerFor(driverKey);
    if (this.stopped) throw driverErrors.LOCAL_DRIVERS_STOPPED();
    await runner.serialized(() => runner.restart());
    return runner.info();
  }

  /** SIGTERM to every driver, SIGKILL after the grace; resolves when all exited. No restarts after. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loading;
    const runners = this.entries.flatMap((e) => (e.kind === 'valid' ? [e.runner] : []));
    // Not serialized: stop must not wait behind a slow start of the same driver.
    await Promise.all(runners.map((r) => r.stop()));
  }

  private runnerFor(driverKey: string): DriverRunner {
    let invalid: ManifestError | undefined;
    for (const e of this.entries) {
      if (e.kind === 'valid' && e.runner.driverKey === driverKey) return e.runner;
      if (e.kind === 'invalid' && e.error.driverKey === driverKey) invalid ??= e.error;
    }
    if (invalid) throw driverErrors.DRIVER_MANIFEST_INVALID({ driverKey, problem: invalid.error }, { details: { driverKey, file: invalid.file, error: invalid.error } });
    throw driverErrors.DRIVER_NOT_FOUND({ driverKey }, { details: { driverKey } });
  }
}

function invalidInfo(error: ManifestError): LocalDriverInfo {
  return {
    driverKey: error.driverKey ?? path.posix.basename(error.file).replace(/\.driver\.json$/, ''),
    file: error.file,
    driverType: error.driverType ?? null,
    status: 'invalid',
    restarts: 0,
    error: error.error,
    properties: {},
    commands: {},
  };
}

/** Stored values of the declared properties only (a property dropped from the manifest is not shown), secrets masked. */
function mask(properties: DriverProperties, values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const value = values[name];
    if (value === undefined || value === null) continue;
    out[name] = schema.secret ? SECRET_MASK : value;
  }
  return out;
}
