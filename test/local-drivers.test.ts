import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceRegistry } from '../src/domain/devices/device-registry.js';
import type { LogicalDevice } from '../src/domain/devices/model.js';
import { DriverManager } from '../src/domain/drivers/driver-manager.js';
import {
  LocalDriverSupervisor,
  loadManifests,
  LUA_HOST_PATH,
  ProcessLink,
  type LocalDriverInfo,
  type LocalDriverSupervisorDeps,
} from '../src/domain/drivers/local/index.js';
import { createDomainEventBus } from '../src/domain/events.js';
import { StateAuthority } from '../src/domain/state/state-authority.js';
import { NodeProcessRunner } from '../src/adapters/process/node-process-runner.js';
import { systemClock, systemTimers } from '../src/platform/clock.js';
import { DomainError } from '../src/platform/errors.js';
import { openStorage } from '../src/storage/factory.js';
import { KyselyDeviceRepository, KyselyStateRepository } from '../src/storage/repositories/devices.js';
import { KyselyDriverSettingsRepository } from '../src/storage/repositories/driver-settings.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/drivers/', import.meta.url));
const tempDirs: string[] = [];

function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Polls until `probe` returns a truthy value; fails with `what` after the deadline. */
async function waitFor<T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface LogEntry {
  level: string;
  obj: Record<string, unknown>;
  msg: string;
}

class RecordingLog {
  readonly entries: LogEntry[] = [];
  info = (obj: object, msg: string) => this.push('info', obj, msg);
  warn = (obj: object, msg: string) => this.push('warn', obj, msg);
  error = (obj: unknown, msg: string) => this.push('error', obj as object, msg);
  debug = (obj: object, msg: string) => this.push('debug', obj, msg);
  private push(level: string, obj: object, msg: string) {
    this.entries.push({ level, obj: obj as Record<string, unknown>, msg });
  }
  of(driver: string): LogEntry[] {
    return this.entries.filter((e) => e.obj.driver === driver);
  }
}

async function createHub(driversDir: string, extra: Partial<LocalDriverSupervisorDeps> = {}) {
  const dataDir = tempDir('hcs-local-data-');
  const storage = openStorage({ dataDir });
  await storage.migrate();
  const log = new RecordingLog();
  const events = createDomainEventBus(log);
  const devices = new DeviceRegistry(new KyselyDeviceRepository(storage.db), systemClock, events);
  const state = new StateAuthority(new KyselyStateRepository(storage.db), systemClock, events, log, { maxEntriesPerDevice: 100, maxAgeMs: 60_000 }, systemTimers);
  const manager = new DriverManager(devices, state, events, systemClock, log, 5000, systemTimers);
  const settings = new KyselyDriverSettingsRepository(storage.db);
  const processes = new NodeProcessRunner({ clock: systemClock, timers: extra.timers ?? systemTimers, log, recordFile: path.join(dataDir, 'run', 'children.json') });
  const supervisor = new LocalDriverSupervisor({ driversDir, manager, settings, clock: systemClock, timers: systemTimers, processes, log, ...extra });
  return {
    log,
    events,
    devices,
    state,
    manager,
    settings,
    supervisor,
    info: (driverKey: string): LocalDriverInfo => {
      const found = supervisor.list().find((d) => d.driverKey === driverKey && d.status !== 'invalid');
      if (!found) throw new Error(`no driver ${driverKey}`);
      return found;
    },
    device: (driverKey: string, driverDeviceId: string) => devices.findByDriver(driverKey, driverDeviceId),
    async close() {
      await supervisor.stop();
      await processes.close();
      manager.stop();
      await state.stop();
      await storage.close();
    },
  };
}

