import { performance } from 'node:perf_hooks';
import type { ChangeFeed, FeedItem } from '../../domain/protocol/feed.js';

export type FeedBatchListener = (items: readonly FeedItem[]) => void;

export interface FanoutLogger {
  error(obj: unknown, msg: string): void;
}

/**
 * Hands the change feed to the stream surfaces in batches, so that a burst of changes costs
 * each connected client one socket write instead of one per change. A change that arrives when
 * nothing was delivered for `windowMs` goes out at once (on the next turn of the event loop);
 * under load, deliveries happen at most once per window. Every change is still its own SSE
 * event and Socket.IO packet, in feed order: only the writes are merged.
 *
 * Measured with 1,000 stream clients (docs/benchmarks.md): a write per change per client is
 * the cost that saturates the hub, not building the frames.
 *
 * The window is wall time on Node's timers, not the hub's injected clock: it paces real socket
 * writes, and on a test's manual clock it would hold every stream until the test moved time.
 */
export class FeedFanout {
  private readonly listeners = new Map<object, FeedBatchListener>();
  /** The listeners that can say whether they have anyone to deliver to (`subscribe`'s `hasClients`). */
  private readonly interest = new Map<object, () => boolean>();
  private readonly owner = {};
  private pending: FeedItem[] = [];
  private scheduled: NodeJS.Immediate | NodeJS.Timeout | undefined;
  private lastDelivery = -Infinity;
  private started = false;

  constructor(
    private readonly feed: ChangeFeed,
    private readonly windowMs: number,
    private readonly log: FanoutLogger,
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.feed.subscribe(this.owner, (item) => this.enqueue(item));
  }

  stop(): void {
    this.started = false;
    this.feed.unsubscribe(this.owner);
    if (this.scheduled) {
      clearTimeout(this.scheduled as NodeJS.Timeout);
      clearImmediate(this.scheduled as NodeJS.Immediate);
    }
    this.scheduled = undefined;
    this.pending = [];
    this.listeners.clear();
    this.interest.clear();
  }

  /**
   * `hasClients`, when given, says whether the listener has anyone to deliver to now: while no
   * listener has, changes are not queued and no delivery is scheduled. Nothing is lost by it: a
   * client that comes later starts from the feed position it joined at (`Newcomers`), so a change
   * from before it came would not have been sent to it anyway.
   */
  subscribe(owner: object, listener: FeedBatchListener, hasClients?: () => boolean): void {
    this.listeners.set(owner, listener);
    if (hasClients) this.interest.set(owner, hasClients);
    else this.interest.delete(owner);
  }

  unsubscribe(owner: object): void {
    this.listeners.delete(owner);
    this.interest.delete(owner);
  }

  /** Whether some listener may deliver a change now (one that cannot tell always may). */
  private wanted(): boolean {
    if (this.interest.size < this.listeners.size) return true;
    for (const hasClients of this.interest.values()) if (hasClients()) return true;
    return false;
  }

  private enqueue(item: FeedItem): void {
    if (!this.wanted()) return;
    this.pending.push(item);
    if (this.scheduled) return;
    const wait = this.lastDelivery + this.windowMs - performance.now();
    this.scheduled = wait > 0 ? setTimeout(this.deliver, wait) : setImmediate(this.deliver);
  }

  private readonly deliver = (): void => {
    this.scheduled = undefined;
    this.lastDelivery = performance.now();
    const items = this.pending;
    this.pending = [];
    for (const listener of this.listeners.values()) {
      try {
        listener(items);
      } catch (err) {
        // A listener is a whole surface: it keeps receiving, and the others go on.
        this.log.error({ err, items: items.length }, 'stream delivery failed');
      }
    }
  };
}

/**
 * Clients that joined since the last delivery, with the feed position they already have (their
 * snapshot, resumed events, or simply the moment they came). A batch can still hold changes
 * from before they joined; those are not sent to them. Cleared after each delivery, since
 * every later change is new to everyone.
 */
export class Newcomers<K> {
  private readonly since = new Map<K, number>();

  add(key: K, seenSeq: number): void {
    this.since.set(key, seenSeq);
  }

  remove(key: K): void {
    this.since.delete(key);
  }

  /** The feed position `key` already has, or undefined when every item is new to it. */
  seenBy(key: K): number | undefined {
    return this.since.get(key);
  }

  /** The newcomers that already have this item. */
  having(item: FeedItem): K[] {
    const keys: K[] = [];
    for (const [key, seen] of this.since) if (seen >= item.seq) keys.push(key);
    return keys;
  }

  clear(): void {
    this.since.clear();
  }
}
