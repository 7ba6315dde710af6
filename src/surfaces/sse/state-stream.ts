import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { FeedItem } from '../../domain/protocol/feed.js';
import type { Hub } from '../../hub.js';
import { ErrorBody } from '../http/errors.js';
import { operationIdFor } from '../http/os-api/options.js';
import { SseStream, frame, lastEventIdOf } from './sse.js';

const framed = new WeakMap<FeedItem, string>();

/** One frame per feed item, shared by every client: 1,000 streams cost one JSON.stringify. */
export function feedFrame(item: FeedItem): string {
  let text = framed.get(item);
  if (!text) {
    text = frame(item.kind === 'state' ? 'state' : 'event', item.data, item.seq);
    framed.set(item, text);
  }
  return text;
}

/**
 * `GET {base}/state/stream`: `ready`, then `snapshot` (or, for a client resuming with
 * Last-Event-ID whose missed events are still kept, those events), then `state`, `event` and
 * `ping` as they occur. Authenticated by `accessToken` in the query (stream or access token).
 */
export const stateStreamRoute: FastifyPluginAsync<{ hub: Hub; base: string }> = async (app, { hub, base }) => {
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
      const stream = new SseStream(reply, { heartbeatMs: hub.config.ssePingIntervalMs, maxBufferedBytes: hub.config.sseMaxBufferBytes });
      const owner = {};
      stream.onClose(() => hub.feed.unsubscribe(owner));
      stream.send('ready', {});
      const resumeFrom = Number(lastEventIdOf(request));
      const missed = Number.isInteger(resumeFrom) && resumeFrom >= 0 ? hub.feed.since(resumeFrom) : undefined;
      if (missed) {
        for (const item of missed) if (!stream.sendFrame(feedFrame(item))) return;
      } else {
        const snapshot: Record<string, unknown> = {};
        for (const device of hub.devices.registry.list()) snapshot[device.id] = hub.devices.state.get(device.id).state;
        stream.send('snapshot', snapshot, hub.feed.lastSeq);
      }
      hub.feed.subscribe(owner, (item) => {
        if (!stream.sendFrame(feedFrame(item))) hub.feed.unsubscribe(owner);
      });
    },
  );
};
