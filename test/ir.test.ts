import { afterEach, describe, expect, it } from 'vitest';
import { Value } from 'typebox/value';
import { ItachClient, describeItachError, parseItachError, type ItachClientOptions, type ItachTransmit } from '../src/adapters/itach/itach-client.js';
import { IrCommandSchema, IrCommandsSchema, sendirLine, toCarrierCycles, validateIrCommand, validateIrCommands, type IrCommand } from '../src/domain/ir/index.js';
import { ManualClock, systemClock, systemTimers } from '../src/platform/clock.js';
import { DomainError } from '../src/platform/errors.js';
import { startItachEmulator, type ItachEmulator, type ItachEmulatorOptions } from './support/itach-emulator.js';
import { freePort } from './support/net.js';

const NEC: IrCommand = { freq_khz: 38, raw: [9000, 4500, 560, 560] };

let emulator: ItachEmulator | undefined;
let client: ItachClient | undefined;

afterEach(async () => {
  await client?.close();
  await emulator?.close();
  client = undefined;
  emulator = undefined;
});

async function setup(emu: ItachEmulatorOptions = {}, opts: Partial<ItachClientOptions> = {}) {
  const e = await startItachEmulator(emu);
  emulator = e;
  const c = new ItachClient({ port: e.port, clock: systemClock, timers: systemTimers, ...opts });
  client = c;
  return { e, c };
}

async function failure(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('expected a failure');
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));


describe('IR command validation', () => {
  it('accepts a good command', () => {
    expect(validateIrCommand(NEC)).toEqual([]);
    expect(validateIrCommand({ freq_khz: 15, raw: [1, 1] })).toEqual([]);
    expect(validateIrCommand({ freq_khz: 500, raw: [0.5, 100000] })).toEqual([]);
  });

  it('checks the frequency range 15–500 kHz', () => {
    expect(validateIrCommand({ freq_khz: 14.9, raw: [1, 1] })[0]).toMatch(/freq_khz.*between 15 and 500/);
    expect(validateIrCommand({ freq_khz: 501, raw: [1, 1] })[0]).toMatch(/freq_khz/);
    expect(validateIrCommand({ freq_khz: Number.NaN, raw: [1, 1] })[0]).toMatch(/freq_khz/);
    expect(validateIrCommand({ freq_khz: '38', raw: [1, 1] })[0]).toMatch(/freq_khz/);
  });

  it('wants a non-empty, even raw array', () => {
    expect(validateIrCommand({ freq_khz: 38, raw: [] })).toEqual(['raw must not be empty']);
    expect(validateIrCommand({ freq_khz: 38, raw: [1, 2, 3] })[0]).toMatch(/even number/);
    expect(validateIrCommand({ freq_khz: 38 })[0]).toMatch(/raw must be an array/);
    expect(validateIrCommand(null)).toHaveLength(1);
    expect(validateIrCommand([1, 2])).toHaveLength(1);
  });

  it('wants every duration positive and finite', () => {
    for (const bad of [0, -5, Number.POSITIVE_INFINITY, Number.NaN, '560', null]) {
      const problems = validateIrCommand({ freq_khz: 38, raw: [560, bad] });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/raw\[1\] must be a positive finite number/);
    }
  });

  it('wants fewer than 260 on/off pairs', () => {
    expect(validateIrCommand({ freq_khz: 38, raw: Array<number>(518).fill(500) })).toEqual([]);
    expect(validateIrCommand({ freq_khz: 38, raw: Array<number>(520).fill(500) })[0]).toMatch(/fewer than 260/);
  });

  it('validates command maps and their keys', () => {
    expect(validateIrCommands({ power: NEC, 'vol.up:2-x_y': NEC })).toEqual([]);
    expect(validateIrCommands({ 'bad key': NEC })[0]).toMatch(/command key/);
    expect(validateIrCommands({ ['k'.repeat(65)]: NEC })[0]).toMatch(/command key/);
    expect(validateIrCommands({ power: { freq_khz: 1, raw: [1, 1] } })[0]).toMatch(/^power: freq_khz/);
    expect(validateIrCommands([])).toHaveLength(1);
  });

  it('has TypeBox schemas matching the rules', () => {
    expect(Value.Check(IrCommandSchema, NEC)).toBe(true);
    expect(Value.Check(IrCommandSchema, { freq_khz: 10, raw: [1, 1] })).toBe(false);
    expect(Value.Check(IrCommandSchema, { freq_khz: 38, raw: [0, 1] })).toBe(false);
    expect(Value.Check(IrCommandSchema, { freq_khz: 38, raw: [] })).toBe(false);
    expect(Value.Check(IrCommandsSchema, { power: NEC, 'a.b:c-d_e': NEC })).toBe(true);
    expect(Value.Check(IrCommandsSchema, { 'no spaces': NEC })).toBe(false);
    expect(Value.Check(IrCommandsSchema, { ['k'.repeat(64)]: NEC })).toBe(true);
    expect(Value.Check(IrCommandsSchema, { ['k'.repeat(65)]: NEC })).toBe(false);
  });
});