function copyFixtures(target: string, names: string[]): void {
  for (const name of names) fs.cpSync(path.join(FIXTURES, name), path.join(target, name), { recursive: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function expectDomainError(promise: Promise<unknown>, kind: string, code: string): Promise<DomainError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect((err as DomainError).kind).toBe(kind);
  expect((err as DomainError).code).toBe(code);
  return err as DomainError;
}

describe('local driver manifests', () => {
  const write = (root: string, file: string, content: unknown) => {
    const full = path.join(root, file);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, typeof content === 'string' ? content : JSON.stringify(content));
  };
  const base = { driverFile: 'main.py', driverType: 'python' };

  it('loads the valid ones and reports every rejection reason without stopping the others', async () => {
    const root = tempDir('hcs-manifests-');
    write(root, 'good/main.py', 'print("hi")\n');
    write(root, 'good/sub/tool.js', '');
    write(root, 'good/good.driver.json', {
      driverKey: 'good.one:v1',
      driverFile: 'main.py',
      driverType: 'python',
      name: 'Good',
      properties: { host: { type: 'string', required: true }, port: { type: 'integer', default: 80 }, token: { type: 'string', secret: true } },
      commands: { reboot: { title: 'Reboot', params: { delay: { type: 'number', default: 0 } } } },
      io: { restart: { initialDelayMs: 50 }, maxMessagesPerSecond: 10 },
      envMap: { host: 'GOOD_HOST', token: 'GOOD_TOKEN' },
    });
    write(root, 'good/nested.driver.json', { driverKey: 'nested', driverFile: 'sub/../sub/tool.js', driverType: 'javascript' });
    write(root, 'bad-json/x.driver.json', '{"driverKey": "x",');
    write(root, 'schema/x.driver.json', { driverKey: 'has spaces', ...base });
    write(root, 'schema/main.py', '');
    write(root, 'no-type/x.driver.json', { driverKey: 'no-type', driverFile: 'main.py' });
    write(root, 'ext/main.py', '');
    write(root, 'ext/x.driver.json', { driverKey: 'ext', driverFile: 'main.py', driverType: 'javascript' });
    write(root, 'escape/x.driver.json', { driverKey: 'escape', driverFile: '../good/main.py', driverType: 'python' });
    write(root, 'absolute/x.driver.json', { driverKey: 'absolute', driverFile: path.join(root, 'good/main.py'), driverType: 'python' });
    write(root, 'missing/x.driver.json', { driverKey: 'missing', driverFile: 'nothere.py', driverType: 'python' });
    write(root, 'envmap/main.py', '');
    write(root, 'envmap/x.driver.json', { driverKey: 'envmap', ...base, properties: { a: { type: 'string' } }, envMap: { b: 'B_VAR' } });
    write(root, 'envreserved/main.py', '');
    write(root, 'envreserved/x.driver.json', { driverKey: 'envreserved', ...base, properties: { a: { type: 'string' } }, envMap: { a: 'PATH' } });
    write(root, 'default/main.py', '');
    write(root, 'default/x.driver.json', { driverKey: 'default', ...base, properties: { n: { type: 'integer', default: 'ten' } } });
    write(root, 'typo/main.py', '');
    write(root, 'typo/x.driver.json', { driverKey: 'typo', ...base, properties: { n: { type: 'string', secrett: true } } });
    write(root, 'zz-dup/main.py', '');
    write(root, 'zz-dup/x.driver.json', { driverKey: 'good.one:v1', ...base });
    write(root, 'node_modules/pkg/x.driver.json', '{broken');
    write(root, '.hidden/x.driver.json', '{broken');
    write(root, 'link/x.driver.json', { driverKey: 'link', driverFile: 'inside.py', driverType: 'python' });
    write(root, 'outside.py', '');
    fs.symlinkSync(path.join(root, 'outside.py'), path.join(root, 'link/inside.py'));

    const { manifests, errors } = await loadManifests(root);

    expect(manifests.map((m) => m.driverKey).sort()).toEqual(['good.one:v1', 'nested']);
    const good = manifests.find((m) => m.driverKey === 'good.one:v1')!;
    expect(good.file).toBe('good/good.driver.json');
    expect(good.dir).toBe(path.join(root, 'good'));
    expect(good.driverFile).toBe(path.join(root, 'good/main.py'));
    expect(good.io).toEqual({
      restart: { initialDelayMs: 50, maxDelayMs: 60_000, resetAfterMs: 30_000 },
      maxLineBytes: 1024 * 1024,
      maxMessagesPerSecond: 10,
      actionTimeoutMs: 10_000,
      pingIntervalMs: 30_000,
      violations: { max: 20, windowMs: 10_000 },
    });
    expect(good.envMap).toEqual({ host: 'GOOD_HOST', token: 'GOOD_TOKEN' });
    expect(Object.keys(good.commands)).toEqual(['reboot']);

    const byFile = Object.fromEntries(errors.map((e) => [e.file, e.error]));
    expect(Object.keys(byFile).sort()).toEqual(
      [
        'absolute/x.driver.json',
        'bad-json/x.driver.json',
        'default/x.driver.json',
        'envmap/x.driver.json',
        'envreserved/x.driver.json',
        'escape/x.driver.json',
        'ext/x.driver.json',
        'link/x.driver.json',
        'missing/x.driver.json',
        'no-type/x.driver.json',
        'schema/x.driver.json',
        'typo/x.driver.json',
        'zz-dup/x.driver.json',
      ].sort(),
    );
    expect(byFile['bad-json/x.driver.json']).toMatch(/not valid JSON/);
    expect(byFile['schema/x.driver.json']).toMatch(/driverKey/);
    expect(byFile['no-type/x.driver.json']).toMatch(/required properties driverType/);
    expect(byFile['ext/x.driver.json']).toMatch(/does not match driverType javascript: expected a \.js file/);
    expect(byFile['escape/x.driver.json']).toMatch(/escapes the manifest's folder/);
    expect(byFile['absolute/x.driver.json']).toMatch(/must be a relative path/);
    expect(byFile['missing/x.driver.json']).toMatch(/does not exist/);
    expect(byFile['envmap/x.driver.json']).toMatch(/envMap\.b: no such property/);
    expect(byFile['envreserved/x.driver.json']).toMatch(/PATH is reserved/);
    expect(byFile['default/x.driver.json']).toMatch(/properties\.n\.default must be an integer/);
    expect(byFile['typo/x.driver.json']).toMatch(/\/properties\/n\/secrett is not allowed/);
    expect(byFile['zz-dup/x.driver.json']).toMatch(/duplicate driverKey "good\.one:v1": already declared by good\/good\.driver\.json/);
    expect(byFile['link/x.driver.json']).toMatch(/symbolic link/);
    expect(errors.find((e) => e.file === 'ext/x.driver.json')).toMatchObject({ driverKey: 'ext', driverType: 'javascript' });
  });

  it('reads properties, commands and params given as lists, or keyed without a type, and names the list entry it cannot read', async () => {
    const root = tempDir('hcs-manifests-');
    const withLists = (dir: string, extra: Record<string, unknown>) => {
      write(root, `${dir}/main.py`, '');
      write(root, `${dir}/x.driver.json`, { driverKey: dir, ...base, ...extra });
    };
    withLists('lists', {
      properties: ['host', { name: 'port', type: 'integer', default: 80 }, { name: '__proto__', title: 'Odd but allowed' }],
      commands: ['reboot', { name: 'scenes.run', label: 'Run a scene', params: ['sceneId', { name: 'fade', type: 'number', default: 0 }] }],
      envMap: { host: 'LIST_HOST' },
    });
    withLists('keyed', { properties: { host: { title: 'Host' } }, commands: { reboot: { label: 'Reboot', params: { delay: { default: 'now' } } } } });
    withLists('no-name', { commands: ['reboot', { title: 'Nameless' }] });
    withLists('dup', { properties: ['host', { name: 'host', type: 'integer' }] });
    withLists('bad-param', { commands: [{ name: 'go', params: [{ name: 'speed', type: 'fast' }] }] });
    withLists('both-titles', { commands: [{ name: 'go', title: 'Go', label: 'Go!' }] });
    withLists('not-a-list', { commands: 'reboot' });

    const { manifests, errors } = await loadManifests(root);
    const lists = manifests.find((m) => m.driverKey === 'lists')!;
    expect(lists.properties).toEqual({ host: { type: 'string' }, port: { type: 'integer', default: 80 }, ['__proto__']: { type: 'string', title: 'Odd but allowed' } });
    expect(Object.getPrototypeOf(lists.properties)).toBe(Object.prototype);
    expect(lists.commands).toEqual({
      reboot: {},
      'scenes.run': { title: 'Run a scene', params: { sceneId: { type: 'string' }, fade: { type: 'number', default: 0 } } },
    });
    expect(manifests.find((m) => m.driverKey === 'keyed')).toMatchObject({
      properties: { host: { type: 'string', title: 'Host' } },
      commands: { reboot: { title: 'Reboot', params: { delay: { type: 'string', default: 'now' } } } },
    });

    const byFile = Object.fromEntries(errors.map((e) => [e.file, e.error]));
    expect(Object.keys(byFile).sort()).toEqual(['bad-param/x.driver.json', 'both-titles/x.driver.json', 'dup/x.driver.json', 'no-name/x.driver.json', 'not-a-list/x.driver.json']);
    expect(byFile['no-name/x.driver.json']).toBe('invalid manifest: /commands/1 must be a command name or an object with a "name" string');
    expect(byFile['dup/x.driver.json']).toBe('invalid manifest: /properties/1/name "host" is declared twice in /properties');
    expect(byFile['bad-param/x.driver.json']).toMatch(/\/commands\/go\/params\/speed\/type must be one of string, number, integer, boolean/);
    expect(byFile['both-titles/x.driver.json']).toMatch(/\/commands\/go\/label is not allowed/);
    expect(byFile['not-a-list/x.driver.json']).toBe('invalid manifest: /commands must be an object keyed by command name, or a list');
  });

  it('treats a missing folder as empty', async () => {
    expect(await loadManifests(path.join(os.tmpdir(), 'hcs-no-such-folder-' + process.pid))).toEqual({ manifests: [], errors: [] });
  });
});

describe('ProcessLink', () => {
  it('sends catalog ACTIONs as COMMAND_EXECUTE, bounds its queue while stdin is full, and never throws once stdin is gone', () => {
    const written: string[] = [];
    const callbacks: (() => void)[] = [];
    // A stdin whose reader is stuck until the test releases it.
    const stdin = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, callback) {
        written.push(chunk.toString('utf8'));
        callbacks.push(() => callback());
      },
    });
    const log = new RecordingLog();
    const link = new ProcessLink({ driverKey: 'k', stdin, commands: ['reboot'], log });
    expect(link).toMatchObject({ driverKey: 'k', instanceId: 'local:k', transport: 'process' });

    link.send({ type: 'ACTION', actionId: 'a1', deviceId: 'd1', command: 'reboot', params: { x: 1 } });
    link.send({ type: 'ACTION', actionId: 'a2', deviceId: 'd1', command: 'other', params: {} });
    for (let i = 0; i < 1100; i++) link.send({ type: 'PING', id: String(i) });
    expect(link.queued).toBe(1000);
    expect(link.dropped).toBe(101);
    expect(log.entries.filter((e) => e.msg.includes('not reading its stdin'))).toHaveLength(1);

    while (callbacks.length > 0) callbacks.shift()!();
    const messages = written.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; id?: string });
    expect(messages[0]).toEqual({ type: 'COMMAND_EXECUTE', actionId: 'a1', deviceId: 'd1', command: 'reboot', params: { x: 1 } });
    expect(messages[1]).toEqual({ type: 'ACTION', actionId: 'a2', deviceId: 'd1', command: 'other', params: {} });
    expect(messages).toHaveLength(1001);
    expect(messages[1000]).toEqual({ type: 'PING', id: '998' });
    expect(link.queued).toBe(0);
    expect(log.entries.some((e) => e.msg.includes('messages were dropped while it was full') && e.obj.dropped === 101)).toBe(true);

    const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    stdin.destroy(epipe);
    expect(() => link.send({ type: 'PING', id: 'late' })).not.toThrow();
    expect(link.isOpen).toBe(false);
    expect(() => link.close('done')).not.toThrow();
  });
});

