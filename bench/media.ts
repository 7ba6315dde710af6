/**
 * `npm run bench -- media`: the media player roster and player commands with 50 emulated Rokus
 * (test/support/roku-ecp-emulator.ts, in an agent process of its own), polled by the service
 * every second (five times the default rate, so the roster is read while polls land).
 *
 * Cases:
 * - `roster`: sequential GET /media/players, p99 under 20 ms; again with 5 of the 50 dead
 *   (accepting connections, never answering: their polls hang until the request time-out).
 * - `command`: POST /media/players/:id/command {volume_step +1} (→ ECP keypress VolumeUp on the
 *   emulator) against the same keypress sent straight to the emulator by the same client, in
 *   alternating rounds; the command must add under 2 ms to the emulator's own latency (p50).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { startAgent, type AgentHandle } from './lib/agent.js';
import { selectCases, type Benchmark, type BenchmarkContext, type BenchmarkOutcome } from './lib/benchmark.js';
import { OS, getJson, postJson, reportIfExited } from './lib/hub-setup.js';
import { median, table } from './lib/report.js';
import { startService, type ServiceHandle, type Session } from './lib/service.js';

export const MEDIA_TARGETS = {
  rokus: 50,
  dead: 5,
  rosterRequests: 2000,
  rosterP99Ms: 20,
  commandRequests: 500,
  /** The service's p50 minus the direct request's p50, same client, same emulator. */
  commandOverheadMs: 2,
} as const;

const CASES = [
  { name: 'roster', what: `GET ${OS}/media/players with ${MEDIA_TARGETS.rokus} Rokus polled every second, sequential; then with ${MEDIA_TARGETS.dead} of them dead` },
  { name: 'command', what: `POST ${OS}/media/players/:id/command {"command":"volume_step","params":{"delta":1}} against POST /keypress/VolumeUp sent to the emulator directly` },
];

interface Sequential {
  requests: number;
  failures: number;
  statuses: Record<string, number>;
  latencyMs: { mean: number | null; p50: number | null; p90: number | null; p99: number | null; max: number | null };
}

interface Player {
  id: string;
  endpointId: string | null;
  online: boolean;
}

const ms = (n: number | null | undefined, digits = 3) => (n === null || n === undefined ? '-' : n.toFixed(digits));

async function rosterOf(service: ServiceHandle, session: Session): Promise<Player[]> {
  return (await getJson<{ players: Player[] }>(service, session, `${OS}/media/players`)).players;
}

/** Polls the roster until `ok` holds, at most `seconds`. */
async function waitForRoster(service: ServiceHandle, session: Session, ok: (players: Player[]) => boolean, seconds: number): Promise<Player[]> {
  const deadline = Date.now() + seconds * 1000;
  let last: Player[] = [];
  for (let i = 0; i < seconds * 20 && Date.now() < deadline; i++) {
    last = await rosterOf(service, session);
    if (ok(last)) return last;
    await sleep(50);
  }
  throw new Error(`the roster did not reach the expected state in ${seconds} s (${last.filter((p) => p.online).length}/${last.length} online)`);
}

async function setUp(ctx: BenchmarkContext): Promise<{ service: ServiceHandle; session: Session; fleet: AgentHandle; rokus: Array<{ host: string; port: number; serialNumber: string }>; players: Player[] }> {
  const fleet = await startAgent('roku fleet', 'roku-fleet');
  const rokus = await fleet.call<Array<{ host: string; port: number; serialNumber: string }>>('start', { count: MEDIA_TARGETS.rokus });
  ctx.progress(`  ${rokus.length} emulated Rokus in pid ${fleet.pid}`);
  const service = await startService({
    logLevel: ctx.settings.logLevel,
    env: { ROKU_POLL_INTERVAL_MS: '1000', ROKU_REQUEST_TIMEOUT_MS: '3000', MEDIA_DISCOVERY_INTERFACE: '127.0.0.1', MEDIA_SSDP_ADDRESS: '127.0.0.1:9', MEDIA_MDNS_ADDRESS: '127.0.0.1:9' },
  });
  const session = await service.login();
  for (let i = 0; i < rokus.length; i += 25) {
    const probe = rokus.slice(i, i + 25).map((r) => ({ kind: 'roku', host: r.host, port: r.port }));
    await postJson(service, session, `${OS}/media-services/endpoints/discover`, { timeoutMs: 100, probe });
  }
  const players = await waitForRoster(service, session, (p) => p.filter((x) => x.online).length === MEDIA_TARGETS.rokus, 60);
  ctx.progress(`  ${players.length} players online in the roster`);
  return { service, session, fleet, rokus, players };
}

