import type { MatterConfig } from '../../config.js';
import type { DeviceService } from '../../domain/devices/device-service.js';
import type { DriverPlacement } from '../../domain/drivers/local/driver-process.js';
import type { DomainEventBus } from '../../domain/events.js';
import type { MatterRuntime, MatterRuntimeStatus } from '../../domain/matter/ports.js';
import { messageOf } from '../../platform/network-failures.js';
import type { RunningMatterBridge } from './bridge.js';

/** The lease a cluster's instances compete for: one of them runs the bridge (one node, one fabric table). */
export const MATTER_LEASE = 'builtin:matter';

export interface MatterLinkOptions {
  config: MatterConfig;
  /** DATA_DIR/matter. */
  storageDir: string;
  hubId(): string;
  devices: DeviceService;
  events: DomainEventBus;
  command(deviceId: string, command: string, params: Record<string, unknown>, from: string): Promise<unknown>;
  placement?: DriverPlacement;
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
  private holder: string | undefined;
  private unwatch: (() => void) | undefined;
  private wanted = false;

  constructor(private readonly o: MatterLinkOptions) {}

  async start(): Promise<void> {
    this.wanted = true;
    const placement = this.o.placement;
    if (placement && !this.unwatch) this.unwatch = placement.watch(() => void this.rebalance());
    await this.rebalance();
  }

  private async rebalance(): Promise<void> {
    if (!this.wanted) return;
    const placement = this.o.placement;
    if (placement) {
      if (this.bridge && placement.holds(MATTER_LEASE)) return;
      if (this.bridge) {
        this.o.log.warn({}, 'Matter: the bridge lease went to another instance; stopping the bridge here');
        await this.close();
      }
      const claim = await placement.claim(MATTER_LEASE).catch((err: unknown) => ({ held: false as const, holder: `unknown (${messageOf(err)})` }));
      if (!claim.held) {
        this.state = 'standby';
        this.holder = claim.holder;
        return;
      }
      this.holder = undefined;
    }
    if (this.bridge || this.state === 'starting') return;
    this.state = 'starting';
    this.error = undefined;
    try {
      const { startMatterBridge } = await import('./bridge.js');
      const o = this.o;
      this.bridge = await startMatterBridge({
        storageDir: o.storageDir,
        hubId: o.hubId(),
        port: o.config.port,
        bind: o.config.bind,
        mdnsInterface: o.config.mdnsInterface,
        devices: () => o.devices.list(),
        device: (id) => {
          const device = o.devices.registry.find(id);
          return device ? o.devices.view(device) : undefined;
        },
        events: o.events,
        command: o.command,
        log: o.log,
      });
      this.state = 'running';
      // Stopped while it started: it goes again, and so does the lease.
      if (!this.wanted) {
        await this.close();
        if (this.o.placement) await this.o.placement.release(MATTER_LEASE).catch(() => undefined);
      }
    } catch (err) {
      this.state = 'failed';
      const message = messageOf(err);
      this.error = /EADDRINUSE|already in use/i.test(message) ? `UDP port ${this.o.config.port} is in use by another program (MATTER_PORT chooses another)` : `the bridge did not start: ${message}`;
      this.o.log.error({ err: message }, 'Matter bridge not started');
      if (this.o.placement) await this.o.placement.release(MATTER_LEASE).catch(() => undefined);
    }
  }

  private async close(): Promise<void> {
    const bridge = this.bridge;
    this.bridge = undefined;
    if (bridge) await bridge.close().catch((err: unknown) => this.o.log.warn({ err: messageOf(err) }, 'Matter: the bridge did not close cleanly'));
    this.state = 'off';
  }

  async stop(): Promise<void> {
    this.wanted = false;
    this.unwatch?.();
    this.unwatch = undefined;
    const held = this.bridge !== undefined;
    await this.close();
    this.holder = undefined;
    this.error = undefined;
    if (held && this.o.placement) await this.o.placement.release(MATTER_LEASE).catch(() => undefined);
  }

  status(): MatterRuntimeStatus {
    const b = this.bridge;
    const devices = b?.devices() ?? [];
    const pairing = b?.pairing();
    return {
      state: this.state,
      ...(this.error ? { error: this.error } : {}),
      ...(this.holder ? { holder: this.holder } : {}),
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
