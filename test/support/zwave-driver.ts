import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Driver, type PartialZWaveOptions } from 'zwave-js';

/** Helpers for tests that drive a zwave-js Driver directly against the Z-Wave mock (test/support/zwave-mock.ts). */

export const READY_WITHIN_MS = 30_000;

/** Rejects if `promise` has not settled within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function waitUntil(predicate: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Polls `probe` until it gives a value (every 50 ms, at most `ms`); throws naming `what`. */
export async function waitFor<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Driver options for tests: logging off (unless ZWAVE_TEST_LOG), the cache in a temp dir, short timeouts. */
export function driverOptions(storage: { cacheDir: string; lockDir?: string }): PartialZWaveOptions {
  const logDir = process.env.ZWAVE_TEST_LOG;
  return {
    logConfig: logDir ? { enabled: true, level: 'debug', logToFile: true, filename: path.join(logDir, 'zwavejs_%DATE%.log') } : { enabled: false },
    // "fast" only changes how often the network cache and value DBs are written.
    storage: { ...storage, throttle: 'fast' },
    // The mock answers every query at once, so these only shorten failure paths (a frame lost with the link).
    timeouts: { ack: 1000, response: 2000, report: 1000 },
    securityKeys: {
      S0_Legacy: randomBytes(16),
      S2_Unauthenticated: randomBytes(16),
      S2_Authenticated: randomBytes(16),
      S2_AccessControl: randomBytes(16),
    },
  };
}

export interface StartedDriver {
  driver: Driver;
  errors: Error[];
  driverReadyEvents: () => number;
  readyAfterMs: number;
}

/** Starts a Driver and waits (bounded) for "all nodes ready"; an "error" event before that fails it. */
export async function startDriver(url: string, options: PartialZWaveOptions, started: Driver[]): Promise<StartedDriver> {
  const driver = new Driver(url, options);
  started.push(driver);
  const errors: Error[] = [];
  let driverReadyEvents = 0;
  driver.on('error', (error) => errors.push(error));
  driver.on('driver ready', () => (driverReadyEvents += 1));
  const t0 = Date.now();
  const allNodesReady = new Promise<void>((resolve, reject) => {
    driver.once('all nodes ready', () => resolve());
    driver.once('error', reject);
  });
  await within(
    driver.start().then(() => allNodesReady),
    READY_WITHIN_MS,
    'driver "all nodes ready"',
  );
  return { driver, errors, driverReadyEvents: () => driverReadyEvents, readyAfterMs: Date.now() - t0 };
}
