/**
 * The hub's secret key (DATA_DIR/secret.key) and the values sealed with it: made once with mode
 * 0600 and read at later starts, one key when several starts race on one folder, a bad key file
 * refused or narrowed, and AES-256-GCM values that open only with their key, for their record and
 * unaltered.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AesGcmSecretBox } from '../src/adapters/secrets/aes-gcm-box.js';
import { loadOrCreateSecretKey, SecretKeyError } from '../src/adapters/secrets/key-file.js';
import { secretsModule } from '../src/adapters/secrets/module.js';
import { systemTimers } from '../src/platform/clock.js';
import { SECRET_KEY_FILE } from '../src/platform/secret-box.js';
import { startServer, tempDataDir } from './support/server.js';

const dirs: string[] = [];
const freshDir = () => {
  const dir = tempDataDir();
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function recordingLog() {
  const lines: Array<{ level: 'info' | 'warn'; obj: object; msg: string }> = [];
  return {
    lines,
    info: (obj: object, msg: string) => lines.push({ level: 'info', obj, msg }),
    warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj, msg }),
  };
}

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;
const posix = process.platform !== 'win32';

describe('the secret key file', () => {
  it('is made at the first start, 32 bytes with mode 0600, and read as it is at later starts', async () => {
    const file = path.join(freshDir(), 'nested', SECRET_KEY_FILE);
    const log = recordingLog();
    const first = await loadOrCreateSecretKey(file, log, systemTimers);
    expect(first).toHaveLength(32);
    expect(fs.readFileSync(file).equals(first)).toBe(true);
    if (posix) expect(modeOf(file)).toBe(0o600);
    expect(log.lines).toEqual([expect.objectContaining({ level: 'info', msg: 'secret key created' })]);

    const again = recordingLog();
    const second = await loadOrCreateSecretKey(file, again, systemTimers);
    expect(second.equals(first)).toBe(true);
    expect(again.lines).toEqual([]);
    // No temp file is left beside it.
    expect(fs.readdirSync(path.dirname(file))).toEqual([SECRET_KEY_FILE]);
  });

  it('ends with one key when many starts make it at once in one process', async () => {
    const file = path.join(freshDir(), SECRET_KEY_FILE);
    const keys = await Promise.all(Array.from({ length: 16 }, () => loadOrCreateSecretKey(file, recordingLog(), systemTimers)));
    for (const key of keys) expect(key.equals(keys[0]!)).toBe(true);
    expect(fs.readFileSync(file).equals(keys[0]!)).toBe(true);
    expect(fs.readdirSync(path.dirname(file))).toEqual([SECRET_KEY_FILE]);
  });

  it('ends with one key when several hub processes start at once on one folder', async () => {
    const dir = freshDir();
    const file = path.join(dir, SECRET_KEY_FILE);
    const moduleUrl = pathToFileURL(path.resolve(import.meta.dirname, '../src/adapters/secrets/key-file.ts')).href;
    const clockUrl = pathToFileURL(path.resolve(import.meta.dirname, '../src/platform/clock.ts')).href;
    // Each waits for the same instant, then makes or reads the key and prints it.
    const goAt = Date.now() + 1500;
    const script = `
      const { loadOrCreateSecretKey } = await import(${JSON.stringify(moduleUrl)});
      const { systemTimers } = await import(${JSON.stringify(clockUrl)});
      while (Date.now() < ${goAt}) {}
      const log = { info() {}, warn() {} };
      const key = await loadOrCreateSecretKey(${JSON.stringify(file)}, log, systemTimers);
      process.stdout.write(key.toString('hex'));
    `;
    const run = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code}: ${err}`))));
      });
    const keys = await Promise.all([run(), run(), run(), run()]);
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(keys).size).toBe(1);
    expect(fs.readFileSync(file).toString('hex')).toBe(keys[0]);
    expect(fs.readdirSync(dir)).toEqual([SECRET_KEY_FILE]);
    if (posix) expect(modeOf(file)).toBe(0o600);
  }, 30_000);

  it('refuses a key file of the wrong size with a message saying what to do, and leaves it alone', async () => {
    for (const size of [40, 5, 0]) {
      const file = path.join(freshDir(), SECRET_KEY_FILE);
      const bytes = randomBytes(size);
      fs.writeFileSync(file, bytes, { mode: 0o600 });
      const failure = await loadOrCreateSecretKey(file, recordingLog(), systemTimers).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(SecretKeyError);
      expect((failure as Error).message).toContain(`The secret key ${file} holds ${size} bytes; a key is exactly 32`);
      expect((failure as Error).message).toMatch(/put back the secret\.key this hub made.*or move the file away/);
      expect(fs.readFileSync(file).equals(bytes)).toBe(true);
    }
  });

  it('refuses a folder where the key file should be', async () => {
    const file = path.join(freshDir(), SECRET_KEY_FILE);
    fs.mkdirSync(file);
    await expect(loadOrCreateSecretKey(file, recordingLog(), systemTimers)).rejects.toThrow(/is not a file/);
  });

  it.runIf(posix)('warns about a key file others may read and narrows it to 0600', async () => {
    const file = path.join(freshDir(), SECRET_KEY_FILE);
    const key = randomBytes(32);
    fs.writeFileSync(file, key);
    fs.chmodSync(file, 0o644);
    const log = recordingLog();
    expect((await loadOrCreateSecretKey(file, log, systemTimers)).equals(key)).toBe(true);
    expect(modeOf(file)).toBe(0o600);
    expect(log.lines).toEqual([expect.objectContaining({ level: 'warn', obj: { file, mode: '0644' }, msg: expect.stringMatching(/could be read by other users \(mode 0644\); its mode is now 0600/) })]);
  });

  it('stops the hub from starting when the key file has the wrong size', async () => {
    const dataDir = freshDir();
    fs.writeFileSync(path.join(dataDir, SECRET_KEY_FILE), 'short', { mode: 0o600 });
    await expect(startServer({ dataDir })).rejects.toThrow(/secret\.key holds 5 bytes; a key is exactly 32/);
  });

  it('is made by the secrets module at start; sealing before it started is refused', async () => {
    const file = path.join(freshDir(), SECRET_KEY_FILE);
    const secrets = secretsModule({ file, log: recordingLog(), timers: systemTimers });
    expect(() => secrets.box.seal('x', 'c')).toThrow(/not loaded/);
    await secrets.start!();
    const sealed = secrets.box.seal('x', 'c');
    expect(secrets.box.isSealed(sealed)).toBe(true);
    expect(secrets.box.open(sealed, 'c')).toBe('x');
    expect(fs.statSync(file).size).toBe(32);
  });
});

describe('sealed values (AES-256-GCM)', () => {
  const box = new AesGcmSecretBox(randomBytes(32));
  const context = 'fleet_link:link:http://garage.local:8080';

  it('opens what it sealed, in a versioned text with a fresh IV each time', () => {
    for (const plain of ['kJ3vN1Q8mZ0rX5tY7wA2bC4dE6fG8hI0jK2lM4nO6pQ', '', 'ünïcødé ✓ and : colons']) {
      const sealed = box.seal(plain, context);
      expect(sealed).toMatch(/^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]*$/);
      if (plain) expect(sealed).not.toContain(plain);
      expect(box.isSealed(sealed)).toBe(true);
      expect(box.open(sealed, context)).toBe(plain);
    }
    const a = box.seal('same', context);
    const b = box.seal('same', context);
    expect(a).not.toBe(b);
    expect(a.split(':')[1]).not.toBe(b.split(':')[1]);
  });

  it('does not open a value moved to another record', () => {
    const sealed = box.seal('the token', context);
    expect(box.open(sealed, 'fleet_link:link:http://attacker.example:8080')).toBeUndefined();
    expect(box.open(sealed, 'fleet_link:other:http://garage.local:8080')).toBeUndefined();
    expect(box.open(sealed, context)).toBe('the token');
  });

  it('does not open an altered value, a malformed one, or one sealed with another key', () => {
    const sealed = box.seal('the token', context);
    const [version, iv, tag, data] = sealed.split(':') as [string, string, string, string];
    const flip = (text: string, at = 0) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const altered = [
      [version, flip(iv), tag, data],
      [version, iv, flip(tag, 3), data],
      [version, iv, tag, flip(data, 2)],
      [version, iv, tag, data + 'AA'],
      [version, iv, tag, data.slice(0, -2)],
    ].map((parts) => parts.join(':'));
    for (const value of altered) expect(box.open(value, context), value).toBeUndefined();
    for (const value of ['v2:' + sealed.slice(3), 'v1:abc', 'v1:' + iv, `${version}:${iv}:${tag}`, 'not sealed at all', '']) expect(box.open(value, context), value).toBeUndefined();
    expect(new AesGcmSecretBox(randomBytes(32)).open(sealed, context)).toBeUndefined();
  });

  it('tells a sealed value from a value kept in clear before sealing existed', () => {
    expect(box.isSealed(box.seal('x', context))).toBe(true);
    // A bridge token (base64url, 256 bits) never has a colon.
    expect(box.isSealed(randomBytes(32).toString('base64url'))).toBe(false);
    expect(box.isSealed('v1:garbage')).toBe(true);
  });

  it('refuses a key of the wrong size', () => {
    expect(() => new AesGcmSecretBox(randomBytes(16))).toThrow(/32 bytes, not 16/);
  });
});
