import { Type } from 'typebox';
import type { Timers } from './clock.js';

/** Where a log's entries are kept: a batch in one transaction, and pruning to the newest. */
export interface BatchStore<E> {
  /** Writes a batch of entries in one transaction. */
  insert(entries: ReadonlyArray<E>): Promise<void>;
  /** Keeps the newest `keep` entries; answers how many went. */
  prune(keep: number): Promise<number>;
}

export interface BatchedLogWarnings {
  warn(obj: object, msg: string): void;
}

export interface BatchedLogOptions<E> {
  /** What the log is called in its warnings ("audit entries", "activity entries"). */
  what: string;
  /** Entries kept at most; older ones are pruned now and then. */
  keep: number;
  /** Prune after about this many entries were written. */
  pruneEvery: number;
  /** Entries written in one transaction at most. */
  maxBatch: number;
  /** Entries waiting to be written at most; past this the oldest waiting ones are dropped (and counted in a warning). */
  maxQueued: number;
  /**
   * When a batch goes: at the end of the event-loop turn the first entry arrived in (`turn`), or
   * `ms` later on the injected timers, so that a steady stream of entries costs one transaction
   * per interval, not one per turn.
   */
  wait: 'turn' | { ms: number; timers: Timers };
  /**
   * Entries that repeat one still waiting (the same key) are merged into it instead of queued:
   * a burst of the same thing is one entry with a count.
   */
  coalesce?: { keyOf(entry: E): string; merge(waiting: E, repeat: E): void };
}

/**
 * An append-only log written behind its callers, in batches: the entries that arrive before a
 * batch goes, and while one is being written, go in one transaction, so a burst costs one disk
 * flush rather than one each. Recording never waits and never fails; a failed batch is logged
 * and the next ones are still written. Bounded in what waits and in what is kept. The audit
 * trail and the activity log are both one of these.
 */
export class BatchedLog<E> {
  private readonly queue: E[] = [];
  /**
   * The coalescing key of each queued entry, at the same index (when the log coalesces): kept
   * rather than asked of `keyOf` again when the entry leaves the queue, since under load most
   * entries leave in a batch written while more wait.
   */
  private readonly queuedKeys: string[] = [];
  private writing: Promise<void> | undefined;
  private dropped = 0;
  private written = 0;
  private flushNow: (() => void) | undefined;
  /** The waiting entries by their coalescing key. */
  private readonly waitingByKey = new Map<string, E>();

  constructor(
    private readonly store: BatchStore<E>,
    private readonly options: BatchedLogOptions<E>,
    private readonly log: BatchedLogWarnings,
  ) {}

  /** Entries recorded and not written yet. */
  get waiting(): number {
    return this.queue.length;
  }

  record(entry: E): void {
    const { coalesce } = this.options;
    if (coalesce) {
      const key = coalesce.keyOf(entry);
      const waiting = this.waitingByKey.get(key);
      if (waiting) return coalesce.merge(waiting, entry);
      this.waitingByKey.set(key, entry);
      this.queuedKeys.push(key);
    }
    if (this.queue.length >= this.options.maxQueued) {
      this.queue.shift();
      if (coalesce) this.waitingByKey.delete(this.queuedKeys.shift()!);
      this.dropped++;
    }
    this.queue.push(entry);
    this.writing ??= this.writeQueued();
    // A full batch need not wait for the interval.
    if (this.queue.length >= this.options.maxBatch) this.flushNow?.();
  }

  private waitForBatch(): Promise<void> {
    const { wait } = this.options;
    if (wait === 'turn') return new Promise<void>((resolve) => setImmediate(resolve));
    return new Promise<void>((resolve) => {
      const timer = wait.timers.setTimeout(() => finish(), wait.ms);
      const finish = () => {
        wait.timers.clearTimeout(timer);
        this.flushNow = undefined;
        resolve();
      };
      this.flushNow = finish;
    });
  }

  private async writeQueued(): Promise<void> {
    try {
      await this.waitForBatch();
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.options.maxBatch);
        const batchKeys = this.queuedKeys.splice(0, batch.length);
        // Being written: a repeat from now on is a new entry.
        if (this.queue.length === 0) this.waitingByKey.clear();
        else for (const key of batchKeys) this.waitingByKey.delete(key);
        try {
          await this.store.insert(batch);
          const before = this.written;
          this.written += batch.length;
          if (Math.floor(this.written / this.options.pruneEvery) > Math.floor(before / this.options.pruneEvery)) await this.store.prune(this.options.keep);
        } catch (err) {
          this.log.warn({ err, entries: batch.length }, `${this.options.what} could not be written`);
        }
      }
      if (this.dropped > 0) {
        this.log.warn({ dropped: this.dropped }, `${this.dropped} ${this.options.what} were dropped: more than ${this.options.maxQueued} waited to be written`);
        this.dropped = 0;
      }
    } finally {
      this.writing = undefined;
    }
  }

  /**
   * Writes what waits now, without waiting for the interval, and resolves when it is written (a
   * read right after a call sees it; a stop loses nothing).
   */
  async settled(): Promise<void> {
    for (let rounds = 0; this.writing && rounds < 100; rounds++) {
      this.flushNow?.();
      await this.writing;
    }
  }
}

/** The paging fields of a log's list operation: newest first, `limit` entries older than `before`. */
export const LOG_PAGE = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  before: Type.Optional(Type.Integer({ minimum: 1, description: 'Entries older than this id (the last id of the previous page).' })),
};

const SECRET = /pass(word)?|secret|token|key$|code$/i;
const MAX_TEXT = 200;

/** An input as it may be kept: secrets masked, long text and big uploads cut to a note of their size. */
export function maskInput(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length > MAX_TEXT ? `[${value.length} characters]` : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth > 3) return '[…]';
  if (Array.isArray(value)) return value.length > 20 ? `[${value.length} items]` : value.map((v) => maskInput(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = maskField(k, v, depth);
  return out;
}

/** One field of an object `maskInput` keeps (the object at `depth`): masked when its name looks secret. */
export function maskField(key: string, value: unknown, depth = 0): unknown {
  return SECRET.test(key) && value !== undefined && value !== null ? '********' : maskInput(value, depth + 1);
}
