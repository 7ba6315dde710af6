/**
 * Reference for the HTTP benchmark (`BENCH_HTTP_SUBJECT=fastify-reference`): Fastify with the
 * service's own logger and one-line request log, answering the same fixed bodies as the bare
 * baseline, and nothing else (no auth, hooks, schemas or database). It measures what the stack
 * the service is built on costs on this machine, so that the service's ratio can be read
 * against the stack's own.
 *
 * Started like bench/baseline-server.ts, with BASELINE_ROUTES_FILE, PORT, HOST and LOG_LEVEL.
 */
import fs from 'node:fs';
import { referenceApp } from './lib/reference-app.js';

interface RouteSpec {
  status: number;
  body: string;
  contentType?: string;
}

const routesFile = process.env.BASELINE_ROUTES_FILE;
if (!routesFile) {
  process.stderr.write('reference-fastify-server: BASELINE_ROUTES_FILE is required\n');
  process.exit(2);
}

const { app, listen } = referenceApp();
const specs = JSON.parse(fs.readFileSync(routesFile, 'utf8')) as Record<string, RouteSpec>;
for (const [pathname, spec] of Object.entries(specs)) {
  app.get(pathname, (_request, reply) => reply.code(spec.status).type(spec.contentType ?? 'application/json').send(spec.body));
}
await listen();
