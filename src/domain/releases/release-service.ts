import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Clock } from '../../platform/clock.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import type { FileStore } from '../../platform/files.js';
import { SerialWrites } from '../../platform/serial-writes.js';
import type { ArchiveWriter } from '../backups/backup-service.js';
import type { ArchiveReader, DriverPackages, DriverUpload, PackageFile } from '../drivers/local/packages.js';
import { releaseErrors } from './errors.js';

export type ReleaseState = 'draft' | 'submitted' | 'published' | 'retired' | 'rolled_back';

export interface ReleaseFile {
  path: string;
  sha256: string;
  bytes: number;
}

export interface ReleaseVersion {
  version: string;
  state: ReleaseState;
  driverType: string;
  files: ReleaseFile[];
  createdAt: number;
  updatedAt: number;
  submittedAt?: number;
  publishedAt?: number;
}

export interface ReleaseHistoryEntry {
  at: number;
  action: 'save' | 'submit' | 'unsubmit' | 'publish' | 'rollback' | 'import';
  version: string;
  by: string | null;
  from?: ReleaseState;
  to: ReleaseState;
}

/** One integration (driver) and its versions; `id` is the driverKey. */
export interface Release {
  id: string;
  name?: string;
  versions: ReleaseVersion[];
  /** The published version the hub runs, if any. */
  current: string | null;
  /** Versions in the order they were published (rollback walks it back). */
  published: string[];
  history: ReleaseHistoryEntry[];
  createdAt: number;
  updatedAt: number;
}

export interface ReleaseDeps {
  releases: DocumentCollection<Release>;
  packages: Pick<DriverPackages, 'inspect' | 'install'>;
  archives: ArchiveReader & ArchiveWriter;
  /** Where release files are kept: `<dir>/<key>/<version>/…`. */
  dir: string;
  /** Where submission packages are written for download. */
  packagesDir: string;
  /** The release files and the submission packages. */
  files: FileStore;
  clock: Clock;
  maxBytes: number;
}

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const HISTORY_LIMIT = 200;
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * Integration releases: versioned packages of one driver, moving draft → submitted → published
 * (unsubmit goes back to draft). Publishing installs the version on this hub, so the running
 * driver follows; rollback makes the previously published version current and installs it again.
 * Files are kept per version, checked by SHA-256; the submission package carries them with their
 * checksums and the release's metadata, and importing it on another hub reproduces the release.
 */
/** Staging and replaced folders beside a version's own; no version begins with a dot. */
const LEFTOVER_PREFIX = '.staging-';

export class ReleaseService {
  /**
   * Every change to releases, one at a time: a save checks the prior state, replaces the version's
   * folder and then its record; two saves of one draft interleaved would leave one's files under
   * the other's checksums.
   */
  private readonly writes = new SerialWrites();

  constructor(private readonly deps: ReleaseDeps) {}

  async start(): Promise<void> {
    await this.deps.releases.load();
    await this.deps.files.makeFolder(this.deps.packagesDir);
    await this.removeLeftovers();
  }

  get packagesDir(): string {
    return this.deps.packagesDir;
  }

  list(): Release[] {
    return this.deps.releases.list();
  }

  get(key: string): Release {
    const release = this.deps.releases.find(key);
    if (!release) throw releaseErrors.RELEASE_NOT_FOUND({ key });
    return release;
  }

  /** Creates a release's draft version from a package (validated as a driver upload), or replaces that draft's files. */
  async save(upload: DriverUpload, by: string | null): Promise<Release> {
    const { manifest, files } = await this.deps.packages.inspect(upload);
    const key = manifest.driverKey;
    const version = manifest.version;
    if (!version || !SEMVER.test(version)) throw releaseErrors.RELEASE_VERSION_INVALID({ problem: version ? `"${version}" is not one` : 'the manifest has no `version`' });
    return this.store(key, manifest.name, version, manifest.driverType, files, 'save', by);
  }

