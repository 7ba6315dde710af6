import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../hub.js';
import { ErrorBody } from '../http/errors.js';
import { operationIdFor } from '../http/bind-operation.js';
import { callerOf } from '../http/credentials.js';
import { osApiStreamCredential } from '../http/os-api/options.js';
import { SseStream, lastEventIdOf } from './sse.js';
import { feedFrame, type StateStreamClients } from './state-stream-clients.js';

// The set of open streams lives in its own module: the OS API options name its type, and this
// route imports the OS API's stream credential, so one file holding both would be an import cycle.
export { StateStreamClients } from './state-stream-clients.js';

/**
 * `GET {base}/state/stream`: `ready`, then `snapshot` (or, for a client resuming with
 * Last-Event-ID whose missed events are still kept, those events), then `state`, `event` and
 * `ping` as they occur. Authenticated by `accessToken` in the query (stream or access token).
 */
export const stateStreamRoute: FastifyPluginAsync<{ hub: Hub; base: string; stateStreams: StateStreamClients }> = async (app, { hub, base, stateStreams }) => {
  app.get(
    '/state/stream',
    {
      config: { access: 'stream' },
      schema: {
        tags: ['state'],
        operationId: operationIdFor(base, 'state.stream'),
        summary: 'Server-sent events: ready, snapshot, then state, event and ping as they occur.',
        description:
          'Pass the token as `?accessToken=` (a stream token from POST /auth/stream-token, or an access token). Events carry ids; reconnect with `Last-Event-ID` (or `?lastEventId=`) to receive what was missed instead of a new snapshot, while it is still kept.',
        security: [],
        querystring: Type.Object({
          accessToken: Type.Optional(Type.String({ description: 'Stream token or access token.' })),
          lastEventId: Type.Optional(Type.String()),
        }),
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), '4xx': ErrorBody },
      },
    },
    async (request, reply) => {
      // The snapshot operation also authenticates the stream's token, before anything is sent.
      const caller = callerOf(request, osApiStreamCredential);
      const { devices } = (await hub.operations.invoke(hub.ops.state.snapshot.name, {}, caller)) as {
        devices: Record<string, { state: Record<string, unknown> }>;
      };
      const stream = new SseStream(reply, { heartbeatMs: hub.config.ssePingIntervalMs, maxBufferedBytes: hub.config.sseMaxBufferBytes, timers: hub.timers });
      stream.send('ready', {});
      const resumeFrom = Number(lastEventIdOf(request));
      const missed = Number.isInteger(resumeFrom) && resumeFrom >= 0 ? hub.feed.since(resumeFrom) : undefined;
      if (missed) {
        for (const item of missed) if (!stream.sendFrame(feedFrame(item))) return;
      } else {
        const snapshot: Record<string, unknown> = {};
        for (const id in devices) snapshot[id] = devices[id]!.state;
        stream.send('snapshot', snapshot, hub.feed.lastSeq);
      }
      stateStreams.add(stream, hub.feed.lastSeq, () => hub.operations.stillAuthenticates(caller.credential));
    },
  );
};
