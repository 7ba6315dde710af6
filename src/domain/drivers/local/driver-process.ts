/**
 * One local driver's process life: launch with its settings as environment, the stdio link to
 * the driver manager, protocol policing (floods, garbage, over-long lines), pings, and restarts
 * with back-off. The process itself is the ProcessRunner's (src/adapters/process); the catalogue
 * of drivers, reloads, settings and placement are the supervisor's (supervisor.ts).
 */
import path from 'node:path';
import { Backoff } from '../../../platform/backoff.js';
import type { Clock, TimerHandle, Timers } from '../../../platform/clock.js';
import { OutputTail, type ProcessExit, type ProcessRunner, type RunningProcess } from '../../../platform/processes.js';
import type { DriverManager } from '../driver-manager.js';
import type { DriverSettingsRepository } from '../driver-settings.js';
import { PROTOCOL_VERSION } from '../messages.js';
import type { DriverCommands, DriverProperties, DriverType, LoadedManifest, ResolvedIo } from './manifest.js';
import { PYTHON_PACKAGES_DIR } from './dependencies.js';
import { localInstanceId, ProcessLink } from './process-link.js';


/** Grace between SIGTERM and SIGKILL when stopping a driver. */
export const STOP_GRACE_MS = 2000;
const STDERR_MAX_LINE_BYTES = 16 * 1024;
const STDERR_MAX_LOGGED_CHARS = 1000;
const STDERR_LINES_PER_SECOND = 50;
/** stderr lines kept per driver for the admin panel. */
const STDERR_TAIL_LINES = 20;
/** Messages handed to the manager and not yet applied; past this the driver's stdout is paused. */
const MAX_INFLIGHT = 512;
/** Variables of the hub's own environment that a driver gets (nothing else leaks through). */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SYSTEMROOT', 'WINDIR', 'TEMP', 'TMP'];

export interface SupervisorLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

/**
 * Where each local driver runs when several instances share the drivers: one instance at a time
 * holds a driver's lease and runs its process; the others stand by and take over when the lease
 * lapses (its instance died) or is released (it stopped).
 */
export interface DriverPlacement {
  /** Takes or keeps the driver's lease for this instance; when another holds it, names that one. */
  claim(driverKey: string): Promise<{ held: true } | { held: false; holder: string }>;
  /** Whether this instance still holds the lease (false once it lapsed or was taken over). */
  holds(driverKey: string): boolean;
  release(driverKey: string): Promise<void>;
  /** Calls `listener` whenever leases may have changed hands. */
  watch(listener: () => void): () => void;
  /** Tells the other instances that the shared drivers folder changed (a package installed, rolled back, removed). */
  announceFolderChange(): void;
  /** Calls `listener` when another instance changed the drivers folder. */
  watchFolder(listener: () => void): () => void;
}

export type LocalDriverStatus = 'running' | 'starting' | 'backoff' | 'stopped' | 'invalid' | 'standby';

export interface LocalDriverInfo {
  driverKey: string;
  name?: string;
  version?: string;
  description?: string;
  /** The manifest, relative to the drivers folder. */
  file: string;
  driverType: DriverType | null;
  status: LocalDriverStatus;
  pid?: number;
  /** How many times the process was started again (after a crash, a settings change or on request). */
  restarts: number;
  /** When the current process started (epoch ms). */
  startedAt?: number;
  lastExit?: { code: number | null; signal: string | null; at: number };
  /** Why the driver last stopped, failed to start or was killed. */
  lastError?: string;
  /** Why the manifest is invalid (status `invalid`). */
  error?: string;
  /** While in backoff: when the next start is due (epoch ms). */
  nextRestartAt?: number;
  /** Required settings without a value: the driver waits for them (status `stopped`). */
  missingSettings?: string[];
  /** Status `standby`: the cluster instance that runs this driver now. */
  runsOn?: string;
  lastPongAt?: number;
  /** The last lines the process wrote to stderr (across restarts), oldest first. */
  recentStderr?: string[];
  properties: DriverProperties;
  commands: DriverCommands;
  io?: ResolvedIo;
}

export interface DriverRunnerDeps {
  manager: DriverManager;
  settings: DriverSettingsRepository;
  clock: Clock;
  log: SupervisorLogger;
  timers: Timers;
  processes: ProcessRunner;
  nodePath: string;
  pythonPath: string;
  luaHostPath: string;
  stopGraceMs: number;
  /** The supervisor was stopped: nothing may start any more. */
  halted(): boolean;
  placement: DriverPlacement | undefined;
}