  private store(key: string, name: string | undefined, version: string, driverType: string, files: PackageFile[], action: 'save' | 'import', by: string | null): Promise<Release> {
    return this.writes.run(() => this.storeNow(key, name, version, driverType, files, action, by));
  }

  private async storeNow(key: string, name: string | undefined, version: string, driverType: string, files: PackageFile[], action: 'save' | 'import', by: string | null): Promise<Release> {
    const existing = this.deps.releases.find(key);
    const prior = existing?.versions.find((v) => v.version === version);
    if (prior && prior.state !== 'draft') throw releaseErrors.RELEASE_STATE_CONFLICT({ key, version, current: prior.state, action: 'saving', needed: 'a draft (or a new version)' }, { details: { current: prior.state } });
    await this.replaceFolder(this.folderOf(key, version), files);
    const now = this.deps.clock.now();
    const entry: ReleaseVersion = {
      version,
      state: 'draft',
      driverType,
      files: files.map((f) => ({ path: f.path, sha256: sha256(f.data), bytes: f.data.length })).sort((a, b) => (a.path < b.path ? -1 : 1)),
      createdAt: prior?.createdAt ?? now,
      updatedAt: now,
    };
    const versions = [...(existing?.versions.filter((v) => v.version !== version) ?? []), entry];
    const { item } = await this.deps.releases.save({
      id: key,
      ...(name ? { name } : existing?.name ? { name: existing.name } : {}),
      versions,
      current: existing?.current ?? null,
      published: existing?.published ?? [],
      history: this.appended(existing, { at: now, action, version, by, ...(prior ? { from: prior.state } : {}), to: 'draft' }),
    });
    return item;
  }

  submit(key: string, version: string | undefined, by: string | null): Promise<Release> {
    return this.writes.run(() => this.move(key, version, 'submit', 'draft', 'submitted', by));
  }

  unsubmit(key: string, version: string | undefined, by: string | null): Promise<Release> {
    return this.writes.run(() => this.move(key, version, 'unsubmit', 'submitted', 'draft', by));
  }

  /** Submitted → published: installed on this hub (the running driver becomes this version). */
  publish(key: string, version: string | undefined, by: string | null): Promise<Release> {
    return this.writes.run(() => this.publishNow(key, version, by));
  }

  private async publishNow(key: string, version: string | undefined, by: string | null): Promise<Release> {
    const release = this.get(key);
    const target = this.pick(release, version, 'submitted', 'publish');
    await this.install(key, target);
    const now = this.deps.clock.now();
    const updated = await this.deps.releases.update(key, (r) => ({
      versions: r.versions.map((v) =>
        v.version === target.version ? { ...v, state: 'published' as const, publishedAt: now, updatedAt: now } : v.version === r.current ? { ...v, state: 'retired' as const, updatedAt: now } : v,
      ),
      current: target.version,
      published: [...r.published.filter((p) => p !== target.version), target.version],
      history: this.appended(r, { at: now, action: 'publish', version: target.version, by, from: 'submitted', to: 'published' }),
    }));
    return updated;
  }

  /** The version published before the current one becomes current again and is installed; the current one is marked rolled back. */
  rollback(key: string, by: string | null): Promise<Release> {
    return this.writes.run(() => this.rollbackNow(key, by));
  }

  private async rollbackNow(key: string, by: string | null): Promise<Release> {
    const release = this.get(key);
    if (!release.current) throw releaseErrors.RELEASE_NOTHING_TO_DO({ key, what: 'published version to roll back' });
    const chain = release.published.filter((p) => p !== release.current);
    const previousVersion = chain[chain.length - 1];
    const previous = release.versions.find((v) => v.version === previousVersion);
    if (!previous) throw releaseErrors.RELEASE_NOTHING_TO_DO({ key, what: `version published before ${release.current}` });
    await this.install(key, previous);
    const now = this.deps.clock.now();
    const from = release.current;
    return this.deps.releases.update(key, (r) => ({
      versions: r.versions.map((v) =>
        v.version === previous.version ? { ...v, state: 'published' as const, updatedAt: now } : v.version === from ? { ...v, state: 'rolled_back' as const, updatedAt: now } : v,
      ),
      current: previous.version,
      published: r.published.filter((p) => p !== from),
      history: this.appended(r, { at: now, action: 'rollback', version: previous.version, by, from: 'published', to: 'published' }),
    }));
  }

