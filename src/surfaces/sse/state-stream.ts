import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { FeedItem } from '../../domain/protocol/feed.js';
import type { Hub } from '../../hub.js';
import { Newcomers, type FanoutLogger, type FeedFanout } from '../realtime/feed-fanout.js';
import { ErrorBody } from '../http/errors.js';
import { operationIdFor } from '../http/bind-operation.js';
import { callerOf } from '../http/credentials.js';
import { osApiStreamCredential } from '../http/os-api/options.js';
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
 * The open state streams of every OS API base. Each batch of changes is framed once and written
 * to each client in one write; a client that joined after some of the batch was already in its
 * snapshot (or its resumed events) gets only the rest.
 */
export class StateStreamClients {
  private readonly clients = new Set<SseStream>();
  private readonly newcomers = new Newcomers<SseStream>();

  constructor(
    fanout: FeedFanout,
    private readonly log: FanoutLogger,
  ) {
    fanout.subscribe(this, (items) => this.deliver(items));
  }

  get size(): number {
    return this.clients.size;
  }

  add(stream: SseStream, seenSeq: number): void {
    this.clients.add(stream);
    this.newcomers.add(stream, seenSeq);
    stream.onClose(() => {
      this.clients.delete(stream);
      this.newcomers.remove(stream);
    });
  }

  private deliver(items: readonly FeedItem[]): void {
    if (this.clients.size === 0 || items.length === 0) return;
    let text: string | undefined;
    for (const stream of this.clients) {
      try {
        const seen = this.newcomers.seenBy(stream);
        const rest = seen === undefined || seen < items[0]!.seq ? items : items.filter((item) => item.seq > seen);
        if (rest === items) stream.sendFrame((text ??= items.map(feedFrame).join('')));
        else if (rest.length > 0) stream.sendFrame(rest.map(feedFrame).join(''));
      } catch (err) {
        // One bad stream (or frame) must not stop the others.
        this.log.error({ err }, 'state stream delivery failed; stream closed');
        stream.close();
      }
    }
    this.newcomers.clear();
  }
}

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
      const { devices } = (await hub.operations.invoke(hub.ops.state.snapshot.name, {}, callerOf(request, osApiStreamCredential))) as {
        devices: Record<string, { state: Record<string, unknown> }>;
      };
      const stream = new SseStream(reply, { heartbeatMs: hub.config.ssePingIntervalMs, maxBufferedBytes: hub.config.sseMaxBufferBytes });
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
      stateStreams.add(stream, hub.feed.lastSeq);
    },
  );
};
