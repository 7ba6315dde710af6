import { describe, expect, it } from 'vitest';
import { CommandForwarding } from '../src/cluster/forwarding.js';
import { ClusterMembership, PeerTable, type MembershipDeps } from '../src/cluster/membership.js';
import type { ClusterMessage, ClusterSender } from '../src/cluster/messages.js';
import { ClusterWrites, Replication, type ReplicationDeps } from '../src/cluster/replication.js';
import type { LogicalDevice } from '../src/domain/devices/model.js';
import { createDomainEventBus, type DomainEvents } from '../src/domain/events.js';
import { ManualClock } from '../src/platform/clock.js';
import type { DomainError } from '../src/platform/errors.js';

/**
 * The three parts of a cluster node, each on its own, with a recording channel and a
 * ManualClock: what test/cluster.test.ts checks between two real instances, here part by part.
 */

type Sent = { to: string | undefined; m: ClusterMessage };
const recorder = (): ClusterSender & { sent: Sent[] } => {
  const sent: Sent[] = [];
  return { sent, send: (to, m) => sent.push({ to, m }) };
};
const device = (id: string, driverKey: string) => ({ id, driverKey, driverDeviceId: id }) as unknown as LogicalDevice;
const turn = () => new Promise((resolve) => setImmediate(resolve));
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('command forwarding', () => {
  const setup = (linkTimeoutMs?: number) => {
    const clock = new ManualClock();
    const channel = recorder();
    const peers = new PeerTable();
    peers.linkUp('b', { instanceId: 'ws:1', driverKey: 'lamp', ...(linkTimeoutMs !== undefined ? { actionTimeoutMs: linkTimeoutMs } : {}) });
    const executed: string[] = [];
    const forwarding = new CommandForwarding({
      channel,
      peers,
      registry: { find: (id) => (id === 'here' ? device('here', 'local-lamp') : id === 'unlinked' ? device('unlinked', 'gone') : undefined) },
      drivers: {
        linkOf: ((key: string) => (key === 'local-lamp' ? {} : undefined)) as never,
        execute: async (d, command) => {
          executed.push(`${d.id}:${command}`);
          if (command === 'fail') throw new Error('boom');
          return { done: command };
        },
      },
      timers: clock,
      settings: { actionTimeoutMs: 1000, forwardMarginMs: 200 },
    });
    return { clock, channel, peers, forwarding, executed };
  };

  it('sends a command to the instance holding the driver and resolves with its answer', async () => {
    const { channel, forwarding } = setup();
    expect(forwarding.remoteDrivers.holds('lamp')).toBe(true);
    expect(forwarding.remoteDrivers.holds('other')).toBe(false);
    const result = forwarding.remoteDrivers.execute(device('d1', 'lamp'), 'turn_on', { x: 1 }, { kind: 'ACTION' });
    expect(channel.sent).toHaveLength(1);
    const { to, m } = channel.sent[0]!;
    expect(to).toBe('b');
    expect(m).toMatchObject({ t: 'cmd', deviceId: 'd1', command: 'turn_on', params: { x: 1 }, kind: 'ACTION' });
    expect(forwarding.stats()).toEqual({ forwarded: 1, forwardedPending: 1, ranForOthers: 0 });
    forwarding.settle({ t: 'res', id: (m as { id: string }).id, ok: true, result: { on: true } });
    await expect(result).resolves.toEqual({ on: true });
    expect(forwarding.stats().forwardedPending).toBe(0);
  });

  it('raises the holder failure again, as it was raised there', async () => {
    const { channel, forwarding } = setup();
    const result = forwarding.remoteDrivers.execute(device('d1', 'lamp'), 'turn_on', {}, {});
    const id = (channel.sent[0]!.m as { id: string }).id;
    forwarding.settle({ t: 'res', id, ok: false, error: { kind: 'unavailable', code: 'DRIVER_OFFLINE', message: 'gone', retryAfterSeconds: 5 } });
    await expect(result).rejects.toMatchObject({ code: 'DRIVER_OFFLINE', kind: 'unavailable', retryAfterSeconds: 5 });
  });

  it("gives up on the injected timers after the command's time-out and the margin", async () => {
    const { clock, forwarding } = setup(3000);
    const own = forwarding.remoteDrivers.execute(device('d1', 'lamp'), 'turn_on', {}, {});
    const timed = forwarding.remoteDrivers.execute(device('d1', 'lamp'), 'turn_on', {}, { timeoutMs: 500 });
    const outcomes: string[] = [];
    own.catch((e: DomainError) => outcomes.push(`own:${e.code}`));
    timed.catch((e: DomainError) => outcomes.push(`timed:${e.code}`));
    clock.advance(699);
    await turn();
    expect(outcomes).toEqual([]);
    clock.advance(1);
    await turn();
    expect(outcomes).toEqual(['timed:DRIVER_TIMEOUT']);
    // The link's own time-out (3000) and the margin.
    clock.advance(2500);
    await turn();
    expect(outcomes).toEqual(['timed:DRIVER_TIMEOUT', 'own:DRIVER_TIMEOUT']);
    expect(forwarding.stats().forwardedPending).toBe(0);
  });

  it('fails the commands waiting on an instance that left, and all of them at stop', async () => {
    const { clock, peers, forwarding } = setup();
    peers.linkUp('c', { instanceId: 'ws:2', driverKey: 'fan' });
    const onB = forwarding.remoteDrivers.execute(device('d1', 'lamp'), 'turn_on', {}, {});
    const onC = forwarding.remoteDrivers.execute(device('d2', 'fan'), 'turn_on', {}, {});
    forwarding.peerGone('b');
    await expect(onB).rejects.toMatchObject({ code: 'DRIVER_DISCONNECTED', details: { instance: 'b' } });
    expect(forwarding.stats().forwardedPending).toBe(1);
    forwarding.stop();
    await expect(onC).rejects.toMatchObject({ code: 'DRIVER_DISCONNECTED' });
    expect(clock.pendingTimers).toBe(0);
  });

  it('refuses a command for a driver no instance holds', async () => {
    const { forwarding } = setup();
    await expect(forwarding.remoteDrivers.execute(device('d9', 'nowhere'), 'turn_on', {}, {})).rejects.toMatchObject({ code: 'DRIVER_OFFLINE' });
  });

  it('runs a forwarded command on a link of its own and answers, never forwarding it on', async () => {
    const { channel, forwarding, executed } = setup();
    forwarding.run('a', { t: 'cmd', id: 'r1', deviceId: 'here', command: 'turn_on', params: {} });
    forwarding.run('a', { t: 'cmd', id: 'r2', deviceId: 'unlinked', command: 'turn_on', params: {} });
    forwarding.run('a', { t: 'cmd', id: 'r3', deviceId: 'here', command: 'fail', params: {} });
    await turn();
    expect(executed).toEqual(['here:turn_on', 'here:fail']);
    const answers = Object.fromEntries(channel.sent.map(({ to, m }) => [(m as { id: string }).id, { to, m }]));
    expect(answers.r1).toEqual({ to: 'a', m: { t: 'res', id: 'r1', ok: true, result: { done: 'turn_on' } } });
    expect(answers.r2?.m).toMatchObject({ ok: false, error: { code: 'DRIVER_OFFLINE' } });
    expect(answers.r3?.m).toMatchObject({ ok: false, error: { code: 'DRIVER_ERROR' } });
    expect(forwarding.stats().ranForOthers).toBe(2);
  });
});

