import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock.js';
import { startServer, type TestServer } from './support/server.js';
import { TestDriver, eventually } from './support/ws-driver.js';

let server: TestServer;
const drivers: TestDriver[] = [];
afterEach(async () => {
  for (const d of drivers.splice(0)) d.close();
  await server?.close();
});

type Run = { id: string; status: string; trigger: string; steps: Array<{ path: string; status: string; type: string }>; error?: { code: string; step?: string } };
type ErrorBody = { error: { code: string; message: string; details?: Record<string, unknown> } };

/** A server on a manual clock, a driver with a lamp and a fan, and the commands it received. */
async function home(options: { clock?: ManualClock; dataDir?: string } = {}) {
  const clock = options.clock ?? new ManualClock(Date.UTC(2026, 10, 21, 8, 0));
  server = await startServer({ clock, timers: clock, ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
  const token = await server.login();
  const driver = await TestDriver.register(`${server.url.replace('http', 'ws')}/driver`, 'acme.home', `home-${Math.random()}`);
  drivers.push(driver);
  const received: string[] = [];
  driver.serveActions((a) => {
    received.push(`${String(a.deviceId)}:${String(a.command)}`);
    if (a.command === 'jam') throw new Error('jammed');
    return { done: a.command };
  });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: 'Lamp', category: 'light', commands: ['turn_on', 'turn_off', 'jam'] } });
  driver.send({ type: 'DEVICE_DISCOVERED', device: { id: 'fan', name: 'Fan', commands: ['turn_on', 'turn_off'] } });
  const ids = await eventually(async () => {
    const { devices } = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: Array<{ id: string; driverDeviceId: string }> };
    const lamp = devices.find((d) => d.driverDeviceId === 'lamp');
    const fan = devices.find((d) => d.driverDeviceId === 'fan');
    return lamp && fan ? { lamp: lamp.id, fan: fan.id } : undefined;
  });
  const save = async (body: unknown) => server.request('POST', '/v1/os/programs/save', { token, body });
  const saved = async (body: unknown) => {
    const res = await save(body);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as { id: string; name: string; steps: unknown[]; timer: unknown };
  };
  return { clock, token, driver, received, ids, save, saved };
}

