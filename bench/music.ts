/**
 * `npm run bench -- music`: music services over the local media controller, with the MPD
 * protocol peer (test/support/mpd-emulator.ts) in an agent process holding a 20,000-track library.
 *
 * Cases:
 * - `search`: sequential POST /media-services/search {"query":"Song 01"} (tracks, artists, albums
 *   and playlists: four MPD commands per search), p99 under 50 ms.
 * - `stream`: 200 SSE clients on GET /media-controller/stream; a track change made at MPD (`play
 *   N` from another MPD client) must reach every client within 100 ms at p99, timed in the
 *   clients' process from the moment the change was sent.
 */
import { startAgent, type AgentHandle } from './lib/agent.js';
import { selectCases, type Benchmark, type BenchmarkContext, type BenchmarkOutcome } from './lib/benchmark.js';
import { OS, getJson, postJson, reportIfExited } from './lib/hub-setup.js';
import { median, table } from './lib/report.js';
import { startService, type ServiceHandle, type Session } from './lib/service.js';

export const MUSIC_TARGETS = { tracks: 20_000, searches: 1000, searchP99Ms: 50, streamClients: 200, changes: 30, changeP99Ms: 100 } as const;

const CASES = [
  { name: 'search', what: `POST ${OS}/media-services/search over ${MUSIC_TARGETS.tracks} tracks, sequential` },
  { name: 'stream', what: `${MUSIC_TARGETS.streamClients} SSE clients on ${OS}/media-controller/stream, a track change made at MPD reaching all of them` },
];

interface Sequential {
  requests: number;
  failures: number;
  statuses: Record<string, number>;
  latencyMs: { mean: number | null; p50: number | null; p90: number | null; p99: number | null; max: number | null };
}

interface Change {
  clients: number;
  received: number;
  closed: number;
  latencyMs: { p50: number | null; p99: number | null; max: number | null };
}

const ms = (n: number | null | undefined, digits = 2) => (n === null || n === undefined ? '-' : n.toFixed(digits));

async function waitConnected(service: ServiceHandle, session: Session): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const state = await getJson<{ connected: boolean }>(service, session, `${OS}/media-controller/state`);
    if (state.connected) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the service never connected to MPD');
}

