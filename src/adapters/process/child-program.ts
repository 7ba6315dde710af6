import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** `src/` as this file sees it (`dist/` in the build, where every file keeps its path). */
const SOURCE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The arguments that run a child program of the hub's (`bridge-child`, `network-child`) that sits
 * beside the module asking (`callerUrl`, its import.meta.url): the built file beside it in dist/;
 * from the sources (the tests, `tsx`), the build of it in dist/ when there is one (matter.js's
 * thousand modules load in about a second there, and took over 20 s through tsx's loader), else
 * the source through tsx. scripts/build.mjs builds each of them as an entry of its own.
 */
export function childProgram(callerUrl: string, name: string): string[] {
  const beside = fileURLToPath(new URL(`./${name}.js`, callerUrl));
  if (existsSync(beside)) return [beside];
  const source = fileURLToPath(new URL(`./${name}.ts`, callerUrl));
  const built = path.join(SOURCE_ROOT, '..', 'dist', path.relative(SOURCE_ROOT, source).replace(/\.ts$/, '.js'));
  if (existsSync(built)) return [built];
  return ['--import', 'tsx', source];
}
