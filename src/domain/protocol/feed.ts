import type { Clock } from '../../platform/clock.js';
import type { LogicalDevice } from '../devices/model.js';
import type { DomainEventBus, DomainEvents } from '../events.js';

/** Domain events that reach hub-protocol clients (`hub:event`) and SSE streams (`event`). */
export const HUB_EVENT_TYPES: Record<string, string> = {
  'device.discovered': 'A driver reported a new device (or one came back).',
  'device.updated': 'Device metadata changed.',
  'device.removed': 'A driver removed a device.',
  'device.online_changed': 'A device went online or offline.',
  'device.command_executed': 'A driver answered a command (ok, duration).',
  'device.button_pressed': 'A button was pressed: {deviceId, press} (single, double or long).',
  'driver.connected': 'A driver instance registered.',
  'driver.disconnected': 'A driver instance went away.',
  'program.created': 'A program was created.',
  'program.updated': 'A program was changed.',
  'program.removed': 'A program was removed.',
  'program.run_started': 'A program run started.',
  'program.run_finished': 'A program run ended (succeeded, failed or cancelled).',
  'program.lighting_off': "A program's lighting was turned off.",
  'automation.triggered': "An automation's trigger fired: {programId, trigger} (before its conditions are evaluated).",
  'automation.finished': "An automation's evaluation ended: {programId, run}, the trace (a run's end, or skipped / not_passed with why).",
  'home.settings_updated': "The home's name, location, time zone or units changed.",
  'macro.created': 'A macro was created.',
  'macro.updated': 'A macro was changed.',
  'macro.removed': 'A macro was removed.',
  'macro.run_started': 'A macro run started.',
  'macro.run_finished': 'A macro run ended.',
  'action_map.created': 'A mapped control was created.',
  'action_map.updated': 'A mapped control was changed.',
  'action_map.removed': 'A mapped control was removed.',
  'action_map.triggered': 'A mapped control ran its command.',
  'space.created': 'A space was created.',
  'space.updated': 'A space was changed.',
  'space.removed': 'A space was removed.',
  'space.devices_assigned': 'Devices were assigned to a space.',
  'space.source_activated': "A space's remote source was activated.",
  'zone.created': 'A zone was created.',
  'zone.updated': 'A zone was changed.',
  'zone.removed': 'A zone was removed.',
  'zone.volume_changed': 'Volume was set on a zone.',
  'zone_group.created': 'A zone group was created.',
  'zone_group.updated': 'A zone group was changed.',
  'zone_group.removed': 'A zone group was removed.',
  'alert.submitted': 'An alert was submitted.',
  'design.published': 'A design profile was selected and published.',
  'preferences.updated': 'Home preferences or favorites changed.',
  'ir.transmitted': 'An IR signal was sent to an extender.',
  'program_semantics.updated': "A program's semantic tags changed.",
  'remote.pairing_requested': 'A remote asked to pair: shows the code to confirm or tell.',
  'remote.pairing_updated': 'A pairing request was paired, rejected or expired.',
  'remote.revoked': 'A paired remote was unpaired; its token no longer works.',
  'remote.key_pressed': 'A paired remote pressed a key (ok: whether what it maps to ran).',
  'media.endpoint_discovered': 'A media endpoint was found (or registered) for the first time.',
  'media.endpoint_updated': 'A media endpoint was relabelled, enabled, disabled or paired.',
  'media.cast_pairing': 'A cast pairing started, completed, failed or was cancelled.',
  'accessory_hub.plugin_progress': "An accessory hub plugin install or uninstall: npm's output lines, then the outcome.",
};

export interface HubEvent {
  type: string;
  at: number;
  data: unknown;
}

export type FeedItem =
  | { seq: number; kind: 'state'; data: { deviceId: string; state: Record<string, unknown> } }
  | { seq: number; kind: 'event'; data: HubEvent };

/**
 * The ordered stream of changes the real-time surfaces deliver: every device state change and
 * every hub event, numbered, with the most recent kept so that a reconnecting client can resume.
 */
export class ChangeFeed {
  private readonly ring: FeedItem[] = [];
  private seq = 0;
  private readonly subscribers = new Map<object, (item: FeedItem) => void>();
  private readonly owner = {};

  constructor(
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    /** A device as every surface shows it (with its class, attributes and reading), for the events that carry one. */
    private readonly presentDevice: (device: LogicalDevice) => unknown = (device) => device,
    private readonly capacity = 2000,
  ) {}

  start(): void {
    this.events.on(this.owner, 'device.state_changed', (e) => this.push('state', { deviceId: e.deviceId, state: e.state }));
    for (const type of Object.keys(HUB_EVENT_TYPES)) {
      this.events.on(this.owner, type as keyof DomainEvents, (payload) => {
        const { at, ...data } = (payload ?? {}) as { at?: number; device?: LogicalDevice };
        if (data.device && (type === 'device.discovered' || type === 'device.updated')) data.device = this.presentDevice(data.device) as LogicalDevice;
        this.push('event', { type, at: at ?? this.clock.now(), data });
      });
    }
  }

  stop(): void {
    this.events.removeOwner(this.owner);
    this.subscribers.clear();
  }

  get lastSeq(): number {
    return this.seq;
  }

  subscribe(owner: object, fn: (item: FeedItem) => void): void {
    this.subscribers.set(owner, fn);
  }

  unsubscribe(owner: object): void {
    this.subscribers.delete(owner);
  }

  /** Items after `seq`, or undefined when some of them are no longer kept. */
  since(seq: number): FeedItem[] | undefined {
    if (seq > this.seq) return undefined;
    if (seq === this.seq) return [];
    const oldest = this.ring[0]?.seq ?? this.seq + 1;
    if (seq < oldest - 1) return undefined;
    return this.ring.filter((item) => item.seq > seq);
  }

  private push(kind: FeedItem['kind'], data: FeedItem['data']): void {
    // Made here, numbered, in the order of keys it always had: not a spread copy of an item made
    // only to be copied (one copy fewer per state change and per event).
    const full = { kind, data, seq: ++this.seq } as FeedItem;
    this.ring.push(full);
    if (this.ring.length > this.capacity * 1.25) this.ring.splice(0, this.ring.length - this.capacity);
    for (const [owner, fn] of this.subscribers) {
      try {
        fn(full);
      } catch {
        // A subscriber that throws is removed: one broken stream must not stop the others.
        this.subscribers.delete(owner);
      }
    }
  }
}
