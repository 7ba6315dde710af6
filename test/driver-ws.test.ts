import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './support/server.js';
import { TestDriver, eventually } from './support/ws-driver.js';

let server: TestServer;
const drivers: TestDriver[] = [];
afterEach(async () => {
  for (const d of drivers.splice(0)) d.close();
  await server?.close();
});

const wsUrl = (s: TestServer) => `${s.url.replace('http', 'ws')}/driver`;

async function connectDriver(s: TestServer, driverKey: string, instanceId?: string) {
  const d = await TestDriver.register(wsUrl(s), driverKey, instanceId);
  drivers.push(d);
  return d;
}

type Device = { id: string; name: string; driverKey: string; driverDeviceId: string; online: boolean; state?: { state: Record<string, unknown>; confirmed: boolean } };

async function findDevice(s: TestServer, token: string, driverDeviceId: string): Promise<Device | undefined> {
  const res = await s.request('GET', '/v1/os/devices', { token });
  const { devices } = (await res.json()) as { devices: Device[] };
  return devices.find((d) => d.driverDeviceId === driverDeviceId);
}

describe('driver WebSocket round trip', () => {
  it('registers, discovers, reports state and answers a command through REST', async () => {
    server = await startServer();
    const token = await server.login();
    const driver = await connectDriver(server, 'acme.lights');
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp-1', name: 'Desk Lamp', category: 'light', commands: ['turn_on', 'turn_off'], state: { on: false } } });
    const device = await eventually(() => findDevice(server, token, 'lamp-1'), 3000, 'device listed');
    expect(device).toMatchObject({ name: 'Desk Lamp', driverKey: 'acme.lights', online: true });

    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp-1', state: { brightness: 40 } });
    await eventually(async () => {
      const detail = (await (await server.request('GET', `/v1/os/devices/${device.id}`, { token })).json()) as Device;
      return detail.state?.state.brightness === 40 && detail.state.state.on === false;
    });

    driver.serveActions((action) => ({ echoed: action.command, params: action.params, deviceId: action.deviceId }));
    const res = await server.request('POST', `/app/os/devices/${device.id}/command`, { token, body: { command: 'turn_on', params: { fade: 2 } } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, result: { echoed: 'turn_on', params: { fade: 2 }, deviceId: 'lamp-1' } });

    const unsupported = await server.request('POST', `/app/os/devices/${device.id}/command`, { token, body: { command: 'self_destruct' } });
    expect(unsupported.status).toBe(422);
    expect(((await unsupported.json()) as { error: { code: string } }).error.code).toBe('COMMAND_NOT_SUPPORTED');
  });

  it("answers 502 with the driver's error and 504 when the driver stays silent", async () => {
    server = await startServer({ env: { ACTION_TIMEOUT_MS: '300' } });
    const token = await server.login();
    const driver = await connectDriver(server, 'acme.fail');
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'd1', name: 'Flaky' } });
    const device = await eventually(() => findDevice(server, token, 'd1'));
    driver.serveActions((a) => {
      if (a.command === 'break') throw new Error('motor jammed');
      return 'fine';
    });
    const failing = await server.request('POST', `/v1/os/devices/${device.id}/command`, { token, body: { command: 'break' } });
    expect(failing.status).toBe(502);
    const err = (await failing.json()) as { error: { code: string; message: string; details: { driverError: string } } };
    expect(err.error.code).toBe('DRIVER_ERROR');
    expect(err.error.details.driverError).toBe('motor jammed');

    const silent = await connectDriver(server, 'acme.silent');
    silent.send({ type: 'DEVICE_DISCOVERED', device: { id: 's1', name: 'Silent' } });
    const quiet = await eventually(() => findDevice(server, token, 's1'));
    const timedOut = await server.request('POST', `/v1/os/devices/${quiet.id}/command`, { token, body: { command: 'anything' } });
    expect(timedOut.status).toBe(504);
    expect(((await timedOut.json()) as { error: { code: string } }).error.code).toBe('DRIVER_TIMEOUT');
    // A late answer for a timed-out action is ignored, not misapplied.
    const action = await silent.next((m) => m.type === 'ACTION');
    silent.send({ type: 'ACTION_RESULT', actionId: action.actionId, ok: true });
  });

  it('marks devices offline on disconnect, fails pending actions at once, and never duplicates on reconnect', async () => {
    server = await startServer();
    const token = await server.login();
    const first = await connectDriver(server, 'acme.blinds', 'blinds-A');
    first.send({ type: 'DEVICE_DISCOVERED', device: { id: 'b1', name: 'Blind' } });
    const device = await eventually(() => findDevice(server, token, 'b1'));
    const pending = server.request('POST', `/v1/os/devices/${device.id}/command`, { token, body: { command: 'open' } });
    await first.next((m) => m.type === 'ACTION');
    first.close();
    const res = await pending;
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('DRIVER_DISCONNECTED');
    await eventually(async () => (await findDevice(server, token, 'b1'))?.online === false);
    const offline = await server.request('POST', `/v1/os/devices/${device.id}/command`, { token, body: { command: 'open' } });
    expect(offline.status).toBe(503);

    const again = await connectDriver(server, 'acme.blinds', 'blinds-A');
    again.send({ type: 'DEVICE_DISCOVERED', device: { id: 'b1', name: 'Blind (renamed)' } });
    await eventually(async () => (await findDevice(server, token, 'b1'))?.online === true);
    const all = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Device[] };
    expect(all.devices.filter((d) => d.driverDeviceId === 'b1')).toHaveLength(1);
    expect(all.devices.find((d) => d.driverDeviceId === 'b1')).toMatchObject({ id: device.id, name: 'Blind (renamed)' });
  });

  it('replaces an instance that registers again with the same instanceId', async () => {
    server = await startServer();
    const token = await server.login();
    const old = await connectDriver(server, 'acme.tv', 'tv-1');
    old.send({ type: 'DEVICE_DISCOVERED', device: { id: 'tv', name: 'TV' } });
    const device = await eventually(() => findDevice(server, token, 'tv'));
    const fresh = await connectDriver(server, 'acme.tv', 'tv-1');
    expect((await old.whenClosed()).code).toBe(4001);
    fresh.serveActions(() => 'from the new connection');
    fresh.send({ type: 'STATE_UPDATE', deviceId: 'tv', state: { power: 'on' } });
    await eventually(async () => (await findDevice(server, token, 'tv'))?.online === true);
    const res = await server.request('POST', `/v1/os/devices/${device.id}/command`, { token, body: { command: 'power' } });
    expect(await res.json()).toEqual({ ok: true, result: 'from the new connection' });
  });

  it('hides removed devices unless asked, and keeps them with their record', async () => {
    server = await startServer();
    const token = await server.login();
    const driver = await connectDriver(server, 'acme.plug');
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'p1', name: 'Plug' } });
    const device = await eventually(() => findDevice(server, token, 'p1'));
    driver.send({ type: 'DEVICE_UPDATED', device: { id: 'p1', name: 'Kitchen Plug', properties: { watts: 1800 } } });
    await eventually(async () => (await findDevice(server, token, 'p1'))?.name === 'Kitchen Plug');
    driver.send({ type: 'DEVICE_REMOVED', deviceId: 'p1' });
    await eventually(async () => !(await findDevice(server, token, 'p1')));
    const withRemoved = (await (await server.request('GET', '/v1/os/devices?includeRemoved=true', { token })).json()) as { devices: Array<Device & { removed: boolean; properties: Record<string, unknown> }> };
    expect(withRemoved.devices.find((d) => d.id === device.id)).toMatchObject({ removed: true, properties: { watts: 1800 } });
    expect((await server.request('GET', `/v1/os/devices/${device.id}`, { token })).status).toBe(404);
  });
});

