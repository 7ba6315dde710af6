import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import type { TimerHandle, Timers } from '../platform/clock.js';
import { pgDriver } from '../storage/pg-driver.js';
import type { Database } from '../storage/schema.js';

/** NOTIFY carries at most 8000 bytes; a batch stays under this, a larger message goes through the outbox. */
const NOTIFY_LIMIT = 7500;
/**
 * An outbox row's `created_at`, and the time its prune measures against (the membership's
 * heartbeat, membership.ts): wall time, not the hub's injected clock. Every instance prunes the
 * shared table by its own wall clock; a row stamped on a test's ManualClock would be pruned (or
 * kept) by another time scale than it was written on.
 */
export const outboxStamp = (): number => Date.now();
const BROADCAST = 'hcs_cluster';
const direct = (nodeId: string) => `hcs_node_${nodeId}`;

export interface Envelope<M> {
  /** The sending instance. */
  from: string;
  m: M;
}

const envelope = <M>(from: string, message: M): string => JSON.stringify({ from, m: message } satisfies Envelope<M>);

/**
 * Broadcasts `message` from instance `from` within a transaction, as a `PgChannel` of that
 * instance would (the same envelope, the outbox past NOTIFY's limit): PostgreSQL delivers it when,
 * and only when, the transaction commits (an acknowledged write is never missing from the others'
 * caches). It needs no connection of the channel's own, so the replicated writes use it before
 * the channel exists (replication.ts, `ClusterWrites`).
 */
export async function sendWithin<M>(trx: Kysely<Database>, from: string, message: M): Promise<void> {
  let payload = `[${envelope(from, message)}]`;
  if (Buffer.byteLength(payload) > NOTIFY_LIMIT) {
    const row = await trx.insertInto('cluster_outbox').values({ created_at: outboxStamp(), payload }).returning('id').executeTakeFirstOrThrow();
    payload = JSON.stringify({ o: Number(row.id) });
  }
  await sql`select pg_notify(${BROADCAST}, ${payload})`.execute(trx);
}

export interface ChannelLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

interface Outgoing {
  channel: string;
  text: string;
}

/**
 * Messages between the instances of a cluster over PostgreSQL's LISTEN/NOTIFY: broadcast to all,
 * or to one instance. One connection listens, one publishes: messages from one instance arrive
 * in the order it sent them, and are handled one at a time in that order. Messages queued in the
 * same tick go out in as few NOTIFYs as fit (one statement, one transaction); one that alone
 * exceeds NOTIFY's payload limit is written to `cluster_outbox` and its row id is notified.
 */
