import type { MatterConfig } from '../../config.js';
import type { DeviceService } from '../../domain/devices/device-service.js';
import type { DriverPlacement } from '../../domain/drivers/local/driver-process.js';
import type { DomainEventBus } from '../../domain/events.js';
import type { MatterRuntime, MatterRuntimeStatus } from '../../domain/matter/ports.js';
import { Backoff } from '../../platform/backoff.js';
import { LeasedRuntime } from '../../platform/leased-runtime.js';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import { messageOf } from '../../platform/network-failures.js';
import type { ProcessRunner } from '../../platform/processes.js';
import type { Requirements } from '../../platform/requirements.js';
import { resolveFromRequirementFolders } from '../requirements/resolution.js';
import type { RunningMatterBridge } from './bridge.js';

/** The lease a cluster's instances compete for: one of them runs the bridge (one node, one fabric table). */
export const MATTER_LEASE = 'builtin:matter';

const FIRST_RESTART_MS = 1000;
const MAX_RESTART_MS = 30_000;
/** Running this long resets the back-off. */
const STABLE_MS = 60_000;

export interface MatterLinkOptions {
  config: MatterConfig;
  /** DATA_DIR/matter. */
  storageDir: string;
  hubId(): string;
  devices: DeviceService;
  events: DomainEventBus;
  command(deviceId: string, command: string, params: Record<string, unknown>, from: string): Promise<unknown>;
  placement?: DriverPlacement;
  /**
   * Runs the bridge in a process of its own (child-bridge.ts): what matter.js throws or pauses
   * for is not the hub's. Absent, it runs in the hub's process (MATTER_PROCESS=inline).
   */
  processes?: ProcessRunner;
  /** matter.js (@matter/main, @matter/nodejs): the hub's own, or installed under DATA_DIR the first time the bridge starts. */
  requirements?: Requirements;
  clock: Clock;
  timers: Timers;
  /** An admin notice: the bridge process ended and is restarted. */
  notice?(message: string): void;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/**
 * Runs the Matter bridge (bridge.ts, loaded on first start so that a hub without Matter never
 * loads matter.js), on the instance of a cluster that holds its lease. A failure to start (the
 * port in use, storage that cannot be read) is a status, never a crash or a retry loop.
 */
export class MatterLink implements MatterRuntime {
  private bridge: RunningMatterBridge | undefined;
  private state: MatterRuntimeStatus['state'] = 'off';
  private error: string | undefined;
  private wanted = false;
  private readonly backoff = new Backoff({ initialMs: FIRST_RESTART_MS, maxMs: MAX_RESTART_MS });
  private restartTimer: TimerHandle | undefined;
  private startedAt = 0;
  private restarts = 0;

  /** The bridge runs on the instance of a cluster that holds `builtin:matter` (one node, one fabric table). */
  private readonly lease: LeasedRuntime;

  constructor(private readonly o: MatterLinkOptions) {
    this.lease = new LeasedRuntime({
      lease: MATTER_LEASE,
      ...(o.placement ? { leases: o.placement } : {}),
      label: 'Matter bridge',
      log: o.log,
      running: () => this.bridge !== undefined,
      activate: () => this.activate(),
      deactivate: () => this.close(),
    });
  }

  async start(): Promise<void> {
    this.wanted = true;
    await this.lease.start();
  }