describe('driver WebSocket bad input', () => {
  it('answers each kind of bad message as documented and never disturbs other drivers', async () => {
    server = await startServer({ env: { DRIVER_REGISTRATION_TIMEOUT_MS: '300' } });
    const token = await server.login();
    const good = await connectDriver(server, 'acme.good');
    good.send({ type: 'DEVICE_DISCOVERED', device: { id: 'g1', name: 'Good' } });
    good.serveActions(() => 'still here');
    const device = await eventually(() => findDevice(server, token, 'g1'));

    const cases: Array<{ label: string; send?: string; code: number; status?: string }> = [
      { label: 'invalid JSON before registration', send: '{nope', code: 1007, status: 'INVALID_JSON' },
      { label: 'event before registration', send: JSON.stringify({ type: 'STATE_UPDATE', deviceId: 'x', state: {} }), code: 1008, status: 'INVALID_REGISTRATION' },
      { label: 'unsupported protocol version', send: JSON.stringify({ method: 'driver.register', driverKey: 'k', instanceId: 'i', protocolVersion: 2 }), code: 1008, status: 'UNSUPPORTED_PROTOCOL_VERSION' },
      { label: 'oversized message', send: JSON.stringify({ method: 'driver.register', pad: 'x'.repeat(1024 * 1024 + 10) }), code: 1009 },
      { label: 'no registration in time', code: 4000, status: 'REGISTRATION_TIMEOUT' },
    ];
    for (const c of cases) {
      const bad = await TestDriver.connect(wsUrl(server));
      drivers.push(bad);
      if (c.send) bad.send(c.send);
      const closed = await bad.whenClosed();
      expect(closed.code, c.label).toBe(c.code);
      if (c.status) expect(bad.received.find((m) => m.type === 'DRIVER_STATUS'), c.label).toMatchObject({ status: 'error', code: c.status });
    }

    const registered = await connectDriver(server, 'acme.noisy');
    registered.send({ type: 'TELEPORT', deviceId: 'x' });
    expect(await registered.next((m) => m.type === 'DRIVER_STATUS')).toMatchObject({ status: 'error', code: 'UNKNOWN_TYPE' });
    registered.send({ type: 'STATE_UPDATE', deviceId: 42 });
    expect(await registered.next((m) => m.type === 'DRIVER_STATUS')).toMatchObject({ status: 'error', code: 'INVALID_MESSAGE' });
    expect(registered.closed).toBeUndefined();
    registered.send('not json');
    expect((await registered.whenClosed()).code).toBe(1007);

    const res = await server.request('POST', `/v1/os/devices/${device.id}/command`, { token, body: { command: 'ping' } });
    expect(await res.json()).toEqual({ ok: true, result: 'still here' });
  });

  it('terminates a peer that stops answering pings', async () => {
    server = await startServer({ env: { DRIVER_PING_INTERVAL_MS: '150' } });
    const token = await server.login();
    const deaf = await TestDriver.connect(wsUrl(server), { autoPong: false });
    drivers.push(deaf);
    deaf.send({ method: 'driver.register', driverKey: 'acme.deaf', instanceId: 'deaf-1', protocolVersion: 1 });
    deaf.send({ type: 'DEVICE_DISCOVERED', device: { id: 'z', name: 'Zombie' } });
    await eventually(async () => (await findDevice(server, token, 'z'))?.online === true);
    await deaf.whenClosed(3000);
    await eventually(async () => (await findDevice(server, token, 'z'))?.online === false);
  });

  it('serves the driver WebSocket on DRIVER_WS_PORT when it is set', async () => {
    const probe = await import('node:net').then((net) => new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    }));
    server = await startServer({ env: { DRIVER_WS_PORT: String(probe) } });
    const token = await server.login();
    const d = await TestDriver.register(`ws://127.0.0.1:${probe}/driver`, 'acme.sep');
    drivers.push(d);
    d.send({ type: 'DEVICE_DISCOVERED', device: { id: 'sep', name: 'Separate' } });
    await eventually(() => findDevice(server, token, 'sep'));
    await expect(TestDriver.connect(wsUrl(server))).rejects.toThrow();
  });
});

