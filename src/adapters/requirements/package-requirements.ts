import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import semver from 'semver';
import { lastLines, npmCommand, runInstaller, type InstallerDeps } from '../../domain/drivers/local/dependencies.js';
import type { Requirements, RequirementsState, RequirementsStatus } from '../../platform/requirements.js';

/**
 * The pinned versions of packages the hub installs on first use: those only an integration that
 * is turned on uses (matter.js for the Matter bridge, Homebridge for the accessory hub). package.json
 * names them in `installedOnFirstUse` and pins them in `devDependencies`, so a development checkout
 * (and the tests) has them, and a home box's `npm ci --omit=dev` leaves them out; the integration
 * then installs them, at these versions, the first time it runs.
 */
export function firstUsePins(names: readonly string[]): Record<string, string> {
  const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { installedOnFirstUse?: string[]; devDependencies?: Record<string, string> };
  const pins: Record<string, string> = {};
  for (const name of names) {
    const version = manifest.devDependencies?.[name];
    if (!manifest.installedOnFirstUse?.includes(name) || !version || semver.valid(version) === null) throw new Error(`package.json does not name ${name} in "installedOnFirstUse" with an exact version in "devDependencies"`);
    pins[name] = version;
  }
  return pins;
}

export interface PackageRequirementsOptions extends InstallerDeps {
  /** What needs them, for the log and errors: `Matter`. */
  label: string;
  /** Package name → exact version. */
  packages: Record<string, string>;
  /** `DATA_DIR/requirements/<integration>`: its own `node_modules` once installed. */
  dir: string;
  registryUrl: string;
  installTimeoutMs: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Whether the hub's own node_modules count (default yes); a test turns it off to install. */
  useHubInstall?: boolean;
}

const STAGING = '.staging-';
const PROGRESS_LINES = 8;

/**
 * An integration's npm requirements, as Home Assistant installs an integration's requirements at
 * its setup: found in the hub's own node_modules when a full install has them, else installed on
 * first use from the npm registry, pinned, into their own folder under DATA_DIR (so a home box
 * carries only what it uses). An install is built in a staging folder and renamed into place: a
 * hub killed halfway leaves no half an install, and its staging folder goes at the next try.
 * The callers of the moment share one install; a failed one is a status with npm's reason, and
 * the next `ensure` tries again.
 */
export class PackageRequirements implements Requirements {
  private state: RequirementsState;
  private source: RequirementsStatus['source'];
  private readonly progress: string[] = [];
  private error: string | undefined;
  private installing: Promise<string> | undefined;
  /** Where they were found: kept, so a status read does not search the disk again (packages do not go while the hub runs). */
  private found: { source: 'hub' | 'installed'; nodeModules: string } | undefined;

  constructor(private readonly options: PackageRequirementsOptions) {
    const folder = this.presentIn();
    this.state = folder ? 'present' : 'missing';
    if (folder) this.source = folder.source;
  }

  /**
   * The folders Node resolves the packages from: none when the hub's own node_modules has them
   * (it resolves them itself), else this integration's own `node_modules` parent. Undefined when
   * they are not installed.
   */
  resolutionFolders(): string[] | undefined {
    const folder = this.presentIn();
    if (!folder) return undefined;
    return folder.source === 'hub' ? [] : [this.options.dir];
  }

  /** Where a package's folder is (its package.json beside), once present. */
  packageFolder(name: string): string | undefined {
    const folder = this.presentIn();
    if (!folder) return undefined;
    return path.join(folder.nodeModules, ...name.split('/'));
  }

  status(): RequirementsStatus {
    return {
      state: this.state,
      ...(this.source ? { source: this.source } : {}),
      packages: { ...this.options.packages },
      ...(this.progress.length > 0 && this.state !== 'present' ? { progress: [...this.progress] } : {}),
      ...(this.error && this.state === 'failed' ? { error: this.error } : {}),
    };
  }

