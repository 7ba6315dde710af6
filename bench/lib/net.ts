import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildHandle } from './proc.js';

/** Every benchmark talks to this host only. */
export const LOOPBACK = '127.0.0.1';

/** A port that was free a moment ago on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: string;
}

/** One request to the loopback host, with a timeout. */
export async function request(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<HttpAnswer> {
  if (new URL(url).hostname !== LOOPBACK) throw new Error(`refusing to send benchmark traffic to ${url}`);
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: init.headers,
    body: init.body,
    signal: AbortSignal.timeout(init.timeoutMs ?? 5000),
  });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/**
 * Polls `url` until it answers `expectStatus`, at most `timeoutMs` and a bounded number of
 * attempts; fails early, with the log tail, if `child` exits meanwhile.
 */
export async function waitForStatus(
  url: string,
  { expectStatus = 200, timeoutMs = 20_000, intervalMs = 100, child }: { expectStatus?: number; timeoutMs?: number; intervalMs?: number; child?: ChildHandle } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const maxAttempts = Math.ceil(timeoutMs / intervalMs) + 1;
  let last = 'no answer';
  for (let attempt = 0; attempt < maxAttempts && Date.now() < deadline; attempt++) {
    if (child && !child.running()) {
      throw new Error(`${child.label} exited before ${url} answered ${expectStatus}; log tail:\n${child.logTail()}`);
    }
    try {
      const answer = await request(url, { timeoutMs: Math.min(2000, Math.max(100, deadline - Date.now())) });
      if (answer.status === expectStatus) return;
      last = `status ${answer.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(intervalMs);
  }
  const tail = child ? `; log tail:\n${child.logTail()}` : '';
  throw new Error(`${url} did not answer ${expectStatus} within ${timeoutMs} ms (last: ${last})${tail}`);
}
