// `npm start`'s first step: dist/ is built at install (`prepare`), so this only checks it. If
// dist/main.js is missing, or older than a source it is built from (after a `git pull`, say), it
// is rebuilt here (about a second), so that `npm start` never runs other code than the sources
// in the tree; if that build fails, the service does not start and the message says what to run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const entry = path.join(root, 'dist', 'main.js');

/** Modification time of a file, or of the newest file under a directory. */
function newest(target) {
  const stat = fs.statSync(target, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const relative of fs.readdirSync(target, { recursive: true, encoding: 'utf8' })) {
    latest = Math.max(latest, fs.statSync(path.join(target, relative)).mtimeMs);
  }
  return latest;
}

const builtAt = newest(entry);
const reason =
  builtAt === 0
    ? 'dist/main.js is missing'
    : ['src', 'package.json', 'scripts/build.mjs'].some((source) => newest(path.join(root, source)) > builtAt)
      ? 'dist/ is older than the sources'
      : undefined;

if (reason) {
  process.stderr.write(`${reason}: building it (npm run build)\n`);
  const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) {
    process.stderr.write('The build failed, so the service was not started. Run `npm ci` if node_modules/ is missing or outdated, otherwise `npm run build` and fix what it reports; then `npm start`.\n');
    process.exit(1);
  }
}