/** Per-process state: everything that dies with the process. */
interface Run {
  proc: RunningProcess;
  link?: ProcessLink;
  spawned: boolean;
  ended: boolean;
  /** Killed for misbehaving: its further output is ignored. */
  condemned: boolean;
  pingTimer?: TimerHandle;
  inflight: number;
  rateWindowStart: number;
  rateCount: number;
  rateFlagged: boolean;
  violations: number[];
  stderrWindowStart: number;
  stderrCount: number;
  stderrSuppressed: number;
}

function describeExit(code: number | null, signal: string | null): string {
  return signal ? `killed by ${signal}` : `exited with code ${code}`;
}

function toEnvValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** One local driver: its manifest and the life of its process. */
export class DriverRunner {
  status: LocalDriverStatus = 'stopped';
  restarts = 0;
  launches = 0;
  startedAt?: number;
  lastExit?: { code: number | null; signal: string | null; at: number };
  lastError?: string;
  nextRestartAt?: number;
  missingSettings?: string[];
  lastPongAt?: number;
  runsOn?: string;
  private readonly stderrTail = new OutputTail(STDERR_TAIL_LINES, STDERR_MAX_LOGGED_CHARS);
  /** The process should be running (false after stop, or when the hub closed the link). */
  wanted = false;
  private run?: Run;
  private readonly backoff: Backoff;
  private backoffTimer?: TimerHandle;
  /** Bumped by every launch and stop: callbacks of an older generation do nothing. */
  private generation = 0;
  private pingSeq = 0;
  private ops: Promise<unknown> = Promise.resolve();

  constructor(
    readonly manifest: LoadedManifest,
    private readonly deps: DriverRunnerDeps,
  ) {
    this.backoff = new Backoff({ initialMs: manifest.io.restart.initialDelayMs, maxMs: manifest.io.restart.maxDelayMs });
  }

  get driverKey(): string {
    return this.manifest.driverKey;
  }

  info(): LocalDriverInfo {
    const m = this.manifest;
    return {
      driverKey: m.driverKey,
      ...(m.name !== undefined ? { name: m.name } : {}),
      ...(m.version !== undefined ? { version: m.version } : {}),
      ...(m.description !== undefined ? { description: m.description } : {}),
      file: m.file,
      driverType: m.driverType,
      status: this.status,
      ...(this.run?.spawned && !this.run.ended && this.run.proc.pid !== undefined ? { pid: this.run.proc.pid } : {}),
      restarts: this.restarts,
      ...(this.startedAt !== undefined && this.status === 'running' ? { startedAt: this.startedAt } : {}),
      ...(this.lastExit ? { lastExit: { ...this.lastExit } } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      ...(this.nextRestartAt !== undefined ? { nextRestartAt: this.nextRestartAt } : {}),
      ...(this.missingSettings ? { missingSettings: [...this.missingSettings] } : {}),
      ...(this.status === 'standby' && this.runsOn !== undefined ? { runsOn: this.runsOn } : {}),
      ...(this.lastPongAt !== undefined ? { lastPongAt: this.lastPongAt } : {}),
      ...(this.stderrTail.length > 0 ? { recentStderr: this.stderrTail.toArray() } : {}),
      properties: m.properties,
      commands: m.commands,
      io: m.io,
    };
  }

  /** Runs lifecycle operations of this driver one after another. */
  serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.ops.then(work, work);
    this.ops = next.catch(() => undefined);
    return next;
  }

  /** Starts the process; resolves once it was spawned (or failed to spawn). */
  start(): Promise<void> {
    if (this.deps.halted()) return Promise.resolve();
    this.wanted = true;
    this.backoff.succeed();
    return this.placeAndLaunch();
  }

  /** In a cluster, launches only while this instance holds the driver's lease; stands by otherwise. */
  private async placeAndLaunch(): Promise<void> {
    const placement = this.deps.placement;
    if (placement) {
      const claim = await placement.claim(this.driverKey).catch((err: unknown) => {
        this.deps.log.warn({ driver: this.driverKey, err }, 'could not take the local driver lease; standing by');
        return { held: false as const, holder: 'unknown (the database did not answer)' };
      });
      if (!claim.held) {
        this.status = 'standby';
        this.runsOn = claim.holder;
        return;
      }
      this.runsOn = undefined;
    }
    return this.launch();
  }

