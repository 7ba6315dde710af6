import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { HomebridgeInstall, HomebridgeSource } from '../../domain/accessory-hub/homebridge.js';
import type { RequirementsStatus } from '../../platform/requirements.js';
import type { PackageRequirements } from '../requirements/package-requirements.js';

/** A Homebridge package folder's program, version and `engines.node`, read from its package.json. */
function installIn(folder: string): HomebridgeInstall | undefined {
  const manifest = path.join(folder, 'package.json');
  if (!existsSync(manifest)) return undefined;
  try {
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin?: Record<string, string> | string; engines?: { node?: string } };
    const bin = typeof pkg.bin === 'string' ? pkg.bin : (pkg.bin?.homebridge ?? 'bin/homebridge');
    return { bin: path.join(folder, bin), version: pkg.version, ...(pkg.engines?.node ? { node: pkg.engines.node } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * The Homebridge the service depends on (its bin script, version and `engines.node`), or
 * undefined when it is not installed. Found by Node's own search path for the package, not by
 * resolving `homebridge/package.json`: Homebridge 2 declares `exports`, which hide its manifest.
 */
export function findHomebridge(): HomebridgeInstall | undefined {
  const folders = createRequire(import.meta.url).resolve.paths('homebridge') ?? [];
  const folder = folders.map((f) => path.join(f, 'homebridge')).find((f) => existsSync(path.join(f, 'package.json')));
  return folder ? installIn(folder) : undefined;
}

/** Homebridge, installed on first use: the hub's own, or installed under DATA_DIR/requirements/accessory-hub the first time something uses it. */
export class HomebridgeRequirement implements HomebridgeSource {
  constructor(private readonly requirements: PackageRequirements) {}

  get version(): string {
    return this.requirements.status().packages.homebridge ?? '';
  }

  present(): HomebridgeInstall | undefined {
    const folder = this.requirements.packageFolder('homebridge');
    return folder ? installIn(folder) : undefined;
  }

  async ensure(progress?: (line: string) => void): Promise<HomebridgeInstall> {
    await this.requirements.ensure(progress);
    const install = this.present();
    if (!install) throw new Error(`Homebridge ${this.version} was installed, but its package.json cannot be read`);
    return install;
  }

  status(): RequirementsStatus {
    return this.requirements.status();
  }
}
