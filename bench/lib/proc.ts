import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { track, untrack, type Resource } from './cleanup.js';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildHandle extends Resource {
  readonly child: ChildProcess;
  readonly pid: number;
  /** File receiving the child's stdout and stderr. */
  readonly logPath: string;
  readonly exited: Promise<ExitInfo>;
  running(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the child is gone (bounded). */
  stop(graceMs?: number): Promise<ExitInfo | undefined>;
  /** The last `lines` lines of the log, for error messages. */
  logTail(lines?: number): string;
}

export interface SpawnOptions {
  cwd: string;
  env: Record<string, string>;
  logPath: string;
  /** Adds a Node IPC channel (child.send / process.on('message')), used by bench agents. */
  ipc?: boolean;
}

/**
 * Starts a child with stdout and stderr going straight to a file (not a pipe): a busy child can
 * never block on a full pipe, and request logging costs what it costs in production with a file
 * or journald behind stdout.
 */
export function spawnLogged(label: string, command: string, args: string[], options: SpawnOptions): ChildHandle {
  const fd = fs.openSync(options.logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: options.ipc ? ['ignore', fd, fd, 'ipc'] : ['ignore', fd, fd] });
  } finally {
    fs.closeSync(fd); // the child holds its own copy
  }
  if (child.pid === undefined) throw new Error(`${label}: could not start ${command}`);
  const pid = child.pid;

  let exitInfo: ExitInfo | undefined;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      untrack(handle);
      resolve(exitInfo);
    });
    child.once('error', () => {
      exitInfo ??= { code: null, signal: null };
      untrack(handle);
      resolve(exitInfo);
    });
  });

  const running = () => exitInfo === undefined && child.exitCode === null && child.signalCode === null;

  const stop = async (graceMs = 6000): Promise<ExitInfo | undefined> => {
    if (!running()) return exitInfo;
    child.kill('SIGTERM');
    const graceful = await Promise.race([exited, sleep(graceMs, undefined)]);
    if (graceful) return graceful;
    child.kill('SIGKILL');
    return Promise.race([exited, sleep(2000, undefined)]);
  };

  const handle: ChildHandle = {
    label: `${label} (pid ${pid})`,
    child,
    pid,
    logPath: options.logPath,
    exited,
    running,
    stop,
    async dispose() {
      await stop();
    },
    disposeSync() {
      if (running()) child.kill('SIGKILL');
    },
    logTail(lines = 30) {
      try {
        return fs.readFileSync(options.logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      } catch {
        return '(no log)';
      }
    },
  };
  return track(handle);
}

/** User + system CPU seconds a process has used so far (Linux /proc; undefined elsewhere). */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
    return (utime + stime) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Linux USER_HZ; 100 on every mainstream kernel build (`getconf CLK_TCK`). */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds the whole machine has spent busy (all cores, Linux /proc/stat; undefined elsewhere). */
export function systemBusyCpuSeconds(): number | undefined {
  const times = systemCpuTicks();
  return times && times.busy / CLOCK_TICKS_PER_SECOND;
}

function systemCpuTicks(): { busy: number; total: number } | undefined {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    // cpu user nice system idle iowait irq softirq steal guest guest_nice
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const parts = [user, nice, system, idle, iowait, irq, softirq, steal];
    if (parts.some((n) => n === undefined || !Number.isFinite(n))) return undefined;
    const busy = user! + nice! + system! + irq! + softirq! + steal!;
    return { busy, total: busy + idle! + iowait! };
  } catch {
    return undefined;
  }
}

/** Cores' worth of CPU the machine is busy over `windowMs` (undefined where /proc/stat is absent). */
export async function machineBusyCores(windowMs = 1000): Promise<number | undefined> {
  const a = systemCpuTicks();
  await sleep(windowMs);
  const b = systemCpuTicks();
  if (!a || !b) return undefined;
  return (b.busy - a.busy) / CLOCK_TICKS_PER_SECOND / (windowMs / 1000);
}

/** Resident set size and its peak, in bytes (Linux /proc; undefined elsewhere). */
export function memoryOf(pid: number): { rssBytes: number; peakRssBytes: number } | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    const rss = kb('VmRSS');
    const peak = kb('VmHWM');
    if (!Number.isFinite(rss) || !Number.isFinite(peak)) return undefined;
    return { rssBytes: rss * 1024, peakRssBytes: peak * 1024 };
  } catch {
    return undefined;
  }
}

/** A minimal environment for children: no npm_* or developer variables leak into a run. */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}
