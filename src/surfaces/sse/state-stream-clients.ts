import type { FeedItem } from '../../domain/protocol/feed.js';
import { Newcomers, type FanoutLogger, type FeedFanout } from '../realtime/feed-fanout.js';
import { frame, type SseStream } from './sse.js';

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
  /** Whether each stream's token still authenticates; asked when credentials change. */
  private readonly admitted = new Map<SseStream, () => boolean>();
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

  add(stream: SseStream, seenSeq: number, stillAdmitted: () => boolean): void {
    this.clients.add(stream);
    this.admitted.set(stream, stillAdmitted);
    this.newcomers.add(stream, seenSeq);
    stream.onClose(() => {
      this.clients.delete(stream);
      this.admitted.delete(stream);
      this.newcomers.remove(stream);
    });
  }

  /** Ends the streams whose token no longer authenticates (revoked, its account disabled or removed). */
  closeRevoked(): void {
    for (const [stream, stillAdmitted] of this.admitted) if (!stillAdmitted()) stream.close();
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
