/**
 * The agent side of bench/lib/agent.ts: answers the harness's calls over the IPC channel.
 * Every agent also answers `usage` (its own CPU seconds and memory). An agent exits when the
 * harness disconnects (it stopped or died), so that no client outlives a run.
 */
export type Handler = (params: never) => unknown;

export function serveAgent(name: string, handlers: Record<string, Handler>, onExit?: () => void): void {
  const send = process.send?.bind(process);
  if (!send) {
    process.stderr.write(`${name}: start me through bench/lib/agent.ts (no IPC channel)\n`);
    process.exit(2);
  }
  const all: Record<string, Handler> = {
    ...handlers,
    usage: () => {
      const { user, system } = process.cpuUsage();
      return { cpuSeconds: (user + system) / 1e6, rssBytes: process.memoryUsage.rss() };
    },
  };
  process.on('message', (raw: unknown) => {
    const { id, method, params } = raw as { id: number; method: string; params: unknown };
    const handler = Object.hasOwn(all, method) ? all[method] : undefined;
    if (!handler) {
      send({ id, ok: false, error: `unknown method ${method}` });
      return;
    }
    Promise.resolve()
      .then(() => handler(params as never))
      .then(
        (result) => send({ id, ok: true, result }),
        (err: unknown) => send({ id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
      );
  });
  const quit = () => {
    try {
      onExit?.();
    } finally {
      process.exit(0);
    }
  };
  process.on('disconnect', quit);
  process.once('SIGTERM', quit);
  process.once('SIGINT', quit);
  process.on('unhandledRejection', (err) => {
    process.stderr.write(`${name}: unhandled rejection: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  });
  send({ ready: true });
}

/** Refuses anything but the loopback host. */
export function assertLoopback(url: string): void {
  const host = new URL(url).hostname;
  if (host !== '127.0.0.1') throw new Error(`refusing to connect to ${url}: loopback only`);
}

/** Percentiles of unsorted samples (sorted in place). */
export function percentiles(samples: Float64Array | number[], ps: number[]): Record<string, number | null> {
  const sorted = samples instanceof Float64Array ? samples.sort() : Float64Array.from(samples).sort();
  const out: Record<string, number | null> = {};
  for (const p of ps) {
    out[`p${p}`] = sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
  }
  return out;
}

/** A growable sample buffer with a hard cap (memory stays bounded). */
export class Samples {
  private data = new Float64Array(1024);
  length = 0;
  dropped = 0;
  constructor(private readonly cap = 5_000_000) {}
  push(v: number): void {
    if (this.length >= this.cap) {
      this.dropped++;
      return;
    }
    if (this.length === this.data.length) {
      const bigger = new Float64Array(Math.min(this.cap, this.data.length * 2));
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
  }
  values(): Float64Array {
    return this.data.slice(0, this.length);
  }
  clear(): void {
    this.length = 0;
    this.dropped = 0;
  }
}
