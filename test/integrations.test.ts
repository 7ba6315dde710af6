/**
 * The built-in integrations' shared parts: the back-off, the causes of network failures, the
 * action runner, the polling coordinator (all on a ManualClock: nothing here sleeps), and
 * `integrations.list` through REST with a Roku ECP emulator and an iTach emulator.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ACTION_FAILURE, BuiltInIntegrations, DeviceAvailability, runBuiltInAction, type ActionSpec, type BuiltInDriverContext } from '../src/domain/drivers/builtin.js';
import type { ActionFailure } from '../src/domain/drivers/driver-manager.js';
import { PollingCoordinator } from '../src/domain/drivers/coordinator.js';
import type { DriverEvent, ServerToDriverMessage } from '../src/domain/drivers/messages.js';
import { RokuEcpError } from '../src/adapters/roku/ecp-errors.js';
import { MpdError } from '../src/adapters/mpd/mpd-connection.js';
import { Backoff, backoffDelay } from '../src/platform/backoff.js';
import { ManualClock } from '../src/platform/clock.js';
import { errorCode, networkFailureOf, NetworkFailureError, rejected, UNREACHABLE_CODES } from '../src/platform/network-failures.js';
import { startItachEmulator } from './support/itach-emulator.js';
import { startRokuEcpEmulator } from './support/roku-ecp-emulator.js';
import { startServer, type TestServer } from './support/server.js';

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** Lets promise callbacks run (no timers, no sleeping). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

describe('back-off', () => {
  it('doubles from the first wait up to its cap, without jitter', () => {
    const policy = { initialMs: 1000, maxMs: 30_000 };
    expect([0, 1, 2, 3, 4, 5, 6, 7, 50].map((n) => backoffDelay(policy, n))).toEqual([0, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    expect(backoffDelay({ initialMs: 100, maxMs: 1000, factor: 3 }, 3)).toBe(900);
    expect(backoffDelay({ initialMs: 500, maxMs: 100 }, 1)).toBe(500);
  });

  it('counts a run of failures and starts over after a success', () => {
    const backoff = new Backoff({ initialMs: 200, maxMs: 1000 });
    expect(backoff.peek()).toBe(200);
    expect([backoff.fail(), backoff.fail(), backoff.fail(), backoff.fail()]).toEqual([200, 400, 800, 1000]);
    expect(backoff.failures).toBe(4);
    backoff.succeed();
    expect(backoff.failures).toBe(0);
    expect(backoff.fail()).toBe(200);
  });
});

describe('network failures', () => {
  const coded = (code: string) => Object.assign(new Error(code), { code });

  it('maps system codes, time-outs and errors that know their cause, once for every adapter', () => {
    for (const code of ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'ENOTFOUND', 'EPIPE']) {
      expect(UNREACHABLE_CODES.has(code)).toBe(true);
      expect(networkFailureOf(coded(code))).toBe('unreachable');
    }
    expect(networkFailureOf(coded('ETIMEDOUT'))).toBe('timeout');
    expect(networkFailureOf(Object.assign(new Error('aborted'), { name: 'TimeoutError' }))).toBe('timeout');
    // fetch wraps the socket's error in `cause`.
    const fetchFailed = new TypeError('fetch failed', { cause: coded('ECONNREFUSED') });
    expect(errorCode(fetchFailed)).toBe('ECONNREFUSED');
    expect(networkFailureOf(fetchFailed)).toBe('unreachable');
    expect(networkFailureOf(rejected('bad input'))).toBe('rejected');
    expect(networkFailureOf(new NetworkFailureError('unsupported', 'no such command'))).toBe('unsupported');
    // The device's own trouble has no network cause.
    expect(networkFailureOf(new Error('the device answered 500'))).toBeUndefined();
    expect(networkFailureOf(coded('EACCES'))).toBeUndefined();
  });

  it("the adapters' typed errors say their cause", () => {
    const request = { host: '127.0.0.1', port: 8060, method: 'POST', path: '/keypress/Home' };
    expect(new RokuEcpError('unreachable', 'x', request).networkFailure).toBe('unreachable');
    expect(new RokuEcpError('invalid_request', 'x', request).networkFailure).toBe('rejected');
    expect(new RokuEcpError('http_status', 'x', request, 404).networkFailure).toBe('rejected');
    expect(networkFailureOf(new RokuEcpError('http_status', 'x', request, 500))).toBeUndefined();
    expect(networkFailureOf(new MpdError('ack', 'unknown command'))).toBe('rejected');
    expect(networkFailureOf(new MpdError('closed', 'gone'))).toBe('unreachable');
  });

  it("turns each cause into the driver manager's action failure", () => {
    expect(ACTION_FAILURE).toEqual({ unreachable: 'unreachable', timeout: 'timeout', rejected: 'rejected', unsupported: 'rejected' });
  });
});

/** A context that records what an integration tells the hub. */
function recordingContext() {
  const events: DriverEvent[] = [];
  const online: Array<[string, boolean]> = [];
  const failed: Array<{ actionId: string; failure: ActionFailure; reason: string }> = [];
  const context: BuiltInDriverContext = {
    emit: (event) => events.push(event),
    setOnline: (id, value) => online.push([id, value]),
    fail: (actionId, failure, reason) => failed.push({ actionId, failure, reason }),
  };
  return { context, events, online, failed };
}