  /** `.tar.gz`: `files/…`, `checksums.json` (SHA-256 by path) and `release.json` (the version's metadata). */
  async submissionPackage(key: string, version: string | undefined, into: string): Promise<{ file: string; name: string }> {
    const release = this.get(key);
    const target = version ? release.versions.find((v) => v.version === version) : (release.versions.find((v) => v.version === release.current) ?? release.versions[release.versions.length - 1]);
    if (!target) throw releaseErrors.RELEASE_VERSION_NOT_FOUND({ key, version: version ?? '(latest)' });
    const files = this.deps.files;
    const work = await files.makeTempFolder(into, `.package-${this.deps.clock.now()}-`);
    try {
      await files.makeFolder(path.join(work, 'files'));
      const checksums: Record<string, string> = {};
      for (const f of target.files) {
        const data = await files.readBytes(path.join(this.folderOf(key, target.version), ...f.path.split('/')));
        if (sha256(data) !== f.sha256) throw releaseErrors.RELEASE_PACKAGE_INVALID({ problem: `${f.path} changed on disk since it was saved` });
        const out = path.join(work, 'files', ...f.path.split('/'));
        await files.makeFolder(path.dirname(out));
        await files.write(out, data);
        checksums[f.path] = f.sha256;
      }
      await files.writeAtomic(path.join(work, 'checksums.json'), `${JSON.stringify(checksums, null, 2)}\n`);
      const meta = { format: 1, key, ...(release.name ? { name: release.name } : {}), version: target.version, state: target.state, driverType: target.driverType, createdAt: target.createdAt, files: target.files };
      await files.writeAtomic(path.join(work, 'release.json'), `${JSON.stringify(meta, null, 2)}\n`);
      const name = `${key}-${target.version}.tar.gz`;
      const file = path.join(into, name);
      // Two downloads of one package at once each build it under a temp name of their own; the rename never lets one read the other's half.
      await files.writeAtomicWith(file, (temp) => this.deps.archives.writeTarGz(work, temp));
      return { file, name };
    } finally {
      await files.remove(work);
    }
  }

  /** Imports a submission package: every file checked against its checksum, then the release version stored as a draft. */
  async importPackage(data: Buffer, by: string | null): Promise<Release> {
    let entries: PackageFile[];
    try {
      entries = await this.deps.archives.read(data, this.deps.maxBytes);
    } catch (err) {
      throw releaseErrors.RELEASE_PACKAGE_INVALID({ problem: (err as Error).message });
    }
    const json = (name: string) => {
      const entry = entries.find((e) => e.path === name);
      if (!entry) throw releaseErrors.RELEASE_PACKAGE_INVALID({ problem: `it has no ${name}` });
      try {
        return JSON.parse(entry.data.toString('utf8')) as Record<string, unknown>;
      } catch {
        throw releaseErrors.RELEASE_PACKAGE_INVALID({ problem: `${name} is not valid JSON` });
      }
    };
    const meta = json('release.json');
    const checksums = json('checksums.json') as Record<string, string>;
    const files = entries.filter((e) => e.path.startsWith('files/')).map((e) => ({ path: e.path.slice('files/'.length), data: e.data }));
    const listed = Object.keys(checksums).sort();
    if (listed.join('\n') !== files.map((f) => f.path).sort().join('\n')) throw releaseErrors.RELEASE_PACKAGE_INVALID({ problem: 'its files and checksums.json do not list the same files' });
    for (const f of files) if (sha256(f.data) !== checksums[f.path]) throw releaseErrors.RELEASE_PACKAGE_INVALID({ problem: `${f.path} does not match its checksum` });
    const { manifest } = await this.deps.packages.inspect({ kind: 'files', files });
    if (manifest.driverKey !== meta.key || manifest.version !== meta.version) throw releaseErrors.RELEASE_PACKAGE_INVALID({ problem: 'release.json does not match the manifest (key and version)' });
    return this.store(manifest.driverKey, manifest.name, String(meta.version), manifest.driverType, files, 'import', by);
  }

