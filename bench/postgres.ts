/**
 * `npm run bench -- postgres`: the service on PostgreSQL (embedded, on this machine) against
 * itself on SQLite, in the same run.
 *
 * Cases:
 * - `state-updates`: STATE_UPDATEs absorbed per second from one WebSocket driver (the devices
 *   benchmark's flood), on SQLite and on PostgreSQL, round after round: PostgreSQL must absorb at
 *   least 0.5× what SQLite does.
 * - `forwarded-command`: two instances on one PostgreSQL database, the bench driver connected to
 *   A; sequential POST /devices/:id/command sent to A (direct) and to B (forwarded to A over
 *   LISTEN/NOTIFY and back), interleaved in blocks: the forwarding adds under 2 ms at p50.
 */
import { ABSORPTION_HEADER, absorptionRow, measureStateAbsorption } from './devices.js';
import { selectCases, type Benchmark, type BenchmarkContext, type BenchmarkOutcome } from './lib/benchmark.js';
import { OS, discoverDevices, getJson, hubIdsByDriverId, reportIfExited, startBenchDriver } from './lib/hub-setup.js';
import { startPostgres, type PostgresHandle } from './lib/postgres.js';
import { format, median, table } from './lib/report.js';
import { startService, type ServiceHandle, type Session } from './lib/service.js';

export const POSTGRES_TARGETS = { minStateUpdateRatio: 0.5, forwardedP50AddedMs: 2, commands: 1000, block: 50, devices: 20 } as const;

const CASES = [
  { name: 'state-updates', what: 'STATE_UPDATEs absorbed per second from one driver, SQLite and PostgreSQL in the same run' },
  { name: 'forwarded-command', what: 'device command round trip through the instance holding the driver (A) and through a second instance (B)' },
];

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : '-');

async function stateUpdatesCase(ctx: BenchmarkContext, postgres: PostgresHandle) {
  const rounds: Array<{ sqlite: number; postgres: number; ratio: number }> = [];
  const rows: string[][] = [];
  for (let round = 1; round <= ctx.settings.rounds; round++) {
    const figures: Record<string, Awaited<ReturnType<typeof measureStateAbsorption>>> = {};
    for (const engine of round % 2 ? ['sqlite', 'postgres'] : ['postgres', 'sqlite']) {
      const env: Record<string, string> = engine === 'postgres' ? { DATABASE_URL: await postgres.createDatabase(`bench_state_${round}`) } : {};
      ctx.progress(`state-updates round ${round}: ${engine}`);
      const service = await startService({ logLevel: ctx.settings.logLevel, env });
      try {
        figures[engine] = await measureStateAbsorption(ctx, service, await service.login(), `bench-state-${engine}`);
      } finally {
        await reportIfExited(service, ctx.progress);
        await service.stop();
      }
      rows.push([String(round), engine, ...absorptionRow(figures[engine]!)]);
    }
    const r = { sqlite: figures.sqlite!.absorbedPerSecond, postgres: figures.postgres!.absorbedPerSecond, ratio: figures.postgres!.absorbedPerSecond / figures.sqlite!.absorbedPerSecond };
    ctx.progress(`  round ${round}: SQLite ${format.int(r.sqlite)}/s, PostgreSQL ${format.int(r.postgres)}/s, ratio ${r.ratio.toFixed(2)}`);
    rounds.push(r);
  }
  ctx.print(`\n### state updates absorbed from one WebSocket driver (${ctx.settings.devices.floodDevices} devices, ${ctx.settings.devices.floodSeconds} s flood), SQLite against PostgreSQL`);
  ctx.print(table(['round', 'engine', ...ABSORPTION_HEADER], rows));
  const ratio = median(rounds.map((r) => r.ratio));
  const passed = ratio >= POSTGRES_TARGETS.minStateUpdateRatio;
  ctx.print(`target: PostgreSQL absorbs ≥ ${POSTGRES_TARGETS.minStateUpdateRatio}× SQLite · median ratio ${ratio.toFixed(2)} · ${passed ? 'PASS' : 'FAIL'}`);
  return { passed, ratio, rounds };
}