describe('programs', () => {
  it('saves canonical steps and YAML, and runs steps in order', async () => {
    const { token, received, ids, saved } = await home();
    const canonical = await saved({
      name: 'Evening',
      steps: [
        { type: 'command', deviceId: ids.lamp, command: 'turn_on' },
        { type: 'command', deviceId: ids.fan, command: 'turn_on' },
        { type: 'command', deviceId: ids.lamp, command: 'turn_off' },
      ],
    });
    const run = (await (await server.request('POST', `/v1/os/programs/${canonical.id}/run?wait=true`, { token })).json()) as Run;
    expect(run.status).toBe('succeeded');
    expect(run.steps.map((s) => s.path)).toEqual(['0', '1', '2']);
    expect(received).toEqual(['lamp:turn_on', 'fan:turn_on', 'lamp:turn_off']);

    const yaml = await saved({ yaml: `name: From YAML\nsteps:\n  - device: "${ids.fan}"\n    command: turn_off\n` });
    expect(yaml.steps).toEqual([{ type: 'command', deviceId: ids.fan, command: 'turn_off' }]);
    const list = (await (await server.request('GET', '/v1/os/programs', { token })).json()) as { programs: Array<{ id: string; nextFireAt: number | null; running: boolean }> };
    expect(list.programs.map((p) => p.id)).toEqual([canonical.id, yaml.id]);
    expect(list.programs[0]).toMatchObject({ nextFireAt: null, running: false });
  });

  it('answers YAML and schema errors with 400 and a position', async () => {
    const { save, ids } = await home();
    const bad = await save({ yaml: `name: Broken\nsteps:\n  - device: "${ids.lamp}"\n    comand: turn_on\n` });
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as ErrorBody;
    expect(body.error.code).toBe('YAML_ERROR');
    expect(body.error.details).toMatchObject({ line: expect.any(Number), column: expect.any(Number) });
    const syntax = (await (await save({ yaml: 'name: [unclosed\nsteps: []\n' })).json()) as ErrorBody;
    expect(syntax.error.code).toBe('YAML_ERROR');
    expect(syntax.error.details).toMatchObject({ line: expect.any(Number), column: expect.any(Number) });
    expect((await save({ name: 'Both', steps: [], yaml: 'steps: []' })).status).toBe(400);
    expect((await save({ name: 'Bad step', steps: [{ type: 'teleport' }] })).status).toBe(400);
  });

  it('stops at a failing step, records it, and keeps a readable history', async () => {
    const { token, received, ids, saved } = await home();
    const program = await saved({
      name: 'Fragile',
      steps: [
        { type: 'command', deviceId: ids.lamp, command: 'turn_on' },
        { type: 'command', deviceId: ids.lamp, command: 'jam' },
        { type: 'command', deviceId: ids.fan, command: 'turn_on' },
      ],
    });
    const run = (await (await server.request('POST', `/v1/os/programs/${program.id}/run?wait=true`, { token })).json()) as Run;
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'DRIVER_ERROR', step: '1' });
    expect(received).toEqual(['lamp:turn_on', 'lamp:jam']);
    const history = (await (await server.request('GET', `/v1/os/programs/${program.id}/runs`, { token })).json()) as { runs: Run[] };
    expect(history.runs[0]).toMatchObject({ id: run.id, status: 'failed' });
    expect((await (await server.request('GET', `/v1/os/programs/runs/${run.id}`, { token })).json()) as Run).toMatchObject({ status: 'failed' });
  });

  it('times a step out on the injected clock, without sleeping', async () => {
    const { token, ids, saved, driver, clock } = await home();
    const program = await saved({ name: 'Waits', steps: [{ type: 'wait_until', condition: { deviceId: ids.lamp, key: 'on', op: 'truthy' }, timeoutMs: 60_000 }] });
    const started = (await (await server.request('POST', `/v1/os/programs/${program.id}/run`, { token })).json()) as Run;
    expect(started.status).toBe('running');
    await clock.advanceAsync(61_000, 10_000);
    const timedOut = await eventually(async () => {
      const r = (await (await server.request('GET', `/v1/os/programs/runs/${started.id}`, { token })).json()) as Run;
      return r.status !== 'running' ? r : undefined;
    });
    expect(timedOut).toMatchObject({ status: 'failed', error: { code: 'STEP_TIMEOUT' } });

    const again = (await (await server.request('POST', `/v1/os/programs/${program.id}/run`, { token })).json()) as Run;
    driver.send({ type: 'STATE_UPDATE', deviceId: 'lamp', state: { on: true } });
    const satisfied = await eventually(async () => {
      const r = (await (await server.request('GET', `/v1/os/programs/runs/${again.id}`, { token })).json()) as Run;
      return r.status !== 'running' ? r : undefined;
    });
    expect(satisfied.status).toBe('succeeded');
  });

  it('applies the concurrency policy to a second run', async () => {
    const { token, saved, clock } = await home();
    const run = (id: string) => server.request('POST', `/v1/os/programs/${id}/run`, { token });
    const reject = await saved({ name: 'Reject', concurrency: 'reject', steps: [{ type: 'delay', ms: 10_000 }] });
    expect((await run(reject.id)).status).toBe(200);
    const second = await run(reject.id);
    expect(second.status).toBe(409);
    expect(((await second.json()) as ErrorBody).error.code).toBe('PROGRAM_RUNNING');

    const restart = await saved({ name: 'Restart', concurrency: 'restart', steps: [{ type: 'delay', ms: 10_000 }] });
    const first = (await (await run(restart.id)).json()) as Run;
    const replacement = (await (await run(restart.id)).json()) as Run;
    expect(replacement.id).not.toBe(first.id);
    expect(((await (await server.request('GET', `/v1/os/programs/runs/${first.id}`, { token })).json()) as Run).status).toBe('cancelled');

    const queue = await saved({ name: 'Queue', concurrency: 'queue', steps: [{ type: 'delay', ms: 1_000 }] });
    const q1 = (await (await run(queue.id)).json()) as Run;
    const q2Pending = run(queue.id);
    await clock.advanceAsync(1_000, 500);
    const q2 = (await (await q2Pending).json()) as Run;
    expect(((await (await server.request('GET', `/v1/os/programs/runs/${q1.id}`, { token })).json()) as Run).status).toBe('succeeded');
    expect(q2.id).not.toBe(q1.id);
    await clock.advanceAsync(20_000, 1_000);
  });

  it('refuses a program that would run itself through other programs', async () => {
    const { saved, save } = await home();
    const b = await saved({ name: 'B', steps: [{ type: 'delay', ms: 1 }] });
    const a = await saved({ name: 'A', steps: [{ type: 'run_program', programId: b.id }] });
    const loop = await save({ id: b.id, name: 'B', steps: [{ type: 'run_program', programId: a.id }] });
    expect(loop.status).toBe(422);
    const body = (await loop.json()) as ErrorBody;
    expect(body.error.code).toBe('PROGRAM_RECURSION');
    expect(body.error.details?.cycle).toEqual(expect.arrayContaining([a.id, b.id]));
    const self = await save({ name: 'Self', id: 'self', steps: [{ type: 'run_program', programId: 'self' }] });
    expect(((await self.json()) as ErrorBody).error.code).toBe('PROGRAM_RECURSION');
  });

  it('copies, updates only the timer or the script, runs the off path and turns program lighting off', async () => {
    const { token, received, ids, saved } = await home();
    const program = await saved({
      name: 'Lights',
      steps: [{ type: 'command', deviceId: ids.lamp, command: 'turn_on' }, { type: 'command', deviceId: ids.fan, command: 'turn_on' }],
      offSteps: [{ type: 'command', deviceId: ids.fan, command: 'turn_off' }],
      timer: { kind: 'daily', time: '07:30', enabled: true, timezone: 'UTC' },
    });
    const copy = (await (await server.request('POST', `/v1/os/programs/${program.id}/copy`, { token, body: { name: 'Lights 2' } })).json()) as { id: string; name: string; timer: { enabled: boolean } };
    expect(copy).toMatchObject({ name: 'Lights 2', timer: { enabled: false } });
    expect(copy.id).not.toBe(program.id);

    const timer = (await (await server.request('POST', `/v1/os/programs/${program.id}/timer`, { token, body: { timer: { kind: 'interval', everyMs: 3_600_000, enabled: true } } })).json()) as { steps: unknown[]; timer: unknown };
    expect(timer.steps).toHaveLength(2);
    expect(timer.timer).toMatchObject({ kind: 'interval' });
    const script = (await (await server.request('POST', `/v1/os/programs/${program.id}/script`, { token, body: { steps: [{ type: 'command', deviceId: ids.lamp, command: 'turn_on' }] } })).json()) as { steps: unknown[]; timer: unknown; offSteps: unknown[] };
    expect(script.steps).toHaveLength(1);
    expect(script.timer).toMatchObject({ kind: 'interval' });
    expect(script.offSteps).toHaveLength(1);

    received.length = 0;
    const off = (await (await server.request('POST', `/v1/os/programs/${program.id}/run-off?wait=true`, { token })).json()) as Run;
    expect(off).toMatchObject({ status: 'succeeded' });
    expect(received).toEqual(['fan:turn_off']);
    received.length = 0;
    const lighting = (await (await server.request('POST', `/v1/os/programs/${program.id}/lighting/off`, { token })).json()) as { results: Array<{ deviceId: string; ok: boolean }> };
    expect(lighting.results).toEqual([expect.objectContaining({ deviceId: ids.lamp, ok: true })]);
    expect(received).toEqual(['lamp:turn_off']);
    const noOff = await saved({ name: 'No off', steps: [{ type: 'delay', ms: 1 }] });
    expect((await server.request('POST', `/v1/os/programs/${noOff.id}/run-off`, { token })).status).toBe(422);
    expect((await server.request('POST', `/v1/os/programs/${program.id}/remove`, { token })).status).toBe(200);
    expect((await server.request('POST', `/v1/os/programs/${program.id}/run`, { token })).status).toBe(404);
  });
});

