/**
 * `npm run bench -- ai`: the assistant.
 *
 * Cases:
 * - `first-token`: over the intents backend, POST /ai/prompt (202) and the prompt's first `token`
 *   event on /ai/events, timed by the client from the request to the event; 300 sequential
 *   prompts a round, p99 under 20 ms.
 * - `token-overhead`: over an Ollama-API peer (test/support/ollama-emulator.ts, in this process)
 *   streaming a 2,000-token answer: the time from the prompt to its last token through the
 *   service's /ai/events, against the time the same chat takes read straight from the peer (the
 *   reference, same run, same machine). The service's own cost per token is their difference
 *   divided by the tokens: under 0.2 ms.
 */
import { selectCases, type Benchmark, type BenchmarkContext, type BenchmarkOutcome } from './lib/benchmark.js';
import { OS } from './lib/hub-setup.js';
import { median, table } from './lib/report.js';
import { startService, type ServiceHandle, type Session } from './lib/service.js';
import { startOllamaEmulator } from '../test/support/ollama-emulator.js';

export const AI_TARGETS = { prompts: 300, firstTokenP99Ms: 20, tokens: 2000, chats: 10, perTokenMs: 0.2 } as const;

const CASES = [
  { name: 'first-token', what: `POST ${OS}/ai/prompt over the intents backend to its first token event, sequential` },
  { name: 'token-overhead', what: `a ${AI_TARGETS.tokens}-token answer from an Ollama-API peer through ${OS}/ai/events, against reading the peer directly` },
];

const ms = (n: number, digits = 3) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

/** An SSE reader of /ai/events that resolves waiters by requestId and event. */
async function openEvents(service: ServiceHandle, session: Session) {
  const controller = new AbortController();
  const res = await fetch(`${service.baseUrl}${OS}/ai/events?accessToken=${session.accessToken}`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
  if (!res.body) throw new Error('no event stream');
  const waiters: Array<{ requestId: string; event: string; resolve: (at: number) => void; count: number }> = [];
  // Events can come before the prompt's answer names its request (another connection): kept, by request.
  const seen = new Map<string, Array<{ event: string; at: number }>>();
  const settle = () => {
    for (const w of [...waiters]) {
      const matching = (seen.get(w.requestId) ?? []).filter((e) => e.event === w.event);
      if (matching.length < w.count) continue;
      waiters.splice(waiters.indexOf(w), 1);
      seen.delete(w.requestId);
      w.resolve(matching[w.count - 1]!.at);
    }
  };
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!event || !data) continue;
          const requestId = (JSON.parse(data) as { requestId?: string }).requestId;
          if (!requestId) continue;
          const list = seen.get(requestId) ?? [];
          list.push({ event, at: performance.now() });
          seen.set(requestId, list);
          settle();
        }
      }
    } catch {
      // closed
    }
  })();
  return {
    wait(requestId: string, event: string, count = 1) {
      return new Promise<number>((resolve) => {
        waiters.push({ requestId, event, resolve, count });
        settle();
      });
    },
    close: () => controller.abort(),
  };
}

async function prompt(service: ServiceHandle, session: Session, text: string): Promise<string> {
  const res = await fetch(`${service.baseUrl}${OS}/ai/prompt`, { method: 'POST', headers: { ...session.headers, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: text }) });
  if (res.status !== 202) throw new Error(`prompt answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { requestId: string }).requestId;
}

async function firstTokenCase(ctx: BenchmarkContext) {
  const service = await startService({ logLevel: ctx.settings.logLevel });
  try {
    const session = await service.login();
    const events = await openEvents(service, session);
    const rounds: Array<{ p50: number; p99: number; max: number }> = [];
    for (let round = 0; round <= ctx.settings.rounds; round++) {
      const latencies: number[] = [];
      for (let i = 0; i < (round === 0 ? 50 : AI_TARGETS.prompts); i++) {
        const started = performance.now();
        const requestId = await prompt(service, session, 'what is the state of the hall light');
        const at = await events.wait(requestId, 'token');
        latencies.push(at - started);
      }
      if (round === 0) continue; // warm-up
      const r = { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies) };
      ctx.progress(`  first-token round ${round}: p50 ${ms(r.p50)} p99 ${ms(r.p99)} ms`);
      rounds.push(r);
    }
    events.close();
    const p99 = median(rounds.map((r) => r.p99));
    ctx.print(`\n### first-token: POST ${OS}/ai/prompt over the intents backend to its first token on ${OS}/ai/events, ${AI_TARGETS.prompts} sequential prompts a round`);
    ctx.print(table(['round', 'p50 ms', 'p99 ms', 'max ms'], rounds.map((r, i) => [String(i + 1), ms(r.p50), ms(r.p99), ms(r.max)])));
    const verdict = p99 < AI_TARGETS.firstTokenP99Ms ? 'PASS' : 'FAIL';
    ctx.print(`target: time to first token p99 < ${AI_TARGETS.firstTokenP99Ms} ms · median p99 ${ms(p99)} ms · ${verdict}`);
    return { verdict, rounds };
  } finally {
    await service.stop();
  }
}

