import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildService, spawnServer, type ChildServer } from './support/child.js';
import { call, Instances, type Json } from './support/instances.js';
import { ADMIN } from './support/server.js';
import { waitFor } from './support/zwave-driver.js';
import { startZwaveMock, type ZwaveMock } from './support/zwave-mock.js';

/**
 * Z-Wave on the service as `npm start` runs it, killed with SIGKILL: the port an admin set in
 * the panel (no environment variable), the network's security keys and every node's device come
 * back after a restart on the same DATA_DIR, and commands work again. Concurrent settings writes
 * are applied one at a time: whichever lands last is both the saved value and the port in use.
 */

const instances = new Instances();
let mock: ZwaveMock;

beforeAll(async () => {
  buildService();
  mock = await startZwaveMock();
}, 180_000);

afterAll(async () => {
  await instances.cleanUp();
  await mock?.close();
}, 30_000);

interface Hub {
  child: ChildServer;
  url: string;
  token: string;
}

async function startHub(dataDir: string): Promise<Hub> {
  const child = instances.track(await spawnServer({ ADMIN_PASSWORD: ADMIN.password, DATA_DIR: dataDir }, 30_000));
  const login = await fetch(`${child.url}/app/os/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  expect(login.status).toBe(200);
  const { accessToken: token } = (await login.json()) as { accessToken: string };
  return { child, url: child.url, token };
}

const api = (hub: Hub, method: string, p: string, body?: unknown) => call(hub.url, method, `/v1/os${p}`, hub.token, body);

interface Status {
  state: string;
  port?: string;
  homeId?: string;
  nodes: Array<{ nodeId: number; ready: boolean; devices: Array<{ id: string }> }>;
}


async function allReady(hub: Hub): Promise<Status> {
  let last: Status | undefined;
  try {
    return await waitFor('five nodes ready', 45_000, async () => {
      const s = (last = (await api(hub, 'GET', '/zwave/status')).body as unknown as Status);
      return s.state === 'running' && s.nodes.length === 5 && s.nodes.every((n) => n.ready) ? s : undefined;
    });
  } catch (err) {
    throw new Error(`${(err as Error).message}; the last status: ${JSON.stringify(last)}\n${hub.child.lines.filter((l) => /zwave|Z-Wave/i.test(l)).slice(-20).join('\n')}`);
  }
}

const zwaveDeviceIds = async (hub: Hub) =>
  ((await api(hub, 'GET', '/devices')).body.devices as Array<{ id: string; driverKey?: string }>)
    .filter((d) => d.driverKey === 'zwave')
    .map((d) => d.id)
    .sort();

/** The sealed key document as stored (read from the SQLite file while no hub runs). */
function storedKeys(dataDir: string): string | undefined {
  const db = new Database(path.join(dataDir, 'hub.sqlite'), { readonly: true });
  try {
    return (db.prepare(`select body from documents where kind = 'zwave_keys'`).get() as { body: string } | undefined)?.body;
  } finally {
    db.close();
  }
}

/** The pid of the hub's Z-Wave process, from the hub's record of its children (DATA_DIR/run/children.json). */
function zwaveProcess(dataDir: string): number | undefined {
  const record = JSON.parse(fs.readFileSync(path.join(dataDir, 'run', 'children.json'), 'utf8')) as { children: Array<{ pid: number; label: string }> };
  return record.children.find((c) => c.label === 'zwave')?.pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('Z-Wave across a SIGKILL of the hub', () => {
  it('keeps the admin-set port, the keys and the devices; its own process killed costs the hub nothing; concurrent settings writes land one at a time', { timeout: 150_000 }, async () => {
    const dataDir = instances.tmp('hcs-zwave-durable-');
    let hub = await startHub(dataDir);

    // Six admins save a port at once: the writes are applied in turn, so the value saved last is
    // the one the controller was opened with.
    const ports = ['tcp://127.0.0.1:9', 'tcp://127.0.0.1:10', 'tcp://127.0.0.1:11', 'tcp://127.0.0.1:12', 'tcp://127.0.0.1:13', mock.url];
    const answers = await Promise.all(ports.map((port) => api(hub, 'POST', '/integrations/zwave/settings', { values: { port } })));
    expect(answers.map((a) => a.status)).toEqual(ports.map(() => 200));
    const saved = ((await api(hub, 'GET', '/integrations/zwave/settings')).body.settings as Json[]).find((s) => s.key === 'port')!.value as string;
    expect(ports).toContain(saved);
    await waitFor('the saved port in use', 10_000, async () => (((await api(hub, 'GET', '/zwave/status')).body as unknown as Status).port === saved ? true : undefined));

    const set = await api(hub, 'POST', '/integrations/zwave/settings', { values: { port: mock.url } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const before = await allReady(hub);
    const devicesBefore = await zwaveDeviceIds(hub);
    expect(devicesBefore).toHaveLength(11);

    // zwave-js runs in a process of its own: killed, it costs the hub nothing, and comes back.
    const first = zwaveProcess(dataDir)!;
    expect(first).toBeGreaterThan(1);
    process.kill(first, 'SIGKILL');
    await waitFor('the process death seen', 5_000, async () => (((await api(hub, 'GET', '/zwave/status')).body as unknown as Status).state === 'running' ? undefined : true));
    expect((await fetch(`${hub.url}/healthz`)).status).toBe(200);
    await allReady(hub);
    const second = zwaveProcess(dataDir)!;
    expect(second).not.toBe(first);
    // The cache locks the killed process held were freed at once (their owner is gone), not after zwave-js's stale time.
    expect(hub.child.lines.filter((l) => l.includes('removed a cache lock')).length).toBeGreaterThan(0);
    expect(hub.child.lines.filter((l) => l.includes('Failed to lock DB file'))).toEqual([]);
    expect(await zwaveDeviceIds(hub)).toEqual(devicesBefore);

    hub.child.proc.kill('SIGKILL');
    await hub.child.exited;
    const keys = storedKeys(dataDir);
    expect(keys, 'the sealed keys are stored').toBeTruthy();
    expect(keys).not.toMatch(/[0-9a-f]{32}/i); // sealed, not the keys in hex

    hub = await startHub(dataDir);
    const after = await allReady(hub);
    expect(after).toMatchObject({ port: mock.url, homeId: before.homeId });
    expect(await zwaveDeviceIds(hub)).toEqual(devicesBefore);
    // The Z-Wave process closed its cache when the killed hub's pipe closed: nothing was locked.
    expect(hub.child.lines.filter((l) => l.includes('Failed to lock DB file'))).toEqual([]);
    const listed = (await api(hub, 'GET', '/devices')).body.devices as Array<{ id: string; driverKey?: string; driverDeviceId?: string }>;
    const dimmer = listed.find((d) => d.driverKey === 'zwave' && d.driverDeviceId === `${after.homeId}-2`)!.id;
    const command = await api(hub, 'POST', `/devices/${encodeURIComponent(dimmer)}/command`, { command: 'turn_on', params: {} });
    expect(command.status, JSON.stringify(command.body)).toBe(200);

    const child = zwaveProcess(dataDir)!;
    hub.child.proc.kill('SIGKILL');
    await hub.child.exited;
    expect(storedKeys(dataDir), 'the keys were not made again').toBe(keys);
    // The hub's reaper stops its Z-Wave process when the hub dies, even by SIGKILL.
    await waitFor('the Z-Wave process gone with the hub', 5_000, async () => (alive(child) ? undefined : true));
  });
});
