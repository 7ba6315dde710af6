import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { commandLineEndsWith } from '../src/adapters/process/child-guard.js';
import { NodeProcessRunner } from '../src/adapters/process/node-process-runner.js';
import { ManualClock, systemClock, systemTimers } from '../src/platform/clock.js';
import { buildService, spawnServer, type ChildServer } from './support/child.js';
import { freePort } from './support/net.js';
import { tempDataDir } from './support/server.js';

/**
 * No child of the hub outlives it: local drivers, Homebridge (and what they start) die with a hub
 * killed by SIGKILL, and a start after a crash that took the reaper too stops what was left.
 * Read from /proc, so Linux only.
 */
const hasProc = fs.existsSync('/proc/self/stat');

interface Proc {
  pid: number;
  ppid: number;
  state: string;
  cmdline: string;
}

function processTable(): Map<number, Proc> {
  const table = new Map<number, Proc>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: the fields after it are fixed.
      const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      table.set(Number(entry), { pid: Number(entry), state: after[0]!, ppid: Number(after[1]), cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

function descendantsOf(root: number): Proc[] {
  const table = processTable();
  const found: Proc[] = [];
  const queue = [root];
  for (let guard = 0; queue.length > 0 && guard < 10_000; guard++) {
    const parent = queue.shift()!;
    for (const p of table.values()) {
      if (p.ppid !== parent) continue;
      found.push(p);
      queue.push(p.pid);
    }
  }
  return found;
}

/** Those of `pids` that still run (a zombie waiting for its reaper is dead). */
function stillRunning(pids: number[]): Proc[] {
  const table = processTable();
  return pids.map((pid) => table.get(pid)).filter((p): p is Proc => !!p && p.state !== 'Z');
}

async function until<T>(what: string | (() => string), check: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Two local drivers that make stopping hard: one ignores SIGTERM and its stdin, one starts a child of its own. */
function writeDrivers(dir: string): void {
  const driver = (key: string, source: string) => {
    fs.mkdirSync(path.join(dir, key), { recursive: true });
    fs.writeFileSync(path.join(dir, key, `${key}.driver.json`), JSON.stringify({ driverKey: key, driverFile: `${key}.js`, driverType: 'javascript' }));
    fs.writeFileSync(path.join(dir, key, `${key}.js`), source);
  };
  driver('stubborn', `process.on('SIGTERM', () => {}); process.stdin.resume(); process.stdin.on('end', () => {}); setInterval(() => {}, 1000);\n`);
  driver(
    'parent',
    `const { spawn } = require('node:child_process');\nspawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'grandchild-of-parent-driver'], { stdio: 'ignore' });\nsetInterval(() => {}, 1000);\n`,
  );
}

const children: ChildServer[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
});

beforeAll(() => buildService(), 180_000);

async function startHub(env: Record<string, string>, expectHomebridge: boolean): Promise<{ server: ChildServer; tree: Proc[] }> {
  const server = await spawnServer(env, 30_000);
  children.push(server);
  const pid = server.proc.pid!;
  const tree = await until(
    () => `the drivers (and Homebridge) to run; processes: ${descendantsOf(pid).map((p) => p.cmdline.slice(0, 120)).join(' | ')}\n${server.lines.slice(-15).join('\n')}`,
    () => {
      const tree = descendantsOf(pid);
      const drivers = tree.filter((p) => /stubborn\.js|parent\.js/.test(p.cmdline)).length;
      const grandchild = tree.some((p) => p.cmdline.includes('grandchild-of-parent-driver'));
      // Homebridge names itself (process.title), so its command line reads just `homebridge`.
      const homebridge = tree.some((p) => p.cmdline === 'homebridge') && server.lines.some((l) => l.includes('Homebridge is running'));
      return drivers === 2 && grandchild && (!expectHomebridge || homebridge) ? tree : undefined;
    },
    45_000,
  );
  return { server, tree };
}

describe.skipIf(!hasProc)('children never outlive the hub', () => {
  it('a hub killed with SIGKILL takes Homebridge and two local drivers with it within 2 s; the next start runs one of each', async () => {
    const dataDir = tempDataDir();
    writeDrivers(path.join(dataDir, 'drivers'));
    const env = { DATA_DIR: dataDir, ADMIN_PASSWORD: 'lifetime-pass-1', ACCESSORY_HUB: 'on', ACCESSORY_HUB_BIND: '127.0.0.1', ACCESSORY_HUB_PORT: String(await freePort()) };
    const { server, tree } = await startHub(env, true);
    const pids = tree.map((p) => p.pid);
    expect(tree.some((p) => p.cmdline.includes('hcs-reaper'))).toBe(true);

    server.proc.kill('SIGKILL');
    await server.exited;
    const killedAt = Date.now();
    await until('every child of the killed hub to stop', () => stillRunning(pids).length === 0, 5000).catch(() => undefined);
    expect(stillRunning(pids).map((p) => p.cmdline)).toEqual([]);
    expect(Date.now() - killedAt).toBeLessThan(2000);

    const again = await startHub(env, true);
    const running = [...processTable().values()].filter((p) => p.state !== 'Z');
    expect(running.filter((p) => p.cmdline === 'homebridge' && fs.readFileSync(`/proc/${p.pid}/environ`, 'utf8').includes(dataDir)).length).toBe(1);
    expect(running.filter((p) => p.cmdline.includes(path.join(dataDir, 'drivers', 'stubborn'))).length).toBe(1);
    expect(running.filter((p) => p.cmdline.includes(path.join(dataDir, 'drivers', 'parent'))).length).toBe(1);

    again.server.proc.kill('SIGTERM');
    await again.server.exited;
    const after = again.tree.map((p) => p.pid);
    await until('the children of a stopped hub to stop', () => stillRunning(after).length === 0, 5000).catch(() => undefined);
    expect(stillRunning(after).map((p) => p.cmdline)).toEqual([]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  it('a start after a crash that took the reaper too stops what the last run left behind, from its record', async () => {
    const dataDir = tempDataDir();
    writeDrivers(path.join(dataDir, 'drivers'));
    const env = { DATA_DIR: dataDir, ADMIN_PASSWORD: 'lifetime-pass-1' };
    const { server, tree } = await startHub(env, false);
    // The record is written behind the spawns: the crash comes once it names both drivers (a hub
    // killed before that has nothing to go by, which is not what this test is about).
    const drivers = tree.filter((p) => /stubborn\.js|parent\.js/.test(p.cmdline)).map((p) => p.pid);
    const recordFile = path.join(dataDir, 'run', 'children.json');
    await until('both drivers in the record', () => {
      try {
        const recorded = (JSON.parse(fs.readFileSync(recordFile, 'utf8')) as { children?: Array<{ pid: number }> }).children?.map((c) => c.pid) ?? [];
        return drivers.every((pid) => recorded.includes(pid));
      } catch {
        return false;
      }
    }, 5000);
    // The reaper dies first, as if the OOM killer took both: the drivers are orphaned.
    for (const p of tree) if (p.cmdline.includes('hcs-reaper')) process.kill(p.pid, 'SIGKILL');
    server.proc.kill('SIGKILL');
    await server.exited;
    const orphans = tree.filter((p) => /stubborn\.js|parent\.js|grandchild-of-parent-driver/.test(p.cmdline)).map((p) => p.pid);
    expect(orphans.length).toBe(3);
    await new Promise((r) => setTimeout(r, 300));
    expect(stillRunning(orphans).length).toBe(3);

    const again = await startHub(env, false);
    expect(stillRunning(orphans).map((p) => p.cmdline)).toEqual([]);
    expect(again.server.lines.some((l) => l.includes('a previous run'))).toBe(true);
    again.server.proc.kill('SIGTERM');
    await again.server.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  it('20 kill -9 cycles leave no process of the hub behind and lose no acknowledged write', async () => {
    const dataDir = tempDataDir();
    writeDrivers(path.join(dataDir, 'drivers'));
    const env = { DATA_DIR: dataDir, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'lifetime-pass-1' };
    const everyChild = new Set<number>();
    const acknowledged: string[] = [];
    let token: string | undefined;
    for (let cycle = 0; cycle < 20; cycle++) {
      const { server, tree } = await startHub(env, false);
      for (const p of tree) everyChild.add(p.pid);
      if (!token) {
        const res = await fetch(`${server.url}/app/os/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'lifetime-pass-1' }) });
        token = ((await res.json()) as { accessToken: string }).accessToken;
      }
      const listed = (await (await fetch(`${server.url}/admin/users`, { headers: { authorization: `Bearer ${token}` } })).json()) as { users: Array<{ username: string }> };
      const names = listed.users.map((u) => u.username);
      for (const name of acknowledged) expect(names).toContain(name);
      const name = `cycle-${cycle}`;
      const created = await fetch(`${server.url}/admin/users`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ username: name, password: 'cycle-password-1' }) });
      if (created.status === 201) acknowledged.push(name);
      server.proc.kill('SIGKILL');
      await server.exited;
    }
    expect(acknowledged.length).toBe(20);
    await until('every child of every killed hub to stop', () => stillRunning([...everyChild]).length === 0, 5000).catch(() => undefined);
    expect(stillRunning([...everyChild]).map((p) => p.cmdline)).toEqual([]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 300_000);
});

describe.skipIf(!hasProc)('the process runner', () => {
  it('stops a child that ignores SIGTERM with SIGKILL once the grace has passed on the injected clock, and its group with it', async () => {
    const clock = new ManualClock();
    const runner = new NodeProcessRunner({ clock, timers: clock, log: { info: () => undefined, warn: () => undefined } });
    const lines: string[] = [];
    const proc = runner.start(
      {
        label: 'stubborn',
        command: process.execPath,
        args: ['-e', "process.on('SIGTERM', () => console.log('ignored')); require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); console.log('up'); setInterval(() => {}, 1000)"],
        env: { PATH: process.env.PATH },
      },
      { onStdoutLine: (l) => lines.push(l.toString()) },
    );
    await until('it to start', () => lines.includes('up'), 10_000);
    const pid = proc.pid!;
    const group = descendantsOf(pid).map((p) => p.pid);
    expect(group.length).toBe(1);
    const stopped = proc.stop(5000);
    await until('SIGTERM to arrive', () => lines.includes('ignored'), 10_000);
    expect(proc.running).toBe(true);
    clock.advance(5000);
    const exit = await stopped;
    expect(exit.signal).toBe('SIGKILL');
    await until('its child to stop with it', () => stillRunning(group).length === 0, 3000).catch(() => undefined);
    expect(stillRunning(group)).toEqual([]);
    await runner.close();
  }, 30_000);

  it('splits output into bounded lines and reports a line over the limit, and a program that is missing', async () => {
    const runner = new NodeProcessRunner({ clock: systemClock, timers: systemTimers, log: { info: () => undefined, warn: () => undefined } });
    const out: string[] = [];
    const err: string[] = [];
    let overflows = 0;
    const exit = await runner.start(
      {
        label: 'talker',
        command: process.execPath,
        args: ['-e', "process.stdout.write('one\\n' + 'x'.repeat(5000) + '\\ntwo\\nthree'); process.stderr.write('bad\\n')"],
        env: {},
        maxStdoutLineBytes: 1000,
      },
      { onStdoutLine: (l) => out.push(l.toString()), onStdoutOverflow: () => overflows++, onStderrLine: (l) => err.push(l) },
    ).exited;
    expect(exit.code).toBe(0);
    expect(out).toEqual(['one', 'two', 'three']);
    expect(overflows).toBe(1);
    expect(err).toEqual(['bad']);
    const missing = await runner.start({ label: 'missing', command: '/nonexistent/program', args: [], env: {} }).exited;
    expect(missing.startError?.code).toBe('ENOENT');
    await runner.close();
  });

  it('never stops an unrelated process that took a recorded pid: the command line must still match', async () => {
    const dataDir = tempDataDir();
    const recordFile = path.join(dataDir, 'run', 'children.json');
    const bystander = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'bystander'], { detached: true, stdio: 'ignore' });
    const leftover = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'leftover-driver'], { detached: true, stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(await commandLineEndsWith(bystander.pid!, ['bystander'])).toBe(true);
      fs.mkdirSync(path.dirname(recordFile), { recursive: true });
      fs.writeFileSync(
        recordFile,
        JSON.stringify({
          children: [
            { pid: bystander.pid, label: 'driver:x', args: ['x.js'], startedAt: 0 },
            { pid: leftover.pid, label: 'driver:y', args: ['-e', 'setInterval(() => {}, 1000)', 'leftover-driver'], startedAt: 0 },
          ],
        }),
      );
      const runner = new NodeProcessRunner({ clock: systemClock, timers: systemTimers, log: { info: () => undefined, warn: () => undefined }, recordFile });
      expect(await runner.reapLeftovers()).toBe(1);
      expect(stillRunning([leftover.pid!])).toEqual([]);
      expect(stillRunning([bystander.pid!]).length).toBe(1);
      await runner.close();
      expect(JSON.parse(fs.readFileSync(recordFile, 'utf8')).children).toEqual([]);
    } finally {
      bystander.kill('SIGKILL');
      leftover.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
