import { randomUUID } from 'node:crypto';
import type { DeviceRegistry } from '../domain/devices/device-registry.js';
import type { LogicalDevice } from '../domain/devices/model.js';
import type { DriverManager, RemoteDrivers } from '../domain/drivers/driver-manager.js';
import { driverErrors } from '../domain/drivers/errors.js';
import type { TimerHandle, Timers } from '../platform/clock.js';
import { DomainError, wireFailure, type WireFailure } from '../platform/errors.js';
import type { PeerTable } from './membership.js';
import type { ClusterMessage, ClusterSender, MessageOf } from './messages.js';

/** A command sent to the instance holding its driver's link, waiting for the answer. */
interface Forwarded {
  peer: string;
  driverKey: string;
  resolve(result: unknown): void;
  reject(err: DomainError): void;
  timer: TimerHandle;
}

export interface ForwardingDeps {
  channel: ClusterSender;
  peers: PeerTable;
  /** Commands forwarded here run on this instance's own links. */
  registry: Pick<DeviceRegistry, 'find'>;
  drivers: Pick<DriverManager, 'linkOf' | 'execute'>;
  timers: Timers;
  settings: {
    /** The time-out of a command whose driver link sets none (ACTION_TIMEOUT_MS). */
    actionTimeoutMs: number;
    /** Added to a forwarded command's time-out before the forwarding instance gives up on the answer. */
    forwardMarginMs: number;
  };
}

/**
 * Device commands across instances: a command for a driver linked to another instance goes
 * there (a directed message, answered the same way) and waits with the holder's time-out and a
 * margin; a command another instance forwarded here runs on this instance's link.
 */
export class CommandForwarding {
  private readonly forwarded = new Map<string, Forwarded>();
  private forwardedTotal = 0;
  private ranTotal = 0;

  constructor(private readonly deps: ForwardingDeps) {}

  /** Commands for drivers linked to other instances (the driver manager's remote route). */
  readonly remoteDrivers: RemoteDrivers = {
    holds: (driverKey) => this.deps.peers.holding(driverKey) !== undefined,
    execute: (device, command, params, options) => this.forward(device, command, params, options),
  };

  /** Commands forwarded since start, still waiting, and run here for others since start. */
  stats(): { forwarded: number; forwardedPending: number; ranForOthers: number } {
    return { forwarded: this.forwardedTotal, forwardedPending: this.forwarded.size, ranForOthers: this.ranTotal };
  }

  /** The answer to a command this instance forwarded. */
  settle(m: MessageOf<'res'>): void {
    const f = this.forwarded.get(m.id);
    if (!f) return;
    this.forwarded.delete(m.id);
    this.deps.timers.clearTimeout(f.timer);
    if (m.ok) f.resolve(m.result);
    else f.reject(wireFailure.revive(m.error));
  }

  /** An instance left: the commands waiting on it fail at once. */
  peerGone(id: string): void {
    for (const [requestId, f] of this.forwarded) {
      if (f.peer !== id) continue;
      this.deps.timers.clearTimeout(f.timer);
      this.forwarded.delete(requestId);
      f.reject(driverErrors.DRIVER_DISCONNECTED({ driverKey: f.driverKey }, { details: { driverKey: f.driverKey, instance: id } }));
    }
  }

  /** This instance stops: every command waiting fails. */
  stop(): void {
    for (const [id, f] of this.forwarded) {
      this.deps.timers.clearTimeout(f.timer);
      f.reject(driverErrors.DRIVER_DISCONNECTED({ driverKey: f.driverKey }, { details: { driverKey: f.driverKey } }));
      this.forwarded.delete(id);
    }
  }

  /** Runs a command another instance forwarded here, and answers it. */
  run(from: string, m: MessageOf<'cmd'>): void {
    const { registry, drivers, channel } = this.deps;
    const reply = (answer: { ok: true; result: unknown } | { ok: false; error: WireFailure }) => channel.send(from, { t: 'res', id: m.id, ...answer } as ClusterMessage);
    const device = registry.find(m.deviceId);
    // Only a driver linked here: a command never bounces between instances.
    if (!device || !drivers.linkOf(device.driverKey)) {
      const key = device?.driverKey ?? 'unknown';
      const err = driverErrors.DRIVER_OFFLINE({ driverKey: key }, { details: { deviceId: m.deviceId, driverKey: key }, retryAfterSeconds: 5 });
      return reply({ ok: false, error: wireFailure.from(err) });
    }
    this.ranTotal++;
    // Not awaited: the next message (another command, a state change) is handled meanwhile.
    drivers.execute(device, m.command, m.params, { ...(m.timeoutMs !== undefined ? { timeoutMs: m.timeoutMs } : {}), ...(m.kind ? { kind: m.kind } : {}) }).then(
      (result) => reply({ ok: true, result: result ?? null }),
      (err: unknown) => {
        const e = err instanceof DomainError ? err : driverErrors.DRIVER_ERROR({ driverMessage: (err as Error)?.message ?? String(err) });
        reply({ ok: false, error: wireFailure.from(e) });
      },
    );
  }

  private forward(device: LogicalDevice, command: string, params: Record<string, unknown>, options: { timeoutMs?: number; kind?: 'ACTION' | 'COMMAND_EXECUTE' }): Promise<unknown> {
    const { peers, settings, timers, channel } = this.deps;
    const holding = peers.holding(device.driverKey);
    if (!holding) return Promise.reject(driverErrors.DRIVER_OFFLINE({ driverKey: device.driverKey }, { details: { deviceId: device.id, driverKey: device.driverKey }, retryAfterSeconds: 5 }));
    const peer = holding.id;
    const id = randomUUID();
    this.forwardedTotal++;
    // The holder times the command out as it would its own; this instance waits that long and a margin.
    const waitMs = (options.timeoutMs ?? holding.link.actionTimeoutMs ?? settings.actionTimeoutMs) + settings.forwardMarginMs;
    return new Promise((resolve, reject) => {
      const timer = timers.setTimeout(() => {
        this.forwarded.delete(id);
        reject(driverErrors.DRIVER_TIMEOUT({ driverKey: device.driverKey, command, timeoutMs: waitMs }, { details: { deviceId: device.id, command, timeoutMs: waitMs, instance: peer } }));
      }, waitMs);
      this.forwarded.set(id, { peer, driverKey: device.driverKey, resolve, reject, timer });
      channel.send(peer, { t: 'cmd', id, deviceId: device.id, command, params, ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}), ...(options.kind ? { kind: options.kind } : {}) });
    });
  }
}