async function searchCase(ctx: BenchmarkContext, service: ServiceHandle, session: Session, client: AgentHandle) {
  const request = {
    url: `${service.baseUrl}${OS}/media-services/search`,
    method: 'POST',
    headers: { ...session.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'Song 01', limit: 50 }),
  };
  const sample = await postJson<{ items: unknown[] }>(service, session, `${OS}/media-services/search`, { query: 'Song 01', limit: 50 });
  ctx.progress(`  a search answers ${sample.items.length} items`);
  await client.call('sequential', { ...request, count: 100 }, 120_000);
  const runs: Sequential[] = [];
  for (let round = 1; round <= ctx.settings.rounds; round++) {
    const r = await client.call<Sequential>('sequential', { ...request, count: MUSIC_TARGETS.searches }, 600_000);
    ctx.progress(`  search round ${round}: p50 ${ms(r.latencyMs.p50, 3)} p99 ${ms(r.latencyMs.p99, 3)} ms`);
    runs.push(r);
  }
  const p99 = median(runs.map((r) => r.latencyMs.p99 ?? Infinity));
  const failures = runs.reduce((n, r) => n + r.failures, 0);
  ctx.print(`\n### search: POST ${OS}/media-services/search {"query":"Song 01","limit":50} over ${MUSIC_TARGETS.tracks} tracks (${sample.items.length} items an answer), ${MUSIC_TARGETS.searches} sequential requests a round`);
  ctx.print(table(['round', 'requests', 'failures', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'], runs.map((r, i) => [String(i + 1), String(r.requests), String(r.failures), ms(r.latencyMs.p50, 3), ms(r.latencyMs.p90, 3), ms(r.latencyMs.p99, 3), ms(r.latencyMs.max)])));
  const verdict = p99 < MUSIC_TARGETS.searchP99Ms && failures === 0 ? 'PASS' : 'FAIL';
  ctx.print(`target: search p99 < ${MUSIC_TARGETS.searchP99Ms} ms with ${MUSIC_TARGETS.tracks} tracks · median p99 ${ms(p99, 3)} ms · ${verdict}`);
  return { verdict, runs, items: sample.items.length };
}

async function streamCase(ctx: BenchmarkContext, service: ServiceHandle, session: Session, mpd: { host: string; port: number }) {
  const clients = await startAgent('controller clients', 'controller-clients');
  try {
    // The queue the changes move through: one album's ten tracks, then a fifty-track playlist.
    await postJson(service, session, `${OS}/media-services/play`, { targetId: 'local', uri: 'playlist:Bench mix' });
    const token = (await postJson<{ accessToken: string }>(service, session, `${OS}/auth/stream-token`, {})).accessToken;
    const opened = await clients.call<{ open: number }>('open', { url: `${service.baseUrl}${OS}/media-controller/stream?accessToken=${token}`, count: MUSIC_TARGETS.streamClients }, 120_000);
    ctx.progress(`  ${opened.open} stream clients open`);
    const changes: Change[] = [];
    for (let i = 0; i < MUSIC_TARGETS.changes; i++) {
      changes.push(await clients.call<Change>('change', { mpdHost: mpd.host, mpdPort: mpd.port, index: (i % 49) + 1, timeoutMs: 5000 }, 30_000));
    }
    const all = changes.map((c) => c.latencyMs.p99 ?? Infinity);
    const worst = Math.max(...changes.map((c) => c.latencyMs.max ?? Infinity));
    const missed = changes.reduce((n, c) => n + (c.clients - c.received), 0);
    const p99 = median(all);
    ctx.print(`\n### stream: ${MUSIC_TARGETS.streamClients} SSE clients, ${MUSIC_TARGETS.changes} track changes made at MPD`);
    ctx.print(
      table(
        ['', 'p50 ms (median over changes)', 'p99 ms (median)', 'p99 ms (worst change)', 'max ms', 'missed'],
        [['track change → every client', ms(median(changes.map((c) => c.latencyMs.p50 ?? Infinity))), ms(p99), ms(Math.max(...all)), ms(worst), String(missed)]],
      ),
    );
    const verdict = p99 < MUSIC_TARGETS.changeP99Ms && missed === 0 ? 'PASS' : 'FAIL';
    ctx.print(`target: a track change reaches ${MUSIC_TARGETS.streamClients} stream clients within ${MUSIC_TARGETS.changeP99Ms} ms at p99 · median p99 ${ms(p99)} ms, worst change's p99 ${ms(Math.max(...all))} ms, ${missed} missed · ${verdict}`);
    return { verdict, changes };
  } finally {
    await clients.stop();
  }
}

export const musicBenchmark: Benchmark = {
  name: 'music',
  description: `music search over ${MUSIC_TARGETS.tracks} tracks and the media-controller stream to ${MUSIC_TARGETS.streamClients} clients`,
  async run(ctx: BenchmarkContext): Promise<BenchmarkOutcome> {
    const cases = selectCases('music', CASES, ctx.caseFilter);
    for (const c of cases) ctx.progress(`case ${c.name}: ${c.what}`);
    const server = await startAgent('mpd server', 'mpd-server');
    const client = await startAgent('sequential client', 'roku-fleet');
    const mpd = await server.call<{ host: string; port: number; tracks: number }>('start', { tracks: MUSIC_TARGETS.tracks }, 120_000);
    ctx.progress(`  MPD peer with ${mpd.tracks} tracks at ${mpd.host}:${mpd.port} (pid ${server.pid})`);
    const service = await startService({ logLevel: ctx.settings.logLevel, env: { MPD_HOST: mpd.host, MPD_PORT: String(mpd.port), MEDIA_DISCOVERY_INTERFACE: '127.0.0.1', MEDIA_SSDP_ADDRESS: '127.0.0.1:9', MEDIA_MDNS_ADDRESS: '127.0.0.1:9' } });
    const results: Record<string, unknown> = {};
    let passed = true;
    try {
      const session = await service.login();
      await waitConnected(service, session);
      for (const c of cases) {
        const r = c.name === 'search' ? await searchCase(ctx, service, session, client) : await streamCase(ctx, service, session, mpd);
        results[c.name] = r;
        passed &&= r.verdict === 'PASS';
      }
    } finally {
      await reportIfExited(service, ctx.progress);
      await service.stop();
      await client.stop();
      await server.stop();
    }
    return { passed, results };
  },
};