/** The Lua host on one script, as the supervisor starts it, with its output collected. */
function startLuaHost(script: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [LUA_HOST_PATH, script], {
    cwd: path.dirname(script),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (c: Buffer) => (out.stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out.stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    out,
    exited,
    send: (message: unknown) => child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`),
    lines: () => out.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('the Lua host', () => {
  it('plain mode: an ordinary Lua program reads stdin with io.read and answers on stdout, one message at a time', async () => {
    const host = startLuaHost(path.join(FIXTURES, 'lua-plain/plain.lua'), { PLAIN_LABEL: 'from-env' });
    await waitFor('discovery', () => host.lines().length >= 1);
    expect(host.lines()[0]).toEqual({
      type: 'DEVICE_DISCOVERED',
      device: { id: 'p1', name: 'Plain fan', commands: ['set_speed', 'boost', 'spin', 'crash'], state: { speed: 0, label: 'from-env' } },
    });

    // Each answer arrives while stdin is still open: the loop is not waiting for the end of input.
    host.send({ type: 'DRIVER_STATUS', status: 'registered' });
    host.send({ type: 'PING', id: 'p1' });
    await waitFor('PONG written with print', () => host.lines().length >= 2);
    expect(host.lines()[1]).toEqual({ type: 'PONG', id: 'p1' });
    host.send('this is not json');
    host.send({ type: 'COMMAND_EXECUTE', actionId: 'a1', deviceId: 'p1', command: 'set_speed', params: { level: 3 } });
    await waitFor('the action answered', () => host.lines().length >= 4);
    expect(host.lines().slice(2)).toEqual([
      { type: 'STATE_UPDATE', deviceId: 'p1', state: { speed: 3 } },
      { type: 'ACTION_RESULT', actionId: 'a1', ok: true, result: { via: 'COMMAND_EXECUTE', command: 'set_speed', deviceId: 'p1', params: { level: 3 }, speed: 3 } },
    ]);
    expect(host.out.stderr).toContain('hub status registered');
    expect(host.out.stderr).toContain('unreadable line from the hub');

    // A message split across writes is still one line to io.read.
    const split = JSON.stringify({ type: 'ACTION', actionId: 'a2', deviceId: 'p1', command: 'boost', params: {} });
    host.child.stdin.write(split.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 50));
    host.child.stdin.write(`${split.slice(10)}\n`);
    await waitFor('the split action answered', () => host.lines().length >= 5);
    expect(host.lines()[4]).toMatchObject({ type: 'ACTION_RESULT', actionId: 'a2', result: { via: 'ACTION', command: 'boost' } });

    // io.read returns nil at the end of input, the loop ends, and so does the program.
    host.child.stdin.end();
    expect(await host.exited).toBe(0);
  });

  it('plain mode: an error in the loop exits with code 1 and a traceback on stderr', async () => {
    const host = startLuaHost(path.join(FIXTURES, 'lua-plain/plain.lua'));
    host.send({ type: 'ACTION', actionId: 'a1', deviceId: 'p1', command: 'crash', params: {} });
    expect(await host.exited).toBe(1);
    expect(host.out.stderr).toMatch(/plain\.lua:\d+: crashing on purpose/);
  });

  it('callback mode: bridges JSON lines to hub.on_message and back, survives handler errors, and exits when stdin ends', async () => {
    const host = startLuaHost(path.join(FIXTURES, 'lua-echo/echo.lua'), { ECHO_VAR: 'from-env', HCS_DRIVER_KEY: 'lua-echo' });
    const message = {
      type: 'ACTION',
      actionId: 'a1',
      params: { list: [1, 2.5, 'x', { deep: [[]] }], obj: { a: { b: {} } }, empty: [], s: 'é😀\n"', n: -12, t: true, f: false, big: 12345678901234 },
    };
    // All in one write: the main chunk reads the first line, the host dispatches the rest.
    host.child.stdin.write(
      [{ type: 'DRIVER_STATUS', status: 'registered' }, { type: 'boom' }, 'this is not json', message, { type: 'PING', id: 'p1' }, { type: 'encode', value: { nested: [{}, []], x: null } }, { type: 'read' }]
        .map((m) => `${typeof m === 'string' ? m : JSON.stringify(m)}\n`)
        .join(''),
    );
    await waitFor('echo answers', () => host.lines().length >= 6);

    const [first, written, echo, pong, encoded, read] = host.lines();
    // print() and io.write() write to stdout, the protocol stream, in callback mode too.
    expect(first).toEqual({ type: 'FIRST', msg: { type: 'DRIVER_STATUS', status: 'registered' } });
    expect(written).toEqual({ type: 'WRITTEN' });
    expect(echo).toEqual({
      type: 'ECHO',
      msg: message,
      int: 3,
      float: 2.5,
      whole_float: 4,
      tenth: 0.1,
      big: 2 ** 53,
      empty_object: {},
      empty_array: [],
      list: [1, null, 3],
      text: 'quote " backslash \\ newline \n tab \t unicode é😀',
      env: 'from-env',
      key: 'lua-echo',
    });
    expect(pong).toEqual({ type: 'PONG', id: 'p1' });
    expect(encoded).toEqual({ type: 'ENCODED', text: expect.any(String), back: { nested: [{}, []] } });
    expect(JSON.parse((encoded as { text: string }).text)).toEqual({ nested: [{}, []] });
    // Once the host owns stdin, io.read in a handler reads as end of input, with a warning.
    expect(read).toEqual({ type: 'READ', line: null });
    expect(host.out.stderr).toContain('echo ready');
    expect(host.out.stderr).toMatch(/io\.read on stdin is not available: the main chunk returned/);
    expect(host.out.stderr).toContain('boom in handler');
    expect(host.out.stderr).toMatch(/invalid JSON/);

    host.child.stdin.end();
    expect(await host.exited).toBe(0);
  });

  it('exits like a Lua interpreter: at the end of the main chunk unless callbacks wait, with code 1 on an error, with os.exit', async () => {
    const dir = tempDir('hcs-lua-');
    const run = async (source: string, input?: string, waitMs = 10_000) => {
      fs.writeFileSync(path.join(dir, 'main.lua'), source);
      const host = startLuaHost(path.join(dir, 'main.lua'));
      // stdin stays open unless the test ends it: only the script decides when to exit.
      if (input !== undefined) host.child.stdin.end(input);
      const exit = await Promise.race([host.exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), waitMs))]);
      if (exit === 'running') host.child.kill();
      return { code: exit, ...host.out };
    };
    expect(await run('print("hello", 1)\nio.write("world\\n")\n')).toMatchObject({ code: 0, stdout: 'hello\t1\nworld\n' });
    // Reading stdin to its end leaves nothing for registered handlers to receive.
    const drained = await run('hub.on_message(function() end)\nfor line in io.lines() do print(#line) end\n', 'ab\n\nabc');
    expect(drained).toMatchObject({ code: 0, stdout: '2\n0\n3\n' });
    // With handlers registered and stdin open, the host stays and serves them.
    expect((await run('hub.on_message(function() end)\n', undefined, 1000)).code).toBe('running');
    const failed = await run('local t = nil\nprint(t.field)\n');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/main\.lua:2: attempt to index a nil value/);
    expect(await run('io.write("partial line"); os.exit(7)')).toMatchObject({ code: 7, stdout: 'partial line' });
    // require("json") is the host's unless the driver brings its own json.lua.
    expect(await run('print(require("json").encode({ 1, "a" }))')).toMatchObject({ code: 0, stdout: '[1,"a"]\n' });
    fs.writeFileSync(path.join(dir, 'json.lua'), 'return { encode = function() return "mine" end }');
    expect(await run('print(require("json").encode({ 1, "a" }))')).toMatchObject({ code: 0, stdout: 'mine\n' });
  });
});

describe('local driver supervisor', () => {
  let hub: Awaited<ReturnType<typeof createHub>>;
  const onlineChanges: { deviceId: string; online: boolean }[] = [];
  // The test worker's memory before this suite's drivers run: workers are not isolated
  // (vitest.config.ts), so its absolute size also counts the files that ran before in it.
  let rssBefore = 0;

  beforeAll(async () => {
    rssBefore = process.memoryUsage().rss;
    const driversDir = tempDir('hcs-drivers-');
    copyFixtures(driversDir, ['py-thermo', 'js-lamp', 'lua-fan', 'lua-plain', 'crashy', 'garbage']);
    fs.mkdirSync(path.join(driversDir, 'broken'));
    fs.writeFileSync(path.join(driversDir, 'broken/main.py'), '');
    fs.writeFileSync(path.join(driversDir, 'broken/broken.driver.json'), JSON.stringify({ driverKey: 'broken', driverFile: 'main.py', driverType: 'lua' }));
    process.env.HCS_TEST_SHOULD_NOT_LEAK = 'leaked';
    hub = await createHub(driversDir);
    hub.events.on({}, 'device.online_changed', (e) => onlineChanges.push({ deviceId: e.deviceId, online: e.online }));
    await hub.settings.save('py-thermo', { host: '10.0.0.5', apiKey: 's3cret' }, Date.now());
    await hub.supervisor.start();
  });

  afterAll(async () => {
    delete process.env.HCS_TEST_SHOULD_NOT_LEAK;
    await hub?.close();
  });

  const deviceOf = (driverKey: string, id: string) => waitFor(`device ${driverKey}/${id}`, () => hub.device(driverKey, id));
  const stateOf = (device: LogicalDevice) => hub.state.get(device.id);

  it('lists every manifest, the invalid one too, and has spawned the valid ones', () => {
    const list = hub.supervisor.list();
    expect(list.map((d) => d.driverKey)).toEqual(['broken', 'crashy', 'garbage', 'js-lamp', 'lua-fan', 'lua-plain', 'py-thermo']);
    const broken = list.find((d) => d.driverKey === 'broken')!;
    expect(broken).toMatchObject({ status: 'invalid', driverType: 'lua', file: 'broken/broken.driver.json', restarts: 0 });
    expect(broken.error).toMatch(/expected a \.lua file/);
    for (const key of ['js-lamp', 'lua-fan', 'lua-plain', 'py-thermo']) {
      const info = hub.info(key);
      expect(['running', 'backoff']).toContain(info.status);
    }
    expect(hub.info('py-thermo').properties.apiKey).toEqual({ type: 'string', title: 'API key', secret: true });
    expect(Object.keys(hub.info('py-thermo').commands)).toEqual(['reboot']);
  });

  it('runs a Python driver: discovery, state, settings through envMap, ACTION and COMMAND_EXECUTE', async () => {
    const device = await deviceOf('py-thermo', 't1');
    expect(device).toMatchObject({ name: 'Thermostat', category: 'climate', driverKey: 'py-thermo', driverDeviceId: 't1' });
    const state = await waitFor('thermostat state', () => (stateOf(device).state.temperature === 21.5 ? stateOf(device) : undefined));
    expect(state.online).toBe(true);
    expect(state.state).toMatchObject({
      host: '10.0.0.5',
      poll: '30',
      mode: 'heat',
      apiKeyLength: 6,
      driverKey: 'py-thermo',
      protocol: '1',
      leaked: null,
      pid: hub.info('py-thermo').pid,
    });

    const result = await hub.manager.execute(device, 'set_target', { value: 23 });
    expect(result).toEqual({ via: 'ACTION', command: 'set_target', deviceId: 't1', params: { value: 23 } });
    await waitFor('target state', () => stateOf(device).state.target === 23);
    expect(await hub.manager.execute(device, 'reboot', {})).toMatchObject({ via: 'COMMAND_EXECUTE', command: 'reboot' });
    // stderr reaches the log under the driver's name.
    await waitFor('stderr line', () => hub.log.entries.find((e) => e.obj.driver === 'py-thermo' && e.obj.stream === 'stderr' && e.msg === 'hub status registered'));
  });

  it('runs a JavaScript driver, with a minimal environment, and answers PING', async () => {
    const device = await deviceOf('js-lamp', 'l1');
    await waitFor('lamp state', () => stateOf(device).state.brightness === 80);
    expect(stateOf(device).state).toMatchObject({ on: false, nodeOptions: null, pid: hub.info('js-lamp').pid });
    expect(await hub.manager.execute(device, 'toggle', {})).toMatchObject({ via: 'ACTION', command: 'toggle', deviceId: 'l1', on: true });
    await waitFor('lamp on', () => stateOf(device).state.on === true);
    expect(await hub.manager.execute(device, 'blink', { times: 2 })).toMatchObject({ via: 'COMMAND_EXECUTE', params: { times: 2 } });
    const failure = await hub.manager.execute(device, 'fail', {}).catch((e: unknown) => e);
    expect(failure).toMatchObject({ kind: 'upstream_failed', code: 'DRIVER_ERROR', message: 'failed on purpose' });
    await waitFor('a PONG', () => hub.info('js-lamp').lastPongAt);
  });

  it('runs a Lua driver in the Lua host', async () => {
    const device = await deviceOf('lua-fan', 'f1');
    await waitFor('fan state', () => stateOf(device).state.ticked === true);
    expect(stateOf(device).state).toMatchObject({ speed: 0, label: 'Ceiling fan', driver: 'lua-fan', double: 42 });
    const params = { level: 3, tags: ['a', 'b'], empty: [], opts: {}, ratio: 0.5, nested: { list: [{ x: 1 }] } };
    expect(await hub.manager.execute(device, 'speed', params)).toEqual({ via: 'ACTION', command: 'speed', deviceId: 'f1', params });
    await waitFor('fan speed', () => stateOf(device).state.speed === 3);
    expect(await hub.manager.execute(device, 'boost', {})).toMatchObject({ via: 'COMMAND_EXECUTE', command: 'boost' });
    // A Lua error in a handler is logged; the host carries on.
    const lost = await hub.manager.execute(device, 'explode', {}, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(lost).toMatchObject({ code: 'DRIVER_TIMEOUT' });
    await waitFor('lua error on stderr', () => hub.log.of('lua-fan').find((e) => e.obj.stream === 'stderr' && e.msg.includes('exploded on purpose')));
    expect(await hub.manager.execute(device, 'speed', { level: 1 })).toMatchObject({ params: { level: 1 } });
    await waitFor('a PONG from the host', () => hub.info('lua-fan').lastPongAt);
    expect(hub.log.of('lua-fan').some((e) => e.msg === 'fan driver ready')).toBe(true);
  });

  it('runs a plain Lua program (an io.read loop) like the Python driver: discovery, settings through envMap, ACTION and COMMAND_EXECUTE, PING', async () => {
    const device = await deviceOf('lua-plain', 'p1');
    await waitFor('plain fan state', () => stateOf(device).state.label === 'Plain fan');
    expect(hub.info('lua-plain').commands).toEqual({
      boost: {},
      set_speed: { title: 'Set speed', params: { level: { type: 'integer', minimum: 0, maximum: 5 } } },
    });
    expect(await hub.manager.execute(device, 'set_speed', { level: 4 })).toEqual({ via: 'COMMAND_EXECUTE', command: 'set_speed', deviceId: 'p1', params: { level: 4 }, speed: 4 });
    await waitFor('plain fan speed', () => stateOf(device).state.speed === 4);
    expect(await hub.manager.execute(device, 'spin', {})).toMatchObject({ via: 'ACTION', command: 'spin', speed: 4 });
    await waitFor('a PONG from the Lua program itself', () => hub.info('lua-plain').lastPongAt);
    await waitFor('stderr line', () => hub.log.of('lua-plain').find((e) => e.obj.stream === 'stderr' && e.msg === 'hub status registered'));
    expect(hub.log.of('lua-plain').filter((e) => e.obj.violation)).toEqual([]);
  });

  it('masks secrets, validates settings, and restarts only the driver whose settings changed', async () => {
    const settings = await hub.supervisor.getSettings('py-thermo');
    expect(settings.values).toEqual({ host: '10.0.0.5', apiKey: '********' });
    expect(JSON.stringify(hub.supervisor.list())).not.toContain('s3cret');

    const invalid = await expectDomainError(hub.supervisor.updateSettings('py-thermo', { pollSeconds: 'soon', mode: 'dry', nope: 1 }), 'invalid', 'INVALID_DRIVER_SETTINGS');
    expect(invalid.details).toEqual(
      expect.arrayContaining([
        { field: 'pollSeconds', message: 'must be an integer' },
        { field: 'mode', message: 'must be one of "heat", "cool"' },
        { field: 'nope', message: 'is not a setup property of this driver' },
        { field: 'host', message: 'is required' },
      ]),
    );
    await expectDomainError(hub.supervisor.updateSettings('py-thermo', { host: 'h', pollSeconds: 0 }), 'invalid', 'INVALID_DRIVER_SETTINGS');
    await expectDomainError(hub.supervisor.updateSettings('no-such-driver', {}), 'not_found', 'DRIVER_NOT_FOUND');
    await expectDomainError(hub.supervisor.getSettings('broken'), 'conflict', 'DRIVER_MANIFEST_INVALID');
    expect(await hub.settings.get('py-thermo')).toEqual({ host: '10.0.0.5', apiKey: 's3cret' });

    const before = { thermo: hub.info('py-thermo'), lamp: hub.info('js-lamp'), fan: hub.info('lua-fan') };
    const info = await hub.supervisor.updateSettings('py-thermo', { host: '10.0.0.9', apiKey: '********', pollSeconds: 10, mode: 'cool' });
    expect(info.status).toBe('running');
    expect(info.pid).not.toBe(before.thermo.pid);
    expect(info.restarts).toBe(before.thermo.restarts + 1);
    expect(await hub.settings.get('py-thermo')).toEqual({ host: '10.0.0.9', apiKey: 's3cret', pollSeconds: 10, mode: 'cool' });

    const device = await deviceOf('py-thermo', 't1');
    await waitFor('new settings in the process', () => stateOf(device).state.host === '10.0.0.9' && stateOf(device).online);
    expect(stateOf(device).state).toMatchObject({ poll: '10', mode: 'cool', apiKeyLength: 6, pid: info.pid });
    expect(hub.info('js-lamp')).toMatchObject({ pid: before.lamp.pid, restarts: before.lamp.restarts, status: 'running' });
    expect(hub.info('lua-fan')).toMatchObject({ pid: before.fan.pid, restarts: before.fan.restarts, status: 'running' });
    expect(await hub.manager.execute(device, 'set_target', { value: 19 })).toMatchObject({ params: { value: 19 } });
  });

  it('restarts a crash-looping driver with capped exponential backoff; its devices go offline; the others keep working', async () => {
    const crashy = await deviceOf('crashy', 'c1');
    const delays = () => hub.log.of('crashy').filter((e) => e.msg.startsWith('local driver restarting in')).map((e) => e.obj.delayMs as number);
    await waitFor('four backoffs', () => delays().length >= 4, 8000);
    expect(delays().slice(0, 4)).toEqual([100, 200, 400, 400]);
    const info = hub.info('crashy');
    expect(info.restarts).toBeGreaterThanOrEqual(3);
    expect(info.lastExit).toMatchObject({ code: 3, signal: null });
    expect(info.lastError).toBe('process exited with code 3');

    const inBackoff = await waitFor('crashy in backoff', () => (hub.info('crashy').status === 'backoff' ? hub.info('crashy') : undefined));
    expect(inBackoff.nextRestartAt).toBeGreaterThan(inBackoff.lastExit!.at);
    expect(inBackoff.pid).toBeUndefined();
    expect(hub.state.get(crashy.id).online).toBe(false);
    const changes = onlineChanges.filter((c) => c.deviceId === crashy.id).map((c) => c.online);
    // Online at the first discovery, offline at every crash, online at every rediscovery:
    expect(changes.slice(0, 3)).toEqual([true, false, true]);
    expect(hub.log.of('crashy').some((e) => e.obj.stream === 'stderr' && e.msg === 'crashing on purpose')).toBe(true);

    // Meanwhile the lamp is unaffected.
    const lamp = await deviceOf('js-lamp', 'l1');
    expect(await hub.manager.execute(lamp, 'toggle', {})).toMatchObject({ command: 'toggle' });
    expect(hub.state.get(lamp.id).online).toBe(true);
  });

  it('kills and restarts a driver that writes garbage, an over-long line and a flood; the hub is fine', async () => {
    await waitFor('garbage killed and restarted', () => hub.info('garbage').restarts >= 1 && /protocol violations/.test(hub.info('garbage').lastError ?? ''), 8000);
    const logs = hub.log.of('garbage');
    const kinds = new Set(logs.map((e) => e.obj.violation).filter(Boolean));
    expect([...kinds].sort()).toEqual(expect.arrayContaining(['flood', 'line_too_long', 'not_json', 'rejected']));
    expect(logs.find((e) => e.obj.violation === 'rejected')?.obj.code).toBe('UNKNOWN_TYPE');
    expect(logs.some((e) => e.level === 'error' && e.msg.includes('killed: too many protocol violations'))).toBe(true);
    expect(hub.info('garbage').lastExit?.signal).toBe('SIGKILL');
    // The line after the 2 MiB one was read intact.
    await deviceOf('garbage', 'g1');

    const lamp = await deviceOf('js-lamp', 'l1');
    expect(await hub.manager.execute(lamp, 'toggle', {})).toMatchObject({ command: 'toggle' });
    const fan = await deviceOf('lua-fan', 'f1');
    expect(await hub.manager.execute(fan, 'speed', { level: 2 })).toMatchObject({ command: 'speed' });
    // The 2 MiB line and the flood were read in bounded pieces: the hub did not buffer them up.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);
  });

  it('restart() restarts one driver on request', async () => {
    const before = hub.info('js-lamp');
    const after = await hub.supervisor.restart('js-lamp');
    expect(after.status).toBe('running');
    expect(after.pid).not.toBe(before.pid);
    expect(after.restarts).toBe(before.restarts + 1);
    const lamp = await deviceOf('js-lamp', 'l1');
    await waitFor('lamp back online', () => hub.state.get(lamp.id).online && stateOf(lamp).state.pid === after.pid);
    await expectDomainError(hub.supervisor.restart('nope'), 'not_found', 'DRIVER_NOT_FOUND');
  });

  it('stop() terminates every child and restarts nothing afterwards', async () => {
    const pids = hub.supervisor
      .list()
      .map((d) => d.pid)
      .filter((p): p is number => p !== undefined);
    expect(pids.length).toBeGreaterThanOrEqual(3);
    await hub.supervisor.stop();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    for (const d of hub.supervisor.list()) expect(d.status).toBe(d.driverKey === 'broken' ? 'invalid' : 'stopped');
    const lamp = hub.device('js-lamp', 'l1')!;
    expect(hub.state.get(lamp.id).online).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const d of hub.supervisor.list()) {
      expect(d.pid).toBeUndefined();
      expect(['stopped', 'invalid']).toContain(d.status);
    }
  });
});

describe('local drivers that cannot start', () => {
  it('waits for required settings, then backs off when the interpreter is missing', async () => {
    const driversDir = tempDir('hcs-drivers-');
    copyFixtures(driversDir, ['py-thermo']);
    const hub = await createHub(driversDir, { pythonPath: path.join(driversDir, 'no-such-python3') });
    try {
      await hub.supervisor.start();
      expect(hub.info('py-thermo')).toMatchObject({ status: 'stopped', missingSettings: ['host'] });
      const info = await hub.supervisor.updateSettings('py-thermo', { host: 'h' });
      expect(info.status).toBe('backoff');
      expect(info.lastError).toMatch(/ENOENT/);
      expect(info.nextRestartAt).toBeDefined();
      await waitFor('a second failed start', () => hub.info('py-thermo').restarts >= 1 && hub.info('py-thermo').status === 'backoff');
      expect(hub.log.entries.some((e) => e.level === 'error' && e.msg === 'local driver failed to start')).toBe(true);
    } finally {
      await hub.close();
    }
  });

  it('reload() starts new drivers, stops removed ones and leaves unchanged ones running', async () => {
    const driversDir = tempDir('hcs-drivers-');
    copyFixtures(driversDir, ['js-lamp']);
    const hub = await createHub(driversDir);
    try {
      await hub.supervisor.start();
      const lamp = hub.info('js-lamp');
      expect(lamp.status).toBe('running');

      copyFixtures(driversDir, ['lua-fan']);
      expect(await hub.supervisor.reload()).toEqual([]);
      const fan = hub.info('lua-fan');
      expect(fan.status).toBe('running');
      expect(hub.info('js-lamp').pid).toBe(lamp.pid);

      fs.rmSync(path.join(driversDir, 'lua-fan'), { recursive: true });
      await hub.supervisor.reload();
      expect(hub.supervisor.list().map((d) => d.driverKey)).toEqual(['js-lamp']);
      expect(isAlive(fan.pid!)).toBe(false);
      expect(hub.info('js-lamp').pid).toBe(lamp.pid);
    } finally {
      await hub.close();
    }
  });
});
