import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { SseStream } from '../../sse/sse.js';
import { callerOf } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { operationIdFor, osApiStreamCredential, osRoutes, type OsApiOptions } from './options.js';

const AI_EVENTS = ['status', 'progress', 'token', 'answer', 'action', 'error'];

/** The assistant (docs/ai.md). */
export const aiRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const { ai } = hub.ops;
  const route = osRoutes(app, hub, base, ['ai']);
  route('GET', '/ai/status', ai.status);
  route('GET', '/ai/health', ai.health);
  route('GET', '/ai/models', ai.models);
  route('POST', '/ai/install', ai.install, { successStatus: 202 });
  route('DELETE', '/ai/uninstall', ai.uninstall);
  route('POST', '/ai/start', ai.start);
  route('POST', '/ai/stop', ai.stop);
  route('GET', '/ai/suggestions', ai.suggestions);
  route('POST', '/ai/prompt', ai.prompt, {
    queryFields: ['sync'],
    respond: {
      schema: ai.prompt.output,
      shape(result, _request, reply) {
        // At once (202, the rest on /ai/events), or the whole answer (200) with ?sync=true.
        reply.code((result as { status: string }).status === 'accepted' ? 202 : 200);
        return result;
      },
    },
  });
  app.get(
    '/ai/events',
    {
      config: { access: 'stream' },
      schema: {
        tags: ['ai'],
        operationId: operationIdFor(base, 'ai.events'),
        summary: 'Server-sent events of the assistant: status, progress, token, answer, action and error, each with its requestId; a caller gets its own prompts\' events and the status.',
        security: [],
        querystring: Type.Object({ accessToken: Type.Optional(Type.String()) }),
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), '4xx': ErrorBody },
      },
    },
    async (request, reply) => {
      const me = (await hub.operations.invoke(hub.ops.auth.me.name, {}, callerOf(request, osApiStreamCredential))) as { userId: string };
      const stream = new SseStream(reply, { heartbeatMs: hub.config.ssePingIntervalMs, maxBufferedBytes: hub.config.sseMaxBufferBytes, timers: hub.timers });
      const owner = {};
      stream.onClose(() => hub.events.removeOwner(owner));
      stream.send('ready', {});
      hub.events.on(owner, 'ai.event', (e) => {
        if (!AI_EVENTS.includes(e.type) || (e.userId !== null && e.userId !== me.userId)) return;
        stream.send(e.type, { requestId: e.requestId, ...(e.data as object), at: e.at });
      });
    },
  );
};
