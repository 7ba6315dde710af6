/**
 * Typed, synchronous in-process event bus. Every domain change is published here and every
 * stream subscribes here. Subscriptions belong to an owner so that a feature that stops removes
 * all of its listeners in one call, the way Zigbee2MQTT's extensions do.
 */
export type EventMap = object;
type Listener<P> = (payload: P) => void;

/**
 * Where a change happened: `local` in this process, `replica` on another instance of a cluster
 * sharing the database, re-emitted here so that this instance's streams and caches follow it.
 */
export type EventOrigin = 'local' | 'replica';

export interface ListenOptions {
  /**
   * Only changes of this origin. `local`: for listeners that act on a change (run an automation,
   * write a record), which the instance where it happened does once for the whole cluster.
   * `replica`: to follow on this instance what the local path did directly.
   */
  origin?: EventOrigin;
}

export interface EventBusLogger {
  error(obj: unknown, msg: string): void;
}

/** A listener to every event: its name and payload. */
export type AnyListener<Events extends EventMap> = <K extends keyof Events>(event: K, payload: Events[K], origin: EventOrigin) => void;

export class EventBus<Events extends EventMap> {
  private readonly listeners = new Map<keyof Events, Set<{ owner: object; fn: Listener<never>; origin: EventOrigin | undefined }>>();
  private readonly anyListeners = new Set<{ owner: object; fn: AnyListener<Events> }>();

  constructor(private readonly log?: EventBusLogger) {}

  on<K extends keyof Events>(owner: object, event: K, fn: Listener<Events[K]>, options: ListenOptions = {}): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    const entry = { owner, fn: fn as Listener<never>, origin: options.origin };
    set.add(entry);
    return () => set.delete(entry);
  }

  /** Listens to every event (a debugging tail, not a way around typed subscriptions). */
  onAny(owner: object, fn: AnyListener<Events>): () => void {
    const entry = { owner, fn };
    this.anyListeners.add(entry);
    return () => this.anyListeners.delete(entry);
  }

  emit<K extends keyof Events>(event: K, payload: Events[K], origin: EventOrigin = 'local'): void {
    for (const { fn } of this.anyListeners) {
      try {
        fn(event, payload, origin);
      } catch (err) {
        this.log?.error({ err, event: String(event) }, 'event listener failed');
      }
    }
    const set = this.listeners.get(event);
    if (!set) return;
    for (const { fn, origin: only } of set) {
      if (only !== undefined && only !== origin) continue;
      // One faulty listener must not keep the event from the others, nor fail the emitter.
      try {
        (fn as Listener<Events[K]>)(payload);
      } catch (err) {
        this.log?.error({ err, event: String(event) }, 'event listener failed');
      }
    }
  }

  /** Removes every listener registered by `owner`. */
  removeOwner(owner: object): void {
    for (const set of this.listeners.values()) {
      for (const entry of set) if (entry.owner === owner) set.delete(entry);
    }
    for (const entry of this.anyListeners) if (entry.owner === owner) this.anyListeners.delete(entry);
  }

  removeAllListeners(): void {
    this.listeners.clear();
    this.anyListeners.clear();
  }

  listenerCount(event: keyof Events): number {
    return this.listeners.get(event)?.size ?? 0;
  }
}