  /** The resolution folders once the packages are present, installing them first when they are not. Rejects with npm's reason. */
  ensure(onLine?: (line: string) => void): Promise<string[]> {
    const folders = this.resolutionFolders();
    if (folders) return Promise.resolve(folders);
    this.installing ??= this.install(onLine).finally(() => {
      this.installing = undefined;
    });
    return this.installing.then(() => [this.options.dir]);
  }

  private presentIn(): { source: 'hub' | 'installed'; nodeModules: string } | undefined {
    this.found ??= this.search();
    return this.found;
  }

  private search(): { source: 'hub' | 'installed'; nodeModules: string } | undefined {
    const names = Object.keys(this.options.packages);
    if (this.options.useHubInstall !== false) {
      const hubFolders = createRequire(import.meta.url).resolve.paths(names[0] ?? '') ?? [];
      const hub = hubFolders.find((folder) => this.allAt(folder));
      if (hub) return { source: 'hub', nodeModules: hub };
    }
    const own = path.join(this.options.dir, 'node_modules');
    return this.allAt(own) ? { source: 'installed', nodeModules: own } : undefined;
  }

  /** Every package at its pinned version in this node_modules folder (read from its package.json). */
  private allAt(nodeModules: string): boolean {
    return Object.entries(this.options.packages).every(([name, version]) => {
      const manifest = path.join(nodeModules, ...name.split('/'), 'package.json');
      if (!existsSync(manifest)) return false;
      try {
        return (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version === version;
      } catch {
        return false;
      }
    });
  }

  private async install(onLine?: (line: string) => void): Promise<string> {
    const { dir, registryUrl, installTimeoutMs, log, label, packages } = this.options;
    const specs = Object.entries(packages).map(([name, version]) => `${name}@${version}`);
    const parent = path.dirname(dir);
    this.state = 'installing';
    this.error = undefined;
    this.progress.length = 0;
    const line = (text: string) => {
      this.progress.push(text.slice(0, 300));
      if (this.progress.length > PROGRESS_LINES) this.progress.shift();
      onLine?.(text);
    };
    await fs.mkdir(parent, { recursive: true });
    const base = path.basename(dir);
    for (const entry of await fs.readdir(parent)) if (entry.startsWith(`${STAGING}${base}-`)) await fs.rm(path.join(parent, entry), { recursive: true, force: true });
    const staging = path.join(parent, `${STAGING}${base}-${randomBytes(6).toString('hex')}`);
    await fs.mkdir(staging);
    try {
      log.info({ packages: specs, registry: registryUrl, dir }, `installing what ${label} needs from the npm registry (first use)`);
      const args = ['install', '--prefix', staging, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--omit=dev', '--loglevel=http', `--registry=${registryUrl}`, ...specs];
      const outcome = await runInstaller(this.options, npmCommand(), args, staging, installTimeoutMs, line);
      if (!outcome.ok) throw new Error(`installing ${specs.join(' ')} from ${registryUrl} failed (${outcome.problem ?? 'failed'}): ${lastLines(outcome.log)}`);
      if (!this.allAt(path.join(staging, 'node_modules'))) throw new Error(`npm installed ${specs.join(' ')}, but not at those versions`);
      // A previous copy (one at other versions) is moved aside first: rename does not replace a folder.
      if (existsSync(dir)) await fs.rename(dir, `${staging}-old`);
      await fs.rename(staging, dir);
      this.state = 'present';
      this.source = 'installed';
      log.info({ packages: specs, dir }, `${label}: installed what it needs`);
      return dir;
    } catch (err) {
      this.state = 'failed';
      this.error = (err as Error).message;
      log.warn({ err: this.error }, `${label}: what it needs could not be installed`);
      throw err;
    } finally {
      await fs.rm(staging, { recursive: true, force: true });
      await fs.rm(`${staging}-old`, { recursive: true, force: true });
    }
  }
}
