// Copies the files under src/ that tsc does not emit (plain .mjs modules run as their own
// processes, such as the Lua driver host) to the same place under dist/.
import fs from 'node:fs';
import path from 'node:path';

const from = 'src';
const to = 'dist';
for (const entry of fs.readdirSync(from, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.mjs')) continue;
  const source = path.join(entry.parentPath ?? entry.path, entry.name);
  const target = path.join(to, path.relative(from, source));
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(source, target);
}
