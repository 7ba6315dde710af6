// Copies the files under src/ that tsc does not emit (plain .mjs modules run as their own
// processes, such as the Lua driver host) to the same place under dist/.
import fs from 'node:fs';
import path from 'node:path';

const from = 'src';
const to = 'dist';
for (const relative of fs.readdirSync(from, { recursive: true, encoding: 'utf8' })) {
  if (!relative.endsWith('.mjs')) continue;
  const source = path.join(from, relative);
  if (!fs.statSync(source).isFile()) continue;
  const target = path.join(to, relative);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(source, target);
}
