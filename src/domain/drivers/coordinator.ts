import { Backoff, type BackoffPolicy } from '../../platform/backoff.js';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import { messageOf } from '../../platform/network-failures.js';
import { DeviceAvailability, type BuiltInDriverContext, type IntegrationStatus } from './builtin.js';

export interface PollingCoordinatorOptions {
  /** The integration, for the log. */
  name: string;
  /** Between two polls of a device that answers (ms). */
  intervalMs: number;
  /** Between two polls of a device that does not (platform/backoff.ts). */
  backoff: BackoffPolicy;
  clock: Clock;
  timers: Timers;
  /** Reads one device now (and reports what it read); rejects when the device could not be read. */
  update(id: string): Promise<void>;
  log?: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
}

interface Polled {
  timer: TimerHandle | null;
  /** When the timer is due (clock time). */
  due: number;
  running: Promise<void> | null;
  /** A refresh asked for while a poll ran: one more right after it. */
  again: boolean;
  backoff: Backoff;
}

/**
 * The one polling loop of the built-in integrations, in the manner of Home Assistant's
 * DataUpdateCoordinator: each device it is given is read (`update`) now, then every `intervalMs`
 * while it answers, and after a failure again after the back-off (longer with each failure in a
 * row, up to its cap). A failure marks the device unavailable, the next success available again,
 * through the integration's context (`setOnline`); a device is read by one poll at a time. A
 * command asks for a read now or soon (`refresh`), a failure or success learnt elsewhere (a
 * command that found the device gone, a push channel that came up) is told with `setUpdateError`
 * and `setUpdated`. Every wait is on the injected timers.
 */
export class PollingCoordinator {
  private readonly availability = new DeviceAvailability();
  private readonly polled = new Map<string, Polled>();
  private running = false;

  constructor(private readonly o: PollingCoordinatorOptions) {}

  /** Polls every device now, and from then on; presence goes to `context`. */
  start(context: Pick<BuiltInDriverContext, 'setOnline'>): void {
    this.availability.bind(context);
    this.running = true;
    for (const id of this.polled.keys()) this.refresh(id);
  }

  /** Stops polling (a poll in flight is let finish, and ignored). */
  stop(): void {
    this.running = false;
    this.availability.bind(null);
    for (const p of this.polled.values()) this.disarm(p);
  }

  get started(): boolean {
    return this.running;
  }

  /** Polls the device from now on (at once when started); a device polled already is left as it is. */
  add(id: string): void {
    if (this.polled.has(id)) return;
    this.polled.set(id, { timer: null, due: 0, running: null, again: false, backoff: new Backoff(this.o.backoff) });
    this.availability.track(id);
    if (this.running) this.refresh(id);
  }

  /** Stops polling the device and forgets it (a poll in flight is ignored). */
  remove(id: string): void {
    const p = this.polled.get(id);
    if (!p) return;
    this.disarm(p);
    this.polled.delete(id);
    this.availability.forget(id);
  }

  has(id: string): boolean {
    return this.polled.has(id);
  }

  /** Whether the device answered its last poll: null before the first. */
  available(id: string): boolean | null {
    return this.availability.get(id);
  }

  /** Failures in a row of the device's polls. */
  failures(id: string): number {
    return this.polled.get(id)?.backoff.failures ?? 0;
  }

  /**
   * Reads the device now (`delayMs` 0) or after `delayMs` (a command's effect shows a moment
   * later), unless a poll is due sooner; a refresh while one runs makes one more after it.
   */
  refresh(id: string, delayMs = 0): void {
    const p = this.polled.get(id);
    if (!p || !this.running) return;
    if (delayMs <= 0) return this.poll(id, p);
    if (p.running) {
      p.again = true;
      return;
    }
    const due = this.o.clock.now() + delayMs;
    if (p.timer && p.due <= due) return;
    this.arm(id, p, delayMs);
  }

  /** The device failed elsewhere (a command could not reach it, its channel dropped): unavailable now, read again after the back-off. */
  setUpdateError(id: string, err: unknown): void {
    const p = this.polled.get(id);
    if (!p || !this.running) return;
    this.unavailable(id, err);
    // A poll in flight decides when the next one is.
    if (!p.running) this.arm(id, p, p.backoff.fail());
  }

  /** The device answered elsewhere (a push, a command): available now, read again after the interval. */
  setUpdated(id: string): void {
    const p = this.polled.get(id);
    if (!p || !this.running) return;
    p.backoff.succeed();
    this.availableAgain(id);
    if (!p.running) this.arm(id, p, this.o.intervalMs);
  }

  status(): IntegrationStatus {
    return this.availability.status();
  }

  /** Resolves once no poll is in flight (tests, and a stop that waits). */
  async idle(): Promise<void> {
    for (;;) {
      const running = [...this.polled.values()].map((p) => p.running).filter((r): r is Promise<void> => r !== null);
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  private poll(id: string, p: Polled): void {
    if (p.running) {
      p.again = true;
      return;
    }
    this.disarm(p);
    const startedAt = this.o.clock.now();
    const run = (async () => this.o.update(id))().then(
      () => undefined,
      (err: unknown) => err ?? new Error('the poll failed'),
    );
    p.running = run.then((err) => {
      p.running = null;
      if (!this.running || this.polled.get(id) !== p) return;
      let delay: number;
      if (err === undefined) {
        p.backoff.succeed();
        this.availableAgain(id);
        // The interval keeps its phase: from the start of this poll, not its end.
        delay = Math.max(0, startedAt + this.o.intervalMs - this.o.clock.now());
      } else {
        // A device that failed rests for the back-off from the failure on.
        delay = p.backoff.fail();
        this.unavailable(id, err);
      }
      if (p.again) {
        p.again = false;
        return this.poll(id, p);
      }
      this.arm(id, p, delay);
    });
  }

  private unavailable(id: string, err: unknown): void {
    if (this.availability.set(id, false, err)) this.o.log?.warn({ integration: this.o.name, deviceId: id, err: messageOf(err) }, 'device did not answer; unavailable until it does');
  }

  private availableAgain(id: string): void {
    const was = this.availability.get(id);
    if (this.availability.set(id, true) && was === false) this.o.log?.debug({ integration: this.o.name, deviceId: id }, 'device answers again');
  }

  private arm(id: string, p: Polled, delayMs: number): void {
    this.disarm(p);
    p.due = this.o.clock.now() + delayMs;
    p.timer = this.o.timers.setTimeout(() => {
      p.timer = null;
      if (this.running && this.polled.get(id) === p) this.poll(id, p);
    }, delayMs);
  }

  private disarm(p: Polled): void {
    if (p.timer) this.o.timers.clearTimeout(p.timer);
    p.timer = null;
  }
}