async function commandLatencies(service: ServiceHandle, session: Session, deviceIds: string[], count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const res = await fetch(`${service.baseUrl}${OS}/devices/${deviceIds[i % deviceIds.length]}/command`, {
      method: 'POST',
      headers: { ...session.headers, 'content-type': 'application/json' },
      body: '{"command":"toggle"}',
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`command through ${service.baseUrl} answered ${res.status}`);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

async function forwardedCommandCase(ctx: BenchmarkContext, postgres: PostgresHandle) {
  const url = await postgres.createDatabase('bench_forward');
  const env = { DATABASE_URL: url };
  const a = await startService({ logLevel: ctx.settings.logLevel, env });
  const b = await startService({ logLevel: ctx.settings.logLevel, env });
  const driver = await startBenchDriver(a, 'bench-forward');
  try {
    const [sa, sb] = [await a.login(), await b.login()];
    await discoverDevices(a, sa, driver, { instanceId: 'bench-forward', prefix: 'fw-', count: POSTGRES_TARGETS.devices, commands: ['toggle'] });
    const ids = [...(await hubIdsByDriverId(a, sa)).values()];
    // B lists them once the cluster has told it.
    for (let i = 0; i < 500; i++) {
      const { devices } = await getJson<{ devices: unknown[] }>(b, sb, `${OS}/devices`);
      if (devices.length >= ids.length) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await commandLatencies(a, sa, ids, 200);
    await commandLatencies(b, sb, ids, 200);
    const rounds: Array<{ directP50: number; forwardedP50: number; directP99: number; forwardedP99: number; addedP50: number }> = [];
    for (let round = 1; round <= ctx.settings.rounds; round++) {
      const direct: number[] = [];
      const forwarded: number[] = [];
      for (let done = 0; done < POSTGRES_TARGETS.commands; done += POSTGRES_TARGETS.block) {
        direct.push(...(await commandLatencies(a, sa, ids, POSTGRES_TARGETS.block)));
        forwarded.push(...(await commandLatencies(b, sb, ids, POSTGRES_TARGETS.block)));
      }
      const r = { directP50: percentile(direct, 50), forwardedP50: percentile(forwarded, 50), directP99: percentile(direct, 99), forwardedP99: percentile(forwarded, 99), addedP50: 0 };
      r.addedP50 = r.forwardedP50 - r.directP50;
      ctx.progress(`  forwarded-command round ${round}: direct p50 ${ms(r.directP50)} ms, through B p50 ${ms(r.forwardedP50)} ms`);
      rounds.push(r);
    }
    ctx.print(`\n### device command round trip, ${POSTGRES_TARGETS.commands} sequential commands a side per round, blocks of ${POSTGRES_TARGETS.block} alternating`);
    ctx.print(table(['round', 'A direct p50 ms', 'through B p50 ms', 'added p50 ms', 'A direct p99 ms', 'through B p99 ms'], rounds.map((r, i) => [String(i + 1), ms(r.directP50), ms(r.forwardedP50), ms(r.addedP50), ms(r.directP99), ms(r.forwardedP99)])));
    const added = median(rounds.map((r) => r.addedP50));
    const passed = added < POSTGRES_TARGETS.forwardedP50AddedMs;
    ctx.print(`target: a second instance adds < ${POSTGRES_TARGETS.forwardedP50AddedMs} ms at p50 · median added ${ms(added)} ms · ${passed ? 'PASS' : 'FAIL'}`);
    return { passed, addedP50Ms: added, rounds };
  } finally {
    await driver.stop();
    await reportIfExited(a, ctx.progress);
    await reportIfExited(b, ctx.progress);
    await b.stop();
    await a.stop();
  }
}

export const postgresBenchmark: Benchmark = {
  name: 'postgres',
  description: 'the service on PostgreSQL: state updates absorbed against SQLite in the same run, and a command through a second instance',
  async run(ctx): Promise<BenchmarkOutcome> {
    const cases = selectCases('postgres', CASES, ctx.caseFilter);
    ctx.progress('starting embedded PostgreSQL...');
    const postgres = await startPostgres();
    const results: Record<string, unknown> = {};
    let passed = true;
    try {
      for (const c of cases) {
        const outcome = c.name === 'state-updates' ? await stateUpdatesCase(ctx, postgres) : await forwardedCommandCase(ctx, postgres);
        results[c.name] = outcome;
        passed &&= outcome.passed;
      }
    } finally {
      await postgres.stop();
    }
    return { passed, results };
  },
};
