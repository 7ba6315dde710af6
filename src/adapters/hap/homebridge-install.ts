import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { HomebridgeInstall } from '../../domain/accessory-hub/homebridge.js';

/**
 * The Homebridge the service depends on (its bin script, version and `engines.node`), or
 * undefined when it is not installed. Found by Node's own search path for the package, not by
 * resolving `homebridge/package.json`: Homebridge 2 declares `exports`, which hide its manifest.
 */
export function findHomebridge(): HomebridgeInstall | undefined {
  const folders = createRequire(import.meta.url).resolve.paths('homebridge') ?? [];
  const manifest = folders.map((folder) => path.join(folder, 'homebridge', 'package.json')).find((file) => existsSync(file));
  if (!manifest) return undefined;
  try {
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin?: Record<string, string> | string; engines?: { node?: string } };
    const bin = typeof pkg.bin === 'string' ? pkg.bin : (pkg.bin?.homebridge ?? 'bin/homebridge');
    return { bin: path.join(path.dirname(manifest), bin), version: pkg.version, ...(pkg.engines?.node ? { node: pkg.engines.node } : {}) };
  } catch {
    return undefined;
  }
}
