/**
 * hub:command load on /socket/hub-protocol: `sockets` Socket.IO connections (websocket
 * transport) keep `inflight` commands outstanding in total, each sent again as soon as its
 * acknowledgement arrives, for `seconds`. Round trips are timed with performance.now().
 */
import { performance } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
import { Samples, assertLoopback, percentiles, serveAgent } from './runtime.js';

let sockets: Socket[] = [];

async function connect({ baseUrl, token, count }: { baseUrl: string; token: string; count: number }) {
  assertLoopback(baseUrl);
  for (const s of sockets.splice(0)) s.disconnect();
  const opened = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const s = io(`${baseUrl}/socket/hub-protocol`, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true, timeout: 20_000 });
          s.once('connect', () => resolve(s));
          s.once('connect_error', (err) => {
            s.disconnect();
            reject(err);
          });
        }),
    ),
  );
  sockets = opened;
  return { connected: opened.length };
}

interface RunParams {
  inflight: number;
  seconds: number;
  command: string;
  payload?: unknown;
}

interface Ack {
  ok?: boolean;
  data?: { error?: { code?: string } };
}

async function run({ inflight, seconds, command, payload }: RunParams) {
  if (sockets.length === 0) throw new Error('not connected');
  const samples = new Samples(5_000_000);
  let completed = 0;
  let failed = 0;
  let firstError: string | undefined;
  let requestId = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  const slot = (socket: Socket) =>
    new Promise<void>((resolve) => {
      const fire = () => {
        const sentAt = performance.now();
        socket.timeout(10_000).emit('hub:command', { command, payload: payload ?? {}, requestId: ++requestId }, (err: Error | null, ack: Ack) => {
          const now = performance.now();
          if (err || ack?.ok !== true) {
            failed++;
            firstError ??= err ? err.message : JSON.stringify(ack?.data?.error ?? ack);
          } else {
            completed++;
            samples.push(now - sentAt);
          }
          if (now < deadline && !(err && socket.disconnected)) fire();
          else resolve();
        });
      };
      fire();
    });
  await Promise.all(Array.from({ length: inflight }, (_, i) => slot(sockets[i % sockets.length]!)));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const values = samples.values();
  return {
    inflight,
    sockets: sockets.length,
    command,
    seconds: wall,
    completed,
    failed,
    firstError,
    commandsPerSecond: completed / wall,
    latencyMs: { mean: values.length ? values.reduce((a, b) => a + b, 0) / values.length : null, ...percentiles(values, [50, 90, 99, 99.9]), max: values.length ? values[values.length - 1]! : null },
    clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

/** One command; returns the whole acknowledgement (a reference server answers it again). */
async function once({ command, payload }: { command: string; payload?: unknown }): Promise<unknown> {
  const socket = sockets[0];
  if (!socket) throw new Error('not connected');
  return socket.timeout(10_000).emitWithAck('hub:command', { command, payload: payload ?? {}, requestId: 0 });
}

serveAgent('hub-commands', { connect: connect as never, run: run as never, once: once as never, close: () => sockets.splice(0).forEach((s) => s.disconnect()) }, () => {
  for (const s of sockets) s.disconnect();
});