describe('replication', () => {
  const setup = () => {
    const clock = new ManualClock();
    const events = createDomainEventBus();
    const channel = recorder();
    const peers = new PeerTable();
    const applied: string[] = [];
    let placementChanges = 0;
    const deps: ReplicationDeps = {
      channel,
      peers,
      writes: new ClusterWrites({} as never),
      events,
      state: {
        applyReplicaState: (id, _state, changed) => applied.push(`state:${id}:${JSON.stringify(changed)}`),
        applyReplicaOnline: (id, online) => applied.push(`online:${id}:${online}`),
        applyReplicaMetrics: () => undefined,
        view: () => ({ online: true, state: {}, updatedAt: undefined }) as never,
      },
      registry: { applyReplica: () => undefined, find: () => undefined, list: () => [], load: async () => undefined },
      drivers: { list: () => [], linkOf: () => undefined },
      auth: { adoptToken: async () => undefined, forgetTokens: () => undefined, resyncTokens: async () => undefined },
      clock,
      placementChanged: () => placementChanges++,
    };
    const replication = new Replication(deps);
    return { events, channel, peers, replication, writes: deps.writes, applied, placementChanges: () => placementChanges };
  };
  const state = (deviceId: string, changed: Record<string, unknown>): DomainEvents['device.state_changed'] => ({ deviceId, state: { ...changed }, changed, at: 1 });

  it("sends a device's state changes of one turn as one message, after what came before them", async () => {
    const { events, channel, replication } = setup();
    replication.start();
    events.emit('device.state_changed', state('d1', { on: true }));
    events.emit('device.state_changed', state('d1', { level: 5 }));
    events.emit('device.state_changed', state('d2', { on: false }));
    expect(channel.sent).toEqual([]);
    await turn();
    expect(channel.sent.map(({ m }) => (m as { p: { deviceId: string; changed: unknown } }).p)).toMatchObject([
      { deviceId: 'd1', changed: { on: true, level: 5 } },
      { deviceId: 'd2', changed: { on: false } },
    ]);
    channel.sent.length = 0;
    // Any other event sends the pending states first: the order of what a device went through is kept.
    events.emit('device.state_changed', state('d1', { on: false }));
    events.emit('device.online_changed', { deviceId: 'd1', online: false, at: 2 });
    expect(channel.sent.map(({ m }) => (m as { e: string }).e)).toEqual(['device.state_changed', 'device.online_changed']);
    replication.stop();
  });

  it('keeps per-instance measurements and replicas to itself, and relays nothing once stopped', async () => {
    const { events, channel, replication } = setup();
    replication.start();
    events.emit('device.command_executed', { deviceId: 'd1' } as never);
    events.emit('device.online_changed', { deviceId: 'd1', online: true, at: 1 }, 'replica');
    events.emit('device.state_changed', state('d1', { on: true }));
    replication.stop();
    // Stopping sends what was pending, then nothing more.
    expect(channel.sent.map(({ m }) => (m as { e: string }).e)).toEqual(['device.state_changed']);
    events.emit('device.online_changed', { deviceId: 'd1', online: true, at: 1 });
    await turn();
    expect(channel.sent).toHaveLength(1);
  });

  it("applies another instance's events, keeps its driver links in the peer table and emits them as replicas", () => {
    const { events, peers, replication, applied, placementChanges } = setup();
    const replicas: string[] = [];
    events.onAny({}, (event, _p, origin) => replicas.push(`${String(event)}:${origin}`));
    replication.applyEvent('b', 'driver.connected', { driverKey: 'lamp', instanceId: 'ws:1', transport: 'websocket', actionTimeoutMs: 700, remoteAddress: '192.0.2.7', at: 1 });
    expect(peers.ids()).toEqual(['b']);
    // With its transport and address: DRIVER_AUTH=open's takeover check spans the instances.
    expect(peers.holding('lamp')).toEqual({ id: 'b', link: { driverKey: 'lamp', actionTimeoutMs: 700, transport: 'websocket', remoteAddress: '192.0.2.7' } });
    expect(peers.linksOfDriver('lamp')).toEqual([{ driverKey: 'lamp', actionTimeoutMs: 700, transport: 'websocket', remoteAddress: '192.0.2.7' }]);
    replication.applyEvent('b', 'device.state_changed', state('d1', { on: true }));
    replication.applyEvent('b', 'driver.disconnected', { driverKey: 'lamp', instanceId: 'ws:1', reason: 'closed', at: 2 });
    expect(peers.holding('lamp')).toBeUndefined();
    expect(placementChanges()).toBe(1);
    expect(applied).toEqual(['state:d1:{"on":true}']);
    // State goes to the state authority, which emits it itself; the rest is emitted here as a replica.
    expect(replicas).toEqual(['driver.connected:replica', 'driver.disconnected:replica']);
  });

  it('answers hello with what it holds, and takes a welcome in place of what it knew', () => {
    const { channel, peers, replication, applied } = setup();
    peers.linkUp('b', { instanceId: 'ws:old', driverKey: 'old' });
    replication.welcome('b', { t: 'welcome', links: [{ instanceId: 'ws:1', driverKey: 'lamp' }], online: [{ deviceId: 'd1', state: { on: true }, updatedAt: 5 }] });
    expect(peers.holding('old')).toBeUndefined();
    expect(peers.holding('lamp')?.id).toBe('b');
    expect(applied).toEqual(['state:d1:{}', 'online:d1:true']);
    replication.hello('c');
    expect(peers.ids()).toEqual(['b', 'c']);
    expect(channel.sent).toEqual([{ to: 'c', m: { t: 'welcome', links: [], online: [] } }]);
  });

  it('hands documents written elsewhere to the caches of their kind', () => {
    const { replication, writes } = setup();
    const seen: string[] = [];
    const stop = writes.watchDocuments('space', { changed: (id, doc) => seen.push(`${id}:${JSON.stringify(doc)}`), resync: async () => undefined });
    replication.document({ t: 'doc', kind: 'space', id: 's1', body: { name: 'Hall' } });
    replication.document({ t: 'doc', kind: 'zone', id: 'z1' });
    replication.document({ t: 'doc', kind: 'space', id: 's1' });
    stop();
    replication.document({ t: 'doc', kind: 'space', id: 's2' });
    expect(seen).toEqual(['s1:{"name":"Hall"}', 's1:undefined']);
  });
});

