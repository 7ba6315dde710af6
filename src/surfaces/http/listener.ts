import { randomUUID } from 'node:crypto';
import dns from 'node:dns/promises';
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

/** Fastify's keep-alive time-out for the servers it creates itself; a `serverFactory` sets its own. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** Requests held while the service loads; past this, further ones are turned away. */
const MAX_HELD = 1000;
const HEALTHY = JSON.stringify({ status: 'ok' });

/**
 * The service's HTTP server, listening before the rest of the service has loaded.
 *
 * A hub restarted by its supervisor is down until its port answers, and loading the service's
 * modules and registering its routes takes most of a second of CPU (docs/benchmarks.md,
 * "Start-up"). So main.ts listens first, with only this module loaded: `GET /healthz` answers
 * 200 at once, as CONTRACT.md has it ("once the HTTP server is up"), and every other request,
 * and every upgrade that nothing else listens for yet, is held until Fastify is ready and then
 * handed to it. A client that connects during the start gets the answer it would have had a
 * moment later instead of a refused connection (Fastify then holds it until the hub has started,
 * up to STARTUP_HOLD_MS, and only then answers `503 NOT_READY`).
 *
 * Fastify gets the server through its `serverFactory` option; `open()` hands requests to it.
 */
export class HttpListener {
  readonly server: http.Server;
  /** Fastify's request handler, from `serverFactory`. */
  #handler: RequestListener | undefined;
  #open = false;
  readonly #held: [IncomingMessage, ServerResponse][] = [];
  readonly #heldUpgrades: [IncomingMessage, Duplex, Buffer][] = [];
  /** Further addresses of `localhost`, bound as Fastify's `listen` binds them. */
  readonly #secondary: http.Server[] = [];

  constructor() {
    this.server = this.#createServer();
    this.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      // Once Socket.IO and the driver WebSocket listen for upgrades, they take them.
      if (this.#open || this.server.listenerCount('upgrade') > 1) return;
      if (this.#heldUpgrades.length >= MAX_HELD) {
        socket.destroy();
        return;
      }
      this.#heldUpgrades.push([request, socket, head]);
    });
  }

  /** For Fastify's `serverFactory` option. */
  readonly serverFactory = (handler: RequestListener): http.Server => {
    this.#handler = handler;
    return this.server;
  };

  get listening(): boolean {
    return this.server.listening;
  }

  /** Requests and upgrades waiting for `open`. */
  get held(): number {
    return this.#held.length + this.#heldUpgrades.length;
  }

  /** Listens as Fastify's `listen` does: on `localhost`, on every address it resolves to. */
  async listen(port: number, host: string): Promise<AddressInfo> {
    await listenOn(this.server, port, host);
    const primary = this.server.address() as AddressInfo;
    if (host === 'localhost') {
      const addresses = await dns.lookup(host, { all: true }).catch(() => []);
      for (const { address } of addresses) {
        if (address === primary.address) continue;
        const secondary = this.#createServer();
        try {
          await listenOn(secondary, primary.port, address);
          this.#secondary.push(secondary);
        } catch {
          // As in Fastify: the first address is enough (::1 may not be configured).
        }
      }
    }
    return primary;
  }

  /** From now on Fastify answers every request; the held ones go to it first. Returns how many were held. */
  open(): number {
    if (!this.#handler) throw new Error('HttpListener.open() before Fastify took the server (serverFactory)');
    const held = this.held;
    this.#open = true;
    for (const [request, response] of this.#held.splice(0)) this.#handler(request, response);
    for (const [request, socket, head] of this.#heldUpgrades.splice(0)) this.server.emit('upgrade', request, socket, head);
    return held;
  }

  /** Stops listening and closes every connection, held ones included. */
  async close(): Promise<void> {
    for (const [, response] of this.#held.splice(0)) response.destroy();
    for (const [, socket] of this.#heldUpgrades.splice(0)) socket.destroy();
    await Promise.all(
      [this.server, ...this.#secondary].map(async (server) => {
        server.closeAllConnections();
        if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      }),
    );
  }

  #createServer(): http.Server {
    const server = http.createServer((request, response) => this.#request(request, response));
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    server.requestTimeout = 0;
    server.setTimeout(0);
    return server;
  }

  #request(request: IncomingMessage, response: ServerResponse): void {
    if (this.#open) return this.#handler!(request, response);
    if (isHealthCheck(request)) return answerHealthy(request, response);
    if (this.#held.length >= MAX_HELD) {
      response.destroy();
      return;
    }
    this.#held.push([request, response]);
  }
}

function isHealthCheck(request: IncomingMessage): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const url = request.url ?? '';
  const query = url.indexOf('?');
  return (query === -1 ? url : url.slice(0, query)) === '/healthz';
}

/** The answer Fastify's `/healthz` route gives, request id header included. */
function answerHealthy(request: IncomingMessage, response: ServerResponse): void {
  const given = request.headers['x-request-id'];
  response.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(HEALTHY),
    'x-request-id': typeof given === 'string' && given !== '' ? given : randomUUID(),
  });
  response.end(request.method === 'HEAD' ? undefined : HEALTHY);
}

function listenOn(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen({ port, host }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
