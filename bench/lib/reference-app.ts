import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createLogger } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { OneLinePerRequest, requestChildLogger } from '../../src/surfaces/http/request-log.js';

/**
 * The Fastify instance of a reference server: the service's logger, its one-line request log,
 * request loggers and ids, and nothing of the service itself. `/__ready` answers once it listens, and
 * SIGTERM/SIGINT close it.
 */
export function referenceApp(onStop: () => void = () => {}): { app: FastifyInstance; listen(): Promise<void> } {
  const config = loadConfig();
  const app = Fastify({
    loggerInstance: createLogger(config) as FastifyBaseLogger,
    logController: new OneLinePerRequest(config.slowRequestMs),
    childLoggerFactory: requestChildLogger,
    genReqId: () => randomUUID(),
    requestIdHeader: 'x-request-id',
  });
  app.get('/__ready', (_request, reply) => reply.type('application/json').send('{"status":"ready"}'));
  const stop = () => {
    onStop();
    void app.close().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const port = Number(process.env.PORT);
  if (!Number.isInteger(port) || port <= 0) {
    process.stderr.write('reference server: PORT is required\n');
    process.exit(2);
  }
  return { app, listen: async () => void (await app.listen({ port, host: process.env.HOST ?? '127.0.0.1' })) };
}