describe('state authority', () => {
  it('serves the last known state after a restart, unconfirmed until the driver reports', async () => {
    server = await startServer();
    let token = await server.login();
    const driver = await connectDriver(server, 'acme.therm', 'therm-1');
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 't1', name: 'Thermostat', state: { temperature: 21 } } });
    driver.send({ type: 'STATE_UPDATE', deviceId: 't1', state: { target: 23 } });
    const device = await eventually(() => findDevice(server, token, 't1'));
    await eventually(async () => ((await (await server.request('GET', `/v1/os/devices/${device.id}`, { token })).json()) as Device).state?.state.target === 23);
    const dataDir = server.dataDir;
    driver.close();
    drivers.length = 0;
    await server.app.stop();

    server = await startServer({ dataDir });
    token = await server.login();
    const snapshot = (await (await server.request('GET', '/v1/os/state/snapshot', { token })).json()) as { devices: Record<string, { state: Record<string, unknown>; confirmed: boolean; online: boolean }> };
    expect(snapshot.devices[device.id]).toMatchObject({ state: { temperature: 21, target: 23 }, confirmed: false, online: false });

    const back = await connectDriver(server, 'acme.therm', 'therm-1');
    back.send({ type: 'STATE_UPDATE', deviceId: 't1', state: { temperature: 22 } });
    await eventually(async () => {
      const snap = (await (await server.request('GET', '/v1/os/state/snapshot', { token })).json()) as typeof snapshot;
      return snap.devices[device.id]?.confirmed === true && snap.devices[device.id]?.state.temperature === 22 && snap.devices[device.id]?.online;
    });
    // While nothing changes, the snapshot (and its `at`) is the same answer.
    const first = await (await server.request('GET', '/v1/os/state/snapshot', { token })).text();
    expect(await (await server.request('GET', '/v1/os/state/snapshot', { token })).text()).toBe(first);
  });

  it('keeps a bounded telemetry of state changes and metrics with range and limit', async () => {
    server = await startServer({ env: { TELEMETRY_MAX_ENTRIES: '5' } });
    const token = await server.login();
    const driver = await connectDriver(server, 'acme.meter');
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'm1', name: 'Meter' } });
    const device = await eventually(() => findDevice(server, token, 'm1'));
    for (let i = 0; i < 8; i++) driver.send({ type: 'STATE_UPDATE', deviceId: 'm1', state: { reading: i } });
    driver.send({ type: 'METRIC_UPDATE', deviceId: 'm1', metrics: { rssi: -60 } });
    const entries = await eventually(async () => {
      const res = (await (await server.request('GET', `/v1/os/state/telemetry/${device.id}`, { token })).json()) as { entries: Array<{ kind: string; data: Record<string, unknown> }> };
      return res.entries.some((e) => e.kind === 'metric') ? res.entries : undefined;
    });
    expect(entries.length).toBeLessThanOrEqual(5);
    expect(entries.at(-1)).toMatchObject({ kind: 'metric', data: { rssi: -60 } });
    const limited = (await (await server.request('GET', `/v1/os/state/telemetry/${device.id}?limit=2&kind=state`, { token })).json()) as { entries: Array<{ data: { reading: number } }> };
    expect(limited.entries.map((e) => e.data.reading)).toEqual([6, 7]);
    expect((await server.request('GET', `/v1/os/state/telemetry/${device.id}?limit=0`, { token })).status).toBe(400);
    expect((await server.request('GET', '/v1/os/state/telemetry/nope', { token })).status).toBe(404);
  });
});

