import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTarGz, makeZip } from './support/archives.js';
import { startNpmRegistry, type NpmRegistry } from './support/npm-registry.js';
import { startServer, type TestServer } from './support/server.js';

let server: TestServer;
let registry: NpmRegistry;
let token: string;
let driversDir: string;

const MAX_UPLOAD = 256 * 1024;
const HAS_PIP = spawnSync('python3', ['-m', 'pip', '--version'], { timeout: 20_000 }).status === 0;

/** A local driver that reports one device named by its npm dependency, and answers `ping`. */
const driverSource = (version: string) => `
import greeting from 'hcs-test-greeting';
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
send({ type: 'DEVICE_DISCOVERED', device: { id: 'lamp', name: greeting('${version}'), commands: ['ping'], state: { on: false } } });
let buffer = '';
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let i;
  while ((i = buffer.indexOf('\\n')) >= 0) {
    const line = buffer.slice(0, i); buffer = buffer.slice(i + 1);
    const m = JSON.parse(line);
    if (m.type === 'ACTION' || m.type === 'COMMAND_EXECUTE') send({ type: 'ACTION_RESULT', actionId: m.actionId, ok: true, result: { version: '${version}', label: process.env.LAMP_LABEL ?? null } });
    if (m.type === 'PING') send({ type: 'PONG', id: m.id });
  }
});
`;

const manifest = (version: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    driverKey: 'hello.lamp',
    driverType: 'javascript',
    driverFile: 'lamp.js',
    name: 'Hello lamp',
    version,
    properties: { label: { type: 'string', title: 'Label' } },
    envMap: { label: 'LAMP_LABEL' },
    ...extra,
  });

const packageJson = (dependency = 'hcs-test-greeting') => JSON.stringify({ name: 'hello-lamp', version: '1.0.0', private: true, type: 'module', dependencies: { [dependency]: '^1.0.0' } });

function looseUpload(files: Array<[field: string, name: string, content: string | Buffer]>): FormData {
  const form = new FormData();
  for (const [field, name, content] of files) form.append(field, new Blob([content]), name);
  return form;
}

