/**
 * Bare reference for `devices:command` (issue 37): the device command round trip with nothing but
 * `node:http` and `ws` — no Fastify, no logging framework, no registry, events or storage. It is
 * the ceiling of what Node itself costs for the round trip on this machine, beside the Fastify
 * stack reference (bench/reference-command-server.ts), which shows what the stack adds on top.
 *
 * Per request, the least the service must also do:
 *  - bearer check: the Authorization header compared with `Bearer ${REFERENCE_TOKEN}` (401 otherwise),
 *    before the body is read;
 *  - `POST /devices/:id/command` (the stack reference's path shape; 404 other paths, 405 other methods);
 *  - the JSON body read (at most 1 MiB, 413 beyond), parsed and checked: an object whose `command`
 *    is a non-empty string, `params` an object if present (400 otherwise);
 *  - an `ACTION` to the one registered WebSocket driver (upgrade path `/driver`, noServer; the
 *    driver protocol of the stack reference: `driver.register` → `DRIVER_STATUS registered`), its
 *    `ACTION_RESULT` matched by actionId with a 10 s time-out (503 without a driver, 504 on a time-out
 *    or a failed result);
 *  - 200 `{"ok":true}` as JSON.
 *
 * Started by bench/lib/baseline.ts (`startBaseline({}, { script, env })`) with PORT, HOST and
 * REFERENCE_TOKEN (BASELINE_ROUTES_FILE and LOG_LEVEL unused). GET /__ready answers 200 once it
 * listens; SIGTERM/SIGINT close it.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';

const port = Number(process.env.PORT);
const host = process.env.HOST ?? '127.0.0.1';
const token = process.env.REFERENCE_TOKEN;
if (!Number.isInteger(port) || port <= 0 || !token) {
  process.stderr.write('reference-bare-command-server: PORT and REFERENCE_TOKEN are required\n');
  process.exit(2);
}
const expectedAuthorization = `Bearer ${token}`;
const MAX_BODY_BYTES = 1024 * 1024;
const ACTION_TIMEOUT_MS = 10_000;

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const answers = {
  ok: json({ ok: true }),
  failed: json({ ok: false }),
  ready: json({ status: 'ready' }),
  unauthorized: json({ error: { code: 'UNAUTHORIZED', message: 'A valid bearer token is required.' } }),
  badRequest: json({ error: { code: 'BAD_REQUEST', message: 'The body must be a JSON object with a non-empty string command and an object params, if any.' } }),
  tooLarge: json({ error: { code: 'PAYLOAD_TOO_LARGE', message: 'The body is too large.' } }),
  notFound: json({ error: { code: 'ROUTE_NOT_FOUND', message: 'No such route.' } }),
  methodNotAllowed: json({ error: { code: 'METHOD_NOT_ALLOWED', message: 'Use POST.' } }),
};

function send(res: http.ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) });
  res.end(body);
}

// ---------------------------------------------------------------------------------------------
// The driver link: one registered driver, pending actions by actionId.

let driver: WebSocket | undefined;
const pending = new Map<string, { resolve: (ok: boolean) => void; timer: NodeJS.Timeout }>();
const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
wss.on('connection', (ws) => {
  ws.on('message', (data) => {
    let msg: { method?: string; type?: string; actionId?: string; ok?: boolean };
    try {
      msg = JSON.parse(data.toString()) as typeof msg;
    } catch {
      return;
    }
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
  ws.on('close', () => {
    if (driver === ws) driver = undefined;
  });
});

function action(to: WebSocket, deviceId: string, command: string, params: object): Promise<boolean> {
  const actionId = randomUUID();
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      pending.delete(actionId);
      resolve(false);
    }, ACTION_TIMEOUT_MS);
    pending.set(actionId, { resolve, timer });
    to.send(JSON.stringify({ type: 'ACTION', actionId, deviceId, command, params }));
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP

const PREFIX = '/devices/';
const SUFFIX = '/command';

/** The `:id` of `/devices/:id/command` (one non-empty path segment), or undefined. */
function deviceIdOf(pathname: string): string | undefined {
  if (!pathname.startsWith(PREFIX) || !pathname.endsWith(SUFFIX)) return undefined;
  const id = pathname.slice(PREFIX.length, pathname.length - SUFFIX.length);
  if (id.length === 0 || id.includes('/')) return undefined;
  try {
    return decodeURIComponent(id);
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{command, params}` of a valid body, or undefined. */
function commandOf(text: string): { command: string; params: object } | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(body)) return undefined;
  const { command, params } = body;
  if (typeof command !== 'string' || command.length === 0) return undefined;
  if (params !== undefined && !isObject(params)) return undefined;
  return { command, params: params ?? {} };
}

function handleCommand(req: http.IncomingMessage, res: http.ServerResponse, deviceId: string): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  req.on('data', (chunk: Buffer) => {
    if (refused) return;
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      refused = true;
      res.setHeader('connection', 'close');
      send(res, 413, answers.tooLarge);
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (refused) return;
    const parsed = commandOf(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    if (!parsed) return send(res, 400, answers.badRequest);
    const to = driver;
    if (!to) return send(res, 503, answers.failed);
    void action(to, deviceId, parsed.command, parsed.params).then((ok) => send(res, ok ? 200 : 504, ok ? answers.ok : answers.failed));
  });
}

const server = http.createServer((req, res) => {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  if (pathname === '/__ready') return send(res, 200, answers.ready);
  const deviceId = deviceIdOf(pathname);
  if (deviceId === undefined) return send(res, 404, answers.notFound);
  if (req.method !== 'POST') return send(res, 405, answers.methodNotAllowed);
  if (req.headers.authorization !== expectedAuthorization) return send(res, 401, answers.unauthorized);
  handleCommand(req, res, deviceId);
});
// Same keep-alive window as Fastify's default, so that neither side drops idle connections sooner.
server.keepAliveTimeout = 72_000;

server.on('upgrade', (request: http.IncomingMessage, socket, head) => {
  if (request.url !== '/driver') return socket.destroy();
  wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
});

const stop = () => {
  for (const ws of wss.clients) ws.terminate();
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

server.listen(port, host, () => {
  process.stdout.write(`bare command reference listening on http://${host}:${port}\n`);
});
