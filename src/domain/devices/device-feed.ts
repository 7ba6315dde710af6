import type { DomainEventBus } from '../events.js';
import type { ButtonPress } from './capabilities.js';

/** What changed among the hub's devices within one turn. */
export interface DeviceBatch {
  /** Devices whose view changed (state, online, record) or that went, each once, in first-change order. */
  deviceIds: string[];
  /** Button presses, in the order they came. */
  presses: Array<{ deviceId: string; press: ButtonPress }>;
}

/**
 * The hub's devices as an exposure to another ecosystem follows them (the MQTT export, the Matter
 * bridge and its process): every change of a device's view is gathered for one event-loop turn
 * and handed over as one batch, a device once however often it changed, so a scene of 50 lights
 * or a burst of state from one sensor is one batch. `nextTurn` schedules the batch (the adapters'
 * setImmediate: the domain keeps no timers of its own).
 */
export class DeviceFeed {
  private readonly changed = new Set<string>();
  private readonly presses: DeviceBatch['presses'] = [];
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly events: DomainEventBus,
    private readonly nextTurn: (run: () => void) => void,
    private readonly onBatch: (batch: DeviceBatch) => void,
  ) {
    events.on(this, 'device.state_changed', ({ deviceId }) => this.mark(deviceId));
    events.on(this, 'device.online_changed', ({ deviceId }) => this.mark(deviceId));
    events.on(this, 'device.updated', ({ device }) => this.mark(device.id));
    events.on(this, 'device.discovered', ({ device }) => this.mark(device.id));
    events.on(this, 'device.removed', ({ deviceId }) => this.mark(deviceId));
    events.on(this, 'device.button_pressed', ({ deviceId, press }) => {
      this.presses.push({ deviceId, press });
      this.schedule();
    });
  }

  /** Counts a device as changed in this turn's batch (an exposure that reconnected marks them all). */
  mark(deviceId: string): void {
    this.changed.add(deviceId);
    this.schedule();
  }

  close(): void {
    this.closed = true;
    this.events.removeOwner(this);
    this.changed.clear();
    this.presses.length = 0;
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    this.nextTurn(() => {
      this.scheduled = false;
      if (this.closed) return;
      const batch = { deviceIds: [...this.changed], presses: this.presses.splice(0) };
      this.changed.clear();
      this.onBatch(batch);
    });
  }
}
