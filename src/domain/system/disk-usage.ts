import fs from 'node:fs/promises';
import path from 'node:path';

const MAX_ENTRIES = 200_000;

/**
 * Bytes under a folder (files only, symbolic links not followed), bounded in entries so that a
 * huge folder cannot stall the answer; `complete` says whether every entry was counted.
 */
export async function folderUsage(root: string): Promise<{ bytes: number; files: number; complete: boolean }> {
  let bytes = 0;
  let files = 0;
  let seen = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries;
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > MAX_ENTRIES) return { bytes, files, complete: false };
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) stack.push(full);
      else if (entry.isFile()) {
        try {
          bytes += (await fs.stat(full)).size;
          files++;
        } catch {
          // Removed meanwhile.
        }
      }
    }
  }
  return { bytes, files, complete: true };
}