describe('program timers', () => {
  it('fire at local time, survive a restart without firing twice, and show the next fire time', async () => {
    // 2026-11-21 08:00 UTC is 09:00 in Berlin; the timer is at 09:30 Berlin time.
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 8, 0));
    const first = await home({ clock });
    const program = await first.saved({
      name: 'Morning',
      steps: [{ type: 'command', deviceId: first.ids.lamp, command: 'turn_on' }],
      timer: { kind: 'daily', time: '09:30', timezone: 'Europe/Berlin', enabled: true },
    });
    const fireAt = Date.UTC(2026, 10, 21, 8, 30);
    const listed = (await (await server.request('GET', '/v1/os/programs', { token: first.token })).json()) as { programs: Array<{ nextFireAt: number }> };
    expect(listed.programs[0]!.nextFireAt).toBe(fireAt);

    await clock.advanceAsync(30 * 60_000, 5 * 60_000);
    await eventually(() => first.received.includes('lamp:turn_on'));
    const runs = (await (await server.request('GET', `/v1/os/programs/${program.id}/runs`, { token: first.token })).json()) as { runs: Run[] };
    expect(runs.runs.map((r) => r.trigger)).toEqual(['timer']);

    // Restart at the same instant: the fire is recorded, so it does not happen again.
    const dataDir = server.dataDir;
    for (const d of drivers.splice(0)) d.close();
    await server.app.stop();
    const second = await home({ clock, dataDir });
    await clock.advanceAsync(60_000, 30_000);
    const after = (await (await server.request('GET', `/v1/os/programs/${program.id}/runs`, { token: second.token })).json()) as { runs: Run[] };
    expect(after.runs).toHaveLength(1);
    const next = (await (await server.request('GET', '/v1/os/programs', { token: second.token })).json()) as { programs: Array<{ nextFireAt: number }> };
    expect(next.programs[0]!.nextFireAt).toBe(fireAt + 86_400_000);

    // Down for two days: the missed fires are not replayed; the next one happens on time.
    for (const d of drivers.splice(0)) d.close();
    await server.app.stop();
    clock.advance(2 * 86_400_000);
    const third = await home({ clock, dataDir });
    await clock.advanceAsync(60_000, 30_000);
    expect(((await (await server.request('GET', `/v1/os/programs/${program.id}/runs`, { token: third.token })).json()) as { runs: Run[] }).runs).toHaveLength(1);
    await clock.advanceAsync(86_400_000, 3_600_000);
    const token = await server.login(); // a day later, the old token has expired
    await eventually(async () => ((await (await server.request('GET', `/v1/os/programs/${program.id}/runs`, { token })).json()) as { runs: Run[] }).runs.length === 2);
    await server.app.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