async function rosterCase(ctx: BenchmarkContext, env: Awaited<ReturnType<typeof setUp>>) {
  const { service, session, fleet } = env;
  const url = `${service.baseUrl}${OS}/media/players`;
  const measure = async (label: string) => {
    await fleet.call('sequential', { url, headers: session.headers, count: 200 }, 120_000);
    const r = await fleet.call<Sequential>('sequential', { url, headers: session.headers, count: MEDIA_TARGETS.rosterRequests }, 300_000);
    ctx.progress(`  roster (${label}): p50 ${ms(r.latencyMs.p50)} p99 ${ms(r.latencyMs.p99)} ms`);
    return r;
  };
  const healthy = await measure('all alive');
  const deadIndexes = Array.from({ length: MEDIA_TARGETS.dead }, (_, i) => i);
  await fleet.call('setMode', { indexes: deadIndexes, mode: 'dead' });
  // A dead Roku goes offline once its poll times out (3 s); the roster is read while it hangs and after.
  const withDead = await measure('5 dead, polls hanging');
  await waitForRoster(service, session, (p) => p.filter((x) => !x.online).length === MEDIA_TARGETS.dead, 30);
  const afterDead = await measure('5 dead, offline');
  await fleet.call('setMode', { indexes: deadIndexes, mode: 'ok' });
  await waitForRoster(service, session, (p) => p.filter((x) => x.online).length === MEDIA_TARGETS.rokus, 30);

  const runs = { healthy, withDead, afterDead };
  const rows = Object.entries(runs).map(([name, r]) => [name, String(r.requests), String(r.failures), ms(r.latencyMs.p50), ms(r.latencyMs.p90), ms(r.latencyMs.p99), ms(r.latencyMs.max)]);
  ctx.print(`\n### roster: GET ${OS}/media/players, ${MEDIA_TARGETS.rokus} Rokus, sequential`);
  ctx.print(table(['', 'requests', 'failures', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'], rows));
  const reasons: string[] = [];
  for (const [name, r] of Object.entries(runs)) {
    if (r.failures > 0) reasons.push(`${name}: ${r.failures} failed requests`);
    if ((r.latencyMs.p99 ?? Infinity) >= MEDIA_TARGETS.rosterP99Ms) reasons.push(`${name}: p99 ${ms(r.latencyMs.p99)} ms ≥ ${MEDIA_TARGETS.rosterP99Ms} ms`);
  }
  const verdict = reasons.length === 0 ? 'PASS' : 'FAIL';
  ctx.print(`target: roster p99 < ${MEDIA_TARGETS.rosterP99Ms} ms with ${MEDIA_TARGETS.rokus} Rokus (also with ${MEDIA_TARGETS.dead} dead) · ${verdict}${reasons.length ? ` (${reasons.join('; ')})` : ''}`);
  return { verdict, runs };
}

async function commandCase(ctx: BenchmarkContext, env: Awaited<ReturnType<typeof setUp>>) {
  const { service, session, fleet, rokus, players } = env;
  const roku = rokus[rokus.length - 1]!;
  const player = players.find((p) => p.endpointId === `roku:${roku.serialNumber}`);
  if (!player) throw new Error('the measured Roku is not in the roster');
  const direct = { url: `http://${roku.host}:${roku.port}/keypress/VolumeUp`, method: 'POST', count: MEDIA_TARGETS.commandRequests };
  const viaService = {
    url: `${service.baseUrl}${OS}/media/players/${player.id}/command`,
    method: 'POST',
    headers: { ...session.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ command: 'volume_step', params: { delta: 1 } }),
    count: MEDIA_TARGETS.commandRequests,
  };
  await fleet.call('sequential', { ...direct, count: 100 }, 60_000);
  await fleet.call('sequential', { ...viaService, count: 100 }, 60_000);
  const rounds: Array<{ direct: Sequential; service: Sequential; overheadP50: number; overheadP99: number }> = [];
  for (let round = 1; round <= ctx.settings.rounds; round++) {
    // Alternate which side goes first, so neither always profits from a warm cache.
    const order = round % 2 === 1 ? ['direct', 'service'] : ['service', 'direct'];
    const got: Record<string, Sequential> = {};
    for (const side of order) got[side] = await fleet.call<Sequential>('sequential', side === 'direct' ? direct : viaService, 300_000);
    const overheadP50 = (got.service!.latencyMs.p50 ?? Infinity) - (got.direct!.latencyMs.p50 ?? 0);
    const overheadP99 = (got.service!.latencyMs.p99 ?? Infinity) - (got.direct!.latencyMs.p99 ?? 0);
    rounds.push({ direct: got.direct!, service: got.service!, overheadP50, overheadP99 });
    ctx.progress(`  command round ${round}: direct p50 ${ms(got.direct!.latencyMs.p50)} ms, service p50 ${ms(got.service!.latencyMs.p50)} ms, overhead ${ms(overheadP50)} ms`);
  }
  const overhead = median(rounds.map((r) => r.overheadP50));
  const overheadP99 = median(rounds.map((r) => r.overheadP99));
  const mid = rounds.find((r) => r.overheadP50 === overhead) ?? rounds[0]!;
  ctx.print(`\n### command: volume_step through the service vs the keypress straight to the emulator (same client, ${MEDIA_TARGETS.commandRequests} sequential requests a side, ${rounds.length} round(s))`);
  const row = (label: string, r: Sequential) => [label, String(r.requests), String(r.failures), ms(r.latencyMs.p50), ms(r.latencyMs.p90), ms(r.latencyMs.p99), ms(r.latencyMs.max)];
  ctx.print(
    table(
      ['', 'requests', 'failures', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
      [row('emulator direct (POST /keypress/VolumeUp)', mid.direct), row('service (POST /media/players/:id/command)', mid.service)],
    ),
  );
  const failures = rounds.reduce((n, r) => n + r.direct.failures + r.service.failures, 0);
  const verdict = overhead < MEDIA_TARGETS.commandOverheadMs && failures === 0 ? 'PASS' : 'FAIL';
  ctx.print(`per-round overhead p50: ${rounds.map((r) => ms(r.overheadP50)).join(', ')} ms; p99: ${rounds.map((r) => ms(r.overheadP99)).join(', ')} ms`);
  ctx.print(`target: a player command adds < ${MEDIA_TARGETS.commandOverheadMs} ms (p50) to the emulator's own latency · median overhead ${ms(overhead)} ms (p99 ${ms(overheadP99)} ms) · ${verdict}${failures ? ` (${failures} failed requests)` : ''}`);
  return { verdict, overheadP50Ms: overhead, overheadP99Ms: overheadP99, rounds };
}

export const mediaBenchmark: Benchmark = {
  name: 'media',
  description: `media player roster and commands with ${MEDIA_TARGETS.rokus} emulated Rokus`,
  async run(ctx: BenchmarkContext): Promise<BenchmarkOutcome> {
    const cases = selectCases('media', CASES, ctx.caseFilter);
    for (const c of cases) ctx.progress(`case ${c.name}: ${c.what}`);
    const env = await setUp(ctx);
    const results: Record<string, unknown> = {};
    let passed = true;
    try {
      for (const c of cases) {
        const r = c.name === 'roster' ? await rosterCase(ctx, env) : await commandCase(ctx, env);
        results[c.name] = r;
        passed &&= r.verdict === 'PASS';
      }
    } finally {
      await reportIfExited(env.service, ctx.progress);
      await env.service.stop();
      await env.fleet.stop();
    }
    return { passed, results };
  },
};
