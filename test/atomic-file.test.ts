import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { queuedAtomicWrites, updateFileAtomic, writeFileAtomic, writeFileAtomicSync, writeFileAtomicWith } from '../src/platform/atomic-file.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const MODULE = pathToFileURL(path.join(ROOT, 'src/platform/atomic-file.ts')).href;

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-atomic-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A JSON text big enough that a write not done in one piece would be seen half done. */
const content = (writer: number | string, n = 0) => `${JSON.stringify({ writer, n, pad: 'x'.repeat(64 * 1024) }, null, 2)}\n`;

describe('writeFileAtomic', () => {
  it('lets 20 writers write one file at once: none fails, the file is one of them whole, no temp file stays', async () => {
    const file = path.join(dir, 'config.json');
    const texts = Array.from({ length: 20 }, (_, i) => content(i));
    const results = await Promise.allSettled(texts.map((t) => writeFileAtomic(file, t)));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const final = fs.readFileSync(file, 'utf8');
    expect(texts).toContain(final);
    expect((JSON.parse(final) as { pad: string }).pad).toHaveLength(64 * 1024);
    expect(fs.readdirSync(dir)).toEqual(['config.json']);
    expect(queuedAtomicWrites()).toBe(0);
  });

  it('lands 20 read-modify-writes made at once: a JSON counter counts to 20', async () => {
    const file = path.join(dir, 'counter.json');
    await Promise.all(
      Array.from({ length: 20 }, () =>
        updateFileAtomic(file, async (text) => {
          const { count } = JSON.parse(text ?? '{"count":0}') as { count: number };
          // Another edit would slip in here if the read-modify-write were not queued.
          await new Promise((r) => setImmediate(r));
          return JSON.stringify({ count: count + 1 });
        }),
      ),
    );
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ count: 20 });
    expect(fs.readdirSync(dir)).toEqual(['counter.json']);
    expect(queuedAtomicWrites()).toBe(0);
  });

  it('writes nothing when the change throws or leaves the text as it was, and the next write still runs', async () => {
    const file = path.join(dir, 'settings.json');
    fs.writeFileSync(file, '{"a":1}');
    const before = fs.statSync(file);
    await expect(updateFileAtomic(file, () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    await updateFileAtomic(file, (text) => text!);
    expect(fs.statSync(file).ino).toBe(before.ino);
    await updateFileAtomic(file, () => '{"a":2}');
    expect(fs.readFileSync(file, 'utf8')).toBe('{"a":2}');
  });

  it('rejects a write into a folder that is gone, and leaves no temp file', async () => {
    const gone = path.join(dir, 'gone');
    fs.mkdirSync(gone);
    fs.rmSync(gone, { recursive: true });
    await expect(writeFileAtomic(path.join(gone, 'config.json'), '{}')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(queuedAtomicWrites()).toBe(0);
  });

  it('removes its temp file when the rename fails (the target is a folder) or the producer fails', async () => {
    const target = path.join(dir, 'taken');
    fs.mkdirSync(path.join(target, 'inside'), { recursive: true });
    await expect(writeFileAtomic(target, '{}')).rejects.toThrow();
    expect(fs.readdirSync(dir)).toEqual(['taken']);

    const archive = path.join(dir, 'backup.tar.gz');
    fs.writeFileSync(archive, 'the previous one');
    await expect(
      writeFileAtomicWith(archive, async (temp) => {
        fs.writeFileSync(temp, 'half of it');
        throw new Error('the archiver failed');
      }),
    ).rejects.toThrow('the archiver failed');
    expect(fs.readdirSync(dir).sort()).toEqual(['backup.tar.gz', 'taken']);
    expect(fs.readFileSync(archive, 'utf8')).toBe('the previous one');
  });

  it.skipIf(process.platform === 'win32')('keeps the mode it is given, or the file had', async () => {
    const file = path.join(dir, 'secret.json');
    await writeFileAtomic(file, '{}', { mode: 0o600 });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    fs.chmodSync(file, 0o640);
    await writeFileAtomic(file, '{"b":1}');
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    writeFileAtomicSync(file, '{"c":1}');
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"c":1}');
  });

  it.skipIf(process.platform === 'win32')('writes through a symbolic link to the file it points to', async () => {
    const real = path.join(dir, 'real.json');
    const link = path.join(dir, 'link.json');
    fs.writeFileSync(real, '{}');
    fs.symlinkSync(real, link);
    await writeFileAtomic(link, '{"via":"link"}');
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, 'utf8')).toBe('{"via":"link"}');
    expect(fs.readdirSync(dir).sort()).toEqual(['link.json', 'real.json']);
  });

  it('never shows a reader a torn file while two processes write it at once', async () => {
    const file = path.join(dir, 'shared.json');
    fs.writeFileSync(file, content('start'));
    const WRITES = 80;
    const script = `
      import { writeFileAtomic } from ${JSON.stringify(MODULE)};
      const [file, writer, writes] = process.argv.slice(1);
      for (let n = 0; n < Number(writes); n++) {
        await writeFileAtomic(file, JSON.stringify({ writer, n, pad: 'x'.repeat(64 * 1024) }, null, 2) + '\\n');
      }
    `;
    const children = ['a', 'b'].map((writer) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, file, writer, String(WRITES)], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
      return { child, exited };
    });
    let running = children.length;
    for (const c of children) void c.exited.then(() => running--);
    const seen = new Set<string>();
    let reads = 0;
    const deadline = Date.now() + 30_000;
    try {
      // Bounded: until both writers are done, 30 s at most, 20 000 reads at most.
      while (running > 0 && Date.now() < deadline && reads < 20_000) {
        const text = fs.readFileSync(file, 'utf8');
        const parsed = JSON.parse(text) as { writer: string; n: number; pad: string };
        expect(parsed.pad).toHaveLength(64 * 1024);
        seen.add(parsed.writer);
        reads++;
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    const outcomes = await Promise.all(children.map((c) => c.exited));
    for (const o of outcomes) expect(o, o.stderr).toMatchObject({ code: 0 });
    expect(reads).toBeGreaterThan(0);
    const final = JSON.parse(fs.readFileSync(file, 'utf8')) as { writer: string; n: number };
    expect(final.n).toBe(WRITES - 1);
    expect(['a', 'b']).toContain(final.writer);
    expect(fs.readdirSync(dir)).toEqual(['shared.json']);
  }, 45_000);
});
