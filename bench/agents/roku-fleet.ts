/**
 * A fleet of emulated Rokus (test/support/roku-ecp-emulator.ts) in a process of its own, plus
 * the sequential client the media benchmark measures with: the same client, in the same
 * process, times the direct ECP request (the emulator's own latency) and the service's player
 * command that ends in that request.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { startRokuEcpEmulators, type RokuEcpEmulator, type RokuEmulatorMode } from '../../test/support/roku-ecp-emulator.js';
import { Samples, assertLoopback, percentiles, serveAgent } from './runtime.js';

let fleet: RokuEcpEmulator[] = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

async function start(p: { count: number; latencyMs?: number }) {
  fleet = await startRokuEcpEmulators(p.count, { isTv: true, ...(p.latencyMs ? { latencyMs: p.latencyMs } : {}) });
  return fleet.map((e) => ({ host: e.host, port: e.port, serialNumber: e.serialNumber }));
}

function setMode(p: { indexes: number[]; mode: RokuEmulatorMode }) {
  for (const i of p.indexes) fleet[i]?.setMode(p.mode);
  return { changed: p.indexes.length };
}

function once(url: URL, method: string, headers: Record<string, string>, body: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** `count` requests one after another (bounded by count and by `maxSeconds`); latency in ms. */
async function sequential(p: { url: string; method?: string; headers?: Record<string, string>; body?: string; count: number; maxSeconds?: number }) {
  assertLoopback(p.url);
  const url = new URL(p.url);
  const samples = new Samples(p.count);
  const statuses: Record<string, number> = {};
  const deadline = performance.now() + (p.maxSeconds ?? 120) * 1000;
  let failures = 0;
  for (let i = 0; i < p.count && performance.now() < deadline; i++) {
    const t0 = performance.now();
    try {
      const status = await once(url, p.method ?? 'GET', p.headers ?? {}, p.body);
      const ms = performance.now() - t0;
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status >= 200 && status < 300) samples.push(ms);
      else failures++;
    } catch {
      failures++;
    }
  }
  const values = samples.values();
  const mean = values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
  return { requests: values.length + failures, failures, statuses, latencyMs: { mean, ...percentiles(values, [50, 90, 99]), max: values.length === 0 ? null : Math.max(...values) } };
}

serveAgent('roku-fleet', { start, setMode, sequential }, () => {
  agent.destroy();
  for (const e of fleet) void e.close();
});
