import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { ErrorBody } from '../errors.js';

/** The Socket.IO browser client, from the socket.io-client package the service depends on; read once, on first use. */
let socketIoClient: Buffer | undefined;
function socketIoClientScript(): Buffer {
  // The minified build sits beside package.json; the package exports only package.json and the full build.
  socketIoClient ??= readFileSync(path.join(path.dirname(createRequire(import.meta.url).resolve('socket.io-client/package.json')), 'dist', 'socket.io.min.js'));
  return socketIoClient;
}

/** Scripts the panel's pages load (public: they hold no data). */
export function panelAssets(app: FastifyInstance): void {
  app.get(
    '/assets/socket.io.min.js',
    {
      config: { access: 'public' },
      schema: { tags: ['admin'], summary: 'The Socket.IO browser client the panel pages use.', security: [], produces: ['text/javascript'], response: { 200: Type.String(), '4xx': ErrorBody } },
    },
    async (_request, reply) => reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400').send(socketIoClientScript()),
  );
}
