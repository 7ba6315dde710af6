/**
 * Reference for the HTTP benchmark (`BENCH_HTTP_SUBJECT=fastify-reference`): Fastify with the
 * service's own logger and one-line request log, answering the same fixed bodies as the bare
 * baseline, and nothing else (no auth, hooks, schemas or database). It measures what the stack
 * the service is built on costs on this machine, so that the service's ratio can be read
 * against the stack's own.
 *
 * Started like bench/baseline-server.ts, with BASELINE_ROUTES_FILE, PORT, HOST and LOG_LEVEL.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { createLogger } from '../src/app.js';
import { OneLinePerRequest } from '../src/surfaces/http/request-log.js';

interface RouteSpec {
  status: number;
  body: string;
  contentType?: string;
}

const routesFile = process.env.BASELINE_ROUTES_FILE;
const port = Number(process.env.PORT);
const host = process.env.HOST ?? '127.0.0.1';
if (!routesFile || !Number.isInteger(port) || port <= 0) {
  process.stderr.write('reference-fastify-server: BASELINE_ROUTES_FILE and PORT are required\n');
  process.exit(2);
}

const app = Fastify({
  loggerInstance: createLogger({ logLevel: process.env.LOG_LEVEL ?? 'info' }) as FastifyBaseLogger,
  logController: new OneLinePerRequest(),
  genReqId: () => randomUUID(),
  requestIdHeader: 'x-request-id',
});
const specs = JSON.parse(fs.readFileSync(routesFile, 'utf8')) as Record<string, RouteSpec>;
for (const [pathname, spec] of Object.entries(specs)) {
  app.get(pathname, (_request, reply) => reply.code(spec.status).type(spec.contentType ?? 'application/json').send(spec.body));
}
app.get('/__ready', (_request, reply) => reply.type('application/json').send('{"status":"ready"}'));

const stop = () => {
  void app.close().then(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
await app.listen({ port, host });
