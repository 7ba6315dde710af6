/**
 * Baseline for the HTTP benchmarks: a bare node:http server that answers fixed JSON bodies on
 * fixed paths, and nothing else. It measures what Node's HTTP stack costs on this machine, so
 * that the service's figures can be read as a ratio of the ceiling.
 *
 * Started by bench/lib/baseline.ts with BASELINE_ROUTES_FILE (JSON: { "<path>": { status, body,
 * contentType? } }), PORT and HOST. GET /__ready answers 200 once it listens.
 */
import fs from 'node:fs';
import http from 'node:http';

interface RouteSpec {
  status: number;
  body: string;
  contentType?: string;
}

interface Prepared {
  status: number;
  body: Buffer;
  headers: Record<string, string>;
}

const routesFile = process.env.BASELINE_ROUTES_FILE;
const port = Number(process.env.PORT);
const host = process.env.HOST ?? '127.0.0.1';
if (!routesFile || !Number.isInteger(port) || port <= 0) {
  process.stderr.write('baseline-server: BASELINE_ROUTES_FILE and PORT are required\n');
  process.exit(2);
}

const specs = JSON.parse(fs.readFileSync(routesFile, 'utf8')) as Record<string, RouteSpec>;
const routes = new Map<string, Prepared>();
for (const [pathname, spec] of Object.entries(specs)) {
  const body = Buffer.from(spec.body, 'utf8');
  routes.set(pathname, {
    status: spec.status,
    body,
    headers: { 'content-type': spec.contentType ?? 'application/json', 'content-length': String(body.length) },
  });
}
const notFound = Buffer.from(JSON.stringify({ error: { code: 'ROUTE_NOT_FOUND', message: 'No such route.' } }));
const ready = Buffer.from(JSON.stringify({ status: 'ready' }));

const server = http.createServer((req, res) => {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  const route = req.method === 'GET' || req.method === 'HEAD' ? routes.get(pathname) : undefined;
  if (route) {
    res.writeHead(route.status, route.headers);
    res.end(route.body);
  } else if (pathname === '/__ready') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(ready.length) });
    res.end(ready);
  } else {
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': String(notFound.length) });
    res.end(notFound);
  }
});
// Same keep-alive window as Fastify's default, so that neither side drops idle connections sooner.
server.keepAliveTimeout = 72_000;

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

server.listen(port, host, () => {
  process.stdout.write(`baseline listening on http://${host}:${port} with ${routes.size} routes\n`);
});
