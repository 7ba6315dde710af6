import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/net.js';
import { startServer, tempDataDir, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';

/**
 * config.json written by many requests at once, through the real server and a real Homebridge on
 * loopback: each write goes to a temp file of its own and is renamed into place, and the
 * read-modify-writes are queued, so none fails and none loses the file.
 */

type Json = Record<string, unknown>;

let server: TestServer;
let token: string;
let port: number;
let hubDir: string;

const configJson = () => JSON.parse(fs.readFileSync(path.join(hubDir, 'config.json'), 'utf8')) as { bridge: Json; platforms: Json[]; disabledPlugins?: string[] };
const status = async () => (await (await server.request('GET', '/app/os/accessory-hub/status', { token })).json()) as Json;
const running = () => eventually(async () => ((await status()).state === 'running' ? true : undefined), 30_000, 'Homebridge running');

/** The Homebridge processes this test's server started: they run in its storage path (Linux: read from /proc; Homebridge rewrites its own command line). */
function homebridgesOfThisTest(): number[] {
  if (process.platform !== 'linux') return [];
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readlinkSync(`/proc/${entry}/cwd`) === hubDir) pids.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

beforeAll(async () => {
  port = await freePort();
  const dataDir = tempDataDir();
  hubDir = path.join(dataDir, 'accessory-hub');
  fs.mkdirSync(hubDir, { recursive: true });
  fs.writeFileSync(path.join(hubDir, 'config.json'), JSON.stringify({ bridge: { name: 'HCS Writes Bridge', username: '0E:AA:BB:CC:DD:03', port, pin: '031-45-154', advertiser: 'ciao' }, accessories: [], platforms: [] }));
  server = await startServer({ dataDir, env: { ACCESSORY_HUB: 'on', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_REGISTRY: 'http://127.0.0.1:9/', ACCESSORY_HUB_POLL_MS: '60000' }, timers: undefined });
  token = await server.login();
  // Apple Home shows the hub's devices only once an admin turns it on.
  expect((await server.request('POST', '/v1/os/accessory-hub/homekit', { token, body: { exposed: true } })).status).toBe(200);
  await running();
}, 60_000);

afterAll(async () => {
  await server?.close();
  // Whatever this test's server started and did not stop is this test's to end (by pid).
  const left = homebridgesOfThisTest();
  if (left.length > 0) console.warn(`Homebridge processes left running after the server stopped: ${left.join(', ')}`);
  for (const pid of left) process.kill(pid, 'SIGKILL');
});

describe('accessory hub: config.json written by many requests at once', () => {
  it('answers 20 settings changes made at once, none 500; config.json stays whole with one of the names', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `Bridge ${i}`);
    const answers = await Promise.all(
      names.map(async (name) => {
        const res = await server.request('POST', '/app/os/accessory-hub/settings', { token, body: { name } });
        return { name, status: res.status, body: await res.text() };
      }),
    );
    for (const a of answers) expect(a.status, `${a.name}: ${a.body}`).toBeGreaterThanOrEqual(200);
    for (const a of answers) expect(a.status, `${a.name}: ${a.body}`).toBeLessThan(300);
    const config = configJson();
    expect(names).toContain(config.bridge.name);
    expect(config.bridge).toMatchObject({ port, pin: '031-45-154', username: '0E:AA:BB:CC:DD:03', bind: ['127.0.0.1'] });
    // The plugin bridge's block still follows the bridge's HAP port and code.
    expect(config.platforms.find((p) => p.platform === 'HomeControlBridge')).toMatchObject({ hapPort: port, hapPin: '031-45-154' });
    expect(fs.readdirSync(hubDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    await running();
    expect(((await status()).bridge as Json).name).toBe(config.bridge.name);
  }, 120_000);

  it('lands changes made at once through editConfig and a settings change, all of them', async () => {
    const homebridge = server.app.hub.modules.find((m) => m.name === 'accessory-hub') as unknown as { homebridge: { editConfig(change: (c: Json) => void): Promise<void> } };
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) =>
        homebridge.homebridge.editConfig((config) => {
          config.disabledPlugins = [...((config.disabledPlugins as string[] | undefined) ?? []), `homebridge-absent-${i}`];
        }),
      ),
      server.request('POST', '/app/os/accessory-hub/settings', { token, body: { name: 'Last Bridge' } }).then((res) => expect(res.status).toBe(200)),
    ]);
    const config = configJson();
    expect(config.bridge.name).toBe('Last Bridge');
    expect([...(config.disabledPlugins ?? [])].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `homebridge-absent-${i}`).sort());
    await homebridge.homebridge.editConfig((c) => {
      delete c.disabledPlugins;
    });
    expect(configJson()).not.toHaveProperty('disabledPlugins');
  }, 120_000);

  it('answers 20 resyncs made at once, none 500; config.json stays whole', async () => {
    const before = configJson();
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await server.request('POST', '/app/os/accessory-hub/resync', { token, body: {} });
        return { status: res.status, body: await res.text() };
      }),
    );
    for (const a of answers) expect(a.status, a.body).toBeGreaterThanOrEqual(200);
    for (const a of answers) expect(a.status, a.body).toBeLessThan(300);
    expect(configJson().bridge).toEqual(before.bridge);
    expect(fs.readdirSync(hubDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // The restarts asked for at once run one after another (those queued together as one), so
    // exactly one Homebridge runs afterwards, and the status says so truthfully.
    await running();
    if (process.platform === 'linux') {
      const pid = (await status()).pid as number;
      expect(homebridgesOfThisTest()).toEqual([pid]);
    }
  }, 120_000);
});
