import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeFileStore } from '../src/adapters/files/node-file-store.js';
import { queuedAtomicWrites } from '../src/platform/atomic-file.js';

const files = new NodeFileStore();
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-files-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('NodeFileStore', () => {
  it('writes a whole file atomically, keeping its permission bits and leaving no temp file', async () => {
    const file = path.join(dir, 'config.json');
    await files.writeAtomic(file, '{"a":1}\n', { mode: 0o600 });
    await files.writeAtomic(file, '{"a":2}\n');
    expect(await files.readText(file)).toBe('{"a":2}\n');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(await files.list(dir)).toEqual(['config.json']);
    expect(queuedAtomicWrites()).toBe(0);
  });

  it('lands read-modify-writes made at once, and writes nothing when the text stays the same', async () => {
    const file = path.join(dir, 'counter.json');
    await Promise.all(Array.from({ length: 10 }, () => files.updateAtomic(file, (text) => JSON.stringify({ n: ((text ? (JSON.parse(text) as { n: number }).n : 0) + 1) }))));
    expect(JSON.parse(await files.readText(file))).toEqual({ n: 10 });
    const before = (await files.stat(file)).mtimeMs;
    await new Promise((resolve) => setTimeout(resolve, 20));
    await files.updateAtomic(file, (text) => text!);
    expect((await files.stat(file)).mtimeMs).toBe(before);
  });

  it('replaces a file with what a writer by path produced, and leaves it as it was when that fails', async () => {
    const file = path.join(dir, 'backup.tar.gz');
    await files.writeAtomicWith(file, (temp) => fs.promises.writeFile(temp, 'first', { flag: 'wx' }));
    await expect(files.writeAtomicWith(file, () => Promise.reject(new Error('archive failed')))).rejects.toThrow('archive failed');
    expect(await files.readText(file)).toBe('first');
    expect(await files.list(dir)).toEqual(['backup.tar.gz']);
  });

  it('removes a folder with everything in it, or a file; nothing there is fine', async () => {
    const tree = path.join(dir, 'tree');
    await files.makeFolder(path.join(tree, 'a', 'b'));
    await files.write(path.join(tree, 'a', 'b', 'f.txt'), 'x');
    await files.write(path.join(dir, 'loose.txt'), 'y');
    await files.remove(tree);
    await files.remove(path.join(dir, 'loose.txt'));
    await files.remove(path.join(dir, 'missing'));
    expect(await files.exists(tree)).toBe(false);
    expect(await files.list(dir)).toEqual([]);
  });

  it('renames a folder in one move, and writes exclusively only what is not there yet', async () => {
    const staging = await files.makeTempFolder(path.join(dir, '.staging'), 'pkg-');
    expect(path.dirname(staging)).toBe(path.join(dir, '.staging'));
    expect(path.basename(staging)).toMatch(/^pkg-.{6}$/);
    await files.write(path.join(staging, 'driver.json'), '{}', { exclusive: true, mode: 0o644 });
    await expect(files.write(path.join(staging, 'driver.json'), '{}', { exclusive: true })).rejects.toMatchObject({ code: 'EEXIST' });
    const target = path.join(dir, 'driver');
    await files.rename(staging, target);
    expect(await files.exists(staging)).toBe(false);
    expect(await files.readText(path.join(target, 'driver.json'))).toBe('{}');
  });

  it('lists a folder by name and copies a tree, leaving out what the filter and the symbolic link rule say', async () => {
    const source = path.join(dir, 'drivers');
    await files.makeFolder(path.join(source, 'hue'));
    await files.makeFolder(path.join(source, '.versions', 'hue'));
    await files.write(path.join(source, 'hue', 'hue.driver.json'), '{}');
    await files.write(path.join(source, '.versions', 'hue', 'old.json'), '{}');
    fs.symlinkSync(path.join(source, 'hue', 'hue.driver.json'), path.join(source, 'link.json'));
    expect((await files.list(source)).sort()).toEqual(['.versions', 'hue', 'link.json']);
    const copy = path.join(dir, 'copy');
    await files.copyTree(source, copy, { filter: (s) => !path.relative(source, s).startsWith('.'), skipSymbolicLinks: true });
    expect((await files.list(copy)).sort()).toEqual(['hue']);
    expect(await files.readBytes(path.join(copy, 'hue', 'hue.driver.json'))).toEqual(Buffer.from('{}'));
    let read = '';
    for await (const chunk of files.readChunks(path.join(copy, 'hue', 'hue.driver.json'))) read += chunk.toString('utf8');
    expect(read).toBe('{}');
  });
});
