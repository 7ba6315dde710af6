import path from 'node:path';
import type { Clock } from '../../../platform/clock.js';
import type { FileStore } from '../../../platform/files.js';
import { OneAtATime } from '../../../platform/one-at-a-time.js';
import { driverErrors } from '../errors.js';
import { installDependencies, type DependencyInstallSettings, type InstallerDeps } from './dependencies.js';
import { loadManifests, MANIFEST_SUFFIX, MAX_MANIFEST_BYTES, type LoadedManifest } from './manifest.js';
import type { LocalDriverInfo, LocalDriverSupervisor } from './supervisor.js';

export interface PackageFile {
  /** Relative, `/`-separated, checked: no absolute path, no `..`. */
  path: string;
  data: Buffer;
}

/** Reads an uploaded archive; rejects with an Error whose message names the problem. */
export interface ArchiveReader {
  read(data: Buffer, maxBytes: number): Promise<PackageFile[]>;
}

/** A driver package as uploaded: loose files (a manifest, its driver file, a dependency manifest) or one archive. */
export type DriverUpload = { kind: 'files'; files: PackageFile[] } | { kind: 'archive'; data: Buffer };

export interface PackageLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface DriverPackagesDeps extends InstallerDeps {
  driversDir: string;
  /** The drivers folder's files: staging, the swap, the kept versions. */
  files: FileStore;
  supervisor: LocalDriverSupervisor;
  archives: ArchiveReader;
  clock: Clock;
  log: PackageLogger;
  maxBytes: number;
  install: DependencyInstallSettings;
}

export interface InstalledPackage {
  driverKey: string;
  version?: string;
  folder: string;
  installedAt?: number;
  /** The installer's command and output, when the package declared dependencies. */
  installLog?: string;
  previous?: { version?: string; installedAt?: number };
}

const MAX_FILES = 2000;
const KEY_FOLDER = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;
const INSTALL_RECORD = '.install.json';
const INSTALL_LOG = 'install.log';

interface InstallRecord {
  driverKey: string;
  version?: string;
  installedAt: number;
  dependencies?: string;
}

/**
 * Driver packages uploaded through the admin panel: validated, staged, their dependencies
 * installed, then swapped into `DRIVERS_DIR/<driverKey>/` in one rename, with the version before
 * kept in `DRIVERS_DIR/.versions/<driverKey>/previous` for a rollback. Nothing touches the
 * running version until the new one is complete, so a package that fails leaves it running.
 * Dot-folders are invisible to the manifest search, so staging and kept versions never load.
 */
export class DriverPackages {
  private readonly root: string;
  /** One at a time: two of them must not interleave their renames. */
  private readonly exclusive = new OneAtATime(() => driverErrors.DRIVER_INSTALL_BUSY());

  constructor(private readonly deps: DriverPackagesDeps) {
    this.root = path.resolve(deps.driversDir);
  }

  private folderOf(driverKey: string) {
    return path.join(this.root, driverKey);
  }

  private previousOf(driverKey: string) {
    return path.join(this.root, '.versions', driverKey, 'previous');
  }


  /**
   * Checks a package as an install would (files, paths, sizes, the manifest as loaded) without
   * installing it: what a release is made of. Answers the manifest and the files, paths normalized.
   */
  async inspect(upload: DriverUpload): Promise<{ manifest: LoadedManifest; files: PackageFile[] }> {
    const staged = await this.stage(upload);
    await this.deps.files.remove(staged.dir);
    return { manifest: staged.manifest, files: staged.files };
  }

  install(upload: DriverUpload): Promise<LocalDriverInfo & { package: InstalledPackage }> {
    return this.exclusive.run(async () => {
      const { dir: staging, manifest } = await this.stage(upload);
      try {
        const { driverKey } = manifest;
        const target = this.folderOf(driverKey);
        const elsewhere = this.deps.supervisor.list().find((d) => d.driverKey === driverKey && !isInside(target, path.join(this.root, d.file)));
        if (elsewhere) throw driverErrors.DRIVER_KEY_IN_USE({ driverKey, file: elsewhere.file, folder: `${driverKey}/` });

        const outcome = await installDependencies(this.deps, staging, manifest.driverType, this.deps.install);
        if (outcome.command) await this.deps.files.writeAtomic(path.join(staging, INSTALL_LOG), outcome.log);
        if (!outcome.ok) {
          this.deps.log.warn({ driver: driverKey, command: outcome.command, problem: outcome.problem }, 'driver dependencies failed to install; the previous version keeps running');
          throw driverErrors.DRIVER_INSTALL_FAILED({ driverKey, problem: outcome.problem ?? 'failed' }, { details: { log: tail(outcome.log, 4000) } });
        }
        const record: InstallRecord = { driverKey, ...(manifest.version ? { version: manifest.version } : {}), installedAt: this.deps.clock.now(), ...(outcome.command ? { dependencies: outcome.command } : {}) };
        await this.deps.files.writeAtomic(path.join(staging, INSTALL_RECORD), JSON.stringify(record, null, 2));

        await this.swapIn(driverKey, staging);
        this.deps.log.info({ driver: driverKey, version: manifest.version }, 'driver package installed');
        const info = await this.deps.supervisor.reloadAndRestart(driverKey);
        return { ...info, package: await this.describe(driverKey) };
      } finally {
        await this.deps.files.remove(staging);
      }
    });
  }

