import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildService, spawnServer } from './support/child.js';
import { call, Instances } from './support/instances.js';
import { configureMatterForTests, freeUdpPort, loopbackInterface, startMatterTestController, type MatterTestController } from './support/matter-controller.js';
import { createTestDatabase } from './support/postgres.js';
import { ADMIN } from './support/server.js';
import { eventually, TestDriver, type Message } from './support/ws-driver.js';

/**
 * Two service processes on one embedded PostgreSQL database sharing MATTER_STORAGE_DIR: one runs
 * the Matter bridge (the lease), the other stands by; when the first is killed (SIGKILL) the
 * second takes the bridge over with the same identity and pairings, and the controller reconnects
 * to it without commissioning again.
 */
const LEASE_MS = 1500;

const instances = new Instances();
let controller: MatterTestController | undefined;
const drivers: TestDriver[] = [];

afterAll(async () => {
  await controller?.close();
  for (const d of drivers) d.close();
  await instances.cleanUp();
}, 30_000);

beforeAll(() => buildService(), 180_000);

const tmp = (prefix: string) => instances.tmp(prefix);
const children = instances.children;

interface Status {
  state: string;
  holder?: string;
  commissioned: boolean;
  pairing?: { manualPairingCode: string };
  devices: Array<{ deviceId: string; endpoint: number | null }>;
}

describe('the Matter bridge in a cluster', () => {
  it('runs on the lease holder, and moves with its pairings when the holder is killed', async () => {
    configureMatterForTests();
    const port = await freeUdpPort();
    const shared = {
      DATABASE_URL: await createTestDatabase(),
      ADMIN_PASSWORD: ADMIN.password,
      CLUSTER_LEASE_MS: String(LEASE_MS),
      MATTER: 'on',
      MATTER_PORT: String(port),
      MATTER_BIND: '127.0.0.1',
      MATTER_MDNS_INTERFACE: loopbackInterface(),
      MATTER_STORAGE_DIR: tmp('hcs-matter-shared-'),
      ACTION_TIMEOUT_MS: '3000',
    };
    const a = await spawnServer({ ...shared, DATA_DIR: tmp('hcs-matter-a-') });
    children.push(a);
    const login = await fetch(`${a.url}/app/os/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const { accessToken: token } = (await login.json()) as { accessToken: string };
    const statusOf = async (base: string) => (await call(base, 'GET', '/v1/os/matter/status', token)).body as unknown as Status;
    await eventually(async () => ((await statusOf(a.url)).state === 'running' ? true : undefined), 20_000, 'the bridge running on A');
    const b = await spawnServer({ ...shared, DATA_DIR: tmp('hcs-matter-b-') });
    children.push(b);
    const onB = await eventually(async () => {
      const s = await statusOf(b.url);
      return s.state === 'standby' ? s : undefined;
    }, 10_000, 'B standing by');
    expect(onB.holder).toBeTruthy();

    // A light from a driver connected to A; it reaches B's registry through the cluster.
    const actions: Message[] = [];
    const connect = async (base: string) => {
      const driver = await TestDriver.register(`${base.replace('http', 'ws')}/driver`, 'matter.cluster');
      drivers.push(driver);
      driver.serveActions((action) => {
        actions.push(action);
        return { done: action.command };
      });
      driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Cluster lamp', deviceClass: 'light', commands: ['turn_on', 'turn_off'], state: { on: false } } });
      return driver;
    };
    await connect(a.url);
    const bridged = await eventually(async () => {
      const s = await statusOf(a.url);
      return s.devices.length === 1 && s.devices[0]!.endpoint !== null ? s : undefined;
    }, 10_000, 'the lamp bridged');

    controller = await startMatterTestController({ fabricLabel: 'Cluster tests' });
    await controller.commission({ ip: '127.0.0.1', port, manualPairingCode: bridged.pairing!.manualPairingCode, timeoutMs: 20_000 });
    const endpoint = bridged.devices[0]!.endpoint!;
    await controller.invoke(endpoint, 'onOff', 'on');
    expect(actions.map((x) => x.command)).toEqual(['turn_on']);

    a.proc.kill('SIGKILL');
    await a.exited;
    await eventually(async () => ((await statusOf(b.url)).state === 'running' ? true : undefined), LEASE_MS * 10, 'B running the bridge');
    const onBNow = await statusOf(b.url);
    expect(onBNow.commissioned).toBe(true);
    // The driver comes back, to B this time; the same device keeps its endpoint.
    await connect(b.url);
    await eventually(async () => ((await statusOf(b.url)).devices.some((d) => d.endpoint === endpoint) ? true : undefined), 10_000, 'the lamp on B at the same endpoint');
    await controller.reconnect({ ip: '127.0.0.1', port, timeoutMs: 20_000 });
    await controller.invoke(endpoint, 'onOff', 'off');
    expect(actions.map((x) => x.command)).toEqual(['turn_on', 'turn_off']);
  }, 120_000);
});
