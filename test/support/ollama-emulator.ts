import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OllamaEmulator {
  url: string;
  installed: Set<string>;
  /** Calls of /api/generate (loads and unloads) and /api/chat bodies, for assertions. */
  loads: Array<{ model: string; keep_alive: unknown }>;
  chats: Array<{ messages: Array<{ role: string; content: string }>; tools?: unknown[] }>;
  /** The next pull closes its connection after this many progress lines (once). */
  interruptNextPullAfter?: number;
  /** The next chat closes its connection after one token (once). */
  dropNextChat?: boolean;
  close(): Promise<void>;
}

const LAYER = 1000;
const STEP = 250;

/**
 * The part of Ollama's HTTP API the assistant uses, on 127.0.0.1: tags, a streamed pull of two
 * layers that resumes where an interrupted one stopped, load/unload through /api/generate, delete,
 * and a chat that first asks for the `device_command` tool on "Desk Lamp" and, once given the
 * tool's result, streams its answer.
 */
export async function startOllamaEmulator(installed: string[] = [], options: { tools?: boolean; answerTokens?: number } = {}): Promise<OllamaEmulator> {
  const answer = options.answerTokens ? Array.from({ length: options.answerTokens }, (_, i) => `t${i} `) : ['Done', ', the ', 'Desk Lamp', ' is on.'];
  const progress = new Map<string, number>();
  const emulator: OllamaEmulator = { url: '', installed: new Set(installed), loads: [], chats: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      const line = (o: unknown) => res.write(`${JSON.stringify(o)}\n`);
      if (req.url === '/api/version') return res.end(JSON.stringify({ version: '0.5.0' }));
      if (req.url === '/api/tags') return res.end(JSON.stringify({ models: [...emulator.installed].map((name) => ({ name, size: 2 * LAYER })) }));
      if (req.url === '/api/generate') {
        emulator.loads.push({ model: String(body.model), keep_alive: body.keep_alive });
        return res.end(JSON.stringify({ model: body.model, done: true }));
      }
      if (req.url === '/api/delete') {
        emulator.installed.delete(String(body.model));
        return res.end('{}');
      }
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      if (req.url === '/api/pull') {
        const model = String(body.model);
        let done = progress.get(model) ?? 0;
        const cut = emulator.interruptNextPullAfter;
        emulator.interruptNextPullAfter = undefined;
        let sent = 0;
        line({ status: 'pulling manifest' });
        const tick = () => {
          if (done >= 2 * LAYER) {
            line({ status: 'verifying sha256 digest' });
            line({ status: 'success' });
            emulator.installed.add(model);
            progress.delete(model);
            return res.end();
          }
          done += STEP;
          progress.set(model, done);
          for (const [i, digest] of ['sha256:aaa', 'sha256:bbb'].entries()) {
            line({ status: `pulling ${digest.slice(7)}`, digest, total: LAYER, completed: Math.max(0, Math.min(LAYER, done - i * LAYER)) });
          }
          if (cut !== undefined && ++sent >= cut) return res.destroy();
          setTimeout(tick, 10);
        };
        return tick();
      }
      if (req.url === '/api/chat') {
        const messages = body.messages as Array<{ role: string; content: string }>;
        emulator.chats.push({ messages, tools: body.tools as unknown[] });
        const last = messages[messages.length - 1]!;
        if (emulator.dropNextChat) {
          emulator.dropNextChat = false;
          line({ message: { role: 'assistant', content: 'Let me' }, done: false });
          return setTimeout(() => res.destroy(), 20);
        }
        if (last.role === 'user' && options.tools !== false) {
          line({ message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'device_command', arguments: { device: 'Desk Lamp', command: /unlock/.test(last.content) ? 'unlock' : 'turn_on' } } }] }, done: false });
          line({ message: { role: 'assistant', content: '' }, done: true });
          return res.end();
        }
        for (const token of answer) line({ message: { role: 'assistant', content: token }, done: false });
        line({ message: { role: 'assistant', content: '' }, done: true });
        return res.end();
      }
      res.statusCode = 404;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  emulator.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  emulator.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return emulator;
}
