import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackageRequirements, firstUsePins } from '../src/adapters/requirements/package-requirements.js';
import { requirementFoldersForChild } from '../src/adapters/requirements/resolution.js';
import { NodeProcessRunner } from '../src/adapters/process/node-process-runner.js';
import { systemClock, systemTimers } from '../src/platform/clock.js';
import { startNpmRegistry, type NpmRegistry } from './support/npm-registry.js';

/**
 * An integration's npm requirements (matter.js, Homebridge), installed on first use under
 * DATA_DIR when the hub's own node_modules lacks them (a home box's `npm ci --omit=dev`), from an npm registry on 127.0.0.1 serving two small ES-module packages, one
 * depending on the other; and found from a child process through the resolve hook.
 */

const run = promisify(execFile);
let registry: NpmRegistry;
let dataDir: string;
const lines: string[] = [];
const log = { info: (_o: object, msg: string) => void lines.push(msg), warn: (_o: object, msg: string) => void lines.push(msg) };
const processes = new NodeProcessRunner({ clock: systemClock, timers: systemTimers, log: { info: () => undefined, warn: () => undefined } });
const tarballs = () => registry.requests.filter((r) => r.endsWith('.tgz'));

function requirements(packages: Record<string, string>, dir = path.join(dataDir, 'requirements', 'demo'), useHubInstall = false) {
  return new PackageRequirements({ label: 'Demo', packages, dir, registryUrl: registry.url, installTimeoutMs: 60_000, processes, timers: systemTimers, log, useHubInstall });
}

beforeAll(async () => {
  registry = await startNpmRegistry([
    {
      name: 'hcs-req-leaf',
      version: '2.0.0',
      files: {
        'package.json': JSON.stringify({ name: 'hcs-req-leaf', version: '2.0.0', type: 'module', exports: './index.js' }),
        'index.js': 'export const leaf = "from the leaf";\n',
      },
    },
    {
      name: 'hcs-req-root',
      version: '1.2.3',
      files: {
        'package.json': JSON.stringify({ name: 'hcs-req-root', version: '1.2.3', type: 'module', exports: './index.js', dependencies: { 'hcs-req-leaf': '2.0.0' } }),
        'index.js': 'import { leaf } from "hcs-req-leaf";\nexport const value = `root, with ${leaf}`;\n',
      },
    },
  ]);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-requirements-'));
});

afterAll(async () => {
  await registry.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("an integration's npm requirements", () => {
  it('reads the pins of the packages package.json installs on first use, and refuses a name it does not list', () => {
    const pins = firstUsePins(['@matter/main', 'homebridge']);
    expect(pins['@matter/main']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pins.homebridge).toMatch(/^2\.\d+\.\d+$/);
    expect(() => firstUsePins(['left-pad'])).toThrow(/does not name left-pad in "installedOnFirstUse"/);
  });

  it("takes the hub's own install when it has them at the pinned versions, and installs nothing", async () => {
    const version = (createRequire(import.meta.url)('semver/package.json') as { version: string }).version;
    const own = requirements({ semver: version }, path.join(dataDir, 'requirements', 'hub-has-it'), true);
    expect(own.status()).toMatchObject({ state: 'present', source: 'hub' });
    expect(await own.ensure()).toEqual([]);
    // Another version than the hub's is not the hub's: it would be installed.
    expect(requirements({ semver: '0.0.1' }, path.join(dataDir, 'requirements', 'other'), true).status().state).toBe('missing');
    expect(registry.requests).toEqual([]);
  });

  it('installs them on first use, once for the callers of the moment, staged and renamed into place; a restarted hub finds them', async () => {
    const staleStaging = path.join(dataDir, 'requirements', '.staging-demo-left-by-a-killed-hub');
    fs.mkdirSync(staleStaging, { recursive: true });
    const demo = requirements({ 'hcs-req-root': '1.2.3' });
    expect(demo.status()).toEqual({ state: 'missing', packages: { 'hcs-req-root': '1.2.3' } });
    const progress: string[] = [];
    const [first, second] = await Promise.all([demo.ensure((line) => progress.push(line)), demo.ensure()]);
    const dir = path.join(dataDir, 'requirements', 'demo');
    expect(first).toEqual([dir]);
    expect(second).toEqual([dir]);
    expect(tarballs()).toHaveLength(2); // the package and its dependency, once
    expect(progress.some((line) => /hcs-req-root/.test(line))).toBe(true);
    expect(demo.status()).toEqual({ state: 'present', source: 'installed', packages: { 'hcs-req-root': '1.2.3' } });
    expect(fs.existsSync(path.join(dir, 'node_modules', 'hcs-req-leaf', 'index.js'))).toBe(true);
    // Nothing half-made is left beside it, the killed hub's staging folder included.
    expect(fs.readdirSync(path.join(dataDir, 'requirements')).sort()).toEqual(['demo']);

    const afterRestart = requirements({ 'hcs-req-root': '1.2.3' });
    expect(afterRestart.status()).toMatchObject({ state: 'present', source: 'installed' });
    expect(await afterRestart.ensure()).toEqual([dir]);
    expect(afterRestart.packageFolder('hcs-req-root')).toBe(path.join(dir, 'node_modules', 'hcs-req-root'));
    expect(tarballs()).toHaveLength(2);
  });

  it('lets a child process import them by name through the resolve hook, and only with it', async () => {
    const folders = await requirements({ 'hcs-req-root': '1.2.3' }).ensure();
    const program = 'import("hcs-req-root").then((m) => console.log(m.value), (e) => { console.log(e.code); process.exitCode = 3; })';
    // Run from a folder with no node_modules above it that has the packages.
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-requirements-child-'));
    try {
      const hooked = requirementFoldersForChild(folders);
      expect(hooked.args[0]).toBe('--import');
      const found = await run(process.execPath, [...hooked.args, '-e', program], { cwd, env: { ...process.env, NODE_OPTIONS: '', ...hooked.env }, timeout: 20_000 });
      expect(found.stdout.trim()).toBe('root, with from the leaf');
      const without = await run(process.execPath, ['-e', program], { cwd, env: { ...process.env, NODE_OPTIONS: '' }, timeout: 20_000 }).catch((err: { stdout: string; code: number }) => err);
      expect(without.stdout.trim()).toBe('ERR_MODULE_NOT_FOUND');
      expect(requirementFoldersForChild([])).toEqual({ args: [], env: {} });
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("fails with npm's reason when the registry lacks the pinned version, leaves nothing behind, and tries again at the next use", async () => {
    const missing = requirements({ 'hcs-req-root': '9.9.9' }, path.join(dataDir, 'requirements', 'missing'));
    await expect(missing.ensure()).rejects.toThrow(/installing hcs-req-root@9\.9\.9 from http:\/\/127\.0\.0\.1:\d+\/? failed/);
    const status = missing.status();
    expect(status).toMatchObject({ state: 'failed', packages: { 'hcs-req-root': '9.9.9' }, error: expect.stringMatching(/hcs-req-root@9\.9\.9/) });
    expect(status.progress?.length).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(dataDir, 'requirements', 'missing'))).toBe(false);
    expect(fs.readdirSync(path.join(dataDir, 'requirements')).filter((e) => e.startsWith('.staging-'))).toEqual([]);
    const asked = registry.requests.length;
    await expect(missing.ensure()).rejects.toThrow(/failed/);
    expect(registry.requests.length).toBeGreaterThan(asked);
  });
});
