import { setTimeout as sleep } from 'node:timers/promises';
import { startAgent, type AgentHandle } from './agent.js';
import type { ServiceHandle, Session } from './service.js';

/**
 * Call before stopping the service: when it is no longer running (it crashed, or something else
 * on the machine killed it), says so with its exit status and log tail, which the stop removes.
 */
export async function reportIfExited(service: ServiceHandle, progress: (line: string) => void): Promise<boolean> {
  if (service.child.running()) return false;
  const info = await Promise.race([service.child.exited, new Promise<undefined>((r) => setTimeout(r, 1000, undefined))]);
  progress(`warning: the service (pid ${service.pid}) had exited before the end of the benchmark (code ${info?.code ?? '?'}, signal ${info?.signal ?? '?'}); log tail:\n${service.child.logTail(40)}`);
  return true;
}

/** The OS API base every benchmark uses. */
export const OS = '/app/os';

export const BENCH_DRIVER_KEY = 'bench.driver';

/** Starts a bench driver agent (bench/agents/driver.ts) and registers it with the service. */
export async function startBenchDriver(service: ServiceHandle, instanceId: string, url?: string): Promise<AgentHandle> {
  const driver = await startAgent(`driver ${instanceId}`, 'driver');
  await driver.call('connect', { url: url ?? `ws://127.0.0.1:${service.port}/driver`, driverKey: BENCH_DRIVER_KEY, instanceId });
  return driver;
}

/** GET with the session's token; throws unless 200; returns the parsed body. */
export async function getJson<T>(service: ServiceHandle, session: Session, pathname: string, timeoutMs = 30_000): Promise<T> {
  const answer = await service.request(pathname, { headers: session.headers, timeoutMs });
  if (answer.status !== 200) throw new Error(`GET ${pathname} answered ${answer.status}: ${answer.body.slice(0, 500)}`);
  return JSON.parse(answer.body) as T;
}

export async function postJson<T>(service: ServiceHandle, session: Session, pathname: string, body: unknown, timeoutMs = 30_000): Promise<T> {
  const answer = await service.request(pathname, {
    method: 'POST',
    headers: { ...session.headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    timeoutMs,
  });
  if (answer.status !== 200) throw new Error(`POST ${pathname} answered ${answer.status}: ${answer.body.slice(0, 500)}`);
  return JSON.parse(answer.body) as T;
}

/** Devices the service counts for a connected driver instance (GET /drivers). */
export async function devicesOfInstance(service: ServiceHandle, session: Session, instanceId: string): Promise<number> {
  const { connected } = await getJson<{ connected: { instanceId: string; devices: number }[] }>(service, session, `${OS}/drivers`);
  return connected.find((c) => c.instanceId === instanceId)?.devices ?? 0;
}

export interface DiscoveryOptions {
  instanceId: string;
  prefix: string;
  count: number;
  /** Devices sent per batch; the next batch goes once the service has applied this one. */
  batch?: number;
  commands?: unknown[];
  category?: string;
  properties?: Record<string, unknown>;
  state?: Record<string, unknown>;
  progress?: (line: string) => void;
  /** Give up when one batch takes longer than this. */
  batchTimeoutMs?: number;
}

export interface DiscoveryFigures {
  devices: number;
  seconds: number;
  devicesPerSecond: number;
  batches: { size: number; seconds: number }[];
}

/**
 * Discovers `count` devices through the bench driver in batches, waiting for the service to
 * apply each batch (every DEVICE_DISCOVERED is persisted before the device counts), polled
 * through GET /drivers. Bounded by `batchTimeoutMs` per batch.
 */
export async function discoverDevices(service: ServiceHandle, session: Session, driver: AgentHandle, o: DiscoveryOptions): Promise<DiscoveryFigures> {
  const batch = o.batch ?? o.count;
  const batchTimeoutMs = o.batchTimeoutMs ?? 120_000;
  const already = await devicesOfInstance(service, session, o.instanceId);
  const t0 = performance.now();
  const batches: DiscoveryFigures['batches'] = [];
  for (let from = 0; from < o.count; from += batch) {
    const size = Math.min(batch, o.count - from);
    const b0 = performance.now();
    await driver.call('discover', { prefix: o.prefix, from, count: size, commands: o.commands, category: o.category, properties: o.properties, state: o.state }, batchTimeoutMs);
    const target = already + from + size;
    const deadline = Date.now() + batchTimeoutMs;
    let seen = 0;
    for (let i = 0; i < batchTimeoutMs / 50 && Date.now() < deadline; i++) {
      seen = await devicesOfInstance(service, session, o.instanceId);
      if (seen >= target) break;
      await sleep(size >= 200 ? 100 : 20);
    }
    if (seen < target) throw new Error(`discovery: only ${seen} of ${target} devices applied after ${batchTimeoutMs} ms`);
    batches.push({ size, seconds: (performance.now() - b0) / 1000 });
    if (o.progress && o.count > batch) o.progress(`    discovered ${from + size}/${o.count} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { devices: o.count, seconds, devicesPerSecond: o.count / seconds, batches };
}

/** Hub device ids by driver device id, for the bench driver's devices. */
export async function hubIdsByDriverId(service: ServiceHandle, session: Session): Promise<Map<string, string>> {
  const { devices } = await getJson<{ devices: { id: string; driverKey: string; driverDeviceId: string | null }[] }>(service, session, `${OS}/devices`, 60_000);
  const map = new Map<string, string>();
  for (const d of devices) if (d.driverKey === BENCH_DRIVER_KEY && d.driverDeviceId !== null) map.set(d.driverDeviceId, d.id);
  return map;
}
