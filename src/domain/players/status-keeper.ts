import type { DomainEventBus } from '../events.js';
import type { PersistedStatus } from './model.js';
import type { PlayerService } from './player-service.js';

type RuntimeStatus = Omit<PersistedStatus, 'origin'>;

export interface StatusKeeperLog {
  warn(obj: object, msg: string): void;
}

/**
 * Keeps each linked player's persisted status true to what the runtime saw, so that once its
 * device is gone (driver disconnected, device removed, hub restarted) the roster still answers
 * when it was last seen. The signal is the state authority's `device.online_changed`: it turns
 * true when a driver reports the device (discovery or state) and false when the driver's link
 * drops or the driver removes the device, which is exactly what makes a player `runtime`.
 */
export class StatusKeeper {
  constructor(
    private readonly players: PlayerService,
    private readonly events: DomainEventBus,
    private readonly clock: { now(): number },
    private readonly log: StatusKeeperLog,
  ) {}

  /** Starts watching; first corrects what the last run left behind. */
  async start(): Promise<void> {
    const now = this.clock.now();
    // A device live already (a driver was quicker than this module) was seen now; a runtime
    // `online` left by a run that ended without stopping (a crash) is no longer true, but when
    // it was last seen still is.
    await this.players.recordRuntimeStatus(
      () => this.players.list().filter((p) => p.logicalDeviceId),
      (p) => {
        if (this.players.roster.isLive(p.logicalDeviceId!)) return { status: 'online', lastSeenAt: now };
        const current = p.persistedStatus;
        return current?.origin === 'runtime' && current.status === 'online' ? { status: 'offline', lastSeenAt: current.lastSeenAt } : undefined;
      },
    );
    this.events.on(this, 'device.online_changed', ({ deviceId, online, at }) => {
      // Going offline at `at` means it was seen online until then.
      this.record(deviceId, () => ({ status: online ? 'online' : 'offline', lastSeenAt: at }));
    }, { origin: 'local' });
    this.events.on(this, 'device.removed', ({ deviceId, at }) => {
      this.record(deviceId, (current) => (current?.status === 'online' ? { status: 'offline', lastSeenAt: at } : undefined));
    }, { origin: 'local' });
  }

  /** Stops watching; players still live were seen until now, and the hub will not see them after. */
  async stop(): Promise<void> {
    this.events.removeOwner(this);
    const now = this.clock.now();
    await this.players.recordRuntimeStatus(
      () => this.players.list().filter((p) => p.logicalDeviceId && this.players.roster.isLive(p.logicalDeviceId)),
      () => ({ status: 'offline', lastSeenAt: now }),
    );
    await this.players.settled();
  }

  private record(deviceId: string, decide: (current: PersistedStatus | undefined) => RuntimeStatus | undefined): void {
    this.players
      .recordRuntimeStatus(
        () => this.players.linkedTo(deviceId),
        (p) => decide(p.persistedStatus),
      )
      .catch((err: unknown) => this.log.warn({ err, deviceId }, 'recording a player status failed'));
  }
}