describe('the action runner', () => {
  const action = (command: string, params: Record<string, unknown> = {}): ServerToDriverMessage => ({ type: 'ACTION', actionId: `a-${command}`, deviceId: 'd1', command, params });

  function setup() {
    const clock = new ManualClock(0);
    const rec = recordingContext();
    const outcomes: unknown[] = [];
    let aborted: AbortSignal | undefined;
    const handlers: Record<string, (t: string, p: Record<string, unknown>, s: { signal: AbortSignal }) => unknown> = {
      ok: (t, p) => ({ target: t, echo: p.x }),
      refuse: () => {
        throw rejected('x must be a number');
      },
      gone: async () => {
        throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      },
      broken: async () => {
        throw new Error('the device answered 500');
      },
      hang: (_t, _p, { signal }) => {
        aborted = signal;
        return new Promise(() => undefined);
      },
    };
    const spec: ActionSpec<string> = {
      context: () => rec.context,
      timers: clock,
      timeoutMs: 1000,
      target: (deviceId) => {
        if (deviceId !== 'd1') throw new NetworkFailureError('unreachable', 'not controlled');
        return deviceId;
      },
      handler: (command) => handlers[command],
      settled: (_t, outcome) => outcomes.push(outcome),
    };
    return { clock, rec, spec, outcomes, signal: () => aborted };
  }

  it('answers ACTION_RESULT with what the handler returns', async () => {
    const { rec, spec, outcomes } = setup();
    expect(runBuiltInAction(spec, action('ok', { x: 1 }))).toBe(true);
    await settle();
    expect(rec.events).toEqual([{ type: 'ACTION_RESULT', actionId: 'a-ok', ok: true, result: { target: 'd1', echo: 1 } }]);
    expect(outcomes).toEqual([{ ok: true }]);
    expect(runBuiltInAction(spec, { type: 'PING', id: '1' })).toBe(false);
  });

  it('fails by cause: refused, unreachable, unknown command, no such device; the device\'s own error is ACTION_RESULT ok:false', async () => {
    const { rec, spec } = setup();
    runBuiltInAction(spec, action('refuse'));
    runBuiltInAction(spec, action('gone'));
    runBuiltInAction(spec, action('dance'));
    runBuiltInAction(spec, { ...(action('ok') as { type: 'ACTION'; actionId: string; deviceId: string; command: string; params: Record<string, unknown> }), actionId: 'a-other', deviceId: 'd2' });
    runBuiltInAction(spec, action('broken'));
    await settle();
    expect(rec.failed.map((f) => [f.actionId, f.failure])).toEqual([
      ['a-dance', 'rejected'],
      ['a-other', 'unreachable'],
      ['a-refuse', 'rejected'],
      ['a-gone', 'unreachable'],
    ]);
    expect(rec.failed.find((f) => f.actionId === 'a-dance')?.reason).toBe('unknown command dance');
    expect(rec.events).toEqual([{ type: 'ACTION_RESULT', actionId: 'a-broken', ok: false, error: 'the device answered 500' }]);
  });

  it('bounds the handler on the injected timers: a time-out fails the action and aborts the handler', async () => {
    const { clock, rec, spec, outcomes, signal } = setup();
    runBuiltInAction(spec, action('hang'));
    await settle();
    clock.advance(999);
    expect(rec.failed).toEqual([]);
    clock.advance(1);
    expect(rec.failed).toEqual([{ actionId: 'a-hang', failure: 'timeout', reason: 'no answer within 1000 ms' }]);
    expect(signal()?.aborted).toBe(true);
    expect(outcomes).toMatchObject([{ ok: false, failure: 'timeout' }]);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('the polling coordinator', () => {
  function setup(options: { fail?: (id: string, n: number) => boolean; hold?: boolean } = {}) {
    const clock = new ManualClock(0);
    const rec = recordingContext();
    const polls: Array<{ id: string; at: number }> = [];
    const pending: Array<() => void> = [];
    const coordinator = new PollingCoordinator({
      name: 'test',
      intervalMs: 1000,
      backoff: { initialMs: 500, maxMs: 4000 },
      clock,
      timers: clock,
      update: async (id) => {
        polls.push({ id, at: clock.now() });
        if (options.hold) await new Promise<void>((resolve) => pending.push(resolve));
        if (options.fail?.(id, polls.filter((p) => p.id === id).length)) throw Object.assign(new Error(`connect ECONNREFUSED ${id}`), { code: 'ECONNREFUSED' });
      },
    });
    /** Moves the clock, letting each poll it starts finish before the next timer. */
    const advance = async (ms: number, step = 100) => {
      for (let moved = 0; moved < ms; moved += step) {
        clock.advance(Math.min(step, ms - moved));
        await coordinator.idle();
      }
    };
    return { clock, rec, polls, pending, coordinator, advance };
  }

  it('polls a device at once, then every interval while it answers', async () => {
    const { rec, polls, coordinator, advance } = setup();
    coordinator.add('tv');
    expect(polls).toEqual([]);
    coordinator.start(rec.context);
    await coordinator.idle();
    expect(polls.map((p) => p.at)).toEqual([0]);
    await advance(999, 999);
    expect(polls).toHaveLength(1);
    await advance(3001);
    expect(polls.map((p) => p.at)).toEqual([0, 1000, 2000, 3000, 4000]);
    expect(coordinator.available('tv')).toBe(true);
    expect(rec.online).toEqual([['tv', true]]);
    expect(coordinator.status()).toEqual({ status: 'running', devices: 1 });
  });

  it('backs off on failures (500, 1000, 2000, 4000, capped), marks the device unavailable once, and available on the next success', async () => {
    let down = true;
    const { rec, polls, coordinator, advance } = setup({ fail: () => down });
    coordinator.start(rec.context);
    coordinator.add('tv');
    await coordinator.idle();
    await advance(15_500);
    expect(polls.map((p) => p.at)).toEqual([0, 500, 1500, 3500, 7500, 11_500, 15_500]);
    expect(coordinator.failures('tv')).toBe(7);
    expect(rec.online).toEqual([['tv', false]]);
    expect(coordinator.status()).toEqual({ status: 'degraded', devices: 1, unreachable: 1, lastError: 'connect ECONNREFUSED tv' });

    down = false;
    await advance(4000);
    expect(polls.at(-1)?.at).toBe(19_500);
    expect(rec.online).toEqual([
      ['tv', false],
      ['tv', true],
    ]);
    expect(coordinator.failures('tv')).toBe(0);
    // Back on the interval.
    await advance(1000);
    expect(polls.at(-1)?.at).toBe(20_500);
    expect(coordinator.status()).toEqual({ status: 'running', devices: 1 });
  });

  it('one failing device degrades only itself', async () => {
    const { rec, coordinator, advance } = setup({ fail: (id) => id === 'b' });
    coordinator.start(rec.context);
    coordinator.add('a');
    coordinator.add('b');
    await advance(2000);
    expect(coordinator.available('a')).toBe(true);
    expect(coordinator.available('b')).toBe(false);
    expect(coordinator.status()).toMatchObject({ status: 'degraded', devices: 2, unreachable: 1 });
  });

  it('refreshes on demand: now, after a delay unless a poll is due sooner, and once more after a poll in flight', async () => {
    const { rec, polls, pending, coordinator, clock } = setup({ hold: true });
    coordinator.start(rec.context);
    coordinator.add('tv');
    expect(polls).toHaveLength(1);
    pending.shift()!();
    await coordinator.idle();

    coordinator.refresh('tv');
    expect(polls.map((p) => p.at)).toEqual([0, 0]);
    // Asked for twice while it runs: one more poll, right after it.
    coordinator.refresh('tv');
    coordinator.refresh('tv', 300);
    pending.shift()!();
    await settle();
    expect(polls).toHaveLength(3);
    pending.shift()!();
    await coordinator.idle();

    clock.advance(100);
    coordinator.refresh('tv', 300);
    clock.advance(299);
    expect(polls).toHaveLength(3);
    clock.advance(1);
    expect(polls.map((p) => p.at)).toEqual([0, 0, 0, 400]);
    pending.shift()!();
    await coordinator.idle();
    // A refresh later than the poll already due leaves it be.
    coordinator.refresh('tv', 5000);
    clock.advance(1000);
    expect(polls.map((p) => p.at)).toEqual([0, 0, 0, 400, 1400]);
    pending.shift()!();
    await coordinator.idle();
  });

  it('takes failures and successes learnt elsewhere (a command, a push channel)', async () => {
    const { rec, polls, coordinator, advance } = setup();
    coordinator.start(rec.context);
    coordinator.add('tv');
    await coordinator.idle();
    coordinator.setUpdateError('tv', new Error('channel lost'));
    expect(coordinator.available('tv')).toBe(false);
    expect(rec.online).toEqual([
      ['tv', true],
      ['tv', false],
    ]);
    // Read again after the back-off (500 ms), not the interval.
    await advance(500);
    expect(polls.map((p) => p.at)).toEqual([0, 500]);
    expect(coordinator.available('tv')).toBe(true);
    coordinator.setUpdateError('tv', new Error('channel lost'));
    coordinator.setUpdated('tv');
    expect(rec.online.slice(-2)).toEqual([
      ['tv', false],
      ['tv', true],
    ]);
    await advance(999);
    expect(polls).toHaveLength(2);
    await advance(1);
    expect(polls).toHaveLength(3);
  });

  it('stops cleanly: no timer left, no poll after, a poll in flight ignored', async () => {
    const { rec, polls, pending, coordinator, clock } = setup({ hold: true, fail: () => true });
    coordinator.start(rec.context);
    coordinator.add('a');
    coordinator.add('b');
    pending.shift()!();
    await settle();
    expect(rec.online).toEqual([['a', false]]);
    coordinator.stop();
    pending.shift()!();
    await coordinator.idle();
    expect(rec.online).toEqual([['a', false]]);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(60_000);
    expect(polls).toHaveLength(2);
    expect(coordinator.status()).toMatchObject({ status: 'off', devices: 2 });
    coordinator.refresh('a');
    expect(polls).toHaveLength(2);
    // Removed devices are forgotten.
    coordinator.remove('b');
    expect(coordinator.has('b')).toBe(false);
    expect(coordinator.status()).toMatchObject({ devices: 1 });
  });
});

describe('integration status', () => {
  it('availability: running, degraded with the unreachable count and why, off while unbound; the registry lists each', async () => {
    const availability = new DeviceAvailability();
    const rec = recordingContext();
    availability.track('a');
    availability.track('b');
    expect(availability.status()).toEqual({ status: 'off', devices: 2 });
    availability.bind(rec.context);
    expect(availability.status()).toEqual({ status: 'running', devices: 2 });
    availability.set('a', false, new Error('no route to host'));
    availability.set('a', false);
    expect(rec.online).toEqual([['a', false]]);
    availability.reassert('b');
    expect(rec.online).toEqual([
      ['a', false],
      ['b', false],
    ]);
    expect(availability.status()).toEqual({ status: 'degraded', devices: 2, unreachable: 1, lastError: 'no route to host' });

    const registry = new BuiltInIntegrations();
    registry.register({ key: 'x', name: 'X', status: () => availability.status() });
    const unlist = registry.register({ key: 'y', name: 'Y', status: async () => Promise.reject(new Error('cannot tell')) });
    expect(await registry.list()).toEqual([
      { key: 'x', name: 'X', status: 'degraded', devices: 2, unreachable: 1, lastError: 'no route to host' },
      { key: 'y', name: 'Y', status: 'failed', lastError: 'cannot tell' },
    ]);
    unlist();
    expect((await registry.list()).map((r) => r.key)).toEqual(['x']);
  });
});

describe('integrations.list through REST', () => {
  interface Integration {
    key: string;
    kind: string;
    status: string;
    devices: number;
    unreachable?: number;
    lastError?: string;
  }

  async function integrations(s: TestServer, token: string): Promise<Integration[]> {
    const res = await s.request('GET', '/api/integration', { token });
    expect(res.status).toBe(200);
    const list = ((await res.json()) as { data: Integration[] }).data;
    // The OS API answers the same list.
    const os = await s.request('GET', '/v1/os/integrations', { token });
    expect(os.status).toBe(200);
    expect(((await os.json()) as { integrations: Integration[] }).integrations.map((i) => i.key)).toEqual(list.map((i) => i.key));
    return list;
  }

  /** Reads the list until `match` holds: the network I/O a poll starts takes real (short) time. */
  async function until(s: TestServer, token: string, match: (list: Integration[]) => boolean): Promise<Integration[]> {
    let list: Integration[] = [];
    for (let i = 0; i < 250; i++) {
      list = await integrations(s, token);
      if (match(list)) return list;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`never matched: ${JSON.stringify(list)}`);
  }

  it('lists every built-in integration with its real status: a stopped Roku degrades Roku at its next poll, an unreachable extender GENERIC_IR', async () => {
    const roku = await startRokuEcpEmulator({ userDeviceName: 'Den TV' });
    let rokuOpen = true;
    closers.push(() => (rokuOpen ? roku.close() : undefined));
    const itach = await startItachEmulator();
    let itachOpen = true;
    closers.push(() => (itachOpen ? itach.close() : undefined));
    // The hub's own timers are the manual clock's: the coordinator polls when the test moves time.
    const clock = new ManualClock(Date.now());
    const noMpd = await closedPort();
    const s = await startServer({
      clock,
      timers: clock,
      env: { ROKU_POLL_INTERVAL_MS: '10000', ROKU_REQUEST_TIMEOUT_MS: '2000', IR_EXTENDER_PORT: String(itach.port), MPD_TARGETS: `den=127.0.0.1:${noMpd}` },
    });
    closers.push(() => s.close());
    const token = await s.login();

    const initial = await integrations(s, token);
    expect(initial.filter((i) => i.kind === 'builtin').map((i) => i.key).sort()).toEqual(['GENERIC_IR', 'androidtv', 'cast', 'media-bridge', 'mpd', 'roku']);
    expect(initial.find((i) => i.key === 'roku')).toMatchObject({ status: 'running', devices: 0 });
    expect(initial.find((i) => i.key === 'GENERIC_IR')).toMatchObject({ status: 'running', devices: 0 });
    // An MPD target nothing answers at.
    await until(s, token, (list) => list.some((i) => i.key === 'mpd' && i.status === 'degraded'));
    expect((await integrations(s, token)).find((i) => i.key === 'mpd')).toMatchObject({ status: 'degraded', devices: 1, unreachable: 1, lastError: expect.stringContaining('ECONNREFUSED') });

    // A Roku added by address: polled at once, announced, running.
    // Discovery listens for its window on the hub's timers: the test moves the clock through it.
    const adding = s.request('POST', '/app/os/media-services/endpoints/discover', { token, body: { timeoutMs: 100, probe: [{ kind: 'roku', host: roku.host, port: roku.port }] } });
    let settled = false;
    void adding.finally(() => (settled = true));
    for (let i = 0; i < 100 && !settled; i++) await clock.advanceAsync(50);
    const added = await adding;
    expect(added.status).toBe(200);
    const deviceId = `roku:${roku.serialNumber}`;
    const device = async () => {
      const { devices } = (await (await s.request('GET', '/v1/os/devices', { token })).json()) as { devices: Array<{ driverKey: string; driverDeviceId: string; online: boolean }> };
      return devices.find((d) => d.driverKey === 'roku' && d.driverDeviceId === deviceId);
    };
    for (let i = 0; i < 250 && !(await device())?.online; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await device())?.online).toBe(true);
    expect((await integrations(s, token)).find((i) => i.key === 'roku')).toMatchObject({ kind: 'builtin', status: 'running', devices: 1 });

    // Stopped: nothing changes until the coordinator's next poll, which finds it gone.
    await roku.close();
    rokuOpen = false;
    expect((await integrations(s, token)).find((i) => i.key === 'roku')).toMatchObject({ status: 'running' });
    clock.advance(10_000);
    const degraded = await until(s, token, (list) => list.some((i) => i.key === 'roku' && i.status === 'degraded'));
    expect(degraded.find((i) => i.key === 'roku')).toMatchObject({ kind: 'builtin', status: 'degraded', devices: 1, unreachable: 1, lastError: expect.stringContaining('Roku ECP GET') });
    expect((await device())?.online).toBe(false);

    // An IR device whose extender answers, then stops answering.
    const saved = await s.request('POST', '/v1/os/devices/ir/save', { token, body: { name: 'Projector (IR)', extenderIp: '127.0.0.1', irCommands: { power: { freq_khz: 38, raw: [9000, 4500, 560, 560] } } } });
    expect(saved.status).toBe(200);
    const ir = (await saved.json()) as { id: string };
    expect((await s.request('POST', `/v1/os/devices/${ir.id}/command`, { token, body: { command: 'power' } })).status).toBe(200);
    expect((await integrations(s, token)).find((i) => i.key === 'GENERIC_IR')).toMatchObject({ status: 'running', devices: 1 });
    await itach.close();
    itachOpen = false;
    const refused = await s.request('POST', `/v1/os/devices/${ir.id}/command`, { token, body: { command: 'power' } });
    expect(refused.status).toBe(502);
    const generic = (await integrations(s, token)).find((i) => i.key === 'GENERIC_IR');
    expect(generic?.status).not.toBe('running');
    expect(generic).toMatchObject({ status: 'degraded', devices: 1, unreachable: 1, lastError: expect.stringContaining('refused the connection') });
  });
});