  /** Stops the process (SIGTERM, SIGKILL after the grace) and resolves when it exited. */
  async stop(): Promise<void> {
    this.wanted = false;
    this.generation++;
    this.cancelBackoff();
    const run = this.run;
    if (run && !run.ended) await run.proc.stop(this.deps.stopGraceMs);
    const placement = this.deps.placement;
    // Released once the process is gone: another instance may start it at once.
    if (placement && this.status !== 'standby') await placement.release(this.driverKey).catch(() => undefined);
    this.status = 'stopped';
  }

  async restart(): Promise<void> {
    await this.stop();
    if (this.launches > 0) this.restarts++;
    await this.start();
  }

  private async launch(): Promise<void> {
    const generation = ++this.generation;
    const { manifest: m, deps } = this;
    if (deps.halted() || !this.wanted) {
      this.status = 'stopped';
      return;
    }
    this.status = 'starting';
    this.nextRestartAt = undefined;
    this.missingSettings = undefined;

    let stored: Record<string, unknown>;
    try {
      stored = (await deps.settings.get(m.driverKey)) ?? {};
    } catch (err) {
      if (generation !== this.generation) return;
      this.lastError = `could not read settings: ${(err as Error).message}`;
      deps.log.error({ driver: m.driverKey, err }, 'could not read local driver settings');
      this.scheduleRestart(this.lastError);
      return;
    }
    if (generation !== this.generation || !this.wanted || deps.halted()) return;

    const missing = Object.entries(m.properties)
      .filter(([name, p]) => p.required && (stored[name] === undefined || stored[name] === null) && p.default === undefined)
      .map(([name]) => name);
    if (missing.length > 0) {
      this.status = 'stopped';
      this.missingSettings = missing;
      this.lastError = `waiting for required settings: ${missing.join(', ')}`;
      deps.log.warn({ driver: m.driverKey, missing }, 'local driver not started: required settings have no value');
      return;
    }

    const env: Record<string, string> = {};
    for (const name of INHERITED_ENV) {
      const value = process.env[name];
      if (value !== undefined) env[name] = value;
    }
    for (const [property, variable] of Object.entries(m.envMap)) {
      const value = toEnvValue(stored[property] ?? m.properties[property]?.default);
      if (value !== undefined) env[variable] = value;
    }
    // A package's requirements.txt was installed here (pip --target); the driver's imports find it first.
    if (m.driverType === 'python') env.PYTHONPATH = [path.join(m.dir, PYTHON_PACKAGES_DIR), process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);
    env.PYTHONUNBUFFERED = '1';
    env.PYTHONIOENCODING = 'utf-8';
    env.HCS_DRIVER_KEY = m.driverKey;
    env.HCS_INSTANCE_ID = localInstanceId(m.driverKey);
    env.HCS_PROTOCOL_VERSION = String(PROTOCOL_VERSION);

    const [command, args] =
      m.driverType === 'python'
        ? [deps.pythonPath, ['-u', m.driverFile]]
        : m.driverType === 'javascript'
          ? [deps.nodePath, [m.driverFile]]
          : [deps.nodePath, [deps.luaHostPath, m.driverFile]];

    this.launches++;
    let run!: Run;
    await new Promise<void>((resolve) => {
      const proc = deps.processes.start(
        { label: `driver:${m.driverKey}`, command, args, cwd: m.dir, env, stdin: 'pipe', maxStdoutLineBytes: m.io.maxLineBytes, maxStderrLineBytes: STDERR_MAX_LINE_BYTES },
        {
          onSpawn: () => {
            run.spawned = true;
            // Stopped while it was being spawned: it is being killed, so it is not attached.
            if (generation === this.generation) this.onSpawn(run);
            resolve();
          },
          onStdoutLine: (line) => {
            if (!run.ended && !run.condemned) this.onStdoutLine(run, line);
          },
          onStdoutOverflow: () => this.violation(run, 'line_too_long', `a stdout line longer than ${m.io.maxLineBytes} bytes was discarded`),
          onStderrLine: (line) => this.onStderrLine(run, line),
          onStderrOverflow: () => this.onStderrLine(run, `[stderr line over ${STDERR_MAX_LINE_BYTES} bytes discarded]`),
          onExit: (exit) => {
            if (exit.startError) {
              const e = exit.startError;
              this.lastError = e.code === 'ENOENT' ? `could not start ${command}: not found (ENOENT)` : `could not start ${command}: ${e.message}`;
              deps.log.error({ driver: m.driverKey, command, code: e.code, err: e.message }, 'local driver failed to start');
              this.onEnded(run, exit, this.lastError);
              resolve();
            } else this.onEnded(run, exit);
          },
        },
      );
      run = {
        proc,
        spawned: false,
        ended: false,
        condemned: false,
        inflight: 0,
        rateWindowStart: 0,
        rateCount: 0,
        rateFlagged: false,
        violations: [],
        stderrWindowStart: 0,
        stderrCount: 0,
        stderrSuppressed: 0,
      };
      this.run = run;
    });
  }

