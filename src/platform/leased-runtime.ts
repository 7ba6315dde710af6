import { messageOf } from './network-failures.js';

/** The cluster's leases as a once-per-cluster runtime sees them (the cluster's placement implements it). */
export interface RuntimeLeases {
  /** Takes or keeps the lease for this instance; when another holds it, names that one. */
  claim(lease: string): Promise<{ held: true } | { held: false; holder: string }>;
  /** Whether this instance still holds the lease (false once it lapsed or was taken over). */
  holds(lease: string): boolean;
  release(lease: string): Promise<void>;
  /** Calls `listener` whenever leases may have changed hands; returns the unsubscription. */
  watch(listener: () => void): () => void;
}

export interface LeasedRuntimeOptions {
  /** `builtin:mqtt`: one instance of a cluster holds it and runs the work. */
  lease: string;
  /** The cluster's leases; absent (one instance alone, SQLite), the work simply runs. */
  leases?: RuntimeLeases;
  /** What runs, for the log: `MQTT`. */
  label: string;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Whether the work runs here now. */
  running(): boolean;
  /** Starts the work here (the lease is held). A failure is the work's own status; it may call `release`. */
  activate(): Promise<void>;
  /** Stops the work here. */
  deactivate(): Promise<void>;
}

/**
 * What runs once per cluster (the MQTT link, the Matter bridge), on the instance that holds its
 * lease: it takes the lease when free and runs the work, stands by naming the holder when another
 * instance has it, stops the work when the lease went elsewhere, and gives the lease back when it
 * stops. Starts and hand-overs run one at a time, so a lease event during a start waits for it.
 */
export class LeasedRuntime {
  private stopped = true;
  private changing: Promise<void> = Promise.resolve();
  private unwatch: (() => void) | undefined;
  private standingBy: string | undefined;

  constructor(private readonly o: LeasedRuntimeOptions) {}

  /** The instance that runs the work while this one stands by. */
  get holder(): string | undefined {
    return this.standingBy;
  }

  async start(): Promise<void> {
    this.stopped = false;
    if (this.o.leases && !this.unwatch) this.unwatch = this.o.leases.watch(() => void this.rebalance());
    await this.rebalance();
  }

  /** Takes the lease when free (or keeps it), runs the work where it is held, stops it where it was lost. */
  rebalance(): Promise<void> {
    return this.serialized(async () => {
      if (this.stopped) return;
      const { leases, lease, label } = this.o;
      if (!leases) {
        if (!this.o.running()) await this.o.activate();
        return;
      }
      if (this.o.running() && leases.holds(lease)) return;
      if (this.o.running()) {
        this.o.log.warn({}, `${label}: the lease went to another instance; stopping it here`);
        await this.o.deactivate();
      }
      const claim = await leases.claim(lease).catch((err: unknown) => {
        this.o.log.warn({ err: messageOf(err) }, `${label}: could not take the lease; standing by`);
        return { held: false as const, holder: 'unknown (the database did not answer)' };
      });
      if (!claim.held) {
        this.standingBy = claim.holder;
        return;
      }
      this.standingBy = undefined;
      await this.o.activate();
    });
  }

  /** Gives the lease back without stopping (a start that failed: another instance may do better). */
  async release(): Promise<void> {
    await this.o.leases?.release(this.o.lease).catch(() => undefined);
  }

  /**
   * Stops the work at once, even while a start is under way (a hub that stops does not wait for an
   * install or a slow start), and gives the lease back; a start under way is undone when it is done.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unwatch?.();
    this.unwatch = undefined;
    this.standingBy = undefined;
    const wasRunning = this.o.running();
    await this.o.deactivate();
    if (wasRunning) await this.release();
    void this.serialized(async () => {
      if (!this.stopped || !this.o.running()) return;
      await this.o.deactivate();
      await this.release();
    });
  }

  private serialized(work: () => Promise<void>): Promise<void> {
    const next = this.changing.then(work, work);
    this.changing = next.catch((err: unknown) => this.o.log.error({ err: messageOf(err) }, `${this.o.label}: could not change hands`));
    return this.changing;
  }
}