describe('IR encoding', () => {
  it('converts microseconds to carrier cycles exactly', () => {
    expect(toCarrierCycles(NEC)).toEqual([342, 171, 21, 21]);
    // 36.7 kHz → 36700 Hz; 1000 µs → 36.7 → 37 cycles; 10 µs → 0.367 → 0 → 1.
    expect(toCarrierCycles({ freq_khz: 36.7, raw: [1000, 10] })).toEqual([37, 1]);
    // freq rounds to whole Hz: 38.0004 kHz → 38000 Hz.
    expect(toCarrierCycles({ freq_khz: 38.0004, raw: [9000, 4500] })).toEqual([342, 171]);
  });

  it('builds the exact sendir line', () => {
    expect(sendirLine(NEC, 7)).toBe('sendir,1:1,7,38000,1,1,342,171,21,21\r');
    expect(sendirLine({ freq_khz: 40, raw: [600, 600] }, 65535, '1:3')).toBe('sendir,1:3,65535,40000,1,1,24,24\r');
  });

  it('parses and explains iTach errors', () => {
    expect(parseItachError('ERR_1:1,010')).toEqual({ connector: '1:1', code: '010' });
    expect(parseItachError('ERR_01')).toEqual({ code: '01' });
    expect(parseItachError('completeir,1:1,3')).toBeUndefined();
    expect(describeItachError('010')).toBe('error code 010: uneven amount of on/off statements');
    expect(describeItachError('05')).toMatch(/invalid frequency/);
    expect(describeItachError('099')).toBe('error code 099');
  });
});

describe('iTach emulator', () => {
  it('answers getversion and getdevices like an IP2IR', async () => {
    const e = await startItachEmulator();
    emulator = e;
    const { connect } = await import('node:net');
    const socket = connect({ host: e.host, port: e.port });
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (received += d));
    socket.write('getversion\rgetdevices\r');
    for (let i = 0; i < 100 && !received.includes('endlistdevices\r'); i++) await sleep(5);
    socket.destroy();
    expect(received).toBe('710-1005-05\rdevice,1,3 IR\rendlistdevices\r');
    expect(e.lines).toEqual(['getversion', 'getdevices']);
  });
});