export class PgChannel<M> {
  private listener: pg.Client | undefined;
  private publisher: pg.Client | undefined;
  private queue: Outgoing[] = [];
  private flushing: Promise<void> | undefined;
  private inbox: Promise<void> = Promise.resolve();
  private held: Array<{ payload: string }> | undefined = [];
  private reconnectTimer: TimerHandle | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly nodeId: string,
    private readonly pool: pg.Pool,
    private readonly handle: (envelope: Envelope<M>) => void | Promise<void>,
    private readonly log: ChannelLogger,
    private readonly timers: Timers,
    /** After the listening connection was lost and made again: what was sent meanwhile is gone. */
    private readonly onReconnected: () => void,
  ) {}

  /** Listens (messages wait until `open`), and connects the publisher. */
  async start(): Promise<void> {
    await this.listen();
    this.publisher = await this.connect();
  }

  /** Hands over what arrived since `start`, then every message as it comes. */
  open(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const n of held) this.receive(n.payload);
  }

  send(to: string | undefined, message: M): void {
    if (this.closed) return;
    this.queue.push({ channel: to === undefined ? BROADCAST : direct(to), text: this.envelope(message) });
    // What is queued within this turn of the event loop goes out together: a turn, not a time, so
    // not the injected Timers (a test's ManualClock would hold every message until time moved).
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  private envelope(message: M): string {
    return envelope(this.nodeId, message);
  }

  /** Resolves when everything sent so far was handed to PostgreSQL. */
  async drained(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  async stop(): Promise<void> {
    await this.drained().catch(() => undefined);
    this.closed = true;
    this.timers.clearTimeout(this.reconnectTimer);
    await this.inbox.catch(() => undefined);
    await Promise.all([this.listener?.end().catch(() => undefined), this.publisher?.end().catch(() => undefined)]);
  }

  private async connect(): Promise<pg.Client> {
    const client = new (pgDriver().Client)({ connectionString: this.url });
    client.on('error', () => undefined);
    // A publisher the server dropped is let go at once, not found broken at the next message.
    client.on('end', () => {
      if (this.publisher === client) this.publisher = undefined;
    });
    await client.connect();
    return client;
  }

  private async listen(): Promise<void> {
    const client = await this.connect();
    client.on('notification', (n) => {
      if (n.payload === undefined) return;
      if (this.held) this.held.push({ payload: n.payload });
      else this.receive(n.payload);
    });
    client.on('end', () => {
      if (this.closed || this.listener !== client) return;
      this.log.warn({}, 'cluster channel: the listening connection closed; reconnecting');
      this.scheduleReconnect();
    });
    await client.query(`LISTEN ${BROADCAST}`);
    await client.query(`LISTEN ${direct(this.nodeId)}`);
    this.listener = client;
  }

  private scheduleReconnect(): void {
    this.reconnectTimer = this.timers.setTimeout(() => {
      this.listen().then(
        () => this.onReconnected(),
        (err: unknown) => {
          this.log.error({ err }, 'cluster channel: reconnecting failed; trying again');
          this.scheduleReconnect();
        },
      );
    }, 1000);
  }

  private receive(payload: string): void {
    this.inbox = this.inbox.then(async () => {
      try {
        let parsed = JSON.parse(payload) as Envelope<M>[] | { o: number };
        if (!Array.isArray(parsed)) {
          const row = await this.pool.query<{ payload: string }>('select payload from cluster_outbox where id = $1', [parsed.o]);
          if (!row.rows[0]) return this.log.warn({ id: parsed.o }, 'cluster channel: an outbox message is gone (pruned)');
          parsed = JSON.parse(row.rows[0].payload) as Envelope<M>[];
        }
        for (const envelope of parsed as Envelope<M>[]) {
          if (envelope.from === this.nodeId) continue;
          try {
            await this.handle(envelope);
          } catch (err) {
            this.log.error({ err, from: envelope.from }, 'cluster channel: handling a message failed');
          }
        }
      } catch (err) {
        this.log.error({ err }, 'cluster channel: an unreadable notification was dropped');
      }
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0 && !this.closed) {
        const batch = this.queue;
        this.queue = [];
        const notifies: Outgoing[] = [];
        let current: { channel: string; parts: string[]; bytes: number } | undefined;
        const close = () => {
          if (current) notifies.push({ channel: current.channel, text: `[${current.parts.join(',')}]` });
          current = undefined;
        };
        for (const item of batch) {
          const bytes = Buffer.byteLength(item.text);
          if (bytes + 2 > NOTIFY_LIMIT) {
            close();
            const id = await this.toOutbox(`[${item.text}]`);
            notifies.push({ channel: item.channel, text: JSON.stringify({ o: id }) });
            continue;
          }
          if (current && (current.channel !== item.channel || current.bytes + bytes + 1 > NOTIFY_LIMIT)) close();
          current ??= { channel: item.channel, parts: [], bytes: 2 };
          current.parts.push(item.text);
          current.bytes += bytes + 1;
        }
        close();
        const values: string[] = [];
        const calls = notifies.map((n, i) => {
          values.push(n.channel, n.text);
          return `pg_notify($${2 * i + 1}, $${2 * i + 2})`;
        });
        await this.publish(`select ${calls.join(', ')}`, values);
      }
    } catch (err) {
      this.log.error({ err }, 'cluster channel: publishing failed; the messages are lost');
    } finally {
      this.flushing = undefined;
    }
  }

  private async toOutbox(payload: string): Promise<number> {
    const result = await this.publishQuery<{ id: number }>('insert into cluster_outbox (created_at, payload) values ($1, $2) returning id', [outboxStamp(), payload]);
    return Number(result.rows[0]!.id);
  }

  private async publish(text: string, values: string[]): Promise<void> {
    await this.publishQuery(text, values);
  }

  /** On the publishing connection; one that broke is made again and the statement tried once more. */
  private async publishQuery<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    for (let attempt = 1; ; attempt++) {
      try {
        this.publisher ??= await this.connect();
        return await this.publisher.query<R>(text, values);
      } catch (err) {
        const broken = this.publisher;
        this.publisher = undefined;
        await broken?.end().catch(() => undefined);
        if (attempt >= 2 || this.closed) throw err;
      }
    }
  }
}
