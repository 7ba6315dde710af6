import net from 'node:net';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildService, spawnServer } from './support/child.js';
import { call, Instances } from './support/instances.js';
import { MqttDeviceSimulator } from './support/mqtt-devices.js';
import { createTestDatabase } from './support/postgres.js';
import { ADMIN } from './support/server.js';
import { eventually } from './support/ws-driver.js';

/**
 * Two service processes on one embedded PostgreSQL database and one MQTT broker (aedes, in this
 * process): one instance holds the MQTT link, a command sent to the other reaches the device, and
 * when the holder is killed (SIGKILL) the other takes the link over within the lease.
 */
const LEASE_MS = 1500;

const instances = new Instances();
let closeBroker: (() => Promise<void>) | undefined;

afterAll(async () => {
  await instances.cleanUp();
  await closeBroker?.();
});

beforeAll(() => buildService(), 180_000);

const tmp = (prefix: string) => instances.tmp(prefix);
const children = instances.children;

describe('MQTT in a cluster', () => {
  it('one instance holds the link, commands reach devices through either, and the link moves when its holder is killed', async () => {
    const broker = await Aedes.createBroker();
    const server = net.createServer(broker.handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closeBroker = async () => {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
    const brokerUrl = `mqtt://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const shared = { DATABASE_URL: await createTestDatabase(), ADMIN_PASSWORD: ADMIN.password, CLUSTER_LEASE_MS: String(LEASE_MS), MQTT_URL: brokerUrl, MQTT_EXPOSE: 'on', ACTION_TIMEOUT_MS: '2000' };

    const a = await spawnServer({ ...shared, DATA_DIR: tmp('hcs-mqtt-a-') });
    children.push(a);
    const login = await fetch(`${a.url}/app/os/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const { accessToken: token } = (await login.json()) as { accessToken: string };
    const b = await spawnServer({ ...shared, DATA_DIR: tmp('hcs-mqtt-b-') });
    children.push(b);

    const statusOf = async (base: string) => (await call(base, 'GET', '/v1/os/mqtt/status', token)).body as { role: string; holder?: string; connection: { connected: boolean } };
    await eventually(async () => ((await statusOf(a.url)).connection.connected ? true : undefined), 5000, 'A connected');
    const onB = await statusOf(b.url);
    expect(onB.role).toBe('standby');
    expect(onB.holder).toBeTruthy();
    expect((await statusOf(a.url)).role).toBe('active');
    // Only the holder is connected to the broker.
    expect(Object.values((broker as unknown as { clients: Record<string, { id: string }> }).clients).filter((c) => c.id.startsWith('hcs-'))).toHaveLength(1);

    const sim = await MqttDeviceSimulator.connect(brokerUrl, { devices: ['plug'] });
    await sim.announce();
    const plugOn = async (base: string) =>
      eventually(async () => {
        const { body } = await call(base, 'GET', '/v1/os/devices', token);
        return (body.devices as Array<{ id: string; driverKey: string; deviceClass: string; online: boolean }>).find((d) => d.driverKey === 'mqtt' && d.deviceClass === 'switch' && d.online);
      }, 8000, 'the plug online');
    const plug = await plugOn(b.url);
    // A command on the instance that does not hold the link is forwarded to the one that does.
    let next = sim.nextCommand(/POWER$/);
    const viaB = await call(b.url, 'POST', `/v1/os/devices/${plug.id}/command`, token, { command: 'turn_on' });
    expect(viaB.status, JSON.stringify(viaB.body)).toBe(200);
    expect((await next).payload).toBe('ON');

    // The hub's availability as an MQTT dashboard sees it: its last will says offline when the holder dies.
    const watcher = await mqtt.connectAsync(brokerUrl, { protocolVersion: 4, reconnectPeriod: 0 });
    const statuses: string[] = [];
    watcher.on('message', (topic, payload) => {
      if (topic.endsWith('/status')) statuses.push(payload.toString());
    });
    await watcher.subscribeAsync('hcs/+/status', { qos: 1 });
    await eventually(() => (statuses.at(-1) === 'online' ? true : undefined), 3000, 'the hub online');

    const killedAt = Date.now();
    a.proc.kill('SIGKILL');
    await a.exited;
    await eventually(async () => {
      const s = await statusOf(b.url);
      return s.role === 'active' && s.connection.connected ? s : undefined;
    }, LEASE_MS * 6, 'B holds the link');
    expect(Date.now() - killedAt).toBeLessThan(LEASE_MS * 6);
    await eventually(() => (statuses.includes('offline') && statuses.at(-1) === 'online' ? true : undefined), 5000, 'offline by the last will, then online from B');
    await watcher.endAsync();
    const again = await plugOn(b.url);
    expect(again.id).toBe(plug.id);
    next = sim.nextCommand(/POWER$/);
    const afterTakeover = await call(b.url, 'POST', `/v1/os/devices/${plug.id}/command`, token, { command: 'turn_off' });
    expect(afterTakeover.status, JSON.stringify(afterTakeover.body)).toBe(200);
    expect((await next).payload).toBe('OFF');
    await sim.close();
  }, 90_000);
});