describe('membership', () => {
  it('drops an instance that left: its links, the devices only it reached, the commands waiting on it, then the leases', () => {
    const clock = new ManualClock(Date.UTC(2026, 1, 1));
    const events = createDomainEventBus();
    const peers = new PeerTable();
    peers.linkUp('b', { instanceId: 'ws:1', driverKey: 'lamp' });
    peers.linkUp('b', { instanceId: 'ws:2', driverKey: 'fan' });
    peers.linkUp('c', { instanceId: 'ws:3', driverKey: 'fan' });
    const order: string[] = [];
    const deps: MembershipDeps = {
      id: 'a',
      db: {} as never,
      channel: recorder(),
      peers,
      events,
      registry: { load: async () => void order.push('load'), list: () => [device('l1', 'lamp'), device('f1', 'fan')] },
      drivers: { linkOf: () => undefined },
      state: { applyReplicaOnline: (id, online, at) => void order.push(`online:${id}:${online}:${at}`) },
      clock,
      timers: clock,
      log: silent,
      settings: { leaseMs: 1500, version: 'test' },
      restoredAtStart: () => false,
      peerGone: (id) => void order.push(`forwarding:${id}`),
    };
    const membership = new ClusterMembership(deps);
    membership.placement.watch(() => order.push('placement'));
    events.on({}, 'driver.disconnected', (p) => order.push(`disconnected:${p.instanceId}:${p.at}`));
    membership.peerGone('b', 'it stopped');
    const at = clock.now();
    expect(order).toEqual(['load', `disconnected:ws:1:${at}`, `online:l1:false:${at}`, `disconnected:ws:2:${at}`, 'forwarding:b', 'placement']);
    expect(peers.ids()).toEqual(['c']);
    order.length = 0;
    membership.peerGone('b', 'again');
    expect(order).toEqual([]);
  });

  it('heartbeats on the injected timers, every third of the lease', () => {
    const clock = new ManualClock();
    const membership = new ClusterMembership({
      id: 'a',
      db: {} as never,
      channel: recorder(),
      peers: new PeerTable(),
      events: createDomainEventBus(),
      registry: { load: async () => undefined, list: () => [] },
      drivers: { linkOf: () => undefined },
      state: { applyReplicaOnline: () => undefined },
      clock,
      timers: clock,
      log: silent,
      settings: { leaseMs: 1500, version: 'test' },
      restoredAtStart: () => false,
      peerGone: () => undefined,
    });
    membership.startHeartbeat();
    expect(clock.pendingTimers).toBe(1);
    membership.stopHeartbeat();
    expect(clock.pendingTimers).toBe(0);
  });
});
