import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../../../platform/clock.js';
import type { DriverManager } from '../driver-manager.js';
import type { DriverSettingsRepository } from '../driver-settings.js';
import { driverErrors } from '../errors.js';
import { PROTOCOL_VERSION } from '../messages.js';
import {
  checkPropertyValue,
  loadManifests,
  type DriverCommands,
  type DriverProperties,
  type DriverType,
  type LoadedManifest,
  type ManifestError,
  type ResolvedIo,
} from './manifest.js';
import { PYTHON_PACKAGES_DIR } from './dependencies.js';
import { localInstanceId, ProcessLink } from './process-link.js';

/** What secret setting values read as. Sending it back in an update keeps the stored value. */
export const SECRET_MASK = '********';
/** Grace between SIGTERM and SIGKILL when stopping a driver. */
const STOP_GRACE_MS = 2000;
const STDERR_MAX_LINE_BYTES = 16 * 1024;
const STDERR_MAX_LOGGED_CHARS = 1000;
const STDERR_LINES_PER_SECOND = 50;
/** stderr lines kept per driver for the admin panel. */
const STDERR_TAIL_LINES = 20;
/** Messages handed to the manager and not yet applied; past this the driver's stdout is paused. */
const MAX_INFLIGHT = 512;
/** Variables of the hub's own environment that a driver gets (nothing else leaks through). */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SYSTEMROOT', 'WINDIR', 'TEMP', 'TMP'];

export const LUA_HOST_PATH = fileURLToPath(new URL('./lua-host.mjs', import.meta.url));

export interface SupervisorLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

export interface SupervisorTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface LocalDriverSupervisorDeps {
  driversDir: string;
  manager: DriverManager;
  settings: DriverSettingsRepository;
  clock: Clock;
  log: SupervisorLogger;
  /** Runs javascript drivers and the Lua host. Default process.execPath. */
  nodePath?: string;
  /** Default `python3`. */
  pythonPath?: string;
  /** Default restart backoff of manifests that do not set `io.restart`. */
  defaultRestart?: Partial<ResolvedIo['restart']>;
  timers?: SupervisorTimers;
  /** Grace between SIGTERM and SIGKILL. Default 2000 ms. */
  stopGraceMs?: number;
  /** Override of the Lua host script (tests, packaging). */
  luaHostPath?: string;
  /** In a cluster: which instance runs each driver (a lease in the database). Absent, this process runs them all. */
  placement?: DriverPlacement;
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

export interface LocalDriverSettings {
  driverKey: string;
  properties: DriverProperties;
  /** The stored values; secrets read as `"********"`. */
  values: Record<string, unknown>;
}

const defaultTimers: SupervisorTimers = {
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, ms);
    handle.unref();
    return handle;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** Splits a byte stream into lines without ever holding more than `maxBytes` of one line. */
class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private discarding = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!this.discarding && end > start) {
        if (this.size + (end - start) > this.maxBytes) {
          this.discarding = true;
          this.parts = [];
          this.size = 0;
          this.onOverflow();
        } else {
          this.parts.push(chunk.subarray(start, end));
          this.size += end - start;
        }
      }
      if (nl === -1) return;
      if (this.discarding) this.discarding = false;
      else {
        const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
        this.parts = [];
        this.size = 0;
        this.onLine(line);
      }
      start = nl + 1;
    }
  }
}

interface Deps {
  manager: DriverManager;
  settings: DriverSettingsRepository;
  clock: Clock;
  log: SupervisorLogger;
  timers: SupervisorTimers;
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
  child: ChildProcess;
  link?: ProcessLink;
  spawned: boolean;
  ended: boolean;
  /** Killed for misbehaving: its further output is ignored. */
  condemned: boolean;
  exited: Promise<void>;
  markExited: () => void;
  pingTimer?: unknown;
  killTimer?: unknown;
  inflight: number;
  rateWindowStart: number;
  rateCount: number;
  rateFlagged: boolean;
  violations: number[];
  stderrWindowStart: number;
  stderrCount: number;
  stderrSuppressed: number;
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `killed by ${signal}` : `exited with code ${code}`;
}

function toEnvValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** One local driver: its manifest and the life of its process. */
class DriverRunner {
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
  private readonly stderrTail: string[] = [];
  /** The process should be running (false after stop, or when the hub closed the link). */
  wanted = false;
  private run?: Run;
  private delayMs: number;
  private backoffTimer?: unknown;
  /** Bumped by every launch and stop: callbacks of an older generation do nothing. */
  private generation = 0;
  private pingSeq = 0;
  private ops: Promise<unknown> = Promise.resolve();

  constructor(
    readonly manifest: LoadedManifest,
    private readonly deps: Deps,
  ) {
    this.delayMs = manifest.io.restart.initialDelayMs;
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
      ...(this.run?.spawned && !this.run.ended && this.run.child.pid !== undefined ? { pid: this.run.child.pid } : {}),
      restarts: this.restarts,
      ...(this.startedAt !== undefined && this.status === 'running' ? { startedAt: this.startedAt } : {}),
      ...(this.lastExit ? { lastExit: { ...this.lastExit } } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      ...(this.nextRestartAt !== undefined ? { nextRestartAt: this.nextRestartAt } : {}),
      ...(this.missingSettings ? { missingSettings: [...this.missingSettings] } : {}),
      ...(this.status === 'standby' && this.runsOn !== undefined ? { runsOn: this.runsOn } : {}),
      ...(this.lastPongAt !== undefined ? { lastPongAt: this.lastPongAt } : {}),
      ...(this.stderrTail.length > 0 ? { recentStderr: [...this.stderrTail] } : {}),
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
    this.delayMs = this.manifest.io.restart.initialDelayMs;
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
    if (run && !run.ended) {
      this.terminate(run, 'SIGTERM');
      await run.exited;
    }
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

    let child: ChildProcess;
    try {
      child = spawn(command, args, {
        cwd: m.dir,
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
        // Its own process group, so that stopping it also stops what it started.
        detached: process.platform !== 'win32',
      });
    } catch (err) {
      this.lastError = `could not start ${command}: ${(err as Error).message}`;
      deps.log.error({ driver: m.driverKey, command, err: (err as Error).message }, 'local driver failed to start');
      this.scheduleRestart(this.lastError);
      return;
    }
    this.launches++;

    let markExited!: () => void;
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    const run: Run = {
      child,
      spawned: false,
      ended: false,
      condemned: false,
      exited,
      markExited,
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

    // Stream errors (EPIPE after the process died) must never reach the hub as uncaught errors.
    child.stdin?.on('error', () => undefined);
    child.stdout?.on('error', () => undefined);
    child.stderr?.on('error', () => undefined);

    await new Promise<void>((resolve) => {
      child.once('spawn', () => {
        run.spawned = true;
        // Stopped while it was being spawned: it is being killed, so it is not attached.
        if (generation === this.generation) this.onSpawn(run);
        resolve();
      });
      // `on`, not `once`: a second 'error' without a listener would crash the hub.
      child.on('error', (err: NodeJS.ErrnoException) => {
        if (!run.spawned) {
          this.lastError = err.code === 'ENOENT' ? `could not start ${command}: not found (ENOENT)` : `could not start ${command}: ${err.message}`;
          deps.log.error({ driver: m.driverKey, command, code: err.code, err: err.message }, 'local driver failed to start');
          this.onEnded(run, null, null, this.lastError);
          resolve();
        } else {
          deps.log.warn({ driver: m.driverKey, err: err.message }, 'local driver process error');
        }
      });
      child.once('exit', (code, signal) => this.onEnded(run, code, signal));
    });
  }

  private onSpawn(run: Run): void {
    const { manifest: m, deps } = this;
    const child = run.child;
    this.status = 'running';
    this.startedAt = deps.clock.now();
    const link = new ProcessLink({
      driverKey: m.driverKey,
      stdin: child.stdin!,
      commands: Object.keys(m.commands),
      actionTimeoutMs: m.io.actionTimeoutMs,
      log: deps.log,
      onClose: (reason) => this.onLinkClosed(run, reason),
    });
    run.link = link;
    deps.log.info({ driver: m.driverKey, pid: child.pid, driverType: m.driverType, restarts: this.restarts }, 'local driver started');

    const stdout = new LineSplitter(
      m.io.maxLineBytes,
      (line) => this.onStdoutLine(run, line),
      () => this.violation(run, 'line_too_long', `a stdout line longer than ${m.io.maxLineBytes} bytes was discarded`),
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      if (!run.ended && !run.condemned) stdout.push(chunk);
    });
    const stderr = new LineSplitter(
      STDERR_MAX_LINE_BYTES,
      (line) => this.onStderrLine(run, line.toString('utf8')),
      () => this.onStderrLine(run, `[stderr line over ${STDERR_MAX_LINE_BYTES} bytes discarded]`),
    );
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));

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
    if (run.inflight >= MAX_INFLIGHT) run.child.stdout?.pause();
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
        if (run.inflight === MAX_INFLIGHT / 8 && !run.ended) run.child.stdout?.resume();
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
    this.stderrTail.push(trimmed.length > STDERR_MAX_LOGGED_CHARS ? `${trimmed.slice(0, STDERR_MAX_LOGGED_CHARS)}…` : trimmed);
    if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
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
      deps.log.error({ driver: m.driverKey, pid: run.child.pid, violations: run.violations.length, windowMs: m.io.violations.windowMs }, `local driver ${m.driverKey} killed: too many protocol violations; it will be restarted`);
      run.child.stdout?.pause();
      this.terminate(run, 'SIGKILL');
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
    this.terminate(run, 'SIGTERM');
  }

  private terminate(run: Run, signal: NodeJS.Signals): void {
    if (run.ended) return;
    const { child } = run;
    const kill = (sig: NodeJS.Signals) => {
      try {
        if (process.platform !== 'win32' && child.pid !== undefined) process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        try {
          child.kill(sig);
        } catch {
          // already gone
        }
      }
    };
    kill(signal);
    if (signal !== 'SIGKILL' && run.killTimer === undefined) {
      run.killTimer = this.deps.timers.setTimeout(() => {
        if (!run.ended) {
          this.deps.log.warn({ driver: this.driverKey, pid: child.pid }, `local driver did not stop within ${this.deps.stopGraceMs} ms; killing it`);
          kill('SIGKILL');
        }
      }, this.deps.stopGraceMs);
    }
  }

  /** The process exited (or never started): detach, then restart unless it is not wanted. */
  private onEnded(run: Run, code: number | null, signal: NodeJS.Signals | null, failure?: string): void {
    if (run.ended) return;
    run.ended = true;
    const { deps } = this;
    const now = deps.clock.now();
    if (run.pingTimer !== undefined) deps.timers.clearTimeout(run.pingTimer);
    if (run.killTimer !== undefined) deps.timers.clearTimeout(run.killTimer);
    const reason = failure ?? (run.condemned && this.lastError ? this.lastError : `process ${describeExit(code, signal)}`);
    if (run.link) {
      run.link.retire();
      try {
        deps.manager.detach(run.link, reason);
      } catch (err) {
        deps.log.error({ driver: this.driverKey, err }, 'detaching the local driver failed');
      }
    }
    // Kill what the driver may have left behind in its process group.
    if (run.spawned && process.platform !== 'win32' && run.child.pid !== undefined) {
      try {
        process.kill(-run.child.pid, 'SIGKILL');
      } catch {
        // nothing left
      }
    }
    if (!failure) {
      this.lastExit = { code, signal, at: now };
      if (this.wanted) this.lastError = run.condemned ? this.lastError : reason;
    }
    run.markExited();
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
    if (this.startedAt !== undefined && now - this.startedAt >= restart.resetAfterMs) this.delayMs = restart.initialDelayMs;
    this.cancelBackoff();
    const delayMs = this.delayMs;
    this.delayMs = Math.min(delayMs * 2, restart.maxDelayMs);
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

type Entry = { kind: 'valid'; runner: DriverRunner; fingerprint: string } | { kind: 'invalid'; error: ManifestError };

/**
 * Launches local drivers from their manifests, feeds their stdout into the driver manager,
 * and keeps them running: a crash, a flood, an over-long line or garbage affects only that
 * driver, which is restarted with capped exponential backoff.
 */
export class LocalDriverSupervisor {
  private readonly deps: Deps;
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
      timers: deps.timers ?? defaultTimers,
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
