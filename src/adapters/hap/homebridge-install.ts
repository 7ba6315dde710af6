import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { HomebridgeInstall } from '../../domain/accessory-hub/homebridge.js';

/** The Homebridge the service depends on (its bin script and version), or undefined when it is not installed. */
export function findHomebridge(): HomebridgeInstall | undefined {
  try {
    const manifest = createRequire(import.meta.url).resolve('homebridge/package.json');
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin?: Record<string, string> | string };
    const bin = typeof pkg.bin === 'string' ? pkg.bin : (pkg.bin?.homebridge ?? 'bin/homebridge');
    return { bin: path.join(path.dirname(manifest), bin), version: pkg.version };
  } catch {
    return undefined;
  }
}
