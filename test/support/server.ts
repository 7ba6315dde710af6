import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { createApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { LogRing } from '../../src/logger.js';
import { ManualClock, type Clock, type Timers } from '../../src/platform/clock.js';

export const ADMIN = { username: 'admin', password: 'test-password-1' };

export interface TestServer {
  app: App;
  url: string;
  config: Config;
  clock: Clock;
  dataDir: string;
  /** Logs in as the admin and returns the access token. */
  login(): Promise<string>;
  request(method: string, path: string, init?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
  close(): Promise<void>;
}

export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-test-'));
}

/**
 * Starts the real service in-process on an ephemeral loopback port with a fresh DATA_DIR.
 * `env` overrides configuration the way the process environment would.
 */
export async function startServer(
  options: { env?: Record<string, string>; clock?: Clock; timers?: Timers; dataDir?: string; beforeStart?: (app: App) => void; logger?: Logger; logRing?: LogRing } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'silent',
    // Discovery never leaves the machine in tests: no multicast, loopback only (the discard port
    // unless a test starts responders and points these at them).
    MEDIA_DISCOVERY_INTERFACE: '127.0.0.1',
    MEDIA_SSDP_ADDRESS: '127.0.0.1:9',
    MEDIA_MDNS_ADDRESS: '127.0.0.1:9',
    // A discovery round with an empty body listens this long (the default 5 s would slow the suite).
    MEDIA_DISCOVERY_TIMEOUT_MS: '200',
    // Homebridge only where a test asks for it: it takes seconds to start and holds a port.
    ACCESSORY_HUB: 'off',
    // HTTPS only where a test asks for it: its default port (8443) is one for the whole machine.
    HTTPS_PORT: 'off',
    // The Node Homebridge 2 runs on where the tests' own is too old (test/support/node-runtime-global.ts).
    ...(process.env.HCS_TEST_HOMEBRIDGE_NODE ? { ACCESSORY_HUB_NODE: process.env.HCS_TEST_HOMEBRIDGE_NODE } : {}),
    ...options.env,
  });
  const clock = options.clock ?? new ManualClock(Date.now());
  const app = await createApp(config, { clock, ...(options.timers ? { timers: options.timers } : {}), logger: options.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }), ...(options.logRing ? { logRing: options.logRing } : {}) });
  options.beforeStart?.(app);
  const address = await app.start();
  const url = `http://127.0.0.1:${address.port}`;

  const request: TestServer['request'] = (method, p, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    let body: string | undefined;
    if (init.body !== undefined) {
      body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    return fetch(url + p, { method, headers, body });
  };

  return {
    app,
    url,
    config,
    clock,
    dataDir,
    request,
    async login() {
      const res = await request('POST', '/app/os/auth/login', { body: ADMIN });
      if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { accessToken: string }).accessToken;
    },
    async close() {
      await app.stop();
      if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
