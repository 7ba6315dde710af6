import fs from 'node:fs';
import type { BenchmarkContext } from './benchmark.js';
import { waitForQuiet } from './load.js';
import { cpuSecondsOf, memoryOf, systemBusyCpuSeconds } from './proc.js';

/** A process whose CPU time is accounted for in a measured window (the service, an agent). */
export interface Participant {
  label: string;
  pid: number;
}

export interface WindowFigures {
  wallSeconds: number;
  /** CPU seconds per participant over the window (from /proc/<pid>/stat, all threads). */
  cpuSeconds: Record<string, number | null>;
  /** The same as shares of one core. */
  cpuCores: Record<string, number | null>;
  /** The harness process itself (it only coordinates; should stay near 0). */
  harnessCpuCores: number;
  machineBusyCores: number | null;
  /**
   * Cores' worth of CPU used by everything but the participants and the harness: other
   * processes on the machine and kernel work not charged to them. Above BENCH_QUIET_CORES the
   * window counts as disturbed.
   */
  otherCpuCores: number | null;
  /** Machine load sampled just before the window. */
  busyCoresBefore: number | null;
  /** RSS of each participant at the end of the window. */
  rssBytes: Record<string, number | null>;
  peakRssBytes: Record<string, number | null>;
}

/** Runs `fn` and accounts the CPU time of the machine, the participants and the harness over it. */
export async function measureWindow<T>(participants: Participant[], fn: () => Promise<T>, busyCoresBefore: number | null = null): Promise<{ result: T; window: WindowFigures }> {
  const before = participants.map((p) => cpuSecondsOf(p.pid));
  const machine0 = systemBusyCpuSeconds();
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await fn();
  const wallSeconds = (performance.now() - t0) / 1000;
  const self = process.cpuUsage(self0);
  const machine1 = systemBusyCpuSeconds();
  const after = participants.map((p) => cpuSecondsOf(p.pid));

  const cpuSeconds: Record<string, number | null> = {};
  const cpuCores: Record<string, number | null> = {};
  const rssBytes: Record<string, number | null> = {};
  const peakRssBytes: Record<string, number | null> = {};
  let known = 0;
  participants.forEach((p, i) => {
    const a = before[i];
    const b = after[i];
    const used = a === undefined || b === undefined ? null : b - a;
    cpuSeconds[p.label] = used;
    cpuCores[p.label] = used === null ? null : used / wallSeconds;
    known += used ?? 0;
    const mem = memoryOf(p.pid);
    rssBytes[p.label] = mem?.rssBytes ?? null;
    peakRssBytes[p.label] = mem?.peakRssBytes ?? null;
  });
  const harness = (self.user + self.system) / 1e6;
  const machine = machine0 === undefined || machine1 === undefined ? null : machine1 - machine0;
  return {
    result,
    window: {
      wallSeconds,
      cpuSeconds,
      cpuCores,
      harnessCpuCores: harness / wallSeconds,
      machineBusyCores: machine === null ? null : machine / wallSeconds,
      otherCpuCores: machine === null ? null : Math.max(0, machine - known - harness) / wallSeconds,
      busyCoresBefore,
      rssBytes,
      peakRssBytes,
    },
  };
}

/**
 * Runs `attempt` after waiting for a quiet machine (BENCH_QUIET_WAIT), and repeats it up to
 * BENCH_RETRIES times while other work used more than BENCH_QUIET_CORES during it; keeps the
 * least disturbed attempt. `attempt` gets the busy cores seen before it and returns its window.
 */
export async function undisturbed<T extends { window: WindowFigures }>(
  ctx: BenchmarkContext,
  label: string,
  attempt: (busyCoresBefore: number | null) => Promise<T>,
): Promise<T & { attempts: number; disturbed: boolean }> {
  const { settings } = ctx;
  let best: T | undefined;
  let attempts = 0;
  for (let i = 0; i <= settings.disturbedRetries; i++) {
    attempts++;
    const busy = (await waitForQuiet({ maxWaitSeconds: settings.quietWaitSeconds, maxBusyCores: settings.quietMaxBusyCores }, ctx.progress)) ?? null;
    const r = await attempt(busy);
    const other = r.window.otherCpuCores ?? 0;
    if (!best || other < (best.window.otherCpuCores ?? 0)) best = r;
    if (other <= settings.quietMaxBusyCores) break;
    if (i < settings.disturbedRetries) ctx.progress(`    ${label}: other work used ${other.toFixed(2)} cores during that run; repeating it (${i + 1}/${settings.disturbedRetries})`);
  }
  return { ...best!, attempts, disturbed: (best!.window.otherCpuCores ?? 0) > settings.quietMaxBusyCores };
}

/** "other CPU 0.05 cores" style note for a window, with a warning when disturbed. */
export function otherNote(w: WindowFigures, maxQuiet: number): string {
  const other = w.otherCpuCores;
  if (other === null) return 'other CPU: unknown';
  return other > maxQuiet ? `other CPU ${other.toFixed(2)} cores (DISTURBED: figures unreliable)` : `other CPU ${other.toFixed(2)} cores`;
}

export const MiB = (bytes: number | null | undefined) => (bytes === null || bytes === undefined ? '-' : (bytes / 2 ** 20).toFixed(0));

/** Number of open file descriptors of a process (Linux). */
export function openFds(pid: number): number | null {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

/** The soft and hard limits on open files of this process (children inherit them). */
export function openFileLimits(): { soft: number | null; hard: number | null } {
  try {
    const line = fs.readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const [soft, hard] = (line?.slice('Max open files'.length).trim().split(/\s+/) ?? []).map((x) => (x === 'unlimited' ? Infinity : Number(x)));
    return { soft: soft ?? null, hard: hard ?? null };
  } catch {
    return { soft: null, hard: null };
  }
}
