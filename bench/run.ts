/**
 * `npm run bench [-- <name>...]`: runs the benchmarks under bench/ in order, or only those whose
 * name starts with one of the given names. Not part of `npm test`.
 *
 * Settings come from BENCH_* variables (see bench/lib/settings.ts and docs/benchmarks.md).
 * `--minutes N` (or `--minutes=N`) sets the soak benchmark's length, as BENCH_SOAK_MINUTES=N does.
 * Results are printed and written to bench/results/<name>-<timestamp>.json.
 */
import { diskLine, measureDisk } from './lib/data-dir.js';
import { aiBenchmark } from './ai.js';
import { automationsBenchmark } from './automations.js';
import { deviceModelBenchmark } from './device-model.js';
import { devicesBenchmark } from './devices.js';
import { homekitBenchmark } from './homekit.js';
import { httpBenchmark } from './http.js';
import { matterBenchmark } from './matter.js';
import { mediaBenchmark } from './media.js';
import { mqttBenchmark } from './mqtt.js';
import { musicBenchmark } from './music.js';
import { postgresBenchmark } from './postgres.js';
import { hubCommandBenchmark } from './hub-command.js';
import { programsBenchmark } from './programs.js';
import { soakBenchmark } from './soak.js';
import { startupBenchmark } from './startup.js';
import { streamsBenchmark } from './streams.js';
import type { Benchmark, BenchmarkContext } from './lib/benchmark.js';
import { disposeAll, installExitHandlers } from './lib/cleanup.js';
import { environmentInfo, headerLine, writeResults } from './lib/report.js';
import { UsageError, loadSettings } from './lib/settings.js';

/** Every benchmark, in the order they run. */
const BENCHMARKS: Benchmark[] = [httpBenchmark, devicesBenchmark, homekitBenchmark, hubCommandBenchmark, programsBenchmark, automationsBenchmark, streamsBenchmark, startupBenchmark, mediaBenchmark, musicBenchmark, aiBenchmark, postgresBenchmark, deviceModelBenchmark, mqttBenchmark, matterBenchmark, soakBenchmark];

/** Takes `--minutes N` / `--minutes=N` out of `args` into BENCH_SOAK_MINUTES (read by bench/soak.ts). */
function takeMinutes(args: string[]): string[] {
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const match = /^--minutes(?:=(.*))?$/.exec(args[i]!);
    if (!match) {
      rest.push(args[i]!);
      continue;
    }
    const value = match[1] ?? args[++i];
    if (value === undefined || value.trim() === '') throw new UsageError('--minutes needs a number of minutes, e.g. --minutes 10');
    process.env.BENCH_SOAK_MINUTES = value;
  }
  return rest;
}

/** Arguments are `<name>` or `<name>:<case>[,<case>...]`, matched as prefixes. */
function select(args: string[]): { benchmark: Benchmark; cases: string[] }[] {
  if (args.length === 0) return BENCHMARKS.map((benchmark) => ({ benchmark, cases: [] }));
  const wanted = args.map((arg) => {
    const [name = '', cases = ''] = arg.split(':', 2);
    return { name, cases: cases.split(',').filter((c) => c !== '') };
  });
  const unknown = wanted.filter((w) => !BENCHMARKS.some((b) => b.name.startsWith(w.name)));
  if (unknown.length > 0) {
    throw new UsageError(`no benchmark named ${unknown.map((u) => `"${u.name}"`).join(', ')}; available: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  }
  return BENCHMARKS.flatMap((benchmark) => {
    const matching = wanted.filter((w) => benchmark.name.startsWith(w.name));
    if (matching.length === 0) return [];
    // A bare name (no case list) selects every case.
    const cases = matching.some((w) => w.cases.length === 0) ? [] : matching.flatMap((w) => w.cases);
    return [{ benchmark, cases }];
  });
}

async function main(): Promise<number> {
  installExitHandlers();
  const args = takeMinutes(process.argv.slice(2).filter((a) => a !== '--'));
  const settings = loadSettings();
  const selected = select(args);
  const environment = environmentInfo();

  const base = {
    settings,
    environment,
    progress: (line: string) => process.stderr.write(`${line}\n`),
    print: (text: string) => process.stdout.write(`${text}\n`),
  };
  base.print(headerLine(environment));
  const disk = measureDisk();
  base.print(diskLine(disk));
  base.print(
    `# ${settings.connections} connections · ${settings.warmupSeconds} s warm-up (discarded) + ${settings.durationSeconds} s measured · ${settings.rounds} round(s) · service LOG_LEVEL=${settings.logLevel}`,
  );

  let failed = 0;
  for (const { benchmark, cases } of selected) {
    const ctx: BenchmarkContext = { ...base, caseFilter: cases };
    ctx.print(`\n## ${benchmark.name}: ${benchmark.description}`);
    const startedAt = new Date().toISOString();
    const outcome = await benchmark.run(ctx);
    const file = writeResults(benchmark.name, startedAt, {
      benchmark: benchmark.name,
      cases: cases.length > 0 ? cases : 'all',
      description: benchmark.description,
      startedAt,
      finishedAt: new Date().toISOString(),
      environment,
      disk,
      settings,
      passed: outcome.passed,
      ...outcome.results,
    });
    ctx.print(`\n${benchmark.name}: ${outcome.passed ? 'PASS' : 'FAIL'} · results written to ${file}`);
    if (!outcome.passed) failed++;
  }
  return settings.strict && failed > 0 ? 1 : 0;
}

main()
  .catch((err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    process.stderr.write(`benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  })
  .then(async (code) => {
    await disposeAll();
    process.exit(code);
  });
