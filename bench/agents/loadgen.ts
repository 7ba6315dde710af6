/**
 * Load generator agent: one autocannon run per `run` call, in this process (not the harness's),
 * so that its CPU is reported apart from the service's. Besides autocannon's own whole-
 * millisecond histogram it records every 2xx response time with sub-millisecond resolution.
 */
import autocannon from 'autocannon';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Samples, assertLoopback, percentiles, serveAgent } from './runtime.js';

interface RunParams {
  url: string;
  connections: number;
  seconds: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Request paths taken in turn across all connections (e.g. 100 devices' command routes); `url`'s path unless given. */
  paths?: string[];
}

/** The next path of the list for each request, whichever connection sends it: every path is hit equally often. */
function rotating(paths: string[]) {
  let next = 0;
  return (request: autocannon.Request) => {
    const path = paths[next]!;
    next = (next + 1) % paths.length;
    return { ...request, path };
  };
}

async function run(p: RunParams) {
  assertLoopback(p.url);
  const samples = new Samples(5_000_000);
  const instance = autocannon({
    url: p.url,
    connections: p.connections,
    duration: p.seconds,
    method: p.method ?? 'GET',
    headers: p.headers,
    body: p.body,
    timeout: 10,
    ...(p.paths && p.paths.length > 0 ? { requests: [{ setupRequest: rotating(p.paths) }] } : {}),
  });
  instance.on('response', (...args: unknown[]) => {
    const status = args[1] as number;
    const ms = args[3] as number;
    if (status >= 200 && status < 300) samples.push(ms);
  });
  const guard = setTimeout(() => instance.stop(), (p.seconds + 30) * 1000);
  let result: autocannon.Result;
  const cpu0 = process.cpuUsage();
  try {
    result = await instance;
  } finally {
    clearTimeout(guard);
  }
  const cpu = process.cpuUsage(cpu0);
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  const precise = samples.values();
  const mean = precise.length ? precise.reduce((a, b) => a + b, 0) / precise.length : null;
  return {
    connections: p.connections,
    durationSeconds: result.duration,
    totalRequests: result.requests.total,
    /** Completed requests over the measured duration. */
    requestsPerSec: result.duration > 0 ? result.requests.total / result.duration : 0,
    /** autocannon's histogram: whole milliseconds (values are truncated). */
    autocannonLatencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    latencyMs: { mean, ...percentiles(precise, [50, 90, 99, 99.9]), max: precise.length ? precise[precise.length - 1]! : null },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    loadgenCpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

interface SequentialParams {
  url: string;
  count: number;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  /** Hard limit for the whole series. */
  timeoutMs?: number;
}

/**
 * `count` requests (GET unless `method` says otherwise) one after another on one keep-alive connection; each is timed from
 * sending the request to the last byte of the body (read as bytes, not decoded or parsed).
 */
async function sequential(p: SequentialParams) {
  assertLoopback(p.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const deadline = Date.now() + (p.timeoutMs ?? 120_000);
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  let bytes = 0;
  const cpu0 = process.cpuUsage();
  try {
    for (let i = 0; i < p.count && Date.now() < deadline; i++) {
      const t0 = performance.now();
      const { status, size } = await new Promise<{ status: number; size: number }>((resolve, reject) => {
        const headers = p.body === undefined ? p.headers : { ...p.headers, 'content-length': String(Buffer.byteLength(p.body)) };
        const req = http.request(p.url, { method: p.method ?? 'GET', agent, headers, timeout: 30_000 }, (res) => {
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, size }));
          res.on('error', reject);
        });
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', reject);
        req.end(p.body);
      });
      times.push(performance.now() - t0);
      statuses[status] = (statuses[status] ?? 0) + 1;
      bytes = size;
    }
  } finally {
    agent.destroy();
  }
  const cpu = process.cpuUsage(cpu0);
  const mean = times.length ? times.reduce((a, b) => a + b, 0) / times.length : null;
  return {
    requests: times.length,
    statusCodes: statuses,
    bodyBytes: bytes,
    latencyMs: { mean, ...percentiles(times, [50, 90, 99]), max: times.length ? Math.max(...times) : null },
    loadgenCpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

serveAgent('loadgen', { run: run as never, sequential: sequential as never });
