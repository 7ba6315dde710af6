import path from 'node:path';

/** Run settings, from BENCH_* environment variables; every benchmark reads them from here. */
export interface BenchSettings {
  /** Measured seconds per run (BENCH_DURATION, default 8). */
  durationSeconds: number;
  /** Discarded warm-up seconds before each measured run (BENCH_WARMUP, default 2; 0 skips). */
  warmupSeconds: number;
  /** Concurrent connections (BENCH_CONNECTIONS, default 50; the targets are defined at 50). */
  connections: number;
  /** Alternating baseline/service rounds per case; the median round is reported (BENCH_ROUNDS, default 1). */
  rounds: number;
  /** LOG_LEVEL of the service (BENCH_LOG_LEVEL, default info, i.e. production request logging). */
  logLevel: string;
  /** Directory for V8 CPU profiles of the service, or undefined (BENCH_CPU_PROF). */
  cpuProfileDir: string | undefined;
  /**
   * Before each measured run, wait up to this many seconds for other work on the machine to
   * stop (BENCH_QUIET_WAIT, default 0: only record the load); quiet means below
   * BENCH_QUIET_CORES busy cores (default 0.25).
   */
  quietWaitSeconds: number;
  quietMaxBusyCores: number;
  /**
   * Measured runs during which other work used more than BENCH_QUIET_CORES are repeated up to
   * this many times (BENCH_RETRIES, default 0); the least disturbed attempt is kept.
   */
  disturbedRetries: number;
  /** Exit non-zero when a target is missed (BENCH_STRICT=1). */
  strict: boolean;
  /** `devices` benchmark. */
  devices: {
    /** Seconds of the measured STATE_UPDATE flood (BENCH_FLOOD_SECONDS, default 10). */
    floodSeconds: number;
    /** Devices the flood goes round (BENCH_FLOOD_DEVICES, default 100). */
    floodDevices: number;
    /** Devices of the scale case (BENCH_SCALE_DEVICES, default 10000). */
    scaleDevices: number;
    /** DEVICE_DISCOVERED messages per batch (BENCH_SCALE_BATCH, default 500). */
    scaleBatch: number;
    /** Sequential requests per route (BENCH_SCALE_REQUESTS, default 50). */
    scaleRequests: number;
    /** autocannon connections on the big routes (BENCH_SCALE_CONNECTIONS, default 4). */
    scaleConnections: number;
  };
  /** `programs` benchmark. */
  programs: {
    /** Command steps of the program (BENCH_PROGRAM_STEPS, default 100). */
    steps: number;
    /** Measured runs (BENCH_PROGRAM_RUNS, default 50). */
    runs: number;
  };
  /** `streams` benchmark. */
  streams: {
    /** SSE clients (BENCH_STREAM_SSE, default 500). */
    sseClients: number;
    /** Socket.IO /socket/device-state clients (BENCH_STREAM_SOCKETIO, default 500). */
    socketIoClients: number;
    /** Client child processes per kind (BENCH_STREAM_PROCS_PER_KIND, default 2). */
    processesPerKind: number;
    /** Update rates of the steps, updates/s (BENCH_STREAM_RATES, default 10,50,100,200,400). */
    rates: number[];
    /** Seconds per step (BENCH_STREAM_STEP_SECONDS, default 10). */
    stepSeconds: number;
    /** Devices the updates go round (BENCH_STREAM_DEVICES, default 10). */
    devices: number;
    /** After a step, how long clients may take to receive the rest (BENCH_STREAM_GRACE, default 5 s). */
    graceSeconds: number;
  };
  /** `hub-command` benchmark. */
  hub: {
    /** hub:command in flight (BENCH_HUB_INFLIGHT, default 100). */
    inflight: number;
    /** Socket.IO connections carrying them (BENCH_HUB_SOCKETS, default 10). */
    sockets: number;
    /** Measured seconds of each loaded run (BENCH_HUB_SECONDS, default 10). */
    seconds: number;
    /** The command (BENCH_HUB_COMMAND, default LIST_DEVICES). */
    command: string;
    /** Devices the hub lists (BENCH_HUB_DEVICES, default 10). */
    devices: number;
  };
}

/** A bad setting or argument: reported without a stack trace. */
export class UsageError extends Error {
  override name = 'UsageError';
}

