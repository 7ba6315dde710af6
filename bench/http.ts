import { selectCases, type Benchmark, type BenchmarkContext, type BenchmarkOutcome } from './lib/benchmark.js';
import { startBaseline, type BaselineRoute } from './lib/baseline.js';
import { compareAlternating, type Comparison } from './lib/compare.js';
import { fileSizeProbe } from './lib/load.js';
import { format, measurementTable } from './lib/report.js';
import { startService } from './lib/service.js';

/** Target: the service keeps at least 70 % of a bare node:http server's requests/s at 50 connections. */
export const HTTP_TARGET = { minRatio: 0.7, connections: 50 } as const;

interface HttpCase {
  name: string;
  path: string;
  what: string;
}

const CASES: HttpCase[] = [
  { name: 'auth-me', path: '/app/os/auth/me', what: 'authenticated principal: bearer check (SHA-256 + map lookup), no database' },
  { name: 'admin-users', path: '/admin/users', what: 'list route: bearer check, then the account list (held in memory by the auth service, loaded from SQLite)' },
];

async function run(ctx: BenchmarkContext): Promise<BenchmarkOutcome> {
  const { settings } = ctx;
  const cases = selectCases('http', CASES, ctx.caseFilter);
  const nodeArgs = settings.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`] : [];
  ctx.progress(`starting the service (LOG_LEVEL=${settings.logLevel})...`);
  const service = await startService({ logLevel: settings.logLevel, nodeArgs });
  ctx.progress(`  service pid ${service.pid} at ${service.baseUrl}`);
  try {
    const session = await service.login();

    // The baseline answers exactly what the service answers.
    const routes: Record<string, BaselineRoute> = {};
    for (const c of cases) {
      const answer = await service.request(c.path, { headers: session.headers });
      if (answer.status !== 200) throw new Error(`GET ${c.path} answered ${answer.status}: ${answer.body}`);
      routes[c.path] = { status: 200, body: answer.body, contentType: 'application/json' };
    }
    ctx.progress('starting the baseline (bare node:http)...');
    const baseline = await startBaseline(routes, { nodeArgs });
    ctx.progress(`  baseline pid ${baseline.pid} at ${baseline.baseUrl}`);
    if (settings.cpuProfileDir) ctx.progress(`  CPU profiles go to ${settings.cpuProfileDir}/CPU.*.<pid>.*.cpuprofile when the children stop`);
    // BENCH_HTTP_SUBJECT=fastify-reference measures Fastify with the service's logging instead
    // of the service, against the same baseline: the ceiling of the stack on this machine.
    const reference = process.env.BENCH_HTTP_SUBJECT === 'fastify-reference' ? await startBaseline(routes, { nodeArgs, script: 'bench/reference-fastify-server.ts', logLevel: settings.logLevel }) : undefined;
    if (reference) ctx.progress(`  measuring the Fastify reference (pid ${reference.pid}) instead of the service`);
    const subject = reference
      ? { label: 'fastify-reference', baseUrl: reference.baseUrl, pid: reference.pid, probes: [] }
      : { label: 'service', baseUrl: service.baseUrl, pid: service.pid, probes: [fileSizeProbe('serviceLogBytes', service.logPath)] };
    try {
      const comparisons: Comparison[] = [];
      const logBytesPerRequest: Record<string, number | null> = {};
      for (const c of cases) {
        const comparison = await compareAlternating(ctx, {
          name: c.name,
          method: 'GET',
          path: c.path,
          target: HTTP_TARGET,
          baseline: { label: 'baseline', url: `${baseline.baseUrl}${c.path}`, headers: session.headers, pid: baseline.pid },
          service: { label: subject.label, url: `${subject.baseUrl}${c.path}`, headers: session.headers, pid: subject.pid, probes: subject.probes },
        });
        comparisons.push(comparison);
        const logBytes = comparison.service.probes.serviceLogBytes ?? null;
        logBytesPerRequest[c.name] = logBytes === null || comparison.service.totalRequests === 0 ? null : logBytes / comparison.service.totalRequests;

        ctx.print(`\nGET ${c.path} — ${c.what}`);
        ctx.print(measurementTable([comparison.baseline, comparison.service]));
        if (comparison.rounds.length > 1) {
          const each = (side: 'baseline' | 'service') =>
            comparison.rounds.map((r) => `${format.int(r[side].requestsPerSec)} req/s ${format.int(r[side].serverCpuMicrosPerRequest)} µs/req`).join(', ');
          ctx.print(`(median of ${comparison.rounds.length} rounds by req/s; baseline: ${each('baseline')}; service: ${each('service')})`);
        }
        const offTarget = settings.connections !== HTTP_TARGET.connections ? ` [run at ${settings.connections} connections: not the target condition]` : '';
        ctx.print(
          `ratio service/baseline req/s = ${comparison.ratio.toFixed(2)} → ${comparison.verdict} (target ≥ ${HTTP_TARGET.minRatio.toFixed(2)} at ${HTTP_TARGET.connections} connections)${offTarget}` +
            (comparison.reasons.length > 0 ? `\n  ${comparison.reasons.join('; ')}` : ''),
        );
        ctx.print(
          `server CPU per request: service ${format.int(comparison.service.serverCpuMicrosPerRequest)} µs, baseline ${format.int(comparison.baseline.serverCpuMicrosPerRequest)} µs` +
            (comparison.cpuCostFactor === null ? '' : ` (${comparison.cpuCostFactor.toFixed(1)}×)`) +
            ` · service log at LOG_LEVEL=${settings.logLevel}: ${format.int(logBytesPerRequest[c.name] ?? null)} bytes per request`,
        );
        if (comparison.disturbedRuns.length > 0) {
          ctx.print(`warning: other work on the machine disturbed this comparison (${comparison.disturbedRuns.join('; ')}); rerun on a quiet machine, or with BENCH_QUIET_WAIT=120 BENCH_RETRIES=3`);
        }
      }

      const passed = comparisons.every((c) => c.verdict === 'PASS') && settings.connections === HTTP_TARGET.connections;
      return {
        passed,
        results: {
          serviceLogLevel: settings.logLevel,
          target: HTTP_TARGET,
          comparisons: comparisons.map((c) => ({ ...c, serviceLogBytesPerRequest: logBytesPerRequest[c.name] ?? null })),
        },
      };
    } finally {
      await reference?.stop();
      await baseline.stop();
    }
  } finally {
    ctx.progress('stopping the service...');
    await service.stop();
  }
}

export const httpBenchmark: Benchmark = {
  name: 'http',
  description: 'REST requests/s of the service against a bare node:http baseline (GET /app/os/auth/me, GET /admin/users)',
  run,
};