  private onSpawn(run: Run): void {
    const { manifest: m, deps } = this;
    const stdin = run.proc.stdin;
    if (!stdin) return;
    this.status = 'running';
    this.startedAt = deps.clock.now();
    const link = new ProcessLink({
      driverKey: m.driverKey,
      stdin,
      commands: Object.keys(m.commands),
      actionTimeoutMs: m.io.actionTimeoutMs,
      log: deps.log,
      onClose: (reason) => this.onLinkClosed(run, reason),
    });
    run.link = link;
    deps.log.info({ driver: m.driverKey, pid: run.proc.pid, driverType: m.driverType, restarts: this.restarts }, 'local driver started');
    try {
      deps.manager.attach(link);
    } catch (err) {
      deps.log.error({ driver: m.driverKey, err }, 'attaching the local driver failed');
    }
    this.schedulePing(run);
  }

  private onStdoutLine(run: Run, raw: Buffer): void {
    if (run.ended || run.condemned || !run.link) return;
    const { manifest: m, deps } = this;
    const text = raw.toString('utf8').trim();
    if (text === '') return;

    const now = deps.clock.now();
    if (now - run.rateWindowStart >= 1000) {
      run.rateWindowStart = now;
      run.rateCount = 0;
      run.rateFlagged = false;
    }
    if (++run.rateCount > m.io.maxMessagesPerSecond) {
      if (!run.rateFlagged) {
        run.rateFlagged = true;
        this.violation(run, 'flood', `more than ${m.io.maxMessagesPerSecond} messages in one second; the excess is dropped`);
      }
      return;
    }

    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.violation(run, 'not_json', 'a stdout line is not JSON', { line: text.slice(0, 200) });
      return;
    }
    if (!message || typeof message !== 'object' || Array.isArray(message)) {
      this.violation(run, 'not_object', 'a stdout line is not a JSON object', { line: text.slice(0, 200) });
      return;
    }
    if ((message as { type?: unknown }).type === 'PONG') this.lastPongAt = now;

