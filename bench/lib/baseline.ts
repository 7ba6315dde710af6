import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir, stopOnce, track, type Resource } from './cleanup.js';
import { LOOPBACK, freePort, waitForStatus } from './net.js';
import { baseEnv, spawnLogged, type ChildHandle } from './proc.js';
import { REPO_ROOT } from './service.js';

export interface BaselineRoute {
  status: number;
  /** The exact body to send, usually captured from the real service. */
  body: string;
  /** Defaults to application/json. */
  contentType?: string;
}

export interface BaselineHandle extends Resource {
  readonly baseUrl: string;
  readonly pid: number;
  readonly child: ChildHandle;
  stop(): Promise<void>;
}

/**
 * Starts bench/baseline-server.ts in its own child process, launched the same way as the
 * service (`node --import tsx`), answering `routes` (keyed by path) on a free loopback port.
 */
export async function startBaseline(
  routes: Record<string, BaselineRoute>,
  options: {
    nodeArgs?: string[];
    /** Another server answering the same way, e.g. bench/reference-fastify-server.ts. */
    script?: string;
    logLevel?: string;
    env?: Record<string, string>;
  } = {},
): Promise<BaselineHandle> {
  const tmp = makeTempDir('hcs-bench-baseline');
  const routesFile = path.join(tmp.path, 'routes.json');
  fs.writeFileSync(routesFile, JSON.stringify(routes));
  const port = await freePort();
  const baseUrl = `http://${LOOPBACK}:${port}`;
  const script = options.script ?? 'bench/baseline-server.ts';
  const child = spawnLogged(path.basename(script, '.ts'), process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', script], {
    cwd: REPO_ROOT,
    logPath: path.join(tmp.path, 'baseline.log'),
    env: { ...baseEnv(), NODE_ENV: 'production', PORT: String(port), HOST: LOOPBACK, BASELINE_ROUTES_FILE: routesFile, LOG_LEVEL: options.logLevel ?? 'info', ...options.env },
  });

  const stop = stopOnce(() => handle, child, tmp);
  const handle: BaselineHandle = {
    label: `baseline on ${baseUrl}`,
    baseUrl,
    pid: child.pid,
    child,
    stop,
    dispose: stop,
    disposeSync() {
      child.disposeSync();
      tmp.disposeSync();
    },
  };
  track(handle);

  try {
    await waitForStatus(`${baseUrl}/__ready`, { timeoutMs: 20_000, child });
  } catch (err) {
    await stop();
    throw err;
  }
  return handle;
}
