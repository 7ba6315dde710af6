import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Everything a benchmark starts (child processes, temp dirs) is registered here, so that it is
 * released however the run ends: normally, on an error, on SIGINT/SIGTERM or on process exit.
 */
export interface Resource {
  readonly label: string;
  /** Orderly release; must settle within a bounded time. */
  dispose(): Promise<void>;
  /** Last-resort release from the 'exit' handler, where nothing asynchronous runs. */
  disposeSync(): void;
}

const live: Resource[] = [];
let handlersInstalled = false;

export function track<T extends Resource>(resource: T): T {
  live.push(resource);
  return resource;
}

export function untrack(resource: Resource): void {
  const i = live.indexOf(resource);
  if (i >= 0) live.splice(i, 1);
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Releases every live resource, newest first, each bounded to `perResourceMs`. */
export async function disposeAll(perResourceMs = 8000): Promise<void> {
  while (live.length > 0) {
    const resource = live.pop()!;
    try {
      await withTimeout(resource.dispose(), perResourceMs);
    } catch (err) {
      process.stderr.write(`cleanup of ${resource.label} failed: ${String(err)}\n`);
    }
    // Whatever dispose() left behind (a child that ignored SIGTERM): kill and remove now.
    try {
      resource.disposeSync();
    } catch {
      // already gone
    }
  }
}

/** Installs SIGINT/SIGTERM/exit/uncaught-error handlers once. */
export function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`\n${signal}: stopping child processes and removing temp dirs...\n`);
    const code = signal === 'SIGINT' ? 130 : 143;
    // A second signal, or a cleanup that hangs, still ends the run.
    const force = setTimeout(() => process.exit(code), 15_000);
    force.unref();
    process.once(signal, () => process.exit(code));
    disposeAll().finally(() => process.exit(code));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.on('uncaughtException', (err) => {
    process.stderr.write(`uncaught exception: ${err.stack ?? String(err)}\n`);
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    process.stderr.write(`unhandled rejection: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
  process.on('exit', () => {
    for (const resource of live.splice(0).reverse()) {
      try {
        resource.disposeSync();
      } catch {
        // nothing more can be done while exiting
      }
    }
  });
}

export interface TempDir extends Resource {
  readonly path: string;
}

/** A fresh directory under `parent` (the OS temp dir unless given), removed on dispose. */
export function makeTempDir(prefix: string, parent = os.tmpdir()): TempDir {
  const dir = fs.mkdtempSync(path.join(parent, `${prefix}-`));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  const resource: TempDir = {
    label: `temp dir ${dir}`,
    path: dir,
    async dispose() {
      untrack(resource);
      remove();
    },
    disposeSync() {
      untrack(resource);
      remove();
    },
  };
  return track(resource);
}

/**
 * A stop function, safe to call more than once, that stops a child process, then removes its
 * temp dir, and takes its handle off the exit-time cleanup list.
 */
export function stopOnce(getHandle: () => Resource, child: { stop(ms?: number): Promise<unknown> }, tmp: TempDir, stopMs?: number): () => Promise<void> {
  let stopped: Promise<void> | undefined;
  return () => {
    stopped ??= (async () => {
      untrack(getHandle());
      try {
        await child.stop(stopMs);
      } finally {
        await tmp.dispose();
      }
    })();
    return stopped;
  };
}
