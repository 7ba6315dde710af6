/**
 * Summarises a V8 .cpuprofile (e.g. from `BENCH_CPU_PROF=/tmp/prof npm run bench -- http`):
 * self time by area (Node internals, each package under node_modules, src/) and the top
 * functions. Usage:
 *
 *   npx tsx bench/tools/cpuprofile-summary.ts <file.cpuprofile> [top=25] [--from S] [--to S] [--timeline] [--requests N] [--inclusive]
 *
 * --from/--to keep only the samples between S seconds after the profile started and S seconds
 * after (e.g. to leave out start-up); --timeline prints the not-idle share of each second first,
 * to find the measured windows. --requests N (the requests served in that window) adds µs per
 * request to every figure. --inclusive adds the top functions by total time (self time plus
 * what they called, each function counted once per sample), which shows what a hook or a
 * handler costs with everything under it.
 */
import fs from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber?: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
  parent?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const sourceMaps = new Map<string, SourceMap | null>();

/** The source map beside a bundled file of dist/ (`app-XXXX.js.map`), or null. */
function sourceMapOf(url: string): SourceMap | null {
  if (!sourceMaps.has(url)) {
    let map: SourceMap | null = null;
    try {
      const file = fileURLToPath(url);
      map = new SourceMap(JSON.parse(fs.readFileSync(`${file}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]);
    } catch {
      map = null;
    }
    sourceMaps.set(url, map);
  }
  return sourceMaps.get(url)!;
}

/**
 * The frame as written in the sources: the service runs from an esbuild bundle, where every
 * function of src/ (and of the bundled packages) sits in one file; the bundle's source map gives
 * each frame back its own file and line.
 */
function originalFrame(frame: CallFrame): CallFrame {
  if (!frame.url.startsWith('file://') || !frame.url.includes('/dist/')) return frame;
  const map = sourceMapOf(frame.url);
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber ?? 0);
  if (!entry || !('originalSource' in entry) || !entry.originalSource) return frame;
  const source = entry.originalSource.startsWith('file://') ? fileURLToPath(entry.originalSource) : path.resolve(path.dirname(fileURLToPath(frame.url)), entry.originalSource);
  return { functionName: frame.functionName, url: `file://${source}`, lineNumber: entry.originalLine, columnNumber: entry.originalColumn };
}

/**
 * Concerns of the command path (issue 26 asks for µs per command under these), from the area a
 * frame's self time belongs to. The first prefix that matches wins.
 */
const CONCERNS: Array<[string, string[]]> = [
  ['logging', ['pino', 'sonic-boom', 'thread-stream', 'src/logger.ts', 'src/surfaces/http/request-log']],
  ['metrics', ['prom-client', 'src/surfaces/http/metrics', 'src/platform/metrics', 'src/domain/metrics']],
  ['validation', ['@sinclair/typebox', 'ajv', 'fast-uri', 'secure-json-parse', 'src/platform/input-validation.ts', 'src/platform/schema-parts.ts']],
  ['access (auth, grants)', ['src/domain/access', 'src/domain/auth', 'src/surfaces/http/credentials', 'src/surfaces/http/auth', 'node:internal/crypto', '@fastify/cookie', 'cookie']],
  ['cluster hooks', ['src/cluster']],
  ['event bus and streams', ['src/platform/event-bus.ts', 'src/domain/protocol/feed.ts', 'src/surfaces/sse', 'src/surfaces/socket', 'src/surfaces/realtime', 'socket.io', 'engine.io', 'src/surfaces/snapshot-json.ts']],
  ['state authority, devices', ['src/domain/devices', 'src/domain/state', 'src/domain/home']],
  ['driver link (ws)', ['ws', 'src/domain/drivers', 'src/surfaces/driver-ws']],
  ['audit, activity log, storage', ['src/domain/audit', 'src/domain/activity', 'src/platform/batched-log.ts', 'src/storage', 'kysely', 'better-sqlite3']],
  ['pipeline (registry, invoke)', ['src/platform/operations.ts', 'src/platform', 'src/domain']],
  ['HTTP surface (routes, shaping)', ['src/surfaces/http', 'src/app.ts', 'src/surfaces']],
  ['Fastify', ['fastify', 'find-my-way', 'light-my-request', 'avvio', 'toad-cache', 'fast-json-stringify', '@fastify', 'abstract-logging', 'rfdc']],
  ['Node HTTP and sockets', ['node:_http', 'node:net', 'node:internal/stream_base_commons', 'node:internal/streams', 'node:stream', 'node:events', 'node:internal/timers', 'node:internal/process', 'node:buffer', 'node:internal/buffer', 'node:internal/async_hooks', 'node:async_hooks', 'node:internal/url', 'node:url']],
  ['garbage collector', ['(garbage collector)']],
  ['V8 builtins, native', ['(native / V8 builtins)', '(program)']],
];

function concernOf(area: string): string {
  for (const [concern, prefixes] of CONCERNS) if (prefixes.some((p) => area === p || area.startsWith(p.endsWith('.ts') ? p : `${p}`))) return concern;
  return 'other';
}

/** Which part of the program a frame belongs to. */
function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(idle)' || functionName === '(program)' || functionName === '(garbage collector)') return functionName;
    return '(native / V8 builtins)';
  }
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] === 'internal' ? url.slice(5).split('/').slice(0, 2).join('/') : url.slice(5)}`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + '/node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const src = url.indexOf('/src/');
  if (src >= 0) return `src/${url.slice(src + 5)}`;
  return url;
}

const functionKey = (frame: CallFrame) => `${frame.functionName || '(anonymous)'} ${areaOf(frame)}:${frame.lineNumber + 1}`;

function summarise(profile: CpuProfile, fromS = 0, toS = Infinity): { totalMs: number; byArea: [string, number][]; byFunction: [string, number][]; byConcern: [string, number][]; inclusive: [string, number][] } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const n of profile.nodes) for (const child of n.children ?? []) nodes.get(child)!.parent = n.id;
  const selfMs = new Map<number, number>();
  let at = 0; // µs since the profile started
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    at += profile.timeDeltas[i] ?? 0;
    if (at < fromS * 1e6 || at > toS * 1e6) continue;
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const byConcern = new Map<string, number>();
  let totalMs = 0;
  for (const [id, ms] of selfMs) {
    const frame = originalFrame(nodes.get(id)!.callFrame);
    totalMs += ms;
    const area = areaOf(frame);
    byArea.set(area, (byArea.get(area) ?? 0) + ms);
    if (area !== '(idle)') byConcern.set(concernOf(area), (byConcern.get(concernOf(area)) ?? 0) + ms);
    const fn = functionKey(frame);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
  }
  // Total time: each sample's time goes to every distinct function on its stack.
  const inclusive = new Map<string, number>();
  for (const [id, ms] of selfMs) {
    const seen = new Set<string>();
    for (let node = nodes.get(id); node; node = node.parent === undefined ? undefined : nodes.get(node.parent)) {
      const key = functionKey(originalFrame(node.callFrame));
      if (node.callFrame.functionName === '(root)' || seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + ms);
    }
  }
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return { totalMs, byArea: sorted(byArea), byFunction: sorted(byFunction), byConcern: sorted(byConcern), inclusive: sorted(inclusive) };
}

/** Not-idle share of each second of the profile. */
function timeline(profile: CpuProfile): string {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const busy: number[] = [];
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    const second = Math.floor(at / 1e6);
    while (busy.length <= second) busy.push(0);
    if (nodes.get(profile.samples[i]!)!.callFrame.functionName !== '(idle)') busy[second]! += delta / 1e6;
  }
  return busy.map((b, s) => `${String(s).padStart(4)} s ${'#'.repeat(Math.round(b * 40)).padEnd(40)} ${(b * 100).toFixed(0)} %`).join('\n');
}

function main(): void {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const i = args.indexOf(name);
    if (i === -1) return undefined;
    const value = Number(args[i + 1]);
    args.splice(i, 2);
    if (!Number.isFinite(value)) throw new Error(`${name} needs a number of seconds`);
    return value;
  };
  const from = option('--from') ?? 0;
  const to = option('--to') ?? Infinity;
  const requests = option('--requests');
  const showTimeline = args.includes('--timeline');
  const showInclusive = args.includes('--inclusive');
  const [file, topArg] = args.filter((a) => a !== '--timeline' && a !== '--inclusive');
  if (!file) {
    process.stderr.write('usage: tsx bench/tools/cpuprofile-summary.ts <file.cpuprofile> [top] [--from S] [--to S] [--timeline]\n');
    process.exit(2);
  }
  const top = Number(topArg ?? 25);
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  if (showTimeline) process.stdout.write(`not-idle share per second:\n${timeline(profile)}\n\n`);
  if (from > 0 || to < Infinity) process.stdout.write(`window: ${from} s to ${to === Infinity ? 'end' : `${to} s`} after the profile started\n`);
  const { totalMs, byArea, byFunction, byConcern, inclusive } = summarise(profile, from, to);
  const busyMs = totalMs - (byArea.find(([a]) => a === '(idle)')?.[1] ?? 0);
  const perRequest = (ms: number) => (requests ? `${((ms * 1000) / requests).toFixed(2).padStart(7)} µs/req  ` : '');
  const pct = (ms: number) => `${((ms / busyMs) * 100).toFixed(1).padStart(5)} %  ${perRequest(ms)}`;
  const perRequestNote = requests ? `, ${((busyMs * 1000) / requests).toFixed(1)} µs per request over ${requests} requests` : '';
  process.stdout.write(`profile: ${(totalMs / 1000).toFixed(1)} s sampled, ${(busyMs / 1000).toFixed(1)} s not idle (percentages of not-idle${perRequestNote})\n\nself time by area:\n`);
  for (const [area, ms] of byArea) if (area !== '(idle)' && ms / busyMs >= 0.002) process.stdout.write(`  ${pct(ms)}  ${area}\n`);
  process.stdout.write(`\nself time by concern:\n`);
  for (const [concern, ms] of byConcern) process.stdout.write(`  ${pct(ms)}  ${concern}\n`);
  process.stdout.write(`\ntop ${top} functions by self time:\n`);
  for (const [fn, ms] of byFunction.filter(([f]) => !f.startsWith('(idle)')).slice(0, top)) process.stdout.write(`  ${pct(ms)}  ${fn}\n`);
  if (showInclusive) {
    process.stdout.write(`\ntop ${top} functions by total time (self plus callees):\n`);
    for (const [fn, ms] of inclusive.filter(([f]) => !f.startsWith('(idle)') && !f.startsWith('(program)')).slice(0, top)) process.stdout.write(`  ${pct(ms)}  ${fn}\n`);
  }
}

main();