    const link = run.link;
    run.inflight++;
    if (run.inflight >= MAX_INFLIGHT) run.proc.pauseOutput();
    deps.manager
      .receive(link, message)
      .then(
        (receipt) => {
          if (!receipt.ok) this.violation(run, 'rejected', `message rejected (${receipt.code}): ${receipt.message}`, { code: receipt.code });
        },
        (err: unknown) => deps.log.error({ driver: m.driverKey, err }, 'handling a local driver message failed'),
      )
      .finally(() => {
        run.inflight--;
        if (run.inflight === MAX_INFLIGHT / 8 && !run.ended) run.proc.resumeOutput();
      });
  }

  private onStderrLine(run: Run, line: string): void {
    const { deps } = this;
    const now = deps.clock.now();
    if (now - run.stderrWindowStart >= 1000) {
      if (run.stderrSuppressed > 0) {
        deps.log.warn({ driver: this.driverKey, stream: 'stderr', suppressed: run.stderrSuppressed }, `${run.stderrSuppressed} stderr lines suppressed (more than ${STDERR_LINES_PER_SECOND} per second)`);
      }
      run.stderrWindowStart = now;
      run.stderrCount = 0;
      run.stderrSuppressed = 0;
    }
    if (++run.stderrCount > STDERR_LINES_PER_SECOND) {
      run.stderrSuppressed++;
      return;
    }
    const trimmed = line.replace(/\r$/, '');
    if (trimmed === '') return;
    this.stderrTail.push(trimmed);
    deps.log.info({ driver: this.driverKey, stream: 'stderr' }, trimmed.length > STDERR_MAX_LOGGED_CHARS ? `${trimmed.slice(0, STDERR_MAX_LOGGED_CHARS)}…` : trimmed);
  }

  /** Counts a protocol violation; past the threshold the process is killed and restarted. */
  private violation(run: Run, kind: string, message: string, extra: object = {}): void {
    if (run.ended || run.condemned) return;
    const { manifest: m, deps } = this;
    const now = deps.clock.now();
    run.violations.push(now);
    while (run.violations.length > 0 && now - run.violations[0]! > m.io.violations.windowMs) run.violations.shift();
    deps.log.warn({ driver: m.driverKey, violation: kind, violations: run.violations.length, ...extra }, `local driver protocol violation: ${message}`);
    if (run.violations.length >= m.io.violations.max) {
      run.condemned = true;
      this.lastError = `killed after ${run.violations.length} protocol violations within ${m.io.violations.windowMs} ms (last: ${message})`;
      deps.log.error({ driver: m.driverKey, pid: run.proc.pid, violations: run.violations.length, windowMs: m.io.violations.windowMs }, `local driver ${m.driverKey} killed: too many protocol violations; it will be restarted`);
      run.proc.pauseOutput();
      run.proc.kill();
    }
  }

  private schedulePing(run: Run): void {
    const interval = this.manifest.io.pingIntervalMs;
    if (interval <= 0) return;
    run.pingTimer = this.deps.timers.setTimeout(() => {
      run.pingTimer = undefined;
      if (run.ended || !run.link) return;
      run.link.send({ type: 'PING', id: String(++this.pingSeq) });
      this.schedulePing(run);
    }, interval);
  }

  /** The hub closed the link (shutdown or replacement): the driver is stopped, not restarted. */
  private onLinkClosed(run: Run, reason: string): void {
    if (run.ended || this.run !== run) return;
    this.deps.log.info({ driver: this.driverKey, reason }, 'local driver link closed by the hub; stopping the process');
    this.wanted = false;
    this.lastError = `link closed by the hub: ${reason}`;
    void run.proc.stop(this.deps.stopGraceMs);
  }

  /** The process exited (or never started): detach, then restart unless it is not wanted. */
  private onEnded(run: Run, exit: ProcessExit, failure?: string): void {
    if (run.ended) return;
    run.ended = true;
    const { deps } = this;
    const { code, signal } = exit;
    const now = deps.clock.now();
    if (run.pingTimer !== undefined) deps.timers.clearTimeout(run.pingTimer);
    const reason = failure ?? (run.condemned && this.lastError ? this.lastError : `process ${describeExit(code, signal)}`);
    if (run.link) {
      run.link.retire();
      try {
        deps.manager.detach(run.link, reason);
      } catch (err) {
        deps.log.error({ driver: this.driverKey, err }, 'detaching the local driver failed');
      }
    }
    if (!failure) {
      this.lastExit = { code, signal, at: now };
      if (this.wanted) this.lastError = run.condemned ? this.lastError : reason;
    }
    if (this.run !== run) return;
    this.run = undefined;
    if (!this.wanted) {
      this.status = 'stopped';
      deps.log.info({ driver: this.driverKey, code, signal }, 'local driver stopped');
      return;
    }
    if (!failure) deps.log.warn({ driver: this.driverKey, code, signal, ranMs: this.startedAt === undefined ? null : now - this.startedAt }, `local driver ${reason}`);
    this.scheduleRestart(reason);
  }

  private scheduleRestart(reason: string): void {
    const { deps } = this;
    const restart = this.manifest.io.restart;
    const now = deps.clock.now();
    // A run that lasted starts the count of failures again.
    if (this.startedAt !== undefined && now - this.startedAt >= restart.resetAfterMs) this.backoff.succeed();
    this.cancelBackoff();
    const delayMs = this.backoff.fail();
    this.status = 'backoff';
    this.startedAt = undefined;
    this.nextRestartAt = now + delayMs;
    const generation = this.generation;
    deps.log.info({ driver: this.driverKey, delayMs, reason, restarts: this.restarts }, `local driver restarting in ${delayMs} ms`);
    this.backoffTimer = deps.timers.setTimeout(() => {
      this.backoffTimer = undefined;
      if (generation !== this.generation || !this.wanted || deps.halted()) return;
      this.restarts++;
      void this.serialized(() => (generation === this.generation && this.wanted ? this.launch() : Promise.resolve()));
    }, delayMs);
  }

  private cancelBackoff(): void {
    if (this.backoffTimer !== undefined) this.deps.timers.clearTimeout(this.backoffTimer);
    this.backoffTimer = undefined;
    this.nextRestartAt = undefined;
  }
}
