import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ChildServer {
  proc: ChildProcess;
  url: string;
  lines: string[];
  /** Resolves with the exit code (or signal name) and how long the exit took from now. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The service as `npm start` runs it, once `buildService` has built it from the current sources. */
const START = ['dist/main.js'];

/**
 * `npm run build` (the esbuild bundle `npm ci` makes and `npm start` remakes when it is stale), so
 * that the tests run the sources as they are; throws with the build's output when it fails.
 */
export function buildService(): void {
  // Built once for the whole run by the global setup (test/support/build-global.ts): two test
  // files running at once must not rebuild dist/ under each other's servers.
  if (process.env.HCS_TEST_DIST_BUILT === '1') return;
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`npm run build failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`);
}

/** Runs the service as `npm start` does, in its own process, and waits until it is ready. */
export async function spawnServer(env: Record<string, string>, timeoutMs = 20_000): Promise<ChildServer> {
  const proc = spawn(process.execPath, START, {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ACCESSORY_HUB: 'off', HTTPS_PORT: 'off', ...homebridgeNode(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  for (const stream of [proc.stdout!, proc.stderr!]) readline.createInterface({ input: stream }).on('line', (l) => lines.push(l));

  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const line of lines) {
      if (!line.includes('home control service ready')) continue;
      const port = (JSON.parse(line) as { port: number }).port;
      return { proc, url: `http://127.0.0.1:${port}`, lines, exited };
    }
    const done = await Promise.race([exited, new Promise((r) => setTimeout(r, 50, undefined))]);
    if (done) throw new Error(`server exited before it was ready:\n${lines.join('\n')}`);
  }
  proc.kill('SIGKILL');
  throw new Error(`server not ready within ${timeoutMs} ms:\n${lines.join('\n')}`);
}

/** Runs the service expecting it to stop by itself (e.g. on bad configuration). */
export async function runServerToExit(env: Record<string, string>, timeoutMs = 20_000) {
  const proc = spawn(process.execPath, START, {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ACCESSORY_HUB: 'off', HTTPS_PORT: 'off', ...homebridgeNode(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
  clearTimeout(timer);
  return { code, output };
}

/** The Node Homebridge 2 runs on where the tests' own is too old (test/support/node-runtime-global.ts). */
function homebridgeNode(): Record<string, string> {
  return process.env.HCS_TEST_HOMEBRIDGE_NODE ? { ACCESSORY_HUB_NODE: process.env.HCS_TEST_HOMEBRIDGE_NODE } : {};
}