  /** Starts the bridge here (the lease is held, or there is no cluster). A failure is a status, and gives the lease back. */
  private async activate(): Promise<void> {
    if (!this.wanted) return;
    if (this.bridge) return;
    this.state = 'starting';
    this.error = undefined;
    try {
      const o = this.o;
      // A home box installed with `npm ci --omit=dev` gets matter.js now (the status shows npm's progress).
      const folders = o.requirements ? await o.requirements.ensure() : [];
      if (!this.wanted) {
        this.state = 'off';
        return;
      }
      const options = {
        storageDir: o.storageDir,
        hubId: o.hubId(),
        port: o.config.port,
        bind: o.config.bind,
        mdnsInterface: o.config.mdnsInterface,
        devices: () => o.devices.list(),
        device: (id: string) => {
          const device = o.devices.registry.find(id);
          return device ? o.devices.view(device) : undefined;
        },
        events: o.events,
        command: o.command,
        log: o.log,
        clock: o.clock,
        timers: o.timers,
      };
      if (o.processes) {
        const { startChildBridge } = await import('./child-bridge.js');
        const processes = o.processes;
        const bridge = await startChildBridge({ ...options, processes, requirementFolders: folders, onExit: (_exit, why) => this.crashed(bridge, why) });
        this.bridge = bridge;
      } else {
        resolveFromRequirementFolders(folders);
        const { startMatterBridge } = await import('./bridge.js');
        this.bridge = await startMatterBridge(options);
      }
      this.state = 'running';
      this.startedAt = o.clock.now();
    } catch (err) {
      this.state = 'failed';
      const message = messageOf(err);
      this.error = /EADDRINUSE|already in use/i.test(message) ? `UDP port ${this.o.config.port} is in use by another program (MATTER_PORT chooses another)` : `the bridge did not start: ${message}`;
      this.o.log.error({ err: message }, 'Matter bridge not started');
      await this.lease.release();
    }
  }

  /**
   * The bridge process ended by itself (a crash, a kill): a status, an admin notice and a restart
   * with the hub's back-off (1 s doubling to 30 s, reset after a minute of running). The node's
   * storage is kept, so it comes back with its identity and pairings, and controllers reconnect.
   */
  private crashed(bridge: RunningMatterBridge, why: string): void {
    if (this.bridge !== bridge) return;
    this.bridge = undefined;
    if (!this.wanted) return;
    if (this.o.clock.now() - this.startedAt >= STABLE_MS) this.backoff.succeed();
    const delay = this.backoff.fail();
    this.restarts++;
    this.state = 'failed';
    this.error = `the bridge process ${why}; restarting it in ${Math.round(delay / 1000)} s`;
    this.o.log.error({ why, restartInMs: delay }, 'Matter bridge process ended; restarting it');
    this.o.notice?.(`The Matter bridge process ${why}. It is restarted in ${Math.round(delay / 1000)} s with its pairings; controllers reconnect by themselves.`);
    this.restartTimer = this.o.timers.setTimeout(() => {
      this.restartTimer = undefined;
      void this.lease.rebalance();
    }, delay);
  }

  private async close(): Promise<void> {
    const bridge = this.bridge;
    this.bridge = undefined;
    if (bridge) await bridge.close().catch((err: unknown) => this.o.log.warn({ err: messageOf(err) }, 'Matter: the bridge did not close cleanly'));
    this.state = 'off';
  }

  async stop(): Promise<void> {
    this.wanted = false;
    if (this.restartTimer) this.o.timers.clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.lease.stop();
    this.error = undefined;
  }

  status(): MatterRuntimeStatus {
    const b = this.bridge;
    const devices = b?.devices() ?? [];
    const pairing = b?.pairing();
    return {
      // Standing by while another instance of the cluster runs the bridge.
      state: this.lease.holder && !b ? 'standby' : this.state,
      ...(this.error ? { error: this.error } : {}),
      runsIn: this.o.processes ? 'process' : 'hub',
      ...(this.o.requirements ? { requirements: this.o.requirements.status() } : {}),
      ...(b?.pid !== undefined ? { pid: b.pid } : {}),
      restarts: this.restarts,
      ...(this.lease.holder ? { holder: this.lease.holder } : {}),
      port: b?.port ?? this.o.config.port,
      commissioned: b?.commissioned() ?? false,
      fabrics: b?.fabrics() ?? [],
      ...(pairing ? { pairing } : {}),
      devices,
      unmapped: b?.unmapped() ?? [],
    };
  }

  async openCommissioningWindow(): Promise<void> {
    await this.bridge?.openCommissioningWindow();
  }

  async removeFabric(fabricIndex: number): Promise<void> {
    await this.bridge?.removeFabric(fabricIndex);
  }
}
