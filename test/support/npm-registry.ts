import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';

export interface RegistryPackage {
  name: string;
  version: string;
  /** File path (`bin/node`: folders are made; files under bin/ are executable) → content, inside the package (package.json is written from name and version unless given). */
  files: Record<string, string>;
}

export interface NpmRegistry {
  url: string;
  /** Packument and tarball requests served, for assertions. */
  requests: string[];
  close(): Promise<void>;
}

/** The package.json a package carries (given in its files, or made from its name and version). */
function manifestOf(pkg: RegistryPackage): { description?: string; keywords?: string[]; engines?: Record<string, string> } {
  return pkg.files['package.json'] ? (JSON.parse(pkg.files['package.json']) as { description?: string; keywords?: string[] }) : {};
}

/** A package tarball as npm publishes it: gzip'd tar with everything under `package/`. */
function tarball(pkg: RegistryPackage): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-npm-pkg-'));
  try {
    fs.mkdirSync(path.join(dir, 'package'));
    const files = { 'package.json': JSON.stringify({ name: pkg.name, version: pkg.version, main: 'index.js' }), ...pkg.files };
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, 'package', name)), { recursive: true });
      fs.writeFileSync(path.join(dir, 'package', name), content, { mode: name.startsWith('bin/') ? 0o755 : 0o644 });
    }
    const out = path.join(dir, 'package.tgz');
    tar.c({ gzip: true, cwd: dir, file: out, sync: true, portable: true }, ['package']);
    return fs.readFileSync(out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The part of the npm registry API `npm install` uses (packuments and tarballs), on 127.0.0.1,
 * serving the packages given: driver dependency installs are tested without leaving the machine.
 */
export async function startNpmRegistry(packages: RegistryPackage[]): Promise<NpmRegistry> {
  const tarballs = new Map<string, Buffer>();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    requests.push(url);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tgz = tarballs.get(url);
    if (tgz) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tgz.length });
      return res.end(tgz);
    }
    if (url === '/-/v1/search') {
      const text = new URL(req.url ?? '/', base).searchParams.get('text') ?? '';
      const words = text.split(/\s+/).filter(Boolean);
      const latest = new Map(packages.map((p) => [p.name, p]));
      const objects = [...latest.values()]
        .map((p) => ({ p, meta: manifestOf(p) }))
        .filter(({ p, meta }) =>
          words.every((w) => (w.startsWith('keywords:') ? (meta.keywords ?? []).includes(w.slice('keywords:'.length)) : `${p.name} ${meta.description ?? ''}`.includes(w))),
        )
        .map(({ p, meta }) => ({ package: { name: p.name, version: p.version, description: meta.description, keywords: meta.keywords, date: '2026-11-01T00:00:00.000Z' } }));
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ objects, total: objects.length }));
    }
    const name = url.slice(1);
    const versions = packages.filter((p) => p.name === name);
    if (versions.length === 0) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: 'Not found' }));
    }
    const packument = {
      name,
      'dist-tags': { latest: versions[versions.length - 1]!.version },
      versions: Object.fromEntries(
        versions.map((p) => {
          const file = `/${name}/-/${name}-${p.version}.tgz`;
          const data = tarballs.get(file)!;
          return [
            p.version,
            {
              name,
              version: p.version,
              main: 'index.js',
              ...manifestOf(p),
              dist: {
                tarball: `${base}${file}`,
                shasum: createHash('sha1').update(data).digest('hex'),
                integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
              },
            },
          ];
        }),
      ),
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(packument));
  });
  for (const p of packages) tarballs.set(`/${p.name}/-/${p.name}-${p.version}.tgz`, tarball(p));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
