/**
 * The automation engine (docs/automations.md): it arms every enabled automation's triggers,
 * and when one fires it checks runaway protection, evaluates the conditions and starts the run
 * through the program service, which applies the mode. Every evaluation leaves a trace, also
 * those whose conditions failed and those the mode skipped.
 *
 * In a cluster one instance holds the `builtin:automations` lease and listens; the others stand
 * by and take over when it dies (the `for`s it was counting are written down, so they go on).
 * Webhooks and MQTT messages arrive on one instance anyway: the instance that receives one
 * handles it, whether it holds the lease or not.
 */
import type { Clock, Timers } from '../../platform/clock.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DriverPlacement } from '../drivers/local/driver-process.js';
import type { DomainEventBus } from '../events.js';
import type { AlertService } from '../home/alerts.js';
import type { Trigger, TriggerData } from '../programs/automation-model.js';
import { programErrors } from '../programs/errors.js';
import type { Program } from '../programs/model.js';
import type { ProgramService } from '../programs/program-service.js';
import { scheduleKey, type ProgramScheduler, type Schedule } from '../programs/scheduler.js';
import { conditionFields, evaluateConditions } from './conditions.js';
import { triggerKey, type DeviceTriggers, type TriggerListener } from './device-triggers.js';
import type { FieldTracker } from './fields.js';
import type { AutomationConditions, HomePlace } from './waits.js';

/** The cluster lease whose holder listens for the automations' triggers. */
export const AUTOMATIONS_LEASE = 'builtin:automations';

export interface AutomationLimits {
  /** Runaway protection: more fires than this within `runawayWindowMs` pauses the automation. */
  runawayMaxFires: number;
  runawayWindowMs: number;
  /** Webhook calls per id and client address within `webhookWindowMs`. */
  webhookMaxCalls: number;
  webhookWindowMs: number;
}

export const DEFAULT_AUTOMATION_LIMITS: AutomationLimits = { runawayMaxFires: 30, runawayWindowMs: 10_000, webhookMaxCalls: 20, webhookWindowMs: 60_000 };


export interface AutomationEngineDeps {
  programs: ProgramService;
  devices: DeviceService;
  triggers: DeviceTriggers;
  tracker: FieldTracker;
  /** Arms the time and sun triggers; built with `fire` calling `scheduleFired` here. */
  scheduler: ProgramScheduler;
  alerts: AlertService;
  place: HomePlace;
  conditions: AutomationConditions;
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  log: { error(obj: unknown, msg: string): void; warn(obj: unknown, msg: string): void; info(obj: unknown, msg: string): void };
  placement?: DriverPlacement;
  limits?: Partial<AutomationLimits>;
}

interface Armed {
  listeners: TriggerListener[];
  scheduleKeys: string[];
}


export const isAutomation = (program: Pick<Program, 'triggers'>): boolean => (program.triggers?.length ?? 0) > 0;
export const firesByItself = (program: Pick<Program, 'enabled' | 'pause'>): boolean => program.enabled !== false && !program.pause;

