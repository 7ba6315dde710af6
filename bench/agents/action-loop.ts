/**
 * Baseline for the `programs` benchmark: the least a hub must do per command step. A bare `ws`
 * server (same library as the service's driver WebSocket, no compression) accepts one driver
 * registration and then, on `loop`, sends ACTION messages shaped like the service's, one at a
 * time, each after the ACTION_RESULT of the previous one: the driver's own time plus the
 * WebSocket transport both ways, and nothing else (no HTTP, routing, validation, device lookup,
 * program executor, events, run history).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { WebSocketServer, type WebSocket } from 'ws';
import { percentiles, serveAgent } from './runtime.js';

let driver: WebSocket | undefined;
let server: http.Server | undefined;
let wss: WebSocketServer | undefined;
let waiting: { actionId: string; resolve(): void } | undefined;

async function listen(): Promise<{ port: number }> {
  server = http.createServer((_req, res) => {
    res.writeHead(404);
    res.end();
  });
  wss = new WebSocketServer({ server, path: '/driver', perMessageDeflate: false });
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { method?: string; type?: string; actionId?: string };
      if (msg.method === 'driver.register') {
        driver = ws;
        ws.send(JSON.stringify({ type: 'DRIVER_STATUS', status: 'registered', message: 'Registered (baseline).' }));
        return;
      }
      if (msg.type === 'ACTION_RESULT' && waiting && msg.actionId === waiting.actionId) {
        const w = waiting;
        waiting = undefined;
        w.resolve();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server!.once('error', reject);
    server!.listen(0, '127.0.0.1', () => resolve());
  });
  return { port: (server.address() as { port: number }).port };
}

function action(deviceId: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const actionId = randomUUID();
    const timer = setTimeout(() => reject(new Error('no ACTION_RESULT within 10 s')), 10_000);
    waiting = {
      actionId,
      resolve: () => {
        clearTimeout(timer);
        resolve();
      },
    };
    driver!.send(JSON.stringify({ type: 'ACTION', actionId, deviceId, command: 'toggle', params: {} }));
  });
}

/** `rounds` times: `count` actions one after another; returns each round's duration. */
async function loop({ count, rounds, deviceIds }: { count: number; rounds: number; deviceIds: string[] }) {
  if (!driver) throw new Error('no driver registered');
  const roundMs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < count; i++) await action(deviceIds[i % deviceIds.length]!);
    roundMs.push(performance.now() - t0);
  }
  const perAction = roundMs.map((m) => m / count);
  return { rounds, count, roundMs, perActionMs: { mean: perAction.reduce((a, b) => a + b, 0) / perAction.length, ...percentiles(perAction, [50, 90]) } };
}

serveAgent('action-loop', { listen: listen as never, loop: loop as never }, () => {
  wss?.close();
  server?.close();
});
