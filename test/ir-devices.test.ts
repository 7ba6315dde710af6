import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './support/server.js';
import { startItachEmulator } from './support/itach-emulator.js';

let server: TestServer;
let emulator: Awaited<ReturnType<typeof startItachEmulator>> | undefined;
afterEach(async () => {
  await server?.close();
  await emulator?.close();
  emulator = undefined;
});

const POWER = { freq_khz: 38, raw: [9000, 4500, 560, 560, 560, 1690] };
type ErrorBody = { error: { code: string; message: string } };

async function irDevice(s: TestServer, token: string, extenderIp = '127.0.0.1') {
  const res = await s.request('POST', '/v1/os/devices/ir/save', {
    token,
    body: { name: 'Living TV (IR)', extenderIp, irCommands: { power: POWER, mute: { freq_khz: 40, raw: [2400, 600] } }, room: 'living' },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string; driverKey: string; properties: Record<string, unknown>; commands: Array<{ name: string }> };
}

describe('GENERIC_IR devices', () => {
  it('sends an IR key to the extender as the exact sendir line', async () => {
    emulator = await startItachEmulator();
    server = await startServer({ env: { IR_EXTENDER_PORT: String(emulator.port) } });
    const token = await server.login();
    const device = await irDevice(server, token);
    expect(device).toMatchObject({ driverKey: 'GENERIC_IR', properties: { extenderIp: '127.0.0.1' }, commands: [{ name: 'power' }, { name: 'mute' }] });

    const res = await server.request('POST', `/v1/os/devices/${device.id}/command`, { token, body: { command: 'power' } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { ok: boolean; result: { line: string } };
    expect(body.ok).toBe(true);
    // 9000 µs at 38 kHz = 342 cycles, 4500 → 171, 560 → 21.28 → 21, 1690 → 64.22 → 64.
    const expected = /^sendir,1:1,(\d+),38000,1,1,342,171,21,21,21,64$/;
    expect(emulator.lines.at(-1)).toMatch(expected);
    expect(body.result.line).toMatch(expected);

    await server.request('POST', `/v1/os/devices/${device.id}/command`, { token, body: { command: 'mute' } });
    expect(emulator.lines.at(-1)).toMatch(/^sendir,1:1,\d+,40000,1,1,96,24$/);
    expect(emulator.connections).toBe(1);

    const unknown = await server.request('POST', `/v1/os/devices/${device.id}/command`, { token, body: { command: 'volume_up' } });
    expect(unknown.status).toBe(422);
    expect(((await unknown.json()) as ErrorBody).error.code).toBe('COMMAND_NOT_SUPPORTED');
  });

  it('maps extender errors, refusals and silence to clear API errors', async () => {
    emulator = await startItachEmulator({ mode: 'error', errorCode: '010' });
    server = await startServer({ env: { IR_EXTENDER_PORT: String(emulator.port), IR_REPLY_TIMEOUT_MS: '300' } });
    const token = await server.login();
    const device = await irDevice(server, token);
    const send = () => server.request('POST', `/v1/os/devices/${device.id}/command`, { token, body: { command: 'power' } });

    const err = await send();
    expect(err.status).toBe(502);
    const errBody = (await err.json()) as ErrorBody;
    expect(errBody.error.code).toBe('IR_EXTENDER_ERROR');
    expect(errBody.error.message).toContain('010');

    emulator.setMode('silent');
    const silent = await send();
    expect(silent.status).toBe(504);
    expect(((await silent.json()) as ErrorBody).error.code).toBe('IR_EXTENDER_TIMEOUT');

    emulator.setMode('ok');
    expect((await send()).status).toBe(200);

    await emulator.close();
    emulator = undefined;
    const refused = await send();
    expect(refused.status).toBe(502);
    expect(((await refused.json()) as ErrorBody).error.code).toBe('IR_EXTENDER_UNREACHABLE');
  });

  it('refuses invalid IR data and addresses with 400, and edits devices in place', async () => {
    emulator = await startItachEmulator();
    server = await startServer({ env: { IR_EXTENDER_PORT: String(emulator.port) } });
    const token = await server.login();
    const bad = [
      { name: 'x', extenderIp: 'not-an-ip', irCommands: { a: POWER } },
      { name: 'x', extenderIp: '127.0.0.1', irCommands: { a: { freq_khz: 10, raw: [100, 100] } } },
      { name: 'x', extenderIp: '127.0.0.1', irCommands: { a: { freq_khz: 38, raw: [100, 100, 100] } } },
      { name: 'x', extenderIp: '127.0.0.1', irCommands: { a: { freq_khz: 38, raw: [100, -5] } } },
      { name: 'x', extenderIp: '127.0.0.1', irCommands: { a: { freq_khz: 38, raw: Array.from({ length: 520 }, () => 100) } } },
      { name: 'x', extenderIp: '127.0.0.1', irCommands: { 'bad key!': POWER } },
    ];
    for (const body of bad) {
      const res = await server.request('POST', '/v1/os/devices/ir/save', { token, body });
      expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(400);
    }
    const device = await irDevice(server, token);
    const edited = await server.request('POST', '/v1/os/devices/ir/save', { token, body: { id: device.id, name: 'Bedroom TV', extenderIp: '127.0.0.1', irCommands: { power: POWER } } });
    expect(await edited.json()).toMatchObject({ id: device.id, name: 'Bedroom TV', commands: [{ name: 'power' }] });
    const list = (await (await server.request('GET', '/v1/os/devices', { token })).json()) as { devices: unknown[] };
    expect(list.devices).toHaveLength(1);
  });
});