describe('ItachClient', () => {
  it('sends the exact sendir line and resolves on completeir', async () => {
    const transmitted: ItachTransmit[] = [];
    const { e, c } = await setup({}, { onTransmit: (t) => transmitted.push(t) });
    const result = await c.send(e.host, NEC);
    expect(result.id).toBe(1);
    expect(result.line).toBe('sendir,1:1,1,38000,1,1,342,171,21,21\r');
    expect(result.reply).toBe('completeir,1:1,1');
    expect(e.lines).toEqual(['sendir,1:1,1,38000,1,1,342,171,21,21']);
    expect(transmitted).toEqual([{ host: '127.0.0.1', line: result.line, id: 1 }]);
  });

  it('copes with \\r\\n line endings', async () => {
    const { e, c } = await setup({ terminator: '\r\n' });
    await c.send(e.host, NEC);
    await c.send(e.host, NEC);
    expect(e.connections).toBe(1);
  });

  it('rejects an invalid command without connecting', async () => {
    const { e, c } = await setup();
    const err = await failure(c.send(e.host, { freq_khz: 38, raw: [1, 2, 3] }));
    expect(err.kind).toBe('invalid');
    expect(err.code).toBe('INVALID_IR_COMMAND');
    expect((err.details as { problems: string[] }).problems[0]).toMatch(/even/);
    expect(e.connections).toBe(0);
  });

  it('reuses one connection per extender', async () => {
    const { e, c } = await setup();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await c.send(e.host, NEC)).id);
    expect(ids).toEqual([1, 2, 3]);
    expect(e.connections).toBe(1);
    expect(e.lines).toHaveLength(3);
  });

  it('maps an ERR reply to IR_EXTENDER_ERROR (upstream_failed)', async () => {
    const { e, c } = await setup({ mode: 'error', errorCode: '010' });
    const err = await failure(c.send(e.host, NEC));
    expect(err.kind).toBe('upstream_failed');
    expect(err.code).toBe('IR_EXTENDER_ERROR');
    expect(err.message).toMatch(/010/);
    expect(err.message).toMatch(/uneven/);
    expect(err.details).toMatchObject({ host: '127.0.0.1', reply: 'ERR_1:1,010' });
    // The connection is still usable.
    e.setMode('ok');
    await c.send(e.host, NEC);
    expect(e.connections).toBe(1);
  });

  it('names unknown error codes plainly', async () => {
    const { e, c } = await setup({ mode: 'error', errorCode: '077' });
    const err = await failure(c.send(e.host, NEC));
    expect(err.message).toMatch(/error code 077$/);
  });

  it('maps busyIR to IR_EXTENDER_BUSY (unavailable)', async () => {
    const { e, c } = await setup({ mode: 'busy' });
    const err = await failure(c.send(e.host, NEC));
    expect(err.kind).toBe('unavailable');
    expect(err.code).toBe('IR_EXTENDER_BUSY');
  });

  it('maps a refused connection to IR_EXTENDER_UNREACHABLE', async () => {
    const port = await freePort();
    const c = new ItachClient({ port, clock: systemClock, timers: systemTimers });
    client = c;
    const err = await failure(c.send('127.0.0.1', NEC));
    expect(err.kind).toBe('upstream_failed');
    expect(err.code).toBe('IR_EXTENDER_UNREACHABLE');
    expect(err.details).toMatchObject({ host: '127.0.0.1', port, cause: 'ECONNREFUSED' });
  });

  it('times out a silent extender and starts the next command on a fresh connection', async () => {
    const clock = new ManualClock();
    const { e, c } = await setup({ mode: 'silent' }, { replyTimeoutMs: 200, clock, timers: clock });
    let settled = false;
    const sent = failure(c.send(e.host, NEC)).finally(() => (settled = true));
    for (let i = 0; i < 100 && e.lines.length === 0; i++) await sleep(5);
    // The reply time-out runs on the injected timers: not a millisecond early, then at once.
    clock.advance(199);
    await sleep(5);
    expect(settled).toBe(false);
    clock.advance(1);
    const err = await sent;
    expect(err.kind).toBe('timeout');
    expect(err.code).toBe('IR_EXTENDER_TIMEOUT');
    e.setMode('ok');
    const ok = await c.send(e.host, NEC);
    expect(ok.reply).toBe(`completeir,1:1,${ok.id}`);
    expect(e.connections).toBe(2);
  });

  it('survives the extender closing the connection between sends', async () => {
    const { e, c } = await setup();
    await c.send(e.host, NEC);
    e.dropConnections();
    await sleep(30);
    await c.send(e.host, NEC);
    expect(e.connections).toBe(2);
    // Closed again with no pause: the send goes out on a fresh connection if the close was seen
    // first, or fails; it is never sent twice.
    const before = e.lines.filter((l) => l.startsWith('sendir')).length;
    e.dropConnections();
    const outcome = await c.send(e.host, NEC).then(
      () => 'sent',
      (err: { code?: string }) => err.code,
    );
    expect(['sent', 'IR_EXTENDER_UNREACHABLE']).toContain(outcome);
    expect(e.lines.filter((l) => l.startsWith('sendir')).length - before).toBeLessThanOrEqual(1);
  });

  it('never sends a key again after a kept-alive connection drops once the line was written', async () => {
    const { e, c } = await setup();
    await c.send(e.host, NEC);
    e.setMode('silent');
    const p = failure(c.send(e.host, NEC));
    for (let i = 0; i < 100 && e.lines.length < 2; i++) await sleep(5);
    e.dropConnections();
    const err = await p;
    expect(err).toMatchObject({ kind: 'upstream_failed', code: 'IR_EXTENDER_UNREACHABLE' });
    await sleep(50);
    // One sendir for the first key, one for the second: the second was not sent again.
    expect(e.lines.filter((l) => l.startsWith('sendir'))).toHaveLength(2);
    e.setMode('ok');
    await c.send(e.host, NEC);
  });

  it('fails a command whose fresh connection is dropped mid-flight', async () => {
    const { e, c } = await setup({ mode: 'silent' });
    const p = failure(c.send(e.host, NEC));
    for (let i = 0; i < 100 && e.lines.length === 0; i++) await sleep(5);
    e.dropConnections();
    const err = await p;
    expect(err.kind).toBe('upstream_failed');
    expect(err.code).toBe('IR_EXTENDER_UNREACHABLE');
    expect(e.lines).toHaveLength(1); // not retried: the connection was fresh
  });

  it('treats a flood without line terminators as a protocol error and recovers', async () => {
    const { e, c } = await setup({ mode: 'silent' });
    const p = failure(c.send(e.host, NEC));
    for (let i = 0; i < 100 && e.lines.length === 0; i++) await sleep(5);
    e.broadcast('x'.repeat(10_000));
    const err = await p;
    expect(err.code).toBe('IR_EXTENDER_PROTOCOL_ERROR');
    e.setMode('ok');
    await c.send(e.host, NEC);
    expect(e.connections).toBe(2);
  });

  it('closes idle connections and reopens on demand', async () => {
    const { e, c } = await setup({}, { idleCloseMs: 50 });
    await c.send(e.host, NEC);
    for (let i = 0; i < 50 && e.openConnections > 0; i++) await sleep(10);
    expect(e.openConnections).toBe(0);
    await c.send(e.host, NEC);
    expect(e.connections).toBe(2);
  });

  it('ignores unsolicited and unknown lines', async () => {
    const { e, c } = await setup();
    await c.send(e.host, NEC);
    e.broadcast('busyIR,1:1,999\rgarbage line\r\ncompleteir,1:1,12345\r');
    await sleep(20);
    const r = await c.send(e.host, NEC);
    expect(r.reply).toBe(`completeir,1:1,${r.id}`);
    expect(e.connections).toBe(1);
  });

  it('serializes 10 parallel sends with distinct ids on one connection', async () => {
    const { e, c } = await setup();
    const results = await Promise.all(Array.from({ length: 10 }, () => c.send(e.host, NEC)));
    const ids = results.map((r) => r.id);
    expect(new Set(ids).size).toBe(10);
    for (const r of results) expect(r.reply).toBe(`completeir,1:1,${r.id}`);
    expect(e.connections).toBe(1);
    // FIFO: the extender saw them in submission order.
    expect(e.lines.map((l) => Number(l.split(',')[2]))).toEqual(ids);
  });

  it('bounds the queue and rejects waiting commands on close', async () => {
    const { e, c } = await setup({ mode: 'silent' }, { maxQueue: 2, replyTimeoutMs: 2000 });
    const pending = [c.send(e.host, NEC), c.send(e.host, NEC), c.send(e.host, NEC)].map((p) => failure(p));
    const overflow = await failure(c.send(e.host, NEC));
    expect(overflow.kind).toBe('unavailable');
    expect(overflow.code).toBe('IR_EXTENDER_BUSY');
    await c.close();
    for (const err of await Promise.all(pending)) {
      expect(err.kind).toBe('unavailable');
      expect(err.code).toBe('IR_CLIENT_CLOSED');
    }
    expect((await failure(c.send(e.host, NEC))).code).toBe('IR_CLIENT_CLOSED');
  });

  it('wraps rolling ids after 65535', async () => {
    const { e, c } = await setup();
    (c as unknown as { nextId: number }).nextId = 65535;
    expect((await c.send(e.host, NEC)).id).toBe(65535);
    expect((await c.send(e.host, NEC)).id).toBe(1);
  });
});
