import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './support/server.js';
import { eventually } from './support/ws-driver.js';

let a: TestServer;
let b: TestServer;
let tokenA: string;
let tokenB: string;

type Json = Record<string, unknown>;
type Release = { key: string; current: string | null; versions: Array<{ version: string; state: string; files: Array<{ path: string; sha256: string }> }>; history: Array<{ action: string; version: string }> };

/** A driver whose device is named after its version, so the running version shows in the device list. */
function packageOf(version: string) {
  const manifest = JSON.stringify({ driverKey: 'porch.release', driverType: 'javascript', driverFile: 'porch.js', name: 'Porch (released)', version });
  const source = `process.stdout.write(JSON.stringify({ type: 'DEVICE_DISCOVERED', device: { id: 'porch', name: 'Porch ${version}' } }) + '\\n');\nprocess.stdin.resume();\n`;
  return { files: [{ path: 'porch.driver.json', content: Buffer.from(manifest).toString('base64') }, { path: 'porch.js', content: Buffer.from(source).toString('base64') }] };
}

const call = async (server: TestServer, token: string, method: string, p: string, body?: unknown) => {
  const res = await server.request(method, `/v1/os${p}`, { token, ...(body === undefined ? {} : { body }) });
  return { status: res.status, body: (await res.json()) as Json };
};

async function runningName(): Promise<string | undefined> {
  const { body } = await call(a, tokenA, 'GET', '/devices');
  return (body.devices as Array<{ name: string; driverKey: string; online: boolean }>).find((d) => d.driverKey === 'porch.release' && d.online)?.name;
}