async function upload(form: FormData): Promise<Response> {
  return fetch(`${server.url}/admin/panel/drivers/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
}

async function localDriver(key = 'hello.lamp') {
  const res = await server.request('GET', '/admin/drivers', { token });
  const body = (await res.json()) as { local: Array<{ driverKey: string; status: string; pid?: number; version?: string }> };
  return body.local.find((d) => d.driverKey === key);
}

async function lampName(): Promise<string | undefined> {
  const res = await server.request('GET', '/app/os/devices', { token });
  const devices = ((await res.json()) as { devices?: Array<{ name: string; driverKey: string }> }).devices ?? (await Promise.resolve([]));
  return devices.find((d) => d.driverKey === 'hello.lamp')?.name;
}

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await read();
  while (!ok(last)) {
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 50));
    last = await read();
  }
  return last;
}

/** Every file under the drivers folder with its size: "changes nothing on disk" is this, before and after. */
function diskState(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else out.push(`${path.relative(driversDir, full)}:${fs.statSync(full).size}`);
    }
  };
  walk(driversDir);
  return out.sort();
}

beforeAll(async () => {
  registry = await startNpmRegistry([
    { name: 'hcs-test-greeting', version: '1.0.0', files: { 'index.js': "module.exports = (v) => 'Lamp v' + v;" } },
    { name: 'hcs-test-greeting', version: '1.1.0', files: { 'index.js': "module.exports = (v) => 'Lamp v' + v + ' (greeting 1.1)';" } },
  ]);
  server = await startServer({ env: { DRIVER_NPM_REGISTRY: registry.url, DRIVER_UPLOAD_MAX_BYTES: String(MAX_UPLOAD) }, timers: undefined });
  token = await server.login();
  driversDir = server.config.driversDir;
}, 60_000);
afterAll(async () => {
  await server?.close();
  await registry?.close();
});

describe('driver packages', () => {
  it('installs a JavaScript driver with an npm dependency into its own folder and starts it', async () => {
    const res = await upload(looseUpload([['manifest', 'hello.driver.json', manifest('1.0.0')], ['driver', 'lamp.js', driverSource('1')], ['dependencies', 'package.json', packageJson()]]));
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { result: { driverKey: string; package: { version: string; installLog: string } } };
    expect(body.result).toMatchObject({ driverKey: 'hello.lamp', package: { version: '1.0.0', installLog: expect.stringContaining('npm install --omit=dev --ignore-scripts') } });
    expect(fs.existsSync(path.join(driversDir, 'hello.lamp', 'node_modules', 'hcs-test-greeting', 'index.js'))).toBe(true);
    expect(registry.requests.some((r) => r.endsWith('.tgz'))).toBe(true);
    await until('driver running', localDriver, (d) => d?.status === 'running');
    expect(await until('device reported', lampName, (n) => n !== undefined)).toMatch(/^Lamp v1/);
  });

  it('replaces it with a .tar.gz of a new version, then rolls back, and a rollback of the rollback goes forward', async () => {
    const first = await localDriver();
    const archive = makeTarGz([
      { name: 'hello-2.0.0', type: 'dir' },
      { name: 'hello-2.0.0/hello.driver.json', data: manifest('2.0.0') },
      { name: 'hello-2.0.0/lamp.js', data: driverSource('2') },
      { name: 'hello-2.0.0/package.json', data: packageJson() },
    ]);
    const res = await upload(looseUpload([['package', 'hello-2.0.0.tar.gz', archive]]));
    expect(res.status, await res.clone().text()).toBe(200);
    const replaced = await until('v2 running', localDriver, (d) => d?.version === '2.0.0' && d.status === 'running');
    expect(replaced?.pid).not.toBe(first?.pid);
    expect(await until('v2 device', lampName, (n) => n?.startsWith('Lamp v2') ?? false)).toMatch(/^Lamp v2/);

    const pkg = (await (await server.request('GET', '/admin/drivers/hello.lamp/package', { token })).json()) as { version: string; previous: { version: string } };
    expect(pkg).toMatchObject({ version: '2.0.0', previous: { version: '1.0.0' } });

    expect((await server.request('POST', '/admin/drivers/hello.lamp/rollback', { token, body: {} })).status).toBe(200);
    await until('v1 again', localDriver, (d) => d?.version === '1.0.0' && d.status === 'running');
    expect(await until('v1 device', lampName, (n) => n?.startsWith('Lamp v1') ?? false)).toMatch(/^Lamp v1/);
    expect((await server.request('POST', '/admin/drivers/hello.lamp/rollback', { token, body: {} })).status).toBe(200);
    await until('v2 again', localDriver, (d) => d?.version === '2.0.0' && d.status === 'running');
  });

  it('keeps the running version when the new one fails to install its dependencies', async () => {
    const before = await until('running', localDriver, (d) => d?.status === 'running');
    const disk = diskState();
    const res = await upload(looseUpload([['manifest', 'hello.driver.json', manifest('3.0.0')], ['driver', 'lamp.js', driverSource('3')], ['dependencies', 'package.json', packageJson('hcs-no-such-package')]]));
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: { code: string; message: string; details: { log: string } } };
    expect(body.error.code).toBe('DRIVER_INSTALL_FAILED');
    expect(body.error.message).toMatch(/previous version keeps running/);
    expect(body.error.details.log).toMatch(/404|hcs-no-such-package/);
    const after = await localDriver();
    expect(after).toMatchObject({ version: before?.version, status: 'running', pid: before?.pid });
    expect(diskState()).toEqual(disk);
  });

  it('refuses what is not a valid driver package with a 4xx naming the problem, and changes nothing on disk', async () => {
    const disk = diskState();
    const cases: Array<{ label: string; form: FormData; status: number; code: string; problem: RegExp }> = [
      {
        label: 'a traversal in a zip',
        form: looseUpload([['package', 'evil.zip', makeZip([{ name: 'hello.driver.json', data: manifest('9') }, { name: 'lamp.js', data: '' }, { name: '../../escape.js', data: 'x' }])]]),
        status: 400,
        code: 'DRIVER_PACKAGE_INVALID',
        problem: /escapes the package folder/,
      },
      {
        label: 'an absolute path in a tar',
        form: looseUpload([['package', 'evil.tar.gz', makeTarGz([{ name: 'hello.driver.json', data: manifest('9') }, { name: '/etc/evil.js', data: 'x' }])]]),
        status: 400,
        code: 'DRIVER_PACKAGE_INVALID',
        problem: /absolute path/,
      },
      {
        label: 'a symbolic link in a tar',
        form: looseUpload([['package', 'link.tar.gz', makeTarGz([{ name: 'hello.driver.json', data: manifest('9') }, { name: 'lamp.js', type: 'symlink', data: '/etc/passwd' }])]]),
        status: 400,
        code: 'DRIVER_PACKAGE_INVALID',
        problem: /symbolic link; links are not allowed/,
      },
      {
        label: 'a symbolic link in a zip',
        form: looseUpload([['package', 'link.zip', makeZip([{ name: 'hello.driver.json', data: manifest('9') }, { name: 'lamp.js', type: 'symlink', data: '/etc/passwd' }])]]),
        status: 400,
        code: 'DRIVER_PACKAGE_INVALID',
        problem: /symbolic link/,
      },
      {
        label: 'a hard link in a tar',
        form: looseUpload([['package', 'hard.tar.gz', makeTarGz([{ name: 'hello.driver.json', data: manifest('9') }, { name: 'lamp.js', type: 'hardlink', data: 'hello.driver.json' }])]]),
        status: 400,
        code: 'DRIVER_PACKAGE_INVALID',
        problem: /hard link/,
      },
      {
        label: 'an archive that unpacks past the limit',
        form: looseUpload([['package', 'bomb.zip', makeZip([{ name: 'hello.driver.json', data: manifest('9') }, { name: 'lamp.js', data: Buffer.alloc(MAX_UPLOAD * 4) }])]]),
        status: 413,
        code: 'DRIVER_PACKAGE_TOO_LARGE',
        problem: /more than 262144 bytes/,
      },
      {
        label: 'an oversize file',
        form: looseUpload([['manifest', 'hello.driver.json', manifest('9')], ['driver', 'lamp.js', Buffer.alloc(MAX_UPLOAD + 1, 0x20)]]),
        status: 413,
        code: 'DRIVER_PACKAGE_TOO_LARGE',
        problem: /add up to more than 262144 bytes/,
      },
      {
        label: 'a driver file whose extension does not match driverType',
        form: looseUpload([['manifest', 'hello.driver.json', manifest('9', { driverType: 'python' })], ['driver', 'lamp.js', 'print(1)']]),
        status: 400,
        code: 'DRIVER_PACKAGE_INVALID',
        problem: /does not match driverType python: expected a \.py file/,
      },
      {
        label: 'a manifest that is not JSON',
        form: looseUpload([['manifest', 'hello.driver.json', '{"driverKey": "hello.lamp",'], ['driver', 'lamp.js', '']]),
        status: 400,
        code: 'DRIVER_PACKAGE_INVALID',
        problem: /hello\.driver\.json is not valid JSON/,
      },
      {
        label: 'a manifest that breaks the schema',
        form: looseUpload([['manifest', 'hello.driver.json', JSON.stringify({ driverKey: 'x', driverType: 'cobol', driverFile: 'x.cob' })], ['driver', 'x.cob', '']]),
        status: 400,
        code: 'DRIVER_PACKAGE_INVALID',
        problem: /driverType/,
      },
      {
        label: 'no manifest',
        form: looseUpload([['driver', 'lamp.js', 'x']]),
        status: 400,
        code: 'DRIVER_PACKAGE_INVALID',
        problem: /exactly one \*\.driver\.json manifest/,
      },
      {
        label: 'something that is no archive',
        form: looseUpload([['package', 'notes.zip', 'just text']]),
        status: 400,
        code: 'DRIVER_PACKAGE_INVALID',
        problem: /neither a \.zip nor a \.tar\.gz/,
      },
    ];
    for (const c of cases) {
      const res = await upload(c.form);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status, `${c.label}: ${JSON.stringify(body)}`).toBe(c.status);
      expect(body.error.code, c.label).toBe(c.code);
      expect(body.error.message, c.label).toMatch(c.problem);
      expect(diskState(), c.label).toEqual(disk);
    }
    expect(fs.existsSync(path.resolve(driversDir, '..', 'escape.js'))).toBe(false);
    expect((await localDriver())?.status).toBe('running');
  });

  // pip comes with python3 on the machines here; a python3 without it cannot install requirements at all.
  it.skipIf(!HAS_PIP)('installs a Python driver with requirements.txt into its own folder (pip --target) and runs it with them', async () => {
    const wheel = makeZip([
      { name: 'hcsgreet/__init__.py', data: 'def greet(n):\n    return n + " (from a wheel)"\n' },
      { name: 'hcsgreet-1.0.dist-info/METADATA', data: 'Metadata-Version: 2.1\nName: hcsgreet\nVersion: 1.0\n' },
      { name: 'hcsgreet-1.0.dist-info/WHEEL', data: 'Wheel-Version: 1.0\nGenerator: hcs-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n' },
      { name: 'hcsgreet-1.0.dist-info/RECORD', data: 'hcsgreet/__init__.py,,\nhcsgreet-1.0.dist-info/METADATA,,\nhcsgreet-1.0.dist-info/WHEEL,,\nhcsgreet-1.0.dist-info/RECORD,,\n' },
    ]);
    const source = ['import json, sys', 'from hcsgreet import greet', "print(json.dumps({'type': 'DEVICE_DISCOVERED', 'device': {'id': 'garden', 'name': greet('Garden')}}), flush=True)", 'for line in sys.stdin:', '    pass', ''].join('\n');
    const archive = makeZip([
      { name: 'garden.driver.json', data: JSON.stringify({ driverKey: 'garden.py', driverType: 'python', driverFile: 'garden.py', version: '1.0.0' }) },
      { name: 'garden.py', data: source },
      // Offline on purpose: the wheel travels in the package (tests never leave the machine).
      { name: 'requirements.txt', data: '--no-index\n--find-links wheels\nhcsgreet==1.0\n' },
      { name: 'wheels/hcsgreet-1.0-py3-none-any.whl', data: wheel },
    ]);
    const res = await upload(looseUpload([['package', 'garden.zip', archive]]));
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { result: { package: { installLog: string } } };
    expect(body.result.package.installLog).toMatch(/pip install .*--target python_packages -r requirements\.txt/);
    expect(fs.existsSync(path.join(driversDir, 'garden.py', 'python_packages', 'hcsgreet', '__init__.py'))).toBe(true);
    const named = async () => {
      const list = (await (await server.request('GET', '/app/os/devices', { token })).json()) as { devices: Array<{ name: string; driverKey: string }> };
      return list.devices.find((d) => d.driverKey === 'garden.py')?.name;
    };
    expect(await until('python device', named, (n) => n !== undefined)).toBe('Garden (from a wheel)');
  });

  it('removes a driver (kept as its previous version) and a rollback brings it back', async () => {
    const res = await server.request('DELETE', '/admin/drivers/hello.lamp', { token });
    expect(res.status).toBe(200);
    expect(fs.existsSync(path.join(driversDir, 'hello.lamp'))).toBe(false);
    expect(await localDriver()).toBeUndefined();
    expect((await server.request('POST', '/admin/drivers/hello.lamp/rollback', { token, body: {} })).status).toBe(200);
    await until('back', localDriver, (d) => d?.status === 'running');
  });
});
