/**
 * Reference for `devices:command` (`BENCH_COMMAND_SUBJECT=stack-reference`): the least a
 * Fastify server on this stack does for a device command — the service's logger and one-line
 * request log, a JSON body validated against a schema, an `ACTION` to the one registered
 * WebSocket driver (`ws`, noServer, same upgrade routing as the service), the `ACTION_RESULT`
 * matched by actionId with a time-out, and `{ok: true}`. No auth, registry, events or storage.
 * It shows what the command round trip costs the stack itself on this machine.
 *
 * Started like bench/baseline-server.ts (PORT, HOST, LOG_LEVEL; BASELINE_ROUTES_FILE unused).
 */
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import { referenceApp } from './lib/reference-app.js';

const { app, listen } = referenceApp(() => {
  for (const ws of wss.clients) ws.terminate();
});

let driver: WebSocket | undefined;
const pending = new Map<string, { resolve: (ok: boolean) => void; timer: NodeJS.Timeout }>();
const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
wss.on('connection', (ws) => {
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as { method?: string; type?: string; actionId?: string; ok?: boolean };
    if (msg.method === 'driver.register') {
      driver = ws;
      ws.send(JSON.stringify({ type: 'DRIVER_STATUS', status: 'registered' }));
    } else if (msg.type === 'ACTION_RESULT' && msg.actionId) {
      const entry = pending.get(msg.actionId);
      if (!entry) return;
      pending.delete(msg.actionId);
      clearTimeout(entry.timer);
      entry.resolve(msg.ok === true);
    }
  });
});
app.server.on('upgrade', (request, socket, head) => {
  if (request.url !== '/driver') return socket.destroy();
  wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
});

app.post(
  '/devices/:id/command',
  {
    schema: {
      params: { type: 'object', properties: { id: { type: 'string', minLength: 1 } }, required: ['id'] },
      body: { type: 'object', properties: { command: { type: 'string', minLength: 1 }, params: { type: 'object' } }, required: ['command'], additionalProperties: false },
      response: { '2xx': { type: 'object', properties: { ok: { type: 'boolean' } } }, '5xx': { type: 'object', properties: { ok: { type: 'boolean' } } } },
    },
  },
  async (request, reply) => {
    const { id } = request.params as { id: string };
    const { command, params } = request.body as { command: string; params?: object };
    if (!driver) return reply.code(503).send({ ok: false });
    const actionId = randomUUID();
    const ok = await new Promise<boolean>((resolve) => {
      pending.set(actionId, { resolve, timer: setTimeout(() => (pending.delete(actionId), resolve(false)), 10_000) });
      driver!.send(JSON.stringify({ type: 'ACTION', actionId, deviceId: id, command, params: params ?? {} }));
    });
    return reply.code(ok ? 200 : 504).send({ ok });
  },
);

await listen();