async function tokenOverheadCase(ctx: BenchmarkContext) {
  const peer = await startOllamaEmulator(['bench-model'], { tools: false, answerTokens: AI_TARGETS.tokens });
  const service = await startService({ logLevel: ctx.settings.logLevel, env: { AI_BACKEND: 'ollama', AI_OLLAMA_URL: peer.url, AI_MODEL: 'bench-model' } });
  try {
    const session = await service.login();
    const events = await openEvents(service, session);
    const direct = async () => {
      const started = performance.now();
      const res = await fetch(`${peer.url}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'talk' }], stream: true }) });
      let tokens = 0;
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let i;
        while ((i = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, i);
          buffer = buffer.slice(i + 1);
          if (line && (JSON.parse(line) as { message?: { content?: string } }).message?.content) tokens++;
        }
      }
      if (tokens !== AI_TARGETS.tokens) throw new Error(`the peer sent ${tokens} tokens`);
      return performance.now() - started;
    };
    const through = async () => {
      const started = performance.now();
      const requestId = await prompt(service, session, 'talk');
      await events.wait(requestId, 'token', AI_TARGETS.tokens);
      return performance.now() - started;
    };
    await direct();
    await through();
    const rows: Array<{ direct: number; through: number; perToken: number }> = [];
    for (let i = 0; i < AI_TARGETS.chats * ctx.settings.rounds; i++) {
      const d = await direct();
      const t = await through();
      rows.push({ direct: d, through: t, perToken: (t - d) / AI_TARGETS.tokens });
    }
    events.close();
    const perToken = median(rows.map((r) => r.perToken));
    ctx.print(`\n### token-overhead: a ${AI_TARGETS.tokens}-token streamed answer from an Ollama-API peer, through ${OS}/ai/events vs. read from the peer directly (reference, same run)`);
    ctx.print(
      table(
        ['', 'median ms', 'per token ms'],
        [
          ['peer read directly (reference)', ms(median(rows.map((r) => r.direct))), ms(median(rows.map((r) => r.direct)) / AI_TARGETS.tokens, 4)],
          ['through the service to /ai/events', ms(median(rows.map((r) => r.through))), ms(median(rows.map((r) => r.through)) / AI_TARGETS.tokens, 4)],
          ["the service's own cost", '', ms(perToken, 4)],
        ],
      ),
    );
    const verdict = perToken < AI_TARGETS.perTokenMs ? 'PASS' : 'FAIL';
    ctx.print(`target: the service's own overhead per streamed token < ${AI_TARGETS.perTokenMs} ms · ${ms(perToken, 4)} ms · ${verdict}`);
    return { verdict, rows };
  } finally {
    await service.stop();
    await peer.close();
  }
}

export const aiBenchmark: Benchmark = {
  name: 'ai',
  description: 'the assistant: time to first token over the intents backend, and the overhead per token streamed from an Ollama-API peer',
  async run(ctx: BenchmarkContext): Promise<BenchmarkOutcome> {
    const cases = selectCases('ai', CASES, ctx.caseFilter);
    const results: Record<string, unknown> = {};
    let passed = true;
    for (const c of cases) {
      ctx.progress(`case ${c.name}: ${c.what}`);
      const r = c.name === 'first-token' ? await firstTokenCase(ctx) : await tokenOverheadCase(ctx);
      results[c.name] = r;
      passed &&= r.verdict === 'PASS';
    }
    return { passed, results };
  },
};