  private async install(key: string, target: ReleaseVersion): Promise<void> {
    const files: PackageFile[] = [];
    for (const f of target.files) files.push({ path: f.path, data: await this.deps.files.readBytes(path.join(this.folderOf(key, target.version), ...f.path.split('/'))) });
    await this.deps.packages.install({ kind: 'files', files });
  }

  private pick(release: Release, version: string | undefined, needed: ReleaseState, action: string): ReleaseVersion {
    if (version) {
      const found = release.versions.find((v) => v.version === version);
      if (!found) throw releaseErrors.RELEASE_VERSION_NOT_FOUND({ key: release.id, version });
      if (found.state !== needed) throw releaseErrors.RELEASE_STATE_CONFLICT({ key: release.id, version, current: found.state, action, needed }, { details: { current: found.state, needed } });
      return found;
    }
    const candidates = release.versions.filter((v) => v.state === needed);
    const found = candidates[candidates.length - 1];
    if (!found) {
      const latest = release.versions[release.versions.length - 1]!;
      throw releaseErrors.RELEASE_STATE_CONFLICT({ key: release.id, version: latest.version, current: latest.state, action, needed }, { details: { current: latest.state, needed } });
    }
    return found;
  }

  private async move(key: string, version: string | undefined, action: 'submit' | 'unsubmit', from: ReleaseState, to: ReleaseState, by: string | null): Promise<Release> {
    const target = this.pick(this.get(key), version, from, action);
    const now = this.deps.clock.now();
    return this.deps.releases.update(key, (r) => ({
      versions: r.versions.map((v) => (v.version === target.version ? { ...v, state: to, updatedAt: now, ...(to === 'submitted' ? { submittedAt: now } : {}) } : v)),
      history: this.appended(r, { at: now, action, version: target.version, by, from, to }),
    }));
  }

  private appended(release: Release | undefined, entry: ReleaseHistoryEntry): ReleaseHistoryEntry[] {
    return [...(release?.history ?? []), entry].slice(-HISTORY_LIMIT);
  }

  /**
   * Writes the files into a staging folder beside the version's, then swaps it in with two
   * renames: nobody sees a half-written draft, and a hub killed half-way keeps the previous one
   * whole (the staging folder is a leftover that start() removes).
   */
  private async replaceFolder(folder: string, files: PackageFile[]): Promise<void> {
    const store = this.deps.files;
    const parent = path.dirname(folder);
    const staging = await store.makeTempFolder(parent, `${LEFTOVER_PREFIX}${path.basename(folder)}-`);
    try {
      for (const file of files) {
        const target = path.join(staging, ...file.path.split('/'));
        await store.makeFolder(path.dirname(target));
        await store.write(target, file.data);
      }
      const replaced = await store.makeTempFolder(parent, `${LEFTOVER_PREFIX}${path.basename(folder)}-old-`);
      if (await store.exists(folder)) await store.rename(folder, path.join(replaced, 'previous'));
      await store.rename(staging, folder);
      await store.remove(replaced);
    } finally {
      await store.remove(staging);
    }
  }

  /** Staging folders a killed hub left in a release's folder. */
  private async removeLeftovers(): Promise<void> {
    const store = this.deps.files;
    for (const release of this.deps.releases.list()) {
      const parent = path.join(this.deps.dir, release.id);
      const names = await store.list(parent).catch(() => [] as string[]);
      for (const name of names) if (name.startsWith(LEFTOVER_PREFIX)) await store.remove(path.join(parent, name));
    }
  }

  private folderOf(key: string, version: string): string {
    return path.join(this.deps.dir, key, version);
  }
}
