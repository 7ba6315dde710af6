/**
 * SSE clients of GET /app/os/media-controller/stream in one process, plus the MPD client that
 * changes the track: `change` sends `play <index>` straight to MPD and times, with
 * performance.now() in this one process, how long each stream client takes to receive the
 * `state` event whose song is at that index.
 */
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { assertLoopback, percentiles, serveAgent } from './runtime.js';

interface Client {
  buffer: string;
  /** Queue positions seen in `state` events, with when. */
  seen: Map<number, number>;
  request: http.ClientRequest;
  closed: boolean;
}

const clients: Client[] = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: 1000 });

function openOne(url: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client: Client = { buffer: '', seen: new Map(), request: undefined as unknown as http.ClientRequest, closed: false };
    const request = http.get(url, { agent, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`stream answered ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        client.buffer += chunk;
        let end: number;
        while ((end = client.buffer.indexOf('\n\n')) >= 0) {
          const block = client.buffer.slice(0, end);
          client.buffer = client.buffer.slice(end + 2);
          if (block.includes('event: snapshot')) resolve(client);
          if (!block.includes('event: state')) continue;
          const m = /"position":(\d+)/.exec(block);
          if (m && !client.seen.has(Number(m[1]))) client.seen.set(Number(m[1]), performance.now());
        }
      });
      res.on('close', () => {
        client.closed = true;
      });
    });
    request.on('error', reject);
    client.request = request;
    clients.push(client);
  });
}

async function open(p: { url: string; count: number }) {
  assertLoopback(p.url);
  for (let i = 0; i < p.count; i += 50) await Promise.all(Array.from({ length: Math.min(50, p.count - i) }, () => openOne(p.url)));
  return { open: clients.length };
}

/** One MPD command on a fresh connection; resolves on its OK. */
function mpdCommand(host: string, port: number, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let buffer = '';
    let greeted = false;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (!greeted && buffer.includes('\n')) {
        greeted = true;
        buffer = '';
        socket.write(`${line}\n`);
      } else if (greeted && /(^|\n)(OK|ACK[^\n]*)\n$/.test(buffer)) {
        socket.end();
        if (buffer.includes('ACK')) reject(new Error(buffer.trim()));
        else resolve();
      }
    });
    socket.on('error', reject);
  });
}

/** Changes the track to queue position `index` and waits (bounded) until every client saw it. */
async function change(p: { mpdHost: string; mpdPort: number; index: number; timeoutMs?: number }) {
  const t0 = performance.now();
  await mpdCommand(p.mpdHost, p.mpdPort, `play ${p.index}`);
  const deadline = t0 + (p.timeoutMs ?? 5000);
  for (let i = 0; i < 10_000 && performance.now() < deadline; i++) {
    if (clients.every((c) => c.seen.has(p.index))) break;
    await new Promise((r) => setTimeout(r, 1));
  }
  const latencies = clients.filter((c) => c.seen.has(p.index)).map((c) => c.seen.get(p.index)! - t0);
  for (const c of clients) c.seen.delete(p.index);
  return { clients: clients.length, received: latencies.length, closed: clients.filter((c) => c.closed).length, latencyMs: { ...percentiles(latencies, [50, 99]), max: latencies.length ? Math.max(...latencies) : null } };
}

function closeAll() {
  for (const c of clients.splice(0)) c.request.destroy();
  return { closed: true };
}

serveAgent('controller-clients', { open, change, close: closeAll }, () => {
  closeAll();
  agent.destroy();
});