export class AutomationEngine {
  private readonly armed = new Map<string, Armed>();
  private readonly mqttListeners = new Map<string, TriggerListener>();
  private readonly webhooks = new Map<string, { programId: string; index: number }>();
  private readonly recentFires = new Map<string, number[]>();
  private readonly webhookCalls = new Map<string, number[]>();
  private readonly limits: AutomationLimits;
  private role: 'active' | 'standby' | 'stopped' = 'stopped';
  private unwatch: (() => void) | undefined;
  private changing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: AutomationEngineDeps) {
    this.limits = { ...DEFAULT_AUTOMATION_LIMITS, ...deps.limits };
  }

  private get scheduler(): ProgramScheduler {
    return this.deps.scheduler;
  }

  async start(): Promise<void> {
    await this.deps.tracker.load();
    await this.deps.triggers.start();
    // Saved here or on another instance of the cluster (a replica event): armed again either way.
    const follow = ({ program }: { program: Program }) => void this.serialized(() => this.rearm(program, true));
    this.deps.events.on(this, 'program.created', follow);
    this.deps.events.on(this, 'program.updated', follow);
    this.deps.events.on(this, 'program.removed', ({ programId }) => void this.serialized(async () => this.disarm(programId, true)));
    this.deps.events.on(this, 'device.removed', ({ deviceId }) => void this.deps.tracker.forgetDevice(deviceId).catch(() => undefined));
    for (const program of this.deps.programs.list()) this.armMessages(program);
    const placement = this.deps.placement;
    if (placement) this.unwatch = placement.watch(() => void this.serialized(() => this.rebalance()));
    await this.serialized(() => this.rebalance());
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    this.deps.events.removeOwner(this);
    await this.serialized(async () => {
      for (const id of [...this.armed.keys()]) this.disarm(id, false);
      for (const l of this.mqttListeners.values()) l.close();
      this.mqttListeners.clear();
      this.scheduler.stop();
      this.deps.triggers.stop();
      if (this.role === 'active' && this.deps.placement) await this.deps.placement.release(AUTOMATIONS_LEASE).catch(() => undefined);
      this.role = 'stopped';
    });
    await this.deps.tracker.stop();
  }

  /** `active`: this instance listens for the automations' triggers; `standby`: another does. */
  get status(): { role: 'active' | 'standby' | 'stopped'; armed: number; indexedFields: number; trackedFields: number; mqtt: boolean } {
    return { role: this.role, armed: this.armed.size, indexedFields: this.deps.triggers.indexedFields, trackedFields: this.deps.tracker.size, mqtt: this.deps.triggers.mqttAvailable };
  }

  /** When the automation's time and sun triggers fire next (the soonest), if armed here. */
  nextFire(programId: string): number | undefined {
    let next: number | undefined;
    for (const key of this.armed.get(programId)?.scheduleKeys ?? []) {
      const at = this.scheduler.nextFire(key);
      if (at !== undefined && (next === undefined || at < next)) next = at;
    }
    return next;
  }

  /** A call of `POST /webhooks/:webhookId` (no token; rate-limited per id and address). */
  async callWebhook(webhookId: string, body: unknown, clientAddress: string): Promise<{ programId: string; runId: string | null; status: string }> {
    const hook = this.webhooks.get(webhookId);
    if (!hook) throw programErrors.WEBHOOK_NOT_FOUND({ webhookId: '(hidden)' }, { details: {} });
    const now = this.deps.clock.now();
    const bucketKey = `${webhookId}|${clientAddress}`;
    const calls = (this.webhookCalls.get(bucketKey) ?? []).filter((t) => t > now - this.limits.webhookWindowMs);
    if (calls.length >= this.limits.webhookMaxCalls) {
      const retryAfterSeconds = Math.max(1, Math.ceil(((calls[0] as number) + this.limits.webhookWindowMs - now) / 1000));
      throw programErrors.TOO_MANY_WEBHOOK_CALLS({ retryAfterSeconds }, { details: { retryAfterSeconds } });
    }
    calls.push(now);
    this.webhookCalls.set(bucketKey, calls);
    if (this.webhookCalls.size > 10_000) this.pruneWebhookCalls(now);
    const program = this.deps.programs.find(hook.programId);
    if (!program) throw programErrors.WEBHOOK_NOT_FOUND({ webhookId: '(hidden)' }, { details: {} });
    const trigger = program.triggers?.[hook.index] as Trigger;
    const data: TriggerData = { id: triggerKey(trigger, hook.index), index: hook.index, type: 'webhook', payload: body ?? null, at: now, description: `webhook called from ${clientAddress}` };
    const run = await this.fired(program.id, data);
    return { programId: program.id, runId: run?.id ?? null, status: run?.status ?? 'disabled' };
  }

  /**
   * Runs an automation now as if `triggerId` (else its first trigger) fired, with `data` as the
   * trigger's data; conditions are evaluated unless `skipConditions`. For trying an automation out.
   */
  async test(programId: string, options: { triggerId?: string; data?: Record<string, unknown>; skipConditions?: boolean }) {
    const program = this.deps.programs.programs.get(programId);
    const triggers = program.triggers ?? [];
    const index = options.triggerId === undefined ? 0 : triggers.findIndex((t, i) => triggerKey(t, i) === options.triggerId);
    if (options.triggerId !== undefined && index < 0) {
      throw programErrors.NOT_AN_AUTOMATION_TRIGGER({ id: programId, trigger: options.triggerId }, { details: { programId, triggerId: options.triggerId } });
    }
    const trigger = triggers[index];
    const data: TriggerData = {
      ...(options.data ?? {}),
      id: trigger ? triggerKey(trigger, index) : 'test',
      ...(trigger ? { index } : {}),
      type: 'test',
      at: this.deps.clock.now(),
      description: 'a test run started by an administrator',
    };
    return this.evaluateAndStart(program, data, { countTowardsRunaway: false, skipConditions: options.skipConditions === true });
  }

  // ---------------------------------------------------------------------------------------------

  private serialized(task: () => Promise<void> | void): Promise<void> {
    const next = this.changing.then(task, task);
    this.changing = next.catch((err: unknown) => this.deps.log.error({ err }, 'automations: a change of what is armed failed'));
    return this.changing;
  }

  private async rebalance(): Promise<void> {
    if (this.role === 'stopped' || !this.deps.placement) {
      if (this.role === 'stopped' && !this.deps.placement) return this.activate();
      if (this.role === 'stopped' && this.deps.placement) this.role = 'standby';
    }
    const placement = this.deps.placement;
    if (!placement) return;
    if (this.role === 'active' && placement.holds(AUTOMATIONS_LEASE)) return;
    if (this.role === 'active') {
      this.deps.log.warn({}, 'the automations lease went to another instance; standing by');
      for (const id of [...this.armed.keys()]) this.disarm(id, false);
      this.scheduler.stop();
      this.role = 'standby';
      return;
    }
    const claim = await placement.claim(AUTOMATIONS_LEASE).catch(() => ({ held: false as const, holder: '?' }));
    if (claim.held) await this.activate();
  }

  private async activate(): Promise<void> {
    if (this.role === 'standby') {
      // Taking over from another instance: what it was counting and the fields it watched, as it wrote them.
      await this.deps.tracker.load();
      await this.deps.triggers.reload();
    }
    this.role = 'active';
    const programs = this.deps.programs.list();
    await this.scheduler.start([]);
    for (const program of programs) await this.arm(program, 'start');
    this.deps.log.info({ automations: this.armed.size }, 'automations armed');
    for (const program of programs) {
      if (!isAutomation(program) || !firesByItself(program)) continue;
      (program.triggers ?? []).forEach((trigger, index) => {
        if (trigger.type === 'hub' && trigger.event === 'started') {
          void this.fired(program.id, { id: triggerKey(trigger, index), index, type: 'hub', event: 'started', at: this.deps.clock.now(), description: 'the hub started' });
        }
      });
    }
  }

  private async rearm(program: Program, saved: boolean): Promise<void> {
    this.armMessages(program);
    if (this.role !== 'active') return;
    await this.arm(program, saved ? 'saved' : 'reschedule');
  }

  /** MQTT triggers listen on every instance: only the one holding the MQTT link hears messages. */
  private armMessages(program: Program): void {
    this.mqttListeners.get(program.id)?.close();
    this.mqttListeners.delete(program.id);
    for (const [hookId, hook] of this.webhooks) if (hook.programId === program.id) this.webhooks.delete(hookId);
    if (!isAutomation(program)) return;
    (program.triggers ?? []).forEach((t, index) => {
      if (t.type === 'webhook' && t.webhookId) this.webhooks.set(t.webhookId, { programId: program.id, index });
    });
    if (!firesByItself(program)) return;
    const mqtt = (program.triggers ?? []).map((t, index) => ({ t, index })).filter(({ t }) => t.type === 'mqtt');
    if (mqtt.length === 0) return;
    const listeners = mqtt.map(({ t, index }) => this.deps.triggers.listen(program.id, [t], (data) => void this.fired(program.id, data), { durable: false, offset: index }));
    this.mqttListeners.set(program.id, { close: () => listeners.forEach((l) => l.close()) });
  }

  /** The home's location or time zone changed: every time and sun trigger is armed again. */
  rearmAll(): Promise<void> {
    return this.serialized(async () => {
      if (this.role !== 'active') return;
      for (const program of this.deps.programs.list()) await this.arm(program, 'reschedule');
    });
  }

  /**
   * `start`: armed at start or on taking the lease over (time and sun triggers catch up);
   * `saved`: just saved (numeric triggers already past fire once); `reschedule`: neither.
   */
  private async arm(program: Program, how: 'start' | 'saved' | 'reschedule'): Promise<void> {
    this.disarm(program.id, false);
    if (!isAutomation(program) || !firesByItself(program)) {
      this.deps.triggers.forgetCounts(program.id);
      return;
    }
    const triggers = program.triggers ?? [];
    // Counts of triggers the automation no longer has are crossed out; the others resume.
    this.deps.triggers.forgetCounts(program.id, new Set(triggers.map((t, i) => triggerKey(t, i))));
    const onFire = (data: TriggerData) => void this.fired(program.id, data);
    const listeners: TriggerListener[] = [];
    const scheduleKeys: string[] = [];
    this.armed.set(program.id, { listeners, scheduleKeys });
    triggers.forEach((trigger, index) => {
      if (trigger.type === 'state' || trigger.type === 'numeric' || trigger.type === 'availability' || trigger.type === 'button' || trigger.type === 'hub') {
        listeners.push(this.deps.triggers.listen(program.id, [trigger], onFire, { durable: true, offset: index }));
      }
    });
    const watched: Array<{ deviceId: string; field: string }> = [];
    conditionFields(program.conditions ?? [], (deviceId, field) => watched.push({ deviceId, field }));
    if (watched.length > 0) listeners.push(this.deps.triggers.observe(program.id, watched));
    for (const [index, trigger] of triggers.entries()) {
      const schedule = scheduleOf(trigger);
      if (!schedule) continue;
      const key = scheduleKey(program.id, trigger, index);
      scheduleKeys.push(key);
      if (how === 'start') await this.scheduler.start([{ id: key, timer: schedule, since: program.updatedAt }]);
      else await this.scheduler.schedule(key, schedule);
    }
    if (how === 'saved') this.deps.triggers.fireAlreadyPast(program.id, triggers, onFire);
  }

  private disarm(programId: string, forget: boolean): void {
    const armed = this.armed.get(programId);
    if (armed) {
      for (const l of armed.listeners) l.close();
      for (const key of armed.scheduleKeys) this.scheduler.unschedule(key);
      this.armed.delete(programId);
    }
    if (forget) {
      this.deps.triggers.forgetCounts(programId);
      this.mqttListeners.get(programId)?.close();
      this.mqttListeners.delete(programId);
      for (const [hookId, hook] of this.webhooks) if (hook.programId === programId) this.webhooks.delete(hookId);
      this.recentFires.delete(programId);
    }
  }

  /** A time or sun trigger came due (the scheduler's `fire`). */
  scheduleFired(key: string, scheduledAt: number): void {
    const [programId, rest] = key.includes('#') ? [key.slice(0, key.indexOf('#')), key.slice(key.indexOf('#') + 1)] : [key, 'timer'];
    const program = this.deps.programs.find(programId);
    if (!program) return;
    const index = (program.triggers ?? []).findIndex((t, i) => triggerKey(t, i) === rest && (t.type === 'time' || t.type === 'sun'));
    const trigger = program.triggers?.[index];
    if (!trigger) return;
    const description = trigger.type === 'sun' ? `${trigger.event}${trigger.offsetMs ? ` ${trigger.offsetMs > 0 ? '+' : '−'}${Math.round(Math.abs(trigger.offsetMs) / 60_000)} min` : ''}` : 'the time came';
    void this.fired(programId, { id: triggerKey(trigger, index), index, type: trigger.type, at: scheduledAt, description });
  }

  private async fired(programId: string, data: TriggerData) {
    const program = this.deps.programs.find(programId);
    if (!program || !firesByItself(program)) return undefined;
    return this.evaluateAndStart(program, data, { countTowardsRunaway: true, skipConditions: false });
  }

  private async evaluateAndStart(program: Program, data: TriggerData, options: { countTowardsRunaway: boolean; skipConditions: boolean }) {
    const now = this.deps.clock.now();
    this.deps.events.emit('automation.triggered', { programId: program.id, trigger: data, at: now });
    if (options.countTowardsRunaway && this.runaway(program, now)) {
      const message = `It fired more than ${this.limits.runawayMaxFires} times within ${Math.round(this.limits.runawayWindowMs / 1000)} s (for example, its actions trigger it again); it is paused until an administrator enables it.`;
      await this.deps.programs.pause(program.id, { reason: 'runaway', message, at: now });
      await this.deps.alerts
        .submit({ type: 'automation_paused', severity: 'warning', message: `Automation "${program.name}" was paused: ${message}`, source: 'automations', payload: { programId: program.id } })
        .catch((err: unknown) => this.deps.log.error({ err }, 'the runaway alert was not submitted'));
      return this.deps.programs.recordEvaluation(program.id, { triggered: data, status: 'skipped', reason: `Paused by runaway protection: ${message}` });
    }
    const conditions = program.conditions ?? [];
    if (!options.skipConditions && conditions.length > 0) {
      const { passed, results } = evaluateConditions(conditions, this.deps.conditions.context(data.id));
      if (!passed) {
        const failed = results.find((r) => !r.result && r.type !== 'and' && r.type !== 'or' && r.type !== 'not') ?? results.at(-1);
        return this.deps.programs.recordEvaluation(program.id, { triggered: data, status: 'not_passed', conditions: results, reason: `Condition ${failed?.path ?? ''} did not hold${failed?.detail ? `: ${failed.detail}` : ''}.` });
      }
      return this.deps.programs.startTriggered(program.id, data, results);
    }
    return this.deps.programs.startTriggered(program.id, data, []);
  }

  private runaway(program: Program, now: number): boolean {
    const fires = (this.recentFires.get(program.id) ?? []).filter((t) => t > now - this.limits.runawayWindowMs);
    fires.push(now);
    this.recentFires.set(program.id, fires);
    return fires.length > this.limits.runawayMaxFires;
  }

  private pruneWebhookCalls(now: number): void {
    for (const [k, calls] of this.webhookCalls) if (!calls.some((t) => t > now - this.limits.webhookWindowMs)) this.webhookCalls.delete(k);
  }
}

function scheduleOf(trigger: Trigger): Schedule | undefined {
  if (trigger.type === 'time') return trigger.timer;
  if (trigger.type === 'sun') return { kind: 'sun', event: trigger.event, offsetMs: trigger.offsetMs ?? 0, enabled: true, ...(trigger.catchUp !== undefined ? { catchUp: trigger.catchUp } : {}) };
  return undefined;
}
