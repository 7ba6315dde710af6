// `npm run build`: bundles src/main.ts into dist/main.js with esbuild, which `npm start` runs,
// and app.js with everything it imports into a chunk beside it, which main.js loads once the
// HTTP port listens (src/main.ts).
//
// Why a bundle rather than tsc's one file per module: start-up time (docs/benchmarks.md,
// "Start-up"). Node loaded about 1,100 ES modules to start the service, 680 of them from
// typebox and 260 from kysely, and resolving, reading and linking them was the largest part of
// the start after the route schemas. The bundle holds the service's own code and the
// ES-module-only packages (typebox, kysely). CommonJS packages (fastify and its plugins,
// socket.io, ws, pino, better-sqlite3, ...) stay in node_modules and load as they always did:
// several of them read files next to their own sources (__dirname) or load native code.
//
// Nothing is type-checked here (esbuild strips the types); `npm run typecheck` and `npm test` do
// that. Source files that locate files next to themselves (`new URL(..., import.meta.url)`) get
// the URL they would have had as dist/<same path>.js (every output file is in dist/ itself), so `resources/` and the plain `.mjs`
// modules copied to the same place under dist/ (such as the Lua driver host, which runs as its
// own process) are found as before.
import * as esbuild from 'esbuild';
import { buildClient } from './build-client.mjs';
import fs from 'node:fs';
import path from 'node:path';

/** ES-module-only packages, bundled: they cost the most to load as separate files (and @mdi/js, 7,000 icons, is cut down to the few the web UI draws). */
const BUNDLED_PACKAGES = ['typebox', 'kysely', '@mdi/js'];

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

/** Packages stay external (bundled ones aside); a package that is not a dependency (or one installed on first use) fails the build. */
const packagesFromNodeModules = {
  name: 'packages-from-node-modules',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { external: true };
      const name = args.path.split('/').slice(0, args.path.startsWith('@') ? 2 : 1).join('/');
      if (BUNDLED_PACKAGES.includes(name)) return undefined;
      // The packages installed on first use (matter.js, Homebridge) too: a home box installs them
      // under DATA_DIR when it first needs them, and a resolve hook finds them there
      // (src/adapters/requirements); a development checkout has them as devDependencies.
      if (Object.hasOwn(pkg.dependencies, name) || (pkg.installedOnFirstUse ?? []).includes(name)) return { external: true };
      return { errors: [{ text: `"${name}" is imported by ${path.relative(root, args.importer)} but is not in package.json "dependencies" or "installedOnFirstUse"` }] };
    });
  },
};

/** Gives each bundled source file the `import.meta.url` it would have as dist/<path>.js. */
const moduleUrlAsBefore = {
  name: 'module-url-as-before',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(src + path.sep)) return undefined;
      const contents = await fs.promises.readFile(args.path, 'utf8');
      if (/import\.meta\.(dirname|filename)/.test(contents)) {
        return { errors: [{ text: 'use new URL(..., import.meta.url): import.meta.dirname and .filename are not rewritten for the bundle' }] };
      }
      if (!contents.includes('import.meta.url')) return undefined;
      const asBuilt = `./${path.relative(src, args.path).split(path.sep).join('/').replace(/\.ts$/, '.js')}`;
      return { contents: contents.replaceAll('import.meta.url', `new URL(${JSON.stringify(asBuilt)}, import.meta.url).href`), loader: 'ts' };
    });
  },
};

/** Every integration's child program: `src/integrations/<name>/<what>-child.ts`. */
function integrationChildren() {
  const folder = path.join(src, 'integrations');
  return fs
    .readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => fs.readdirSync(path.join(folder, entry.name)).filter((file) => file.endsWith('-child.ts')).map((file) => `src/integrations/${entry.name}/${file}`));
}

let result;
try {
  result = await esbuild.build({
    absWorkingDir: root,
    // The Matter bridge's own process runs an entry of its own (src/adapters/matter/child-bridge.ts),
    // and so does each integration's process (src/integrations/<name>/*-child.ts).
    entryPoints: ['src/main.ts', 'src/adapters/matter/bridge-child.ts', ...integrationChildren()],
    outdir: 'dist',
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Stack traces name dist/main.js; `node --enable-source-maps dist/main.js` maps them to src/.
    sourcemap: 'linked',
    plugins: [packagesFromNodeModules, moduleUrlAsBefore],
    // The ES module build of a bundled package first: only then can esbuild leave out what is
    // not imported (@mdi/js's CommonJS build would bring all its icons).
    mainFields: ['module', 'main'],
    logLevel: 'warning',
    // Written below, once the whole build has succeeded: a failed build leaves dist/ as it was.
    write: false,
  });
} catch {
  process.exit(1); // esbuild has printed the errors
}

// The web UI's client files are built first, so that a failure there also leaves dist/ as it was.
const publicDir = path.join(root, '.build-public');
fs.rmSync(publicDir, { recursive: true, force: true });
try {
  await buildClient(root, publicDir);
} catch {
  process.exit(1); // esbuild has printed the errors
}

/**
 * V8 keeps a script's source in memory as long as its functions live, one byte per character only
 * when every character is ASCII: a single `→` in a template literal made the 2.8 MB app chunk a
 * 5.5 MB two-byte string. esbuild escapes strings but not template literals, so what is left is
 * escaped here (\uXXXX means the same character in a template, a string, a regular expression, a
 * comment and an identifier; nothing in the bundle reads a template's raw text). Source maps
 * shift by a few columns on those lines only.
 */
const asciiOnly = (code) => code.replace(/[^ -~\t\n\r]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

fs.rmSync(dist, { recursive: true, force: true });
for (const file of result.outputFiles) {
  fs.mkdirSync(path.dirname(file.path), { recursive: true });
  fs.writeFileSync(file.path, file.path.endsWith('.js') ? asciiOnly(file.text) : file.contents);
}
for (const relative of fs.readdirSync(src, { recursive: true, encoding: 'utf8' })) {
  if (!relative.endsWith('.mjs')) continue;
  const source = path.join(src, relative);
  if (!fs.statSync(source).isFile()) continue;
  const target = path.join(dist, relative);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(source, target);
}
fs.renameSync(publicDir, path.join(dist, 'public'));