beforeAll(async () => {
  a = await startServer({ timers: undefined });
  b = await startServer();
  tokenA = await a.login();
  tokenB = await b.login();
}, 60_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe('integration releases', () => {
  it('moves a version draft → submitted → published, and the running driver becomes it', async () => {
    const saved = await call(a, tokenA, 'POST', '/integration-releases/save', packageOf('1.0.0'));
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ key: 'porch.release', current: null, versions: [{ version: '1.0.0', state: 'draft', files: [{ path: 'porch.driver.json' }, { path: 'porch.js' }] }] });

    // An illegal move is 409 with the current state.
    const early = await call(a, tokenA, 'POST', '/integration-releases/porch.release/publish', { version: '1.0.0' });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatchObject({ code: 'RELEASE_STATE_CONFLICT', details: { current: 'draft', needed: 'submitted' } });
    expect((await call(a, tokenA, 'POST', '/integration-releases/porch.release/unsubmit', {})).status).toBe(409);

    expect((await call(a, tokenA, 'POST', '/integration-releases/porch.release/submit', {})).body).toMatchObject({ versions: [{ state: 'submitted' }] });
    expect((await call(a, tokenA, 'POST', '/integration-releases/porch.release/unsubmit', {})).body).toMatchObject({ versions: [{ state: 'draft' }] });
    expect((await call(a, tokenA, 'POST', '/integration-releases/porch.release/submit', {})).status).toBe(200);
    const published = await call(a, tokenA, 'POST', '/integration-releases/porch.release/publish', {});
    expect(published.body).toMatchObject({ current: '1.0.0', versions: [{ version: '1.0.0', state: 'published' }] });
    expect(await eventually(runningName, 10_000, 'v1 running')).toBe('Porch 1.0.0');

    const resave = await call(a, tokenA, 'POST', '/integration-releases/save', packageOf('1.0.0'));
    expect(resave.status).toBe(409);
    expect(resave.body.error).toMatchObject({ details: { current: 'published' } });
  });

  it('publishes a second version, then rolls back: the first is current and running again', async () => {
    expect((await call(a, tokenA, 'POST', '/integration-releases/save', packageOf('1.1.0'))).status).toBe(200);
    expect((await call(a, tokenA, 'POST', '/integration-releases/porch.release/submit', { version: '1.1.0' })).status).toBe(200);
    expect((await call(a, tokenA, 'POST', '/integration-releases/porch.release/publish', {})).body).toMatchObject({ current: '1.1.0' });
    await eventually(async () => (await runningName()) === 'Porch 1.1.0', 10_000, 'v1.1 running');

    const rolled = await call(a, tokenA, 'POST', '/integration-releases/porch.release/rollback', {});
    expect(rolled.status).toBe(200);
    const release = rolled.body as unknown as Release;
    expect(release.current).toBe('1.0.0');
    expect(release.versions.map((v) => [v.version, v.state])).toEqual([
      ['1.0.0', 'published'],
      ['1.1.0', 'rolled_back'],
    ]);
    expect(release.history.map((h) => h.action)).toEqual(['save', 'submit', 'unsubmit', 'submit', 'publish', 'save', 'submit', 'publish', 'rollback']);
    await eventually(async () => (await runningName()) === 'Porch 1.0.0', 10_000, 'v1 running again');
    const none = await call(a, tokenA, 'POST', '/integration-releases/porch.release/rollback', {});
    expect(none.status).toBe(409);
    expect((await call(a, tokenA, 'GET', '/integration-releases')).body.releases).toHaveLength(1);
  });

  it('downloads a submission package with checksums and metadata; importing it on another hub reproduces the release byte for byte', async () => {
    const res = await a.request('GET', '/v1/os/integration-releases/porch.release/submission-package?version=1.1.0', { token: tokenA });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain('porch.release-1.1.0.tar.gz');
    const archive = Buffer.from(await res.arrayBuffer());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-release-'));
    fs.writeFileSync(path.join(dir, 'p.tar.gz'), archive);
    fs.mkdirSync(path.join(dir, 'x'));
    tar.x({ file: path.join(dir, 'p.tar.gz'), cwd: path.join(dir, 'x'), sync: true });
    const checksums = JSON.parse(fs.readFileSync(path.join(dir, 'x', 'checksums.json'), 'utf8')) as Record<string, string>;
    for (const [file, sum] of Object.entries(checksums)) expect(createHash('sha256').update(fs.readFileSync(path.join(dir, 'x', 'files', file))).digest('hex'), file).toBe(sum);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'x', 'release.json'), 'utf8'))).toMatchObject({ key: 'porch.release', version: '1.1.0', state: 'rolled_back' });

    const imported = await call(b, tokenB, 'POST', '/integration-releases/import', { archive: archive.toString('base64') });
    expect(imported.status).toBe(201);
    const onA = ((await call(a, tokenA, 'GET', '/integration-releases/porch.release')).body as unknown as Release).versions.find((v) => v.version === '1.1.0')!;
    const onB = (imported.body as unknown as Release).versions.find((v) => v.version === '1.1.0')!;
    expect(onB.files).toEqual(onA.files);
    const again = Buffer.from(await (await b.request('GET', '/v1/os/integration-releases/porch.release/submission-package', { token: tokenB })).arrayBuffer());
    fs.mkdirSync(path.join(dir, 'y'));
    fs.writeFileSync(path.join(dir, 'again.tar.gz'), again);
    tar.x({ file: path.join(dir, 'again.tar.gz'), cwd: path.join(dir, 'y'), sync: true });
    for (const file of Object.keys(checksums)) expect(fs.readFileSync(path.join(dir, 'y', 'files', file)).equals(fs.readFileSync(path.join(dir, 'x', 'files', file))), file).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'y', 'checksums.json'), 'utf8')).toBe(fs.readFileSync(path.join(dir, 'x', 'checksums.json'), 'utf8'));

    // A package whose file no longer matches its checksum is refused, and nothing changes.
    const tampered = path.join(dir, 'x', 'files', 'porch.js');
    fs.appendFileSync(tampered, '// changed\n');
    const repacked = path.join(dir, 'tampered.tar.gz');
    tar.c({ gzip: true, cwd: path.join(dir, 'x'), file: repacked, sync: true }, ['files', 'checksums.json', 'release.json']);
    const refused = await call(b, tokenB, 'POST', '/integration-releases/import', { archive: fs.readFileSync(repacked).toString('base64') });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'RELEASE_PACKAGE_INVALID', message: expect.stringMatching(/porch\.js does not match its checksum/) });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps one whole draft when saves of it race: its folder holds exactly the files its record lists', async () => {
    const variant = (label: string) => {
      const base = packageOf('3.0.0');
      return { files: [...base.files, { path: `notes-${label}.txt`, content: Buffer.from(`${label}\n`.repeat(200)).toString('base64') }] };
    };
    const saves = await Promise.all(Array.from({ length: 8 }, (_, i) => call(a, tokenA, 'POST', '/integration-releases/save', variant(i % 2 === 0 ? 'even' : 'odd'))));
    for (const saved of saves) expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const record = ((await call(a, tokenA, 'GET', '/integration-releases/porch.release')).body as unknown as Release).versions.find((v) => v.version === '3.0.0')!;
    const folder = path.join(a.dataDir, 'releases', 'porch.release', '3.0.0');
    const onDisk = fs.readdirSync(folder).sort();
    expect(onDisk).toEqual(record.files.map((f) => f.path).sort());
    for (const f of record.files) expect(createHash('sha256').update(fs.readFileSync(path.join(folder, f.path))).digest('hex'), f.path).toBe(f.sha256);
    // No staging folder is left beside it.
    expect(fs.readdirSync(path.dirname(folder)).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('refuses a release whose manifest has no semantic version, validating it as a driver upload', async () => {
    const noVersion = { files: [{ path: 'x.driver.json', content: Buffer.from(JSON.stringify({ driverKey: 'x', driverType: 'javascript', driverFile: 'x.js', version: 'latest' })).toString('base64') }, { path: 'x.js', content: '' }] };
    const res = await call(a, tokenA, 'POST', '/integration-releases/save', noVersion);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'RELEASE_VERSION_INVALID' });
    const bad = await call(a, tokenA, 'POST', '/integration-releases/save', { files: [{ path: '../x.driver.json', content: '' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'DRIVER_PACKAGE_INVALID' });
  });
});
