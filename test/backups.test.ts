import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import SQLite from '../src/storage/sqlite-binding.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tar from 'tar';
import { makeTarGz } from './support/archives.js';
import { buildService, spawnServer, type ChildServer } from './support/child.js';
import { ADMIN, tempDataDir } from './support/server.js';

let server: ChildServer;
let dataDir: string;
let token: string;

type Json = Record<string, unknown>;

async function call(method: string, p: string, body?: unknown, auth = token): Promise<Response> {
  return fetch(server.url + p, {
    method,
    headers: { authorization: `Bearer ${auth}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
}

async function login(): Promise<string> {
  const res = await fetch(`${server.url}/app/os/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { accessToken: string }).accessToken;
}

async function usernames(): Promise<string[]> {
  const res = await call('GET', '/admin/users');
  return ((await res.json()) as { users: Array<{ username: string }> }).users.map((u) => u.username).sort();
}

/** The downloaded backup unpacked into a folder, to be changed and packed again by a test. */
function unpack(archive: Buffer): string {
  const dir = fs.mkdtempSync(path.join(dataDir, '..', 'hcs-backup-test-'));
  fs.writeFileSync(path.join(dir, 'in.tar.gz'), archive);
  fs.mkdirSync(path.join(dir, 'x'));
  tar.x({ file: path.join(dir, 'in.tar.gz'), cwd: path.join(dir, 'x'), sync: true });
  return path.join(dir, 'x');
}

function pack(dir: string): Buffer {
  const out = `${dir}.tar.gz`;
  tar.c({ gzip: true, cwd: dir, file: out, sync: true, portable: true }, fs.readdirSync(dir));
  return fs.readFileSync(out);
}

beforeAll(async () => {
  buildService();
  dataDir = tempDataDir();
  fs.mkdirSync(path.join(dataDir, 'drivers', 'kept'), { recursive: true });
  fs.writeFileSync(path.join(dataDir, 'drivers', 'kept', 'notes.txt'), 'a file of the drivers folder');
  server = await spawnServer({ DATA_DIR: dataDir, ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password });
  token = await login();
}, 180_000);
afterAll(async () => {
  server?.proc.kill('SIGTERM');
  await server?.exited;
});

describe('backups', () => {
  let archive: Buffer;

  it('takes an online backup of the database and drivers folder and downloads it with its checksum', async () => {
    expect((await call('POST', '/admin/users', { username: 'keeper', password: 'keeper-password' })).status).toBe(201);
    const created = await call('POST', '/admin/backups', {});
    expect(created.status).toBe(201);
    const info = (await created.json()) as { name: string; bytes: number; sha256: string };
    expect(info.name).toMatch(/^hcs-backup-\d{8}-\d{6}$/);
    const listed = (await (await call('GET', '/admin/backups')).json()) as { backups: Array<{ name: string }> };
    expect(listed.backups.map((b) => b.name)).toContain(info.name);

    const download = await call('GET', `/admin/backups/${info.name}/download`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toContain(`${info.name}.tar.gz`);
    archive = Buffer.from(await download.arrayBuffer());
    expect(archive.length).toBe(info.bytes);
    expect(createHash('sha256').update(archive).digest('hex')).toBe(info.sha256);

    const dir = unpack(archive);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'backup.json'), 'utf8'))).toMatchObject({ format: 1, migrations: expect.arrayContaining(['0001-initial']) });
    expect(fs.readFileSync(path.join(dir, 'drivers', 'kept', 'notes.txt'), 'utf8')).toBe('a file of the drivers folder');
    const db = new SQLite(path.join(dir, 'database.sqlite'), { readonly: true });
    expect(db.prepare('SELECT username FROM users WHERE username = ?').get('keeper')).toBeTruthy();
    db.close();
  });

  it('refuses a bad archive with a 4xx naming the problem, and changes nothing', async () => {
    const before = await usernames();
    const dir = unpack(archive);
    const future = new SQLite(path.join(dir, 'database.sqlite'));
    future.prepare("INSERT INTO kysely_migration (name, timestamp) VALUES ('9999-from-the-future', '2030-01-01')").run();
    future.close();
    const newer = pack(dir);
    const broken = unpack(archive);
    fs.writeFileSync(path.join(broken, 'database.sqlite'), Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4096, 7)]));
    const cases: Array<[string, Buffer, number, string, RegExp]> = [
      ['not an archive', Buffer.from('hello'), 400, 'BACKUP_INVALID', /neither a \.zip nor a \.tar\.gz/],
      ['no manifest', makeTarGz([{ name: 'database.sqlite', data: 'x' }]), 400, 'BACKUP_INVALID', /no backup\.json/],
      ['a traversal', makeTarGz([{ name: 'backup.json', data: '{"format":1}' }, { name: 'drivers/../../evil', data: 'x' }]), 400, 'BACKUP_INVALID', /escapes/],
      ['a stray file', makeTarGz([{ name: 'backup.json', data: '{"format":1}' }, { name: 'database.sqlite', data: 'SQLite format 3\0' }, { name: 'etc/passwd', data: 'x' }]), 400, 'BACKUP_INVALID', /does not belong/],
      ['a damaged database', pack(broken), 400, 'BACKUP_INVALID', /database\.sqlite/],
      ['a newer schema', newer, 409, 'BACKUP_SCHEMA_NEWER', /9999-from-the-future/],
    ];
    for (const [label, data, status, code, problem] of cases) {
      const res = await call('POST', '/admin/backups/restore', { archive: data.toString('base64') });
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status, `${label}: ${JSON.stringify(body)}`).toBe(status);
      expect(body.error.code, label).toBe(code);
      expect(body.error.message, label).toMatch(problem);
      expect(fs.existsSync(path.join(dataDir, 'restore-pending')), label).toBe(false);
    }
    expect(await usernames()).toEqual(before);
  });

  it('restores a backup: the service restarts into it in its process, and the audit trail shows who did it', async () => {
    expect((await call('POST', '/admin/users', { username: 'after-backup', password: 'after-password' })).status).toBe(201);
    fs.writeFileSync(path.join(dataDir, 'drivers', 'kept', 'notes.txt'), 'changed after the backup');
    const res = await call('POST', '/admin/backups/restore', { archive: archive.toString('base64') });
    const answer = await res.json();
    expect(res.status, JSON.stringify(answer)).toBe(202);
    expect(answer).toMatchObject({ restoring: true, restartScheduled: true });

    const deadline = Date.now() + 20_000;
    for (;;) {
      if (server.lines.some((l) => l.includes('a backup was restored'))) {
        const ready = await fetch(`${server.url}/readyz`).catch(() => undefined);
        if (ready?.status === 200) break;
      }
      if (Date.now() > deadline) throw new Error(`not back after the restore:\n${server.lines.slice(-20).join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(server.proc.exitCode).toBeNull();
    token = await login();
    const names = await usernames();
    expect(names).toContain('keeper');
    expect(names).not.toContain('after-backup');
    expect(fs.readFileSync(path.join(dataDir, 'drivers', 'kept', 'notes.txt'), 'utf8')).toBe('a file of the drivers folder');
    const kept = fs.readdirSync(path.join(dataDir, 'backups')).filter((n) => n.startsWith('pre-restore-'));
    expect(kept).toHaveLength(1);
    expect(fs.readFileSync(path.join(dataDir, 'backups', kept[0]!, 'drivers', 'kept', 'notes.txt'), 'utf8')).toBe('changed after the backup');

    // The trail in the restored database reaches up to the backup: the user creation before it is there.
    const audit = (await (await call('GET', '/admin/audit?action=users.')).json()) as { entries: Json[] };
    expect(audit.entries[0]).toMatchObject({ actor: 'admin', action: 'users.create', ok: true, input: { username: 'keeper', password: '********' } });
  });
});
