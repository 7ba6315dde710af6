import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Writable } from 'node:stream';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import type { ProcessExit, ProcessHandlers, ProcessRunner, ProcessSpec, RunningProcess } from '../../platform/processes.js';
import { ChildGuard, MARKER_VARIABLE, type ChildGuardLog } from './child-guard.js';
import { LineSplitter } from './line-splitter.js';

const DEFAULT_STDOUT_LINE_BYTES = 64 * 1024;
const DEFAULT_STDERR_LINE_BYTES = 16 * 1024;
/** How long an exited process's pipes may stay open (a grandchild holding them) before the exit is reported anyway. */
const DRAIN_BOUND_MS = 500;

const isPosix = process.platform !== 'win32';

export interface NodeProcessRunnerOptions {
  clock: Clock;
  timers: Timers;
  log: ChildGuardLog;
  /** The record of running children under DATA_DIR (`run/children.json`); absent, none is kept. */
  recordFile?: string;
}

/**
 * The ProcessRunner on Node's child_process: each child in a process group of its own (stopping
 * it stops what it started), output split into bounded lines, stops on the injected timers, and
 * the `ChildGuard` so that no child outlives the hub.
 */
export class NodeProcessRunner implements ProcessRunner {
  readonly guard: ChildGuard;

  constructor(private readonly options: NodeProcessRunnerOptions) {
    this.guard = new ChildGuard(options.recordFile, options.log);
  }

  /** Stops what a previous run of the hub left running (see ChildGuard). */
  reapLeftovers(): Promise<number> {
    return this.guard.reapLeftovers();
  }

  close(): Promise<void> {
    return this.guard.close();
  }

  start(spec: ProcessSpec, handlers: ProcessHandlers = {}): RunningProcess {
    return new NodeRunningProcess(spec, handlers, this.options, this.guard);
  }
}

class NodeRunningProcess implements RunningProcess {
  readonly label: string;
  readonly exited: Promise<ProcessExit>;
  private readonly child: ChildProcess | undefined;
  private spawned = false;
  private ended = false;
  private settle!: (exit: ProcessExit) => void;
  private killTimer: TimerHandle | undefined;

  constructor(
    spec: ProcessSpec,
    private readonly handlers: ProcessHandlers,
    private readonly options: NodeProcessRunnerOptions,
    private readonly guard: ChildGuard,
  ) {
    this.label = spec.label;
    this.exited = new Promise((resolve) => (this.settle = resolve));
    const marker = randomUUID();
    let child: ChildProcess;
    try {
      child = spawn(spec.command, [...spec.args], {
        ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
        env: { ...spec.env, [MARKER_VARIABLE]: marker },
        stdio: [spec.stdin ?? 'ignore', 'pipe', 'pipe'],
        windowsHide: true,
        // Its own process group, so that stopping it also stops what it started.
        detached: isPosix,
      });
    } catch (err) {
      this.child = undefined;
      queueMicrotask(() => this.finish({ code: null, signal: null, startError: { message: (err as Error).message } }));
      return;
    }
    this.child = child;
    // Stream errors (EPIPE after the process died) must never reach the hub as uncaught errors.
    child.stdin?.on('error', () => undefined);
    child.stdout?.on('error', () => undefined);
    child.stderr?.on('error', () => undefined);

    const stdout = new LineSplitter(
      spec.maxStdoutLineBytes ?? DEFAULT_STDOUT_LINE_BYTES,
      (line) => handlers.onStdoutLine?.(line),
      () => handlers.onStdoutOverflow?.(),
    );
    const stderr = new LineSplitter(
      spec.maxStderrLineBytes ?? DEFAULT_STDERR_LINE_BYTES,
      (line) => handlers.onStderrLine?.(line.toString('utf8')),
      () => handlers.onStderrOverflow?.(),
    );
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stdout?.on('end', () => stdout.end());
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stderr?.on('end', () => stderr.end());

    child.once('spawn', () => {
      this.spawned = true;
      if (child.pid !== undefined && isPosix) this.guard.track({ pid: child.pid, label: spec.label, args: [...spec.args], marker, startedAt: options.clock.now() });
      handlers.onSpawn?.();
    });
    // `on`, not `once`: a second 'error' without a listener would crash the hub.
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (!this.spawned) this.finish({ code: null, signal: null, startError: { ...(err.code ? { code: err.code } : {}), message: err.message } });
    });
    child.once('exit', (code, signal) => {
      // What it left in its group goes with it.
      this.signalGroup('SIGKILL');
      if (child.pid !== undefined) this.guard.untrack(child.pid);
      // Its last lines (an error that explains the exit) may still be in the pipes: read them
      // first, within a bound. The bound is wall time: it waits on real pipes.
      const open = [child.stdout, child.stderr].filter((s) => s && !s.closed);
      if (open.length === 0) return this.finish({ code, signal });
      let left = open.length;
      const bound = setTimeout(() => this.finish({ code, signal }), DRAIN_BOUND_MS);
      bound.unref();
      for (const s of open)
        s!.once('close', () => {
          if (--left === 0) {
            clearTimeout(bound);
            this.finish({ code, signal });
          }
        });
    });
  }

  get pid(): number | undefined {
    return this.spawned ? this.child?.pid : undefined;
  }

  get stdin(): Writable | undefined {
    return this.child?.stdin ?? undefined;
  }

  get running(): boolean {
    return this.spawned && !this.ended && this.child?.exitCode === null && this.child.signalCode === null;
  }

  pauseOutput(): void {
    this.child?.stdout?.pause();
  }

  resumeOutput(): void {
    if (!this.ended) this.child?.stdout?.resume();
  }

  stop(graceMs: number): Promise<ProcessExit> {
    if (this.ended || !this.child) return this.exited;
    if (!this.spawned) {
      // Not spawned yet: killed as soon as it is.
      this.child.once('spawn', () => this.signalGroup('SIGTERM'));
    } else this.signalGroup('SIGTERM');
    if (this.killTimer === undefined) {
      this.killTimer = this.options.timers.setTimeout(() => {
        if (!this.ended && this.child?.exitCode === null) {
          this.options.log.warn({ label: this.label, pid: this.child.pid, graceMs }, `${this.label} did not stop within ${graceMs} ms; killing it`);
          this.signalGroup('SIGKILL');
        }
      }, graceMs);
    }
    return this.exited;
  }

  kill(): void {
    if (this.spawned) this.signalGroup('SIGKILL');
    else this.child?.once('spawn', () => this.signalGroup('SIGKILL'));
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const child = this.child;
    if (!child || child.pid === undefined) return;
    try {
      if (isPosix) process.kill(-child.pid, signal);
      else child.kill(signal);
    } catch {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  private finish(exit: ProcessExit): void {
    if (this.ended) return;
    this.ended = true;
    if (this.killTimer !== undefined) this.options.timers.clearTimeout(this.killTimer);
    this.killTimer = undefined;
    this.handlers.onExit?.(exit);
    this.settle(exit);
  }
}
