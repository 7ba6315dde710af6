import type { Static } from 'typebox';
import type { Clock } from '../../platform/clock.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { defineModule } from '../../platform/module.js';
import type { ScopedCaller } from '../auth/scoped-caller.js';
import type { DeviceService } from '../devices/device-service.js';
import { matterErrors } from './errors.js';
import { matterOperations, type MatterStatusSchema } from './operations.js';
import type { MatterRuntime } from './ports.js';

/** The admin's choice, kept with the other documents (MATTER in the environment overrides it). */
export interface MatterSettings {
  id: 'matter';
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

type MatterStatus = Static<typeof MatterStatusSchema>;

/**
 * Whether the bridge runs, and the bridge itself: MATTER=on|off decides when set; otherwise the
 * admin's choice (off until an admin turns it on). The runtime loads matter.js only when the
 * bridge starts, so a hub without it starts as fast as before.
 */
export class MatterBridgeControl {
  private saved: MatterSettings | undefined;
  private changing: Promise<void> = Promise.resolve();

  constructor(
    private readonly o: { mode: 'on' | 'off' | undefined; runtime: MatterRuntime; settings: DocumentRepository<MatterSettings>; clock: Clock },
  ) {}

  get enabled(): boolean {
    return this.o.mode !== undefined ? this.o.mode === 'on' : (this.saved?.enabled ?? false);
  }

  async load(): Promise<void> {
    this.saved = await this.o.settings.get('matter');
  }

  /** Starts the bridge in the background when it is to run: matter.js takes seconds to load. */
  startIfEnabled(): void {
    if (this.enabled) void this.serialized(() => this.o.runtime.start());
  }

  async setEnabled(enabled: boolean): Promise<void> {
    if (this.o.mode !== undefined) throw matterErrors.MATTER_SET_BY_ENVIRONMENT({ mode: this.o.mode });
    const now = this.o.clock.now();
    const doc: MatterSettings = { id: 'matter', enabled, createdAt: this.saved?.createdAt ?? now, updatedAt: now };
    await this.o.settings.save(doc, now);
    this.saved = doc;
    await this.serialized(() => (enabled ? this.o.runtime.start() : this.o.runtime.stop()));
  }

  status(): MatterStatus {
    const s = this.o.runtime.status();
    return { enabled: this.enabled, setBy: this.o.mode !== undefined ? 'environment' : 'admin', ...s };
  }

  async openCommissioningWindow(): Promise<void> {
    this.requireRunning();
    await this.o.runtime.openCommissioningWindow();
  }

  async removeFabric(fabricIndex: number): Promise<void> {
    this.requireRunning();
    if (!this.o.runtime.status().fabrics.some((f) => f.fabricIndex === fabricIndex)) throw matterErrors.MATTER_FABRIC_NOT_FOUND({ fabricIndex }, { details: { fabricIndex } });
    await this.o.runtime.removeFabric(fabricIndex);
  }

  private requireRunning(): void {
    if (!this.enabled) throw matterErrors.MATTER_OFF();
    const s = this.o.runtime.status();
    if (s.state !== 'running') throw matterErrors.MATTER_NOT_RUNNING({ reason: s.state === 'standby' ? `another instance of the cluster (${s.holder ?? 'unknown'}) runs it` : (s.error ?? `it is ${s.state}`) });
  }

  /** One start or stop at a time: an admin's on and off in quick succession end in the last one. */
  private serialized(work: () => Promise<void>): Promise<void> {
    const next = this.changing.then(work, work);
    this.changing = next.catch(() => undefined);
    return next;
  }

  async stop(): Promise<void> {
    await this.serialized(() => this.o.runtime.stop());
  }
}

export interface MatterModuleDeps {
  control: MatterBridgeControl;
  caller: ScopedCaller;
  devices: DeviceService;
}

/** The Matter bridge (docs/matter.md): the hub's devices in Apple Home, Google Home, Alexa and SmartThings. */
export function matterModule({ control, caller, devices }: MatterModuleDeps) {
  return defineModule({
    name: 'matter',
    needs: ['storage', 'auth', 'devices', 'drivers', 'fleet'],
    operations: { matter: matterOperations(control, devices) },
    control,
    async start() {
      await control.load();
      control.startIfEnabled();
    },
    async stop() {
      await control.stop();
      await caller.stop();
    },
  });
}
