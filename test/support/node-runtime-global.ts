import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import semver from 'semver';

/**
 * Homebridge 2 needs Node 22 or 24. Where the tests run on an older Node (CI's first pass, on
 * Node 20), the hub under test would install one from the npm registry into each test's DATA_DIR
 * at the first start of Homebridge: 190 MB a test. Instead one Node 24 is found once per run and
 * the hubs are pointed at it through ACCESSORY_HUB_NODE (test/support/server.ts and child.ts pass
 * HCS_TEST_HOMEBRIDGE_NODE on). It is HCS_TEST_NODE24 when set (CI's .ci/run installs one
 * anyway), else one kept in the temp folder between runs, installed there the first time.
 * test/node-runtime.test.ts tests the hub's own first-use install, from a registry on 127.0.0.1.
 */
export default function setup(): void {
  const manifest = (createRequire(import.meta.url).resolve.paths('homebridge') ?? []).map((dir) => path.join(dir, 'homebridge', 'package.json')).find((file) => existsSync(file));
  const range = manifest ? (JSON.parse(readFileSync(manifest, 'utf8')) as { engines?: { node?: string } }).engines?.node : undefined;
  if (!range || semver.satisfies(process.version, range)) return;
  process.env.HCS_TEST_HOMEBRIDGE_NODE = process.env.HCS_TEST_NODE24 || cachedNode24();
}

function cachedNode24(): string {
  const home = path.join(os.tmpdir(), 'hcs-test-node-runtime');
  const node = path.join(home, 'node-24', 'bin', 'node');
  if (existsSync(node)) return node;
  const staging = path.join(home, `.staging-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    execFileSync('npm', ['install', '--prefix', staging, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', `node-${process.platform}-${process.arch}@24`], { stdio: 'inherit', timeout: 300_000 });
    // Another run may have put one in place meanwhile: either is as good.
    if (!existsSync(node)) renameSync(path.join(staging, 'node_modules', `node-${process.platform}-${process.arch}`), path.join(home, 'node-24'));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return node;
}
