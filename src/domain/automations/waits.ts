/**
 * What a run's steps ask of automations: conditions for `choose` and `repeat`, and
 * `wait_for_trigger`. Built before the program service and the engine, which both use it.
 */
import type { Clock, Timers } from '../../platform/clock.js';
import type { DeviceService } from '../devices/device-service.js';
import type { Condition, Trigger, TriggerData } from '../programs/automation-model.js';
import { evaluateConditions, type ConditionContext } from './conditions.js';
import type { DeviceTriggers } from './device-triggers.js';
import { readField, type FieldTracker } from './fields.js';
import type { HomeLocation } from './sun.js';

/** Where the home is and its clock, from the home settings. */
export interface HomePlace {
  location(): HomeLocation | undefined;
  timezone(): string | undefined;
}

let waitSequence = 0;

export class AutomationConditions {
  constructor(
    private readonly devices: DeviceService,
    private readonly tracker: FieldTracker,
    private readonly triggers: DeviceTriggers,
    private readonly place: HomePlace,
    private readonly clock: Clock,
    private readonly timers: Timers,
  ) {}

  /** Conditions read the devices as the model does, and `for` from the tracker. */
  context(triggerId?: string): ConditionContext {
    return {
      now: this.clock.now(),
      read: (deviceId, field) => readField(this.devices, deviceId, field),
      since: (deviceId, field) => this.tracker.since(deviceId, field),
      location: this.place.location(),
      timezone: this.place.timezone(),
      name: (deviceId) => this.devices.registry.find(deviceId)?.name ?? deviceId,
      ...(triggerId !== undefined ? { triggerId } : {}),
    };
  }

  /** For a run's choose and repeat steps: with its variables (`trigger.id` for trigger conditions). */
  holds(conditions: readonly Condition[], scope: Record<string, unknown>): boolean {
    const trigger = scope['trigger'] as { id?: unknown } | undefined;
    return evaluateConditions(conditions, this.context(typeof trigger?.id === 'string' ? trigger.id : undefined)).passed;
  }

  /** Resolves with the first of `triggers` to fire, or undefined past `timeoutMs` or when aborted. */
  waitForTrigger(triggers: readonly Trigger[], timeoutMs: number, signal: AbortSignal | undefined): Promise<TriggerData | undefined> {
    return new Promise((resolve) => {
      const owner = `wait:${++waitSequence}`;
      let settled = false;
      const done = (data: TriggerData | undefined) => {
        if (settled) return;
        settled = true;
        listener.close();
        this.timers.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(data);
      };
      const onAbort = () => done(undefined);
      const listener = this.triggers.listen(owner, triggers, (data) => done(data), { durable: false });
      const timer = this.timers.setTimeout(() => done(undefined), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
