import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir, stopOnce, track, type Resource } from './cleanup.js';
import { benchDataRoot } from './data-dir.js';
import { LOOPBACK, freePort, request, waitForStatus, type HttpAnswer } from './net.js';
import { baseEnv, spawnLogged, type ChildHandle } from './proc.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The admin account every benchmark service is started with. */
export const BENCH_ADMIN = { username: 'admin', password: 'bench-password-123' } as const;

export interface ServiceOptions {
  /** LOG_LEVEL of the service; `info` (request logging on, as in production) unless set. */
  logLevel?: string;
  /** Extra node flags, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof']. */
  nodeArgs?: string[];
  /** Extra environment for the service (overrides the defaults). */
  env?: Record<string, string>;
  readyTimeoutMs?: number;
  /**
   * Directory the service runs from (`node dist/main.js` with this as cwd): another build of the
   * service, e.g. an earlier commit extracted and built elsewhere. The repo root unless set.
   */
  root?: string;
}

export interface Session {
  accessToken: string;
  /** `{ authorization: 'Bearer <token>' }`. */
  headers: Record<string, string>;
}

export interface ServiceHandle extends Resource {
  readonly baseUrl: string;
  readonly port: number;
  readonly pid: number;
  readonly dataDir: string;
  readonly logPath: string;
  readonly logLevel: string;
  readonly child: ChildHandle;
  /** Logs in as the bench admin through the OS API. */
  login(): Promise<Session>;
  request(pathname: string, init?: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number }): Promise<HttpAnswer>;
  /** Orderly stop (SIGTERM, the service's own shutdown), then removes its temp dir. */
  stop(): Promise<void>;
}

/** `node dist/main.js` from `root` (the repo root unless set) with the bench settings, its output going to `logPath`. */
export function spawnService(o: { port: number; dataDir: string; logPath: string; logLevel: string; nodeArgs?: string[]; env?: Record<string, string>; root?: string }): ChildHandle {
  return spawnLogged('service', process.execPath, [...(o.nodeArgs ?? []), 'dist/main.js'], {
    cwd: o.root ?? REPO_ROOT,
    logPath: o.logPath,
    env: {
      ...baseEnv(),
      NODE_ENV: 'production',
      PORT: String(o.port),
      HOST: LOOPBACK,
      DATA_DIR: o.dataDir,
      ADMIN_USERNAME: BENCH_ADMIN.username,
      ADMIN_PASSWORD: BENCH_ADMIN.password,
      LOG_LEVEL: o.logLevel,
      // The default configuration, as people run it: ACCESSORY_HUB unset (`auto`), so a fresh hub
      // runs no Homebridge (bench/homekit.ts measures it on and off). HTTPS on, as by default, but
      // on a port of its own: two services of one bench would both want 8443.
      HTTPS_PORT: '0',
      ...o.env,
    },
  });
}

/**
 * Starts the real service as a child process the way `npm start` runs it (`node dist/main.js`
 * from the repo root, built by `npm run bench`'s `prebench` step, or from `options.root`) on a
 * free loopback port with a fresh data dir, and waits until /readyz answers 200.
 */
export async function startService(options: ServiceOptions = {}): Promise<ServiceHandle> {
  const logLevel = options.logLevel ?? 'info';
  const tmp = makeTempDir('hcs-bench-service', benchDataRoot());
  const dataDir = path.join(tmp.path, 'data');
  const logPath = path.join(tmp.path, 'service.log');
  const port = await freePort();
  const baseUrl = `http://${LOOPBACK}:${port}`;

  // BENCH_SERVICE_ROOT: another build of the service (an earlier commit extracted and built
  // elsewhere), to measure or profile it with this checkout's benchmarks.
  const root = options.root ?? process.env.BENCH_SERVICE_ROOT;
  const child = spawnService({ port, dataDir, logPath, logLevel, nodeArgs: options.nodeArgs, env: options.env, ...(root ? { root } : {}) });

  const stop = stopOnce(() => handle, child, tmp);

  const handle: ServiceHandle = {
    label: `service on ${baseUrl}`,
    baseUrl,
    port,
    pid: child.pid,
    dataDir,
    logPath,
    logLevel,
    child,
    request: (pathname, init) => request(`${baseUrl}${pathname}`, init),
    async login() {
      const answer = await request(`${baseUrl}/app/os/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(BENCH_ADMIN),
      });
      if (answer.status !== 200) throw new Error(`login answered ${answer.status}: ${answer.body}`);
      const { accessToken } = JSON.parse(answer.body) as { accessToken?: unknown };
      if (typeof accessToken !== 'string' || accessToken === '') throw new Error(`login answer has no accessToken: ${answer.body}`);
      return { accessToken, headers: { authorization: `Bearer ${accessToken}` } };
    },
    stop,
    dispose: stop,
    disposeSync() {
      child.disposeSync();
      tmp.disposeSync();
    },
  };
  // Registered after its parts, so that a cleanup stops the child before removing its dir.
  track(handle);

  try {
    await waitForStatus(`${baseUrl}/readyz`, { timeoutMs: options.readyTimeoutMs ?? 20_000, child });
  } catch (err) {
    await stop();
    throw err;
  }
  return handle;
}