describe('capability routes', () => {
  it('turn apps, icons, equalizer and scenes into driver actions, and refuse devices without them', async () => {
    server = await startServer();
    const token = await server.login();
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const driver = await connectDriver(server, 'acme.media');
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'tv', name: 'TV', capabilities: ['apps', 'equalizer', 'scenes'] } });
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Lamp' } });
    let iconRequests = 0;
    driver.serveActions((a) => {
      switch (a.command) {
        case 'apps.list': return { apps: [{ id: 'yt', name: 'Videos' }] };
        case 'apps.icon': iconRequests++; return { contentType: 'image/png', data: png.toString('base64') };
        case 'apps.launch': return { launched: (a.params as { appId: string }).appId };
        case 'equalizer.get': return { bands: { bass: 2 } };
        case 'equalizer.set': return { applied: a.params };
        case 'scenes.list': return { scenes: [{ id: 'movie', name: 'Movie night' }] };
        default: throw new Error(`unexpected ${String(a.command)}`);
      }
    });
    const tv = await eventually(() => findDevice(server, token, 'tv'));
    const lamp = await eventually(() => findDevice(server, token, 'lamp'));
    const base = `/api/os/devices/${tv.id}`;
    expect(await (await server.request('GET', `${base}/apps`, { token })).json()).toEqual({ deviceId: tv.id, apps: [{ id: 'yt', name: 'Videos' }] });
    for (let i = 0; i < 2; i++) {
      const icon = await server.request('GET', `${base}/apps/yt/icon`, { token });
      expect(icon.status).toBe(200);
      expect(icon.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await icon.arrayBuffer())).toEqual(png);
    }
    expect(iconRequests).toBe(1);
    expect(await (await server.request('POST', `${base}/apps/yt/launch`, { token })).json()).toEqual({ ok: true, result: { launched: 'yt' } });
    expect(await (await server.request('GET', `${base}/equalizer`, { token })).json()).toMatchObject({ equalizer: { bands: { bass: 2 } } });
    expect(await (await server.request('POST', `${base}/equalizer`, { token, body: { bands: { bass: 4 }, soundMode: 'movie' } })).json()).toEqual({ ok: true, result: { applied: { bands: { bass: 4 }, soundMode: 'movie' } } });
    expect(await (await server.request('GET', `${base}/scenes`, { token })).json()).toEqual({ deviceId: tv.id, scenes: [{ id: 'movie', name: 'Movie night' }] });

    for (const [method, path] of [['GET', 'apps'], ['GET', 'apps/x/icon'], ['POST', 'apps/x/launch'], ['GET', 'equalizer'], ['POST', 'equalizer'], ['GET', 'scenes']] as const) {
      const res = await server.request(method, `/api/os/devices/${lamp.id}/${path}`, { token, ...(method === 'POST' ? { body: {} } : {}) });
      expect(res.status, path).toBe(422);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CAPABILITY_NOT_SUPPORTED');
    }
  });

  it('dispatches an equalizer or sound-mode command by name, and only those', async () => {
    server = await startServer();
    const token = await server.login();
    const driver = await connectDriver(server, 'acme.soundbar');
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'bar', name: 'Soundbar', commands: [{ name: 'sound_mode_set' }, { name: 'bass_set' }, { name: 'power_on' }] } });
    const actions: Array<{ command: unknown; params: unknown }> = [];
    driver.serveActions((a) => {
      actions.push({ command: a.command, params: a.params });
      return { done: a.command };
    });
    const bar = await eventually(() => findDevice(server, token, 'bar'));
    const base = `/v1/os/devices/${bar.id}/equalizer`;
    const summary = (await (await server.request('GET', base, { token })).json()) as { commands: string[] };
    expect(summary.commands).toEqual(['sound_mode_set', 'bass_set']);

    const ok = await server.request('POST', base, { token, body: { command: 'sound_mode_set', params: { mode: 'movie' } } });
    expect(await ok.json()).toEqual({ ok: true, result: { done: 'sound_mode_set' } });
    expect(actions).toEqual([{ command: 'sound_mode_set', params: { mode: 'movie' } }]);

    const other = await server.request('POST', base, { token, body: { command: 'power_on' } });
    expect(other.status).toBe(422);
    expect(((await other.json()) as { error: { code: string; details: { supported: string[] } } }).error).toMatchObject({
      code: 'COMMAND_NOT_SUPPORTED',
      details: { supported: ['sound_mode_set', 'bass_set'] },
    });
    const mixed = await server.request('POST', base, { token, body: { command: 'bass_set', bands: { bass: 1 } } });
    expect(mixed.status).toBe(400);
    expect(((await mixed.json()) as { error: { code: string } }).error.code).toBe('EQUALIZER_FORMS_MIXED');
    expect(actions).toHaveLength(1);
  });

  it('updates tags, primary room and remote-source metadata', async () => {
    server = await startServer();
    const token = await server.login();
    const driver = await connectDriver(server, 'acme.avr');
    driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'avr', name: 'Receiver' } });
    const avr = await eventually(() => findDevice(server, token, 'avr'));
    const res = await server.request('POST', `/v1/os/devices/${avr.id}/metadata`, {
      token,
      body: { tags: ['audio', 'audio', 'living'], room: 'living-room', remoteSources: [{ id: 'console', label: 'Game console', input: 'hdmi2' }] },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ tags: ['audio', 'living'], room: 'living-room', remoteSources: [{ id: 'console', input: 'hdmi2' }] });
    const partial = (await (await server.request('POST', `/v1/os/devices/${avr.id}/metadata`, { token, body: { room: null } })).json()) as { tags: string[]; room: null };
    expect(partial).toMatchObject({ tags: ['audio', 'living'], room: null });
    // The device list is a cached snapshot: it must show the change at once.
    const listed = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Device[] };
    expect(listed.devices.find((d) => d.id === avr.id)).toMatchObject({ tags: ['audio', 'living'], room: null });
    expect((await server.request('POST', `/v1/os/devices/${avr.id}/metadata`, { token, body: { tags: 'audio' } })).status).toBe(400);
    expect((await server.request('POST', '/v1/os/devices/missing/metadata', { token, body: { tags: [] } })).status).toBe(404);
  });
});
