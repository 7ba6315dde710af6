/**
 * Reference for the `hub-command` benchmark: a bare Socket.IO 4 server on loopback that answers
 * every acknowledged `hub:command` on `/socket/hub-protocol` with the answer the service gave to
 * the same command (REFERENCE_ANSWER, JSON, fetched once before the load), with the request's
 * `requestId`. Default options and parser, no authentication, no domain: what one acknowledged
 * event costs Socket.IO itself on this machine. With REFERENCE_EMIT_RESPONSE=1 (the target
 * condition since issue 26) it also emits the answer as `hub:response` first, as the spec
 * requires and the service does.
 *
 * Started like bench/baseline-server.ts (PORT, HOST); GET /__ready answers 200 once it listens.
 */
import http from 'node:http';
import { Server } from 'socket.io';

const port = Number(process.env.PORT);
const host = process.env.HOST ?? '127.0.0.1';
const answerJson = process.env.REFERENCE_ANSWER;
if (!Number.isInteger(port) || port <= 0 || !answerJson) {
  process.stderr.write('reference-socketio-server: PORT and REFERENCE_ANSWER are required\n');
  process.exit(2);
}
const answer = JSON.parse(answerJson) as Record<string, unknown>;
const alsoEmitResponse = process.env.REFERENCE_EMIT_RESPONSE === '1';

const server = http.createServer((req, res) => {
  const ready = req.url === '/__ready';
  res.writeHead(ready ? 200 : 404, { 'content-type': 'application/json' });
  res.end(ready ? '{"status":"ready"}' : '{}');
});
const io = new Server(server, { serveClient: false });
io.of('/socket/hub-protocol').on('connection', (socket) => {
  socket.on('hub:command', (message: { requestId?: unknown } | undefined, ack?: unknown) => {
    const response = { ...answer, requestId: message?.requestId };
    if (alsoEmitResponse) socket.emit('hub:response', response);
    if (typeof ack === 'function') ack(response);
  });
});

const stop = () => {
  io.disconnectSockets(true);
  void io.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

server.listen(port, host, () => process.stdout.write(`socket.io reference listening on http://${host}:${port}\n`));
