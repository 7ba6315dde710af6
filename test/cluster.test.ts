import fs from 'node:fs';
import path from 'node:path';
import { io as connect, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildService, spawnServer } from './support/child.js';
import { call, Instances, type Json } from './support/instances.js';
import { createTestDatabase } from './support/postgres.js';
import { ADMIN } from './support/server.js';
import { SseClient } from './support/sse-client.js';
import { eventually, TestDriver } from './support/ws-driver.js';

/**
 * Two service processes on one embedded PostgreSQL database, on loopback: A and B share the
 * database and the drivers folder, as a deployment behind a load balancer would.
 */
const LEASE_MS = 1500;
const FIXTURES = path.resolve(import.meta.dirname, 'fixtures/drivers');

const instances = new Instances();
const children = instances.children;
const closers = { push: (...close: Array<() => void>) => close.forEach((c) => instances.onCleanUp(c)) };

afterAll(() => instances.cleanUp());

beforeAll(() => buildService(), 180_000);

const tmp = (prefix: string) => instances.tmp(prefix);

describe('two instances on one PostgreSQL database', () => {
  it('share drivers, commands, state, timers and acknowledged writes, and survive one being killed', async () => {
    const driversDir = tmp('hcs-cluster-drivers-');
    fs.cpSync(path.join(FIXTURES, 'js-lamp'), path.join(driversDir, 'js-lamp'), { recursive: true });
    const shared = { DATABASE_URL: await createTestDatabase(), DRIVERS_DIR: driversDir, ADMIN_PASSWORD: ADMIN.password, CLUSTER_LEASE_MS: String(LEASE_MS), METRICS_ACCESS: 'loopback', ACTION_TIMEOUT_MS: '1000' };

    const a = await spawnServer({ ...shared, DATA_DIR: tmp('hcs-cluster-a-') });
    children.push(a);
    const login = await fetch(`${a.url}/app/os/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const { accessToken: token } = (await login.json()) as { accessToken: string };
    const lampRunningOn = async (base: string) => {
      const { body } = await call(base, 'GET', '/v1/os/drivers', token);
      return (body.local as Array<{ driverKey: string; status: string; pid?: number; runsOn?: string }>).find((d) => d.driverKey === 'js-lamp');
    };
    await eventually(async () => (await lampRunningOn(a.url))?.status === 'running', 10_000, 'js-lamp running on A');

    const b = await spawnServer({ ...shared, DATA_DIR: tmp('hcs-cluster-b-') });
    children.push(b);
    // A token A issued works on B; the local driver runs once: on A, with B standing by.
    const onB = await lampRunningOn(b.url);
    expect(onB).toMatchObject({ status: 'standby' });
    expect(onB?.runsOn).toMatch(/^[0-9a-f]{16}$/);
    // Each instance says what it is: the database, and the cluster as it sees it.
    const systemOfA = await eventually(async () => {
      const { body } = await call(a.url, 'GET', '/admin/system', token);
      return (body.cluster as { peers: string[] } | null)?.peers.length === 1 ? body : undefined;
    }, 5000, 'A seeing B');
    expect(systemOfA.database).toMatchObject({ engine: 'postgres' });
    expect(String((systemOfA.database as Json).location)).not.toContain('hcs-test');
    // This instance holds the driver's lease and, when it is the one listening for the automations, builtin:automations too.
    const automationsOnB = (await call(a.url, 'GET', '/v1/os/automations/status', token)).body.role === 'active';
    expect(systemOfA.cluster).toMatchObject({ instance: onB?.runsOn, leasesHeld: automationsOnB ? 2 : 1 });

    // A driver package installed through A lands in the shared folder; B reads it and stands by.
    const manifest = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'js-lamp', 'lamp.driver.json'), 'utf8')) as Json;
    const files = [
      { path: 'lamp.driver.json', content: Buffer.from(JSON.stringify({ ...manifest, driverKey: 'js-lamp-two' })).toString('base64') },
      { path: 'lamp.js', content: fs.readFileSync(path.join(FIXTURES, 'js-lamp', 'lamp.js')).toString('base64') },
    ];
    const installed = await call(a.url, 'POST', '/admin/drivers/packages', token, { files });
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    await eventually(async () => {
      const { body } = await call(b.url, 'GET', '/v1/os/drivers', token);
      return (body.local as Array<{ driverKey: string; status: string }>).some((d) => d.driverKey === 'js-lamp-two' && d.status === 'standby');
    }, 5000, 'the new driver standing by on B');

    // A driver connects to A; its device shows up on B.
    const driver = await TestDriver.register(`${a.url.replace('http', 'ws')}/driver`, 'ext-switch');
    closers.push(() => driver.close());
    driver.ws.on('message', (data) => {
      const action = JSON.parse(data.toString()) as { type?: string; actionId?: string; command?: string };
      if (action.type !== 'ACTION' || action.command === 'hang') return;
      if (action.command === 'fail') return driver.send({ type: 'ACTION_RESULT', actionId: action.actionId, ok: false, error: 'refused by the switch' });
      driver.send({ type: 'STATE_UPDATE', deviceId: 'sw1', state: { on: action.command === 'turn_on' } });
      driver.send({ type: 'ACTION_RESULT', actionId: action.actionId, ok: true, result: { done: action.command } });
    });
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'sw1', name: 'Switch', category: 'switch', commands: ['turn_on', 'turn_off', 'fail', 'hang'], state: { on: false } } });
    const switchId = await eventually(async () => {
      const { body } = await call(b.url, 'GET', '/v1/os/devices', token);
      return (body.devices as Array<{ id: string; driverDeviceId: string }>).find((d) => d.driverDeviceId === 'sw1')?.id;
    }, 5000, 'the switch listed on B');

    // DRIVER_AUTH=open hands a driverKey to no other address on any instance: B refuses (4009) a
    // registration from another address of the driver connected to A, and of the driver A runs itself.
    const refusedOnB = async (driverKey: string) => {
      const intruder = await TestDriver.connect(`${b.url.replace('http', 'ws')}/driver`, { localAddress: '127.0.0.2' });
      closers.push(() => intruder.close());
      const status = intruder.next((m) => m.type === 'DRIVER_STATUS');
      intruder.send({ method: 'driver.register', protocolVersion: 1, driverKey, instanceId: `${driverKey}-intruder` });
      return { status: await status, closed: await intruder.whenClosed() };
    };
    const takeover = await refusedOnB('ext-switch');
    expect(takeover.status).toMatchObject({ status: 'error', code: 'DRIVER_KEY_CONNECTED_ELSEWHERE' });
    expect(takeover.closed.code).toBe(4009);
    const reserved = await refusedOnB('js-lamp');
    expect(reserved.status).toMatchObject({ status: 'error', code: 'DRIVER_KEY_RESERVED' });
    expect(reserved.closed.code).toBe(4009);

    // An SSE client on B, a REST command to B: the command reaches the driver on A, the state comes back to B.
    const sse = await SseClient.open(`${b.url}/v1/os/state/stream?accessToken=${token}`);
    closers.push(() => sse.close());
    expect(sse.status).toBe(200);
    await sse.next((e) => e.event === 'snapshot');
    // ... and a Socket.IO client on B, both on /socket/device-state and on a namespace A broadcasts to.
    const sockets: Socket[] = [];
    const socketOn = (base: string, namespace: string) => {
      const s = connect(`${base}${namespace}`, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true });
      sockets.push(s);
      closers.push(() => s.disconnect());
      return s;
    };
    const stateOnB = socketOn(b.url, '/socket/device-state');
    const stateUpdates: unknown[] = [];
    stateOnB.on('device:state:update', (u: unknown) => stateUpdates.push(u));
    await new Promise<void>((resolve) => stateOnB.once('device:state:snapshot', () => resolve()));
    const designerOnB = socketOn(b.url, '/socket/designer');
    const designs: Array<{ profile: { id: string } }> = [];
    designerOnB.on('designer:published', (d: { profile: { id: string } }) => designs.push(d));
    await eventually(() => designs.length === 1, 5000, 'the designer snapshot on B');
    const command = await call(b.url, 'POST', `/v1/os/devices/${switchId}/command`, token, { command: 'turn_on' });
    expect(command.status, JSON.stringify(command.body)).toBe(200);
    expect(JSON.stringify(command.body)).toContain('turn_on');
    const seen = await sse.next((e) => e.event === 'state' && (e.data as { deviceId?: string }).deviceId === switchId && JSON.stringify(e.data).includes('"on":true'));
    expect(seen).toBeDefined();
    const snapshot = await call(b.url, 'GET', '/v1/os/state/snapshot', token);
    expect(JSON.stringify(snapshot.body)).toContain('"on":true');
    await eventually(() => stateUpdates.some((u) => JSON.stringify(u).includes(switchId) && JSON.stringify(u).includes('"on":true')), 5000, 'the state on B over Socket.IO');
    // A broadcast made on A reaches B's socket through the PostgreSQL adapter, once.
    expect((await call(a.url, 'POST', '/v1/os/design-profiles/select', token, { profileId: 'midnight' })).status).toBe(200);
    await eventually(() => designs.some((d) => d.profile.id === 'midnight'), 5000, 'the design published on A, on B');
    await new Promise((r) => setTimeout(r, 200));
    expect(designs.filter((d) => d.profile.id === 'midnight')).toHaveLength(1);
    expect(((await call(b.url, 'GET', '/v1/os/design-profiles', token)).body.profiles as Array<{ id: string; active: boolean }>).find((p) => p.active)?.id).toBe('midnight');
    // Errors keep their meaning through the forwarding instance.
    const direct = await call(a.url, 'POST', `/v1/os/devices/${switchId}/command`, token, { command: 'fail' });
    const forwarded = await call(b.url, 'POST', `/v1/os/devices/${switchId}/command`, token, { command: 'fail' });
    expect(forwarded.status).toBe(direct.status);
    expect((forwarded.body.error as Json).code).toBe((direct.body.error as Json).code);
    // A driver that does not answer: B answers when A's time-out does, with A's error.
    const hangStarted = Date.now();
    const hung = await call(b.url, 'POST', `/v1/os/devices/${switchId}/command`, token, { command: 'hang' });
    const hungMs = Date.now() - hangStarted;
    expect(hung.status).toBe(504);
    expect((hung.body.error as Json).code).toBe('DRIVER_TIMEOUT');
    expect(hungMs).toBeGreaterThanOrEqual(900);
    expect(hungMs).toBeLessThan(1900);
    const metricsOfB = await (await fetch(`${b.url}/metrics`)).text();
    expect(metricsOfB).toMatch(/^hcs_cluster_peers 1$/m);
    expect(metricsOfB).toMatch(/^hcs_cluster_forwarded_commands 3$/m);
    expect(await (await fetch(`${a.url}/metrics`)).text()).toMatch(/^hcs_cluster_commands_run_for_others 3$/m);

    // Messages over NOTIFY's 8000 bytes go through the outbox: a device discovered on A with a
    // large record, a program written on B with a large body.
    const notes = 'x'.repeat(12_000);
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'big', name: 'Big', category: 'sensor', properties: { notes } } });
    await eventually(async () => {
      const { body } = await call(b.url, 'GET', '/v1/os/devices', token);
      return (body.devices as Array<{ driverDeviceId: string; properties?: { notes?: string } }>).find((d) => d.driverDeviceId === 'big')?.properties?.notes === notes;
    }, 5000, 'the large device on B');
    const longProgram = await call(b.url, 'POST', '/v1/os/programs/save', token, { name: 'Long', steps: Array.from({ length: 120 }, (_, i) => ({ type: 'delay', ms: 1, label: `step ${i} ${'y'.repeat(60)}` })) });
    expect(longProgram.status, JSON.stringify(longProgram.body)).toBe(200);
    await eventually(async () => ((await call(a.url, 'GET', `/v1/os/programs/${String(longProgram.body.id)}`, token)).body.steps as unknown[] | undefined)?.length === 120, 5000, 'the large program on A');

    // A timer program saved on B is armed on both; each slot fires once.
    const program = await call(b.url, 'POST', '/v1/os/programs/save', token, { name: 'Tick', steps: [{ type: 'delay', ms: 1 }], timer: { kind: 'interval', everyMs: 1000, enabled: true } });
    expect(program.status, JSON.stringify(program.body)).toBe(200);
    // Armed on A too (the program came to it from B), so both race for every slot.
    const armedOnA = await eventually(async () => (await call(a.url, 'GET', `/v1/os/programs/${String(program.body.id)}`, token)).body.nextFireAt, 10_000, 'the timer armed on A');
    expect(typeof armedOnA).toBe('number');
    await new Promise((r) => setTimeout(r, 4300));
    await call(a.url, 'POST', `/v1/os/programs/${String(program.body.id)}/timer`, token, { timer: null });
    const { body: history } = await call(a.url, 'GET', `/v1/os/programs/${String(program.body.id)}/runs?limit=50`, token);
    const starts = (history.runs as Array<{ startedAt: number; trigger: string }>).filter((r) => r.trigger === 'timer').map((r) => r.startedAt).sort((x, y) => x - y);
    expect(starts.length).toBeGreaterThanOrEqual(3);
    expect(starts.length).toBeLessThanOrEqual(5);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThan(700);

    // A write A acknowledged, then A dies without a word.
    const space = await call(a.url, 'POST', '/v1/os/spaces/save', token, { name: 'Acknowledged on A' });
    expect(space.status).toBe(200);
    const killedAt = Date.now();
    a.proc.kill('SIGKILL');
    await a.exited;

    // B takes the local driver over within the lease (plus a heartbeat and the start of the process).
    const running = await eventually(async () => {
      const lamp = await lampRunningOn(b.url);
      return lamp?.status === 'running' && lamp.pid ? lamp : undefined;
    }, LEASE_MS * 4, 'js-lamp running on B');
    await eventually(async () => {
      const { body } = await call(b.url, 'GET', '/v1/os/drivers', token);
      return (body.local as Array<{ driverKey: string; status: string }>).some((d) => d.driverKey === 'js-lamp-two' && d.status === 'running');
    }, LEASE_MS * 4, 'the installed driver running on B');
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(LEASE_MS + LEASE_MS / 3 + 2000);
    expect(running.pid).toBeGreaterThan(0);
    const lampId = await eventually(async () => {
      const { body } = await call(b.url, 'GET', '/v1/os/devices', token);
      return (body.devices as Array<{ id: string; driverKey: string }>).find((d) => d.driverKey === 'js-lamp')?.id;
    }, 5000, 'the lamp listed on B');
    // A driver process that has just started registers a moment later; until then the hub answers
    // 503 DRIVER_OFFLINE with Retry-After, and a client retries, as this one does (bounded).
    const toggled = await eventually(async () => {
      const answer = await call(b.url, 'POST', `/v1/os/devices/${lampId}/command`, token, { command: 'toggle' });
      if (answer.status === 503) return undefined;
      return answer;
    }, 5000, 'the lamp commanded on B');
    expect(toggled.status, JSON.stringify(toggled.body)).toBe(200);

    // Nothing acknowledged is lost, and the driver that was on A is seen gone.
    const kept = await call(b.url, 'GET', `/v1/os/spaces/${String(space.body.id)}`, token);
    expect(kept.status).toBe(200);
    expect(kept.body.name).toBe('Acknowledged on A');
    await eventually(async () => {
      const { body } = await call(b.url, 'GET', `/v1/os/devices/${switchId}`, token);
      return JSON.stringify(body).includes('"online":false');
    }, LEASE_MS * 4, 'the switch offline on B');
    const orphan = await call(b.url, 'POST', `/v1/os/devices/${switchId}/command`, token, { command: 'turn_off' });
    expect(orphan.status).toBe(503);
  }, 60_000);
});

describe('a cluster whose database connections drop', () => {
  it('reconnects its listening and publishing connections and carries on relaying', async () => {
    const { startServer } = await import('./support/server.js');
    const pg = (await import('pg')).default;
    const url = await createTestDatabase();
    const env = { DATABASE_URL: url, CLUSTER_LEASE_MS: String(LEASE_MS) };
    const a = await startServer({ env });
    const b = await startServer({ env });
    closers.push(() => void a.close(), () => void b.close());
    const token = await a.login();
    const save = async (name: string) => (await (await a.request('POST', '/v1/os/spaces/save', { token, body: { name } })).json()) as { id: string };
    const seenOnB = (id: string) => eventually(async () => (await b.request('GET', `/v1/os/spaces/${id}`, { token })).status === 200, 5000, `space ${id} on B`);
    await seenOnB((await save('Before')).id);

    // Every server-side connection of the database is cut, as a PostgreSQL restart or a failover would.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const cut = await admin.query('select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()) t');
    await admin.end();
    expect((cut.rows[0] as { n: number }).n).toBeGreaterThan(2);

    const after = await eventually(async () => {
      const res = await a.request('POST', '/v1/os/spaces/save', { token, body: { name: 'After' } });
      return res.status === 200 ? ((await res.json()) as { id: string }) : undefined;
    }, 5000, 'a write on A after the cut');
    await seenOnB(after.id);
    // State relayed again too: a driver on A, its state on B.
    const driver = await TestDriver.register(`${a.url.replace('http', 'ws')}/driver`, 'after-cut');
    closers.push(() => driver.close());
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'd1', name: 'After cut', category: 'switch', state: { on: true } } });
    await eventually(async () => JSON.stringify(await (await b.request('GET', '/v1/os/state/snapshot', { token })).json()).includes('"on":true'), 5000, 'the state on B');
  }, 30_000);
});

describe('a restore on one instance of a cluster', () => {
  it('restarts the other instances into the restored database', async () => {
    const shared = { DATABASE_URL: await createTestDatabase(), ADMIN_PASSWORD: ADMIN.password, CLUSTER_LEASE_MS: String(LEASE_MS) };
    const a = await spawnServer({ ...shared, DATA_DIR: tmp('hcs-restore-a-') });
    const b = await spawnServer({ ...shared, DATA_DIR: tmp('hcs-restore-b-') });
    children.push(a, b);
    const login = await fetch(`${a.url}/app/os/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    let { accessToken: token } = (await login.json()) as { accessToken: string };
    const names = async (base: string) => ((await call(base, 'GET', '/v1/os/spaces', token)).body.spaces as Array<{ name: string }>).map((s) => s.name).sort();
    expect((await call(a.url, 'POST', '/v1/os/spaces/save', token, { name: 'Before' })).status).toBe(200);
    const backup = await call(a.url, 'POST', '/admin/backups', token, {});
    const archive = Buffer.from(await (await fetch(`${a.url}/admin/backups/${String(backup.body.name)}/download`, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer());
    expect((await call(b.url, 'POST', '/v1/os/spaces/save', token, { name: 'After' })).status).toBe(200);
    await eventually(async () => (await names(a.url)).includes('After'), 5000, 'A seeing the space B wrote');

    expect((await call(a.url, 'POST', '/admin/backups/restore', token, { archive: archive.toString('base64') })).status).toBe(202);
    for (const side of [a, b]) {
      await eventually(async () => side.lines.some((l) => l.includes('restarting the service')) && (await fetch(`${side.url}/readyz`)).status === 200, 20_000, 'back after the restore');
    }
    expect(b.lines.some((l) => l.includes('another instance restored a backup'))).toBe(true);
    const again = await fetch(`${b.url}/app/os/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = ((await again.json()) as { accessToken: string }).accessToken;
    await eventually(async () => JSON.stringify(await names(b.url)) === JSON.stringify(['Before']), 10_000, 'B serving the restored spaces');
    expect(await names(a.url)).toEqual(['Before']);
  }, 60_000);
});