function numberFrom(name: string, fallback: number, { min, max, integer }: { min: number; max: number; integer?: boolean }): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw new UsageError(`${name} must be ${integer ? 'a whole number' : 'a number'} between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

function listFrom(name: string, fallback: number[], { min, max }: { min: number; max: number }): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const values = raw.split(',').map((x) => Number(x.trim()));
  if (values.length === 0 || values.length > 50 || values.some((v) => !Number.isFinite(v) || v < min || v > max)) {
    throw new UsageError(`${name} must be a comma-separated list of numbers between ${min} and ${max}, got "${raw}"`);
  }
  return values;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** A BENCH_* whole-number setting of one benchmark, checked against its range. */
export function integerSetting(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new UsageError(`${name} must be a whole number between ${min} and ${max}, got "${raw}"`);
  return value;
}

export function loadSettings(): BenchSettings {
  const logLevel = process.env.BENCH_LOG_LEVEL?.trim() || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new UsageError(`BENCH_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  return {
    durationSeconds: numberFrom('BENCH_DURATION', 8, { min: 1, max: 600, integer: true }),
    warmupSeconds: numberFrom('BENCH_WARMUP', 2, { min: 0, max: 120, integer: true }),
    connections: numberFrom('BENCH_CONNECTIONS', 50, { min: 1, max: 10_000, integer: true }),
    rounds: numberFrom('BENCH_ROUNDS', 1, { min: 1, max: 20, integer: true }),
    logLevel,
    cpuProfileDir: process.env.BENCH_CPU_PROF?.trim() ? path.resolve(process.env.BENCH_CPU_PROF.trim()) : undefined,
    quietWaitSeconds: numberFrom('BENCH_QUIET_WAIT', 0, { min: 0, max: 3600, integer: true }),
    quietMaxBusyCores: numberFrom('BENCH_QUIET_CORES', 0.25, { min: 0, max: 1024 }),
    disturbedRetries: numberFrom('BENCH_RETRIES', 0, { min: 0, max: 10, integer: true }),
    strict: process.env.BENCH_STRICT === '1',
    devices: {
      floodSeconds: numberFrom('BENCH_FLOOD_SECONDS', 10, { min: 1, max: 300, integer: true }),
      floodDevices: numberFrom('BENCH_FLOOD_DEVICES', 100, { min: 1, max: 10_000, integer: true }),
      scaleDevices: numberFrom('BENCH_SCALE_DEVICES', 10_000, { min: 1, max: 100_000, integer: true }),
      scaleBatch: numberFrom('BENCH_SCALE_BATCH', 500, { min: 1, max: 10_000, integer: true }),
      scaleRequests: numberFrom('BENCH_SCALE_REQUESTS', 50, { min: 1, max: 10_000, integer: true }),
      scaleConnections: numberFrom('BENCH_SCALE_CONNECTIONS', 4, { min: 1, max: 256, integer: true }),
    },
    programs: {
      steps: numberFrom('BENCH_PROGRAM_STEPS', 100, { min: 1, max: 500, integer: true }),
      runs: numberFrom('BENCH_PROGRAM_RUNS', 50, { min: 1, max: 10_000, integer: true }),
    },
    streams: {
      sseClients: numberFrom('BENCH_STREAM_SSE', 500, { min: 0, max: 5000, integer: true }),
      socketIoClients: numberFrom('BENCH_STREAM_SOCKETIO', 500, { min: 0, max: 5000, integer: true }),
      processesPerKind: numberFrom('BENCH_STREAM_PROCS_PER_KIND', 2, { min: 1, max: 16, integer: true }),
      rates: listFrom('BENCH_STREAM_RATES', [10, 50, 100, 200, 400], { min: 1, max: 10_000 }),
      stepSeconds: numberFrom('BENCH_STREAM_STEP_SECONDS', 10, { min: 1, max: 300, integer: true }),
      devices: numberFrom('BENCH_STREAM_DEVICES', 10, { min: 1, max: 1000, integer: true }),
      graceSeconds: numberFrom('BENCH_STREAM_GRACE', 5, { min: 0, max: 120, integer: true }),
    },
    hub: {
      inflight: numberFrom('BENCH_HUB_INFLIGHT', 100, { min: 1, max: 10_000, integer: true }),
      sockets: numberFrom('BENCH_HUB_SOCKETS', 10, { min: 1, max: 1000, integer: true }),
      seconds: numberFrom('BENCH_HUB_SECONDS', 10, { min: 1, max: 300, integer: true }),
      command: process.env.BENCH_HUB_COMMAND?.trim() || 'LIST_DEVICES',
      devices: numberFrom('BENCH_HUB_DEVICES', 10, { min: 0, max: 10_000, integer: true }),
    },
  };
}
