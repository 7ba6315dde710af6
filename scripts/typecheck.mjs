// `npm run typecheck`: the server tree and the web UI's browser code, each against its tsconfig.
//
// Why TypeScript 7's native compiler (the `typescript-native` alias of typescript@7.0.2): it
// type-checks this tree in about a third of the time (13 s against 41 s on the CI box, measured
// 2026-12-02), with the same diagnostics: on this tree and on a file seeded with nine kinds of
// error, the two reported the same errors at the same places (only the order of the members of a
// union in one message differed). TypeScript 5.9 stays the `typescript` that typescript-eslint
// reads, and is the fallback where no native build exists for the platform.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const PROJECTS = ['.', 'src/surfaces/http/web-ui/client'];

function works(tsc) {
  return spawnSync(process.execPath, [tsc, '--version'], { stdio: 'ignore' }).status === 0;
}

function compiler() {
  try {
    // Its exports map hides bin/: found beside its package.json.
    const native = path.join(path.dirname(require.resolve('typescript-native/package.json')), 'bin', 'tsc');
    if (works(native)) return native;
    console.warn('typecheck: TypeScript 7 has no native build for this platform; using TypeScript 5.9');
  } catch {
    // Not installed (a trimmed install): the TypeScript that lint uses.
  }
  return require.resolve('typescript/bin/tsc');
}

const tsc = compiler();
console.log(`typecheck: ${path.relative(process.cwd(), tsc)}`);
for (const project of PROJECTS) {
  const run = spawnSync(process.execPath, [tsc, '--noEmit', '-p', project], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
