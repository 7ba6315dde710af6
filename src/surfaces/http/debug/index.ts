import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import { SseStream } from '../../sse/sse.js';
import { adminCredential } from '../admin/credential.js';
import { bindOperation } from '../bind-operation.js';
import { callerOf, streamCredential } from '../credentials.js';
import { ErrorBody } from '../errors.js';

export interface RouteEntry {
  method: string;
  url: string;
  access: string;
}

/** Event payloads as JSON (Maps and the like become plain objects; a cycle would be a bug elsewhere). */
function plain(payload: unknown): unknown {
  return JSON.parse(JSON.stringify(payload, (_k, v: unknown) => (v instanceof Map ? Object.fromEntries(v) : v)) ?? 'null');
}

/**
 * `/dev`, registered only when NODE_ENV=development (in production every /dev path is 404): the
 * route table, the configuration with secrets masked, the in-memory state and registry, a live
 * tail of every domain event, and injecting a driver message as if a driver had sent it. Each
 * needs an admin account (bearer token, the admin panel's cookie, or `?accessToken=` for the tail),
 * except the route table, which says no more than /openapi.json.
 */
export const debugApi: FastifyPluginAsync<{ hub: Hub; routes: RouteEntry[] }> = async (app, { hub, routes }) => {
  const common = { tags: ['debug'] };
  app.get(
    '/routes',
    {
      config: { access: 'public' },
      schema: {
        ...common,
        security: [],
        summary: 'Every registered route with its access rule.',
        response: { 200: Type.Object({ routes: Type.Array(Type.Object({ method: Type.String(), url: Type.String(), access: Type.String() })) }), '4xx': ErrorBody },
      },
    },
    async () => ({ routes }),
  );
  const { debug } = hub.ops;
  const bind = (method: 'GET' | 'POST', url: string, operation: (typeof debug)[keyof typeof debug]) =>
    bindOperation(app, hub.operations, { method, url, operation, credential: adminCredential, tags: ['debug'], operationId: `dev.${operation.name}` });
  bind('GET', '/config', debug.config);
  bind('GET', '/state', debug.state);
  bind('POST', '/drivers/:driverKey/inject', debug.inject);

  const tailCredential = streamCredential({ admits: ['os_api_admin'] });
  app.get(
    '/events',
    {
      config: { access: 'stream' },
      schema: {
        ...common,
        summary: 'Server-sent events: every domain event as it happens (`event: <name>`, data its payload).',
        description: 'Admin token as `?accessToken=` (a stream token works) or a bearer header; `?type=device.` keeps the events whose name starts with it.',
        security: [],
        querystring: Type.Object({ accessToken: Type.Optional(Type.String()), type: Type.Optional(Type.String({ maxLength: 100 })) }),
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), '4xx': ErrorBody },
      },
    },
    async (request, reply) => {
      const query = request.query as { type?: string };
      const caller = callerOf(request, tailCredential);
      const { type } = (await hub.operations.invoke(debug.events.name, { text: { querystring: query.type === undefined ? {} : { type: query.type } } }, caller)) as { type: string | null };
      const stream = new SseStream(reply, { heartbeatMs: hub.config.ssePingIntervalMs, maxBufferedBytes: hub.config.sseMaxBufferBytes, timers: hub.timers });
      const owner = {};
      stream.send('ready', { type });
      hub.events.onAny(owner, (event, payload) => {
        const name = String(event);
        if (type && !name.startsWith(type)) return;
        stream.send(name, plain(payload));
      });
      stream.onClose(() => hub.events.removeOwner(owner));
    },
  );
};