  /** Writes a package to a staging folder and loads its one manifest there; removes the folder when it is not a valid package. */
  private async stage(upload: DriverUpload): Promise<{ dir: string; manifest: LoadedManifest; files: PackageFile[] }> {
    const files = await this.filesOf(upload);
    const dir = await this.deps.files.makeTempFolder(path.join(this.root, '.staging'), `${this.deps.clock.now()}-`);
    try {
      await this.writeFiles(dir, files);
      const { manifests, errors } = await loadManifests(dir);
      if (errors.length > 0) throw driverErrors.DRIVER_PACKAGE_INVALID({ problem: `${errors[0]!.file}: ${errors[0]!.error}` }, { details: errors });
      if (manifests.length !== 1) throw driverErrors.DRIVER_PACKAGE_INVALID({ problem: `it must hold exactly one *${MANIFEST_SUFFIX} manifest at its top, found ${manifests.length}` });
      const manifest = manifests[0]!;
      if (!KEY_FOLDER.test(manifest.driverKey)) throw driverErrors.DRIVER_PACKAGE_INVALID({ problem: `driverKey "${manifest.driverKey}" cannot name a folder (letters, digits, _ . - only, not starting with a dot)` });
      return { dir, manifest, files };
    } catch (err) {
      await this.deps.files.remove(dir);
      throw err;
    }
  }

  /** Makes the kept previous version current again (and the current one the previous: a rollback undoes a rollback). */
  rollback(driverKey: string): Promise<LocalDriverInfo & { package: InstalledPackage }> {
    return this.exclusive.run(async () => {
      const previous = this.previousOf(driverKey);
      if (!(await this.deps.files.exists(previous))) throw driverErrors.NO_PREVIOUS_VERSION({ driverKey });
      // A folder of its own to move the previous version into; swapped in from there, it is removed empty.
      const swapFolder = await this.deps.files.makeTempFolder(path.join(this.root, '.staging'), `rollback-${this.deps.clock.now()}-`);
      const swap = path.join(swapFolder, 'previous');
      try {
        await this.deps.files.rename(previous, swap);
        await this.swapIn(driverKey, swap);
      } finally {
        await this.deps.files.remove(swapFolder);
      }
      this.deps.log.info({ driver: driverKey }, 'driver rolled back to its previous version');
      const info = await this.deps.supervisor.reloadAndRestart(driverKey);
      return { ...info, package: await this.describe(driverKey) };
    });
  }

  /** Stops a driver and removes its folder; the folder is kept as the previous version, so a rollback brings it back. */
  remove(driverKey: string): Promise<{ driverKey: string; removed: true }> {
    return this.exclusive.run(async () => {
      const info = this.deps.supervisor.list().find((d) => d.driverKey === driverKey);
      if (!info) throw driverErrors.DRIVER_NOT_FOUND({ driverKey }, { details: { driverKey } });
      const folder = this.folderOf(driverKey);
      if (!KEY_FOLDER.test(driverKey) || path.dirname(path.join(this.root, info.file)) !== folder) throw driverErrors.DRIVER_NOT_REMOVABLE({ driverKey, file: info.file });
      const previous = this.previousOf(driverKey);
      await this.deps.files.remove(previous);
      await this.deps.files.makeFolder(path.dirname(previous));
      await this.deps.files.rename(folder, previous);
      this.deps.log.info({ driver: driverKey }, 'driver removed (kept as its previous version)');
      await this.deps.supervisor.reloadAfterRemoval();
      return { driverKey, removed: true as const };
    });
  }

  /** What an upload installed of a driver, its install log, and the version a rollback would bring back. */
  async describe(driverKey: string): Promise<InstalledPackage> {
    const folder = this.folderOf(driverKey);
    const current = await this.readRecord(folder);
    const previous = await this.readRecord(this.previousOf(driverKey));
    const log = await this.deps.files.readText(path.join(folder, INSTALL_LOG)).catch(() => undefined);
    return {
      driverKey,
      folder: `${driverKey}/`,
      ...(current?.version ? { version: current.version } : {}),
      ...(current ? { installedAt: current.installedAt } : {}),
      ...(log !== undefined ? { installLog: tail(log, 8000) } : {}),
      ...((await this.deps.files.exists(this.previousOf(driverKey))) ? { previous: { ...(previous?.version ? { version: previous.version } : {}), ...(previous ? { installedAt: previous.installedAt } : {}) } } : {}),
    };
  }

