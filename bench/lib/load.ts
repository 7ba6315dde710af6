import autocannon from 'autocannon';
import fs from 'node:fs';
import { LOOPBACK } from './net.js';
import { cpuSecondsOf, machineBusyCores, memoryOf, systemBusyCpuSeconds } from './proc.js';

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadSummary {
  /** Mean of the one-second samples, as autocannon prints it. */
  requestsPerSec: number;
  totalRequests: number;
  durationSeconds: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  bytesPerSec: number;
}

/** One autocannon run against a loopback URL, bounded to its duration plus a margin. */
export async function runLoad(options: LoadOptions): Promise<LoadSummary> {
  if (new URL(options.url).hostname !== LOOPBACK) throw new Error(`refusing to load ${options.url}: loopback only`);
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    timeout: 10,
  });
  // autocannon ends on its own after `duration`; this only guards against a run that hangs.
  const guard = setTimeout(() => instance.stop(), (options.durationSeconds + 30) * 1000);
  let result: autocannon.Result;
  try {
    result = await instance;
  } finally {
    clearTimeout(guard);
  }
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  return {
    requestsPerSec: result.requests.average,
    totalRequests: result.requests.total,
    durationSeconds: result.duration,
    latencyMs: {
      mean: result.latency.mean,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    bytesPerSec: result.throughput.average,
  };
}

/** A number read before and after the measured run; the difference is recorded. */
export interface Probe {
  name: string;
  read(): number | undefined;
}

/** CPU seconds (user + system) used by a process. */
export const cpuProbe = (name: string, pid: number): Probe => ({ name, read: () => cpuSecondsOf(pid) });

/** CPU seconds used by this process: the load generator. */
export const loadGeneratorCpuProbe = (): Probe => ({
  name: 'loadGeneratorCpuSeconds',
  read: () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  },
});

/** CPU seconds the whole machine spent busy. */
export const machineCpuProbe = (): Probe => ({ name: 'machineBusyCpuSeconds', read: systemBusyCpuSeconds });

/** Size of a file in bytes, e.g. a log. */
export const fileSizeProbe = (name: string, file: string): Probe => ({
  name,
  read: () => {
    try {
      return fs.statSync(file).size;
    } catch {
      return undefined;
    }
  },
});

export interface MeasureTarget {
  /** e.g. "baseline" or "service". */
  label: string;
  url: string;
  headers?: Record<string, string>;
  /** Process serving the URL; its CPU time and memory are recorded. */
  pid?: number;
  probes?: Probe[];
}

export interface Measurement extends LoadSummary {
  label: string;
  warmupSeconds: number;
  /** Differences of each probe over the measured run (null where it could not be read). */
  probes: Record<string, number | null>;
  /** Server CPU time per completed request, in microseconds (null without a pid). */
  serverCpuMicrosPerRequest: number | null;
  /** Share of one core the server process used during the measured run. */
  serverCpuCores: number | null;
  serverRssBytes: number | null;
  /** Share of one core the load generator (this process) used during the measured run. */
  loadGeneratorCpuCores: number | null;
  /**
   * Cores' worth of CPU used during the measured run by everything but the server and the load
   * generator (other processes on the machine, the kernel). Well above ~0.1 means the figures
   * are disturbed by other work.
   */
  otherCpuCores: number | null;
  /** Machine load seen just before the measured run, in busy cores (see `quiet`). */
  busyCoresBefore: number | null;
}

export interface QuietOptions {
  /** Wait at most this long for the machine to go quiet before a measured run; 0 only records. */
  maxWaitSeconds: number;
  /** Busy cores (everything on the machine) below which it counts as quiet. */
  maxBusyCores: number;
}

/**
 * Samples machine load in one-second windows until it is below `maxBusyCores`, at most
 * `maxWaitSeconds`; returns the last sample.
 */
export async function waitForQuiet(options: QuietOptions, progress: (line: string) => void): Promise<number | undefined> {
  let busy = await machineBusyCores(1000);
  const deadline = Date.now() + options.maxWaitSeconds * 1000;
  let announced = false;
  for (let i = 0; i < options.maxWaitSeconds && busy !== undefined && busy > options.maxBusyCores && Date.now() < deadline; i++) {
    if (!announced) progress(`    machine busy (${busy.toFixed(2)} cores used by other work); waiting up to ${options.maxWaitSeconds} s for it to go quiet...`);
    announced = true;
    busy = await machineBusyCores(1000);
  }
  if (busy !== undefined && busy > options.maxBusyCores) progress(`    warning: ${busy.toFixed(2)} cores busy before this run; figures will be disturbed`);
  return busy;
}

/** A discarded warm-up run, then a measured run with probes read around it. */
export async function measure(
  target: MeasureTarget,
  settings: { connections: number; durationSeconds: number; warmupSeconds: number; quiet?: QuietOptions },
  progress: (line: string) => void = () => {},
): Promise<Measurement> {
  const load = { url: target.url, headers: target.headers, connections: settings.connections };
  const busyCoresBefore = settings.quiet ? await waitForQuiet(settings.quiet, progress) : undefined;
  if (settings.warmupSeconds > 0) await runLoad({ ...load, durationSeconds: settings.warmupSeconds });

  const probes = [
    ...(target.pid === undefined ? [] : [cpuProbe('serverCpuSeconds', target.pid)]),
    loadGeneratorCpuProbe(),
    machineCpuProbe(),
    ...(target.probes ?? []),
  ];
  const before = probes.map((p) => p.read());
  const summary = await runLoad({ ...load, durationSeconds: settings.durationSeconds });
  const after = probes.map((p) => p.read());

  const deltas: Record<string, number | null> = {};
  probes.forEach((p, i) => {
    const a = before[i];
    const b = after[i];
    deltas[p.name] = a === undefined || b === undefined ? null : b - a;
  });
  const cpu = deltas.serverCpuSeconds ?? null;
  const loadgenCpu = deltas.loadGeneratorCpuSeconds ?? null;
  const machineCpu = deltas.machineBusyCpuSeconds ?? null;
  const perSecond = (x: number | null) => (x === null || summary.durationSeconds === 0 ? null : x / summary.durationSeconds);
  return {
    label: target.label,
    warmupSeconds: settings.warmupSeconds,
    ...summary,
    probes: deltas,
    serverCpuMicrosPerRequest: cpu === null || summary.totalRequests === 0 ? null : (cpu / summary.totalRequests) * 1e6,
    serverCpuCores: perSecond(cpu),
    serverRssBytes: target.pid === undefined ? null : (memoryOf(target.pid)?.rssBytes ?? null),
    loadGeneratorCpuCores: perSecond(loadgenCpu),
    otherCpuCores: machineCpu === null || cpu === null || loadgenCpu === null ? null : perSecond(Math.max(0, machineCpu - cpu - loadgenCpu)),
    busyCoresBefore: busyCoresBefore ?? null,
  };
}