  /** The current folder becomes the previous version; `ready` (complete, on the same disk) becomes current. */
  private async swapIn(driverKey: string, ready: string): Promise<void> {
    const target = this.folderOf(driverKey);
    const previous = this.previousOf(driverKey);
    if (await this.deps.files.exists(target)) {
      await this.deps.files.remove(previous);
      await this.deps.files.makeFolder(path.dirname(previous));
      await this.deps.files.rename(target, previous);
    }
    await this.deps.files.rename(ready, target);
  }

  /** A package's files in `dir` (which exists and is empty), each checked to stay inside it. */
  private async writeFiles(dir: string, files: PackageFile[]): Promise<void> {
    for (const file of files) {
      const target = path.join(dir, ...file.path.split('/'));
      if (!isInside(dir, target)) throw driverErrors.DRIVER_PACKAGE_INVALID({ problem: `"${file.path}" escapes the package folder` });
      await this.deps.files.makeFolder(path.dirname(target));
      // Exclusive: never through something already there (a link made by an earlier entry cannot exist, but still).
      await this.deps.files.write(target, file.data, { exclusive: true, mode: 0o644 });
    }
  }

  private async readRecord(folder: string): Promise<InstallRecord | undefined> {
    try {
      return JSON.parse(await this.deps.files.readText(path.join(folder, INSTALL_RECORD))) as InstallRecord;
    } catch {
      return undefined;
    }
  }

  private async filesOf(upload: DriverUpload): Promise<PackageFile[]> {
    const max = this.deps.maxBytes;
    let files: PackageFile[];
    if (upload.kind === 'archive') {
      if (upload.data.length > max) throw driverErrors.DRIVER_PACKAGE_TOO_LARGE({ problem: `the archive is larger than ${max} bytes` });
      try {
        files = await this.deps.archives.read(upload.data, max);
      } catch (err) {
        const problem = (err as Error).message;
        if (/more than \d+ bytes/.test(problem)) throw driverErrors.DRIVER_PACKAGE_TOO_LARGE({ problem });
        throw driverErrors.DRIVER_PACKAGE_INVALID({ problem });
      }
      files = withoutCommonFolder(files);
    } else {
      files = upload.files;
    }
    if (files.length === 0) throw driverErrors.DRIVER_PACKAGE_INVALID({ problem: 'it holds no files' });
    if (files.length > MAX_FILES) throw driverErrors.DRIVER_PACKAGE_INVALID({ problem: `it holds more than ${MAX_FILES} files` });
    const total = files.reduce((sum, f) => sum + f.data.length, 0);
    if (total > max) throw driverErrors.DRIVER_PACKAGE_TOO_LARGE({ problem: `its files add up to more than ${max} bytes` });
    const seen = new Set<string>();
    for (const file of files) {
      const problem = pathProblem(file.path);
      if (problem) throw driverErrors.DRIVER_PACKAGE_INVALID({ problem });
      if (seen.has(file.path)) throw driverErrors.DRIVER_PACKAGE_INVALID({ problem: `"${file.path}" appears twice` });
      seen.add(file.path);
    }
    const manifests = files.filter((f) => !f.path.includes('/') && f.path.endsWith(MANIFEST_SUFFIX));
    if (manifests.length !== 1) throw driverErrors.DRIVER_PACKAGE_INVALID({ problem: `it must hold exactly one *${MANIFEST_SUFFIX} manifest at its top, found ${manifests.length}` });
    const manifest = manifests[0]!;
    if (manifest.data.length > MAX_MANIFEST_BYTES) throw driverErrors.DRIVER_PACKAGE_TOO_LARGE({ problem: `the manifest is larger than ${MAX_MANIFEST_BYTES} bytes` });
    try {
      JSON.parse(manifest.data.toString('utf8').replace(/^\uFEFF/, ''));
    } catch (err) {
      throw driverErrors.DRIVER_PACKAGE_INVALID({ problem: `${manifest.path} is not valid JSON: ${(err as Error).message}` });
    }
    return files;
  }
}

/** Why a package path is refused, if it is. */
export function pathProblem(p: string): string | undefined {
  if (p.length === 0 || p.length > 400) return `a file name is empty or too long`;
  if (p.includes('\0') || p.includes('\\')) return `"${p}" has a character file names may not have`;
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return `"${p}" is an absolute path`;
  const segments = p.split('/');
  if (segments.some((s) => s === '..' || s === '.' || s === '')) return `"${p}" escapes the package folder or is not a clean relative path`;
  if (segments.some((s) => s === 'node_modules')) return `"${p}" is inside node_modules: dependencies are installed from package.json, not uploaded`;
  return undefined;
}

/** An archive made of one folder (`driver-1.2/…`) is that folder's contents. */
function withoutCommonFolder(files: PackageFile[]): PackageFile[] {
  if (files.length === 0 || files.some((f) => !f.path.includes('/'))) return files;
  const first = files[0]!.path.split('/')[0]!;
  if (!files.every((f) => f.path.startsWith(`${first}/`))) return files;
  return files.map((f) => ({ ...f, path: f.path.slice(first.length + 1) }));
}

function isInside(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}


function tail(text: string, chars: number): string {
  return text.length <= chars ? text : `…${text.slice(-chars)}`;
}
