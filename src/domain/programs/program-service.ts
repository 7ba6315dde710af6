import { randomUUID } from 'node:crypto';
import type { Clock, Timers } from '../../platform/clock.js';
import type { DomainError } from '../../platform/errors.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import { errorInfo, tryCommand } from '../devices/command-results.js';
import type { DeviceActionResult } from '../devices/model.js';
import { homeErrors } from '../home/errors.js';
import type { AlertService } from '../home/alerts.js';
import type { MacroService } from '../home/macros.js';
import type { ZoneService } from '../home/zones.js';
import type { SceneCatalog } from '../scenes/catalog.js';
import type { AutomationConditions } from '../automations/waits.js';
import { AUTOMATION_LIMITS, type AutomationMode, type AutomationPause, type ConditionResult, type Trigger, type TriggerData } from './automation-model.js';
import { programErrors } from './errors.js';
import { ProgramExecutor, resumable, type Checkpoint } from './executor.js';
import type { Program, ProgramRun, Step, StepEnvironment, Timer } from './model.js';
import { findAutomationLoop, findCycle, lightingDevices, referencesOf } from './references.js';
import { scheduleKey, type ProgramScheduler } from './scheduler.js';
import { withWebhookIds } from './webhook-ids.js';
import { WriteBehind } from '../../platform/write-behind.js';
import { concurrencyOfMode, modeOfConcurrency, parseProgramInput, validateProgramScript, validateTimer, type YamlImporter } from './steps.js';

export interface ProgramRunRepository {
  save(run: ProgramRun): Promise<void>;
  /** Several runs in one transaction (the traces written behind). */
  saveMany(runs: ProgramRun[]): Promise<void>;
  /** Newest first; `notable`: only runs that failed, did not pass, were skipped or interrupted. */
  list(programId: string, limit: number, options?: { notable?: boolean }): Promise<ProgramRun[]>;
  get(runId: string): Promise<ProgramRun | undefined>;
  /** Keeps the newest `keep` runs of a program and, besides, its newest `keepNotable` notable ones. */
  prune(programId: string, keep: number, keepNotable: number): Promise<void>;
  /** Runs recorded as running: at start, those a stopped process left inside a delay or wait. */
  listRunning(): Promise<ProgramRun[]>;
}

export interface ProgramUser {
  kind: 'zone' | 'program';
  id: string;
  name: string;
}

/** Stored runs, as the trace viewer reads them: the newest 50, and the newest 20 that mattered. */
export const RUN_HISTORY = { keep: 50, keepNotable: 20 } as const;
/** Statuses that are kept apart so that frequent dull runs never push them out. */
export const NOTABLE_STATUSES: readonly ProgramRun['status'][] = ['failed', 'not_passed', 'skipped', 'interrupted'];
const MAX_QUEUED_RUNS = 5;
/**
 * Right after the hub starts, drivers are still connecting: a run then (a `for` that came due
 * while the hub was down, a resumed run, a timer's catch-up) waits this long at most for an
 * offline device it commands to come back, instead of failing with DRIVER_OFFLINE at once.
 */
export const STARTUP_RECONNECT_GRACE_MS = 60_000;

interface Active {
  run: ProgramRun;
  abort: AbortController;
  done: Promise<ProgramRun>;
}

export interface ProgramServiceDeps {
  /** The records the program catalog holds (and loads). */
  programs: DocumentCollection<Program>;
  runs: ProgramRunRepository;
  /** Arms the time and sun triggers (the automation engine fires them); read here for `nextFireAt`. */
  scheduler: ProgramScheduler;
  devices: DeviceService;
  /** What steps reach besides devices: zones (volume), macros, alerts, scenes. */
  zones: ZoneService;
  macros: MacroService;
  alerts: AlertService;
  scenes: SceneCatalog;
  /** Conditions and waits of automation steps (choose, repeat, wait_for_trigger). */
  automation: AutomationConditions;
  /** A YAML document in another dialect (a Home Assistant automation), compiled to a save body. */
  importYaml?: YamlImporter;
  /**
   * In a cluster the runs table is shared: a run recorded as running may be another live
   * instance's, so none is taken for a stopped process's (see `start`).
   */
  clustered?: boolean;
  events: DomainEventBus;
  clock: Clock;
  timers: Timers;
  log: { error(obj: unknown, msg: string): void; warn(obj: unknown, msg: string): void };
}

/**
 * Programs and automations: saving (canonical steps, the hub's YAML or a Home Assistant
 * automation, with references, recursion and visible trigger loops checked), running with a
 * mode, traces (run history with what started each run and what its conditions read), and
 * runs that go on after a restart.
 *
 * A second start of a running program, by its mode (`concurrency` for programs of before):
 * single (`reject`) refuses a manual start with 409 PROGRAM_RUNNING and skips a trigger's
 * (recorded); restart cancels the running one; queued (`queue`) waits (at most `max`, then 409
 * RUN_QUEUE_FULL or a skip); parallel runs beside (at most `max`).
 */
export class ProgramService {
  private readonly active = new Map<string, Active[]>();
  private readonly queued = new Map<string, number>();
  /** The last evaluation that did not run, per program: a repeat of it is counted on it. */
  private readonly lastEvaluation = new Map<string, { key: string; run: ProgramRun }>();
  private readonly executor: ProgramExecutor;
  private stopping = false;
  private startedAt = 0;
  /**
   * Traces of ended runs and evaluations, written behind: at most a second later, in one
   * transaction, so an automation that runs often costs one disk sync a second, not one a run.
   * Reads see them meanwhile. A run waiting at a checkpoint is written at once (a restart resumes
   * from that record); a kill -9 loses at most the last second of ended traces.
   */
  private readonly unwritten = new Map<string, ProgramRun>();
  private readonly traceWrites: WriteBehind<string, ProgramRun>;
  readonly programs: DocumentCollection<Program>;

  constructor(private readonly deps: ProgramServiceDeps) {
    this.programs = deps.programs;
    this.executor = new ProgramExecutor(this.environment(), deps.clock, deps.timers);
    this.traceWrites = new WriteBehind({
      save: (batch) => this.writeTraces(batch),
      read: (id) => this.unwritten.get(id),
      keyOf: (run) => run.id,
      timers: deps.timers,
      intervalMs: 1000,
      onError: (err, runs) => deps.log.error({ err, runs }, 'traces not saved; trying again'),
    });
  }

  private async writeTraces(batch: ProgramRun[]): Promise<void> {
    await this.deps.runs.saveMany(batch);
    for (const run of batch) if (this.unwritten.get(run.id) === run) this.unwritten.delete(run.id);
    for (const programId of new Set(batch.map((r) => r.programId))) await this.deps.runs.prune(programId, RUN_HISTORY.keep, RUN_HISTORY.keepNotable);
  }

  /** Records a trace (a new one, or a newer state of one), written within a second. */
  private trace(run: ProgramRun): void {
    this.unwritten.set(run.id, run);
    this.traceWrites.mark(run.id);
  }

  /** Runs a stopped process left inside a delay or wait: interrupted, and continued where they ask to. */
  async start(): Promise<void> {
    this.stopping = false;
    this.startedAt = this.deps.clock.now();
    this.traceWrites.start();
    let stale: ProgramRun[] = [];
    // Not yet in a cluster: which instance a running run is on is not recorded (docs/automations.md).
    if (this.deps.clustered) return;
    try {
      stale = await this.deps.runs.listRunning();
    } catch (err) {
      this.deps.log.error({ err }, 'could not read the runs left running');
    }
    for (const run of stale) {
      const checkpoint = run.checkpoint;
      const interrupted: ProgramRun = {
        ...run,
        status: 'interrupted',
        finishedAt: this.deps.clock.now(),
        reason: checkpoint ? `The hub stopped while the run waited at step ${checkpoint.path}.` : 'The hub stopped during the run.',
      };
      delete interrupted.checkpoint;
      await this.deps.runs.save(interrupted).catch((err: unknown) => this.deps.log.error({ err, runId: run.id }, 'interrupted run not recorded'));
      this.deps.events.emit('program.run_finished', { run: interrupted, at: interrupted.finishedAt as number });
      const program = this.programs.find(run.programId);
      if (!program?.resume || !checkpoint || !resumable(checkpoint) || this.runningCount(program.id) > 0) continue;
      // Changed since the run started: its checkpoint may name another step now.
      if (program.updatedAt > run.startedAt) continue;
      const steps = run.path === 'off' ? program.offSteps : program.steps;
      if (!steps) continue;
      this.begin(program, steps, run.path, run.trigger, {
        ...(run.triggered ? { triggered: run.triggered } : {}),
        ...(run.conditions ? { conditions: run.conditions } : {}),
        variables: run.variables ?? {},
        resume: checkpoint,
        resumedFrom: run.id,
      });
    }
  }

  /**
   * Cancels the runs in progress. A run waiting at a delay or wait keeps its record as it is
   * (running, with where it waits), so the next start finds it interrupted and, with `resume`,
   * continues it.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    const all = [...this.active.values()].flat();
    for (const { abort } of all) abort.abort();
    await Promise.allSettled(all.map((a) => a.done));
    await this.traceWrites.stop();
  }

  list(): Program[] {
    return this.programs.list();
  }

  find(id: string): Program | undefined {
    return this.programs.find(id);
  }

  /** A program as surfaces show it: its mode and triggers always, the timer of before, next fire, running. */
  view(program: Program) {
    let nextFireAt: number | undefined;
    for (const [i, trigger] of (program.triggers ?? []).entries()) {
      if (trigger.type !== 'time' && trigger.type !== 'sun') continue;
      const at = this.deps.scheduler.nextFire(scheduleKey(program.id, trigger, i));
      if (at !== undefined && (nextFireAt === undefined || at < nextFireAt)) nextFireAt = at;
    }
    const { mode, max } = this.modeOf(program);
    const timerTrigger = (program.triggers ?? []).find((t): t is Extract<Trigger, { type: 'time' }> => t.type === 'time' && t.id === 'timer');
    const { checkpoint: _c, ...rest } = program as Program & { checkpoint?: unknown };
    return {
      ...rest,
      timer: timerTrigger?.timer ?? null,
      triggers: program.triggers ?? [],
      conditions: program.conditions ?? [],
      mode,
      ...(mode === 'queued' || mode === 'parallel' ? { max } : {}),
      enabled: program.enabled !== false,
      concurrency: concurrencyOfMode(mode),
      nextFireAt: nextFireAt ?? null,
      running: this.runningCount(program.id) > 0,
    };
  }

  modeOf(program: Pick<Program, 'mode' | 'max' | 'concurrency'>): { mode: AutomationMode; max: number } {
    const mode = program.mode ?? modeOfConcurrency(program.concurrency);
    const max = program.max ?? (mode === 'queued' ? (program.mode ? AUTOMATION_LIMITS.defaultQueuedMax : MAX_QUEUED_RUNS) : AUTOMATION_LIMITS.defaultParallelMax);
    return { mode, max };
  }

  async save(body: unknown): Promise<Program> {
    const draft = parseProgramInput(body, this.deps.importYaml);
    const existing = draft.id ? this.programs.find(draft.id) : undefined;
    const id = draft.id ?? randomUUID();
    let triggers = draft.triggers ?? (draft.timer === undefined ? existing?.triggers : undefined) ?? [];
    // `timer` (the field of before) is the time trigger with id "timer".
    if (draft.timer !== undefined) {
      triggers = triggers.filter((t) => !(t.type === 'time' && t.id === 'timer'));
      if (draft.timer) triggers = [{ id: 'timer', type: 'time', timer: draft.timer }, ...triggers];
    }
    triggers = withWebhookIds(triggers, existing?.triggers);
    const mode = draft.mode ?? (draft.concurrency ? modeOfConcurrency(draft.concurrency) : undefined) ?? existing?.mode ?? modeOfConcurrency(existing?.concurrency ?? 'reject');
    const candidate: Omit<Program, 'createdAt' | 'updatedAt'> = {
      id,
      name: draft.name,
      ...(draft.description !== undefined ? { description: draft.description } : {}),
      steps: draft.steps,
      ...(draft.offSteps ? { offSteps: draft.offSteps } : {}),
      triggers,
      conditions: draft.conditions ?? (draft.triggers === undefined ? existing?.conditions : undefined) ?? [],
      mode,
      ...(draft.max !== undefined ? { max: draft.max } : mode === existing?.mode && existing?.max !== undefined ? { max: existing.max } : {}),
      enabled: draft.enabled ?? existing?.enabled ?? true,
      // Saving again keeps a pause: only enabling clears it.
      pause: existing?.pause ?? null,
      ...((draft.resume ?? existing?.resume) ? { resume: true } : {}),
      concurrency: concurrencyOfMode(mode),
      semantics: draft.semantics ?? existing?.semantics ?? [],
      ...(draft.yaml !== undefined ? { yaml: draft.yaml } : {}),
    };
    this.checkReferences(id, candidate.steps, candidate.offSteps, candidate.triggers ?? [], candidate);
    const { item, created } = await this.programs.save(candidate);
    this.lastEvaluation.delete(id);
    this.deps.events.emit(created ? 'program.created' : 'program.updated', { program: item, at: this.deps.clock.now() });
    return item;
  }

  async updateScript(id: string, script: { steps: Step[]; offSteps?: Step[] | null }): Promise<Program> {
    const program = this.programs.get(id);
    validateProgramScript({ steps: script.steps, ...(script.offSteps ? { offSteps: script.offSteps } : {}) });
    this.checkReferences(id, script.steps, script.offSteps ?? undefined, program.triggers ?? [], program);
    const updated = await this.programs.update(id, () => {
      const next: Partial<Program> = { steps: script.steps, yaml: undefined };
      if (script.offSteps !== undefined) next.offSteps = script.offSteps ?? undefined;
      return next;
    });
    this.deps.events.emit('program.updated', { program: updated, at: this.deps.clock.now() });
    return updated;
  }

  /** Replaces the time trigger with id "timer" (the timer of programs of before); null removes it. */
  async updateTimer(id: string, timer: unknown): Promise<Program> {
    this.programs.get(id);
    const parsed = (validateTimer(timer) ?? null) as Timer | null;
    const updated = await this.programs.update(id, (p) => {
      const others = (p.triggers ?? []).filter((t) => !(t.type === 'time' && t.id === 'timer'));
      return { triggers: parsed ? [{ id: 'timer', type: 'time' as const, timer: parsed }, ...others] : others, yaml: undefined };
    });
    this.deps.events.emit('program.updated', { program: updated, at: this.deps.clock.now() });
    return updated;
  }

  /** Turns an automation's triggers on or off; enabling also lifts a runaway pause. */
  async setEnabled(id: string, enabled: boolean): Promise<Program> {
    const updated = await this.programs.update(id, () => ({ enabled, ...(enabled ? { pause: null } : {}) }));
    this.recentReset(id);
    this.deps.events.emit('program.updated', { program: updated, at: this.deps.clock.now() });
    return updated;
  }

  async pause(id: string, pause: AutomationPause): Promise<void> {
    const updated = await this.programs.update(id, () => ({ pause }));
    this.deps.events.emit('program.updated', { program: updated, at: this.deps.clock.now() });
  }

  /** Replaces a program's semantic tags (what intents match besides its name). */
  async setSemantics(id: string, change: (current: string[]) => string[]): Promise<Program> {
    const updated = await this.programs.update(id, (p) => ({ semantics: [...new Set(change(p.semantics ?? []).map((t) => t.trim().toLowerCase()).filter(Boolean))] }));
    this.deps.events.emit('program_semantics.updated', { programId: id, semantics: updated.semantics ?? [], at: this.deps.clock.now() });
    return updated;
  }

  async copy(id: string, name?: string): Promise<Program> {
    const source = this.programs.get(id);
    const { id: _id, createdAt: _c, updatedAt: _u, ...rest } = source;
    // A copy starts with its timer and triggers off: two programs firing at once is rarely what
    // one wants. Its webhooks get addresses of their own.
    const triggers = (source.triggers ?? []).map((t) => (t.type === 'webhook' ? { ...t, webhookId: undefined } : t.type === 'time' && t.id === 'timer' ? { ...t, timer: { ...t.timer, enabled: false } } : t));
    const { item } = await this.programs.save({ ...rest, triggers: withWebhookIds(triggers as Trigger[]), enabled: source.triggers?.length ? false : (source.enabled ?? true), pause: null, name: name ?? `${source.name} (copy)` });
    this.deps.events.emit('program.created', { program: item, at: this.deps.clock.now() });
    return item;
  }

  usersOf(id: string): ProgramUser[] {
    const users: ProgramUser[] = this.deps.zones.zonesUsingProgram(id).map((z) => ({ kind: 'zone' as const, id: z.id, name: z.name }));
    for (const program of this.programs.list()) {
      if (program.id !== id && referencesOf(program).programs.has(id)) users.push({ kind: 'program', id: program.id, name: program.name });
    }
    return users;
  }

  /** Refuses (409 PROGRAM_IN_USE, naming the users) while a zone or another program uses it. */
  async remove(id: string): Promise<void> {
    this.programs.get(id);
    const users = this.usersOf(id);
    if (users.length > 0) {
      throw programErrors.PROGRAM_IN_USE({ id, users: users.map((u) => `${u.kind} ${u.name}`).join(', ') }, { details: { users } });
    }
    for (const a of this.active.get(id) ?? []) a.abort.abort();
    await this.programs.remove(id);
    this.lastEvaluation.delete(id);
    this.deps.events.emit('program.removed', { programId: id, at: this.deps.clock.now() });
  }

  /** A start by hand or by another part of the hub: a mode that allows no run now answers 409. */
  async run(programId: string, options: { trigger: ProgramRun['trigger']; path?: 'on' | 'off'; wait?: boolean }): Promise<ProgramRun> {
    const program = this.programs.get(programId);
    const path = options.path ?? 'on';
    const steps = path === 'off' ? program.offSteps : program.steps;
    if (!steps) throw programErrors.NO_OFF_PATH({ program: program.name }, { details: { programId } });
    const started = await this.admit(program, false, () => this.begin(program, steps, path, options.trigger, {}));
    if (!started.active) throw started.refusal;
    return options.wait ? started.active.done : { ...started.active.run, steps: [...started.active.run.steps] };
  }

  /**
   * A trigger's start (its conditions held): a mode that allows no run now records a skipped
   * trace instead of refusing.
   */
  async startTriggered(programId: string, triggered: TriggerData, conditions: ConditionResult[]): Promise<ProgramRun> {
    const program = this.programs.get(programId);
    const source: ProgramRun['trigger'] = triggered.type === 'time' ? 'timer' : triggered.type === 'test' ? 'test' : 'automation';
    const started = await this.admit(program, true, () => this.begin(program, program.steps, 'on', source, { triggered, conditions, variables: {} }));
    if (started.active) {
      this.lastEvaluation.delete(programId);
      return { ...started.active.run, steps: [...started.active.run.steps] };
    }
    return this.recordEvaluation(programId, { triggered, status: 'skipped', conditions, reason: started.refusal.message });
  }

  /** A trace of an evaluation that started no run; the same outcome again is counted on the last one. */
  async recordEvaluation(programId: string, outcome: { triggered: TriggerData; status: 'skipped' | 'not_passed'; reason: string; conditions?: ConditionResult[] }): Promise<ProgramRun> {
    const now = this.deps.clock.now();
    const key = `${outcome.status}|${outcome.triggered.id}|${outcome.reason}`;
    const last = this.lastEvaluation.get(programId);
    let run: ProgramRun;
    if (last && last.key === key) {
      run = { ...last.run, count: (last.run.count ?? 1) + 1, lastAt: now, triggered: outcome.triggered, ...(outcome.conditions ? { conditions: outcome.conditions } : {}) };
    } else {
      run = {
        id: randomUUID(), programId, path: 'on', trigger: outcome.triggered.type === 'time' ? 'timer' : 'automation', status: outcome.status,
        startedAt: now, finishedAt: now, steps: [], triggered: outcome.triggered, reason: outcome.reason, ...(outcome.conditions ? { conditions: outcome.conditions } : {}),
      };
    }
    this.lastEvaluation.set(programId, { key, run });
    this.trace(run);
    this.deps.events.emit('automation.finished', { programId, run, at: now });
    return run;
  }

  /** Runs a zone's program (409 ZONE_HAS_NO_PROGRAM when it has none). */
  async runZoneProgram(zoneId: string, wait: boolean): Promise<ProgramRun> {
    const zone = this.deps.zones.zones.get(zoneId);
    if (!zone.programId) throw programErrors.ZONE_HAS_NO_PROGRAM({ zone: zone.name }, { details: { zoneId } });
    return this.run(zone.programId, { trigger: 'zone', wait });
  }

  async history(programId: string, limit: number, options: { notable?: boolean } = {}): Promise<ProgramRun[]> {
    this.programs.get(programId);
    const stored = await this.deps.runs.list(programId, limit, options);
    const pending = [...this.unwritten.values()].filter((r) => r.programId === programId && (!options.notable || NOTABLE_STATUSES.includes(r.status)));
    const live = options.notable ? [] : (this.active.get(programId) ?? []).map((a) => a.run);
    // The newest record of each run: live, then written behind, then stored.
    const byId = new Map<string, ProgramRun>();
    for (const run of [...live, ...pending, ...stored]) if (!byId.has(run.id)) byId.set(run.id, run);
    return [...byId.values()].sort((a, b) => b.startedAt - a.startedAt).slice(0, limit);
  }

  async getRun(runId: string): Promise<ProgramRun> {
    for (const actives of this.active.values()) for (const { run } of actives) if (run.id === runId) return run;
    const pending = this.unwritten.get(runId);
    if (pending) return pending;
    const run = await this.deps.runs.get(runId);
    if (!run) throw programErrors.RUN_NOT_FOUND({ runId }, { details: { runId } });
    return run;
  }

  /** Turns off every lighting device the program's steps command (on and off paths). */
  async lightingOff(id: string): Promise<{ programId: string; results: DeviceActionResult[] }> {
    const program = this.programs.get(id);
    const { devices } = this.deps;
    const isLighting = (deviceId: string) => {
      const device = devices.registry.find(deviceId);
      return !!device && !device.removed && devices.model(device).deviceClass === 'light';
    };
    const targets = lightingDevices([...program.steps, ...(program.offSteps ?? [])], isLighting);
    // The light class's standard turn_off: each light's own off command (or its toggle) is found for it.
    const results = await Promise.all(targets.map((deviceId) => tryCommand(devices, deviceId, 'turn_off')));
    this.deps.events.emit('program.lighting_off', { programId: id, results, at: this.deps.clock.now() });
    return { programId: id, results };
  }

  private goneOrStopping(programId: string): boolean {
    return this.stopping || !this.programs.find(programId);
  }

  private runningCount(programId: string): number {
    return this.active.get(programId)?.length ?? 0;
  }

  private recentReset(programId: string): void {
    this.lastEvaluation.delete(programId);
  }

  /**
   * Starts a run (through `start`) when the mode allows one now, else answers why not. A queued
   * start waits for its turn, and `start` is called in the same turn as the check, so two that
   * waited never both start.
   */
  private async admit(program: Program, triggered: boolean, start: () => Active): Promise<{ active: Active; refusal?: undefined } | { active?: undefined; refusal: DomainError }> {
    const { mode, max } = this.modeOf(program);
    const running = this.active.get(program.id) ?? [];
    if (running.length === 0) return { active: start() };
    const first = running[0] as Active;
    switch (mode) {
      case 'single':
        return { refusal: programErrors.PROGRAM_RUNNING({ id: program.id, runId: first.run.id }, { details: { runId: first.run.id } }) };
      case 'parallel':
        if (running.length < max) return { active: start() };
        return { refusal: programErrors.PROGRAM_RUNNING({ id: program.id, runId: first.run.id }, { details: { runId: first.run.id, running: running.length, max } }) };
      case 'restart':
        for (const a of running) a.abort.abort();
        await Promise.allSettled(running.map((a) => a.done));
        if (this.goneOrStopping(program.id)) return { refusal: programErrors.CANCELLED() };
        return this.admit(program, triggered, start);
      case 'queued': {
        const waiting = this.queued.get(program.id) ?? 0;
        if (waiting >= max) return { refusal: programErrors.RUN_QUEUE_FULL({ id: program.id, waiting }, { details: { programId: program.id } }) };
        this.queued.set(program.id, waiting + 1);
        try {
          for (;;) {
            // Removed, or the hub stopping, while it waited: it does not start.
            if (this.goneOrStopping(program.id)) return { refusal: programErrors.CANCELLED() };
            const current = this.active.get(program.id);
            if (!current || current.length === 0) return { active: start() };
            await Promise.allSettled(current.map((a) => a.done));
          }
        } finally {
          this.queued.set(program.id, (this.queued.get(program.id) ?? 1) - 1);
        }
      }
    }
  }

  private begin(
    program: Program,
    steps: Step[],
    path: 'on' | 'off',
    trigger: ProgramRun['trigger'],
    trace: { triggered?: TriggerData; conditions?: ConditionResult[]; variables?: Record<string, unknown>; resume?: Checkpoint; resumedFrom?: string },
  ): Active {
    const { clock, events, runs, log } = this.deps;
    const run: ProgramRun = {
      id: randomUUID(), programId: program.id, path, trigger, status: 'running', startedAt: clock.now(), steps: [],
      ...(trace.triggered ? { triggered: trace.triggered } : {}),
      ...(trace.conditions ? { conditions: trace.conditions } : {}),
      ...(trace.resumedFrom ? { resumedFrom: trace.resumedFrom } : {}),
    };
    const abort = new AbortController();
    // The run's variables: `trigger`, and what `variables` steps set (the executor changes it in place).
    const scope: Record<string, unknown> = { ...(trace.variables ?? {}) };
    if (trace.triggered) scope['trigger'] = trace.triggered;
    const isAutomationRun = (program.triggers?.length ?? 0) > 0;
    let hadCheckpoint = false;
    // This run's own records go to storage one after the other, in the order they were made.
    let writing: Promise<void> = Promise.resolve();
    const write = (record: ProgramRun): Promise<void> => {
      writing = writing.then(() => runs.save(record)).catch((err: unknown) => log.error({ err, runId: record.id }, 'run record not saved'));
      return writing;
    };
    events.emit('program.run_started', { run: { ...run }, at: run.startedAt });
    const done = this.executor
      .run(steps, {
        signal: abort.signal,
        scope,
        ...(trace.resume ? { resume: trace.resume } : {}),
        onStep: (result) => run.steps.push(result),
        onCheckpoint: (checkpoint) => {
          if (checkpoint) {
            run.checkpoint = checkpoint;
            run.variables = withoutTrigger(scope);
            // Written down at once, so a kill while it waits leaves a record to resume from.
            void write({ ...run, steps: [...run.steps] });
          } else if (run.checkpoint) {
            // Past the wait: written at once too, so a crash after it does not resume the wait and run what followed it again.
            delete run.checkpoint;
            hadCheckpoint = true;
            void write({ ...run, steps: [...run.steps] });
          }
        },
      })
      .then((outcome) => {
        run.status = outcome.ok ? 'succeeded' : abort.signal.aborted ? 'cancelled' : 'failed';
        if (outcome.error) run.error = outcome.error;
        if (outcome.stopped) run.reason = outcome.stopped;
        run.steps = outcome.steps;
      })
      .catch((err: unknown) => {
        run.status = 'failed';
        run.error = errorInfo(err);
      })
      .then(async () => {
        run.finishedAt = clock.now();
        const vars = withoutTrigger(scope);
        if (Object.keys(vars).length > 0) run.variables = vars;
        // Stopped by the hub's own stop while it waited: its record stays as the checkpoint wrote it.
        const keepForResume = this.stopping && run.status === 'cancelled' && run.checkpoint !== undefined && !this.deps.clustered;
        if (!keepForResume) {
          if (run.checkpoint) hadCheckpoint = true;
          delete run.checkpoint;
          // A copy: the record written is the run as it ended. One that waited at a checkpoint is
          // written at once: its stored record says running, which a restart would take up.
          const ended = { ...run, steps: [...run.steps] };
          if (hadCheckpoint) await write(ended);
          else this.trace(ended);
        }
        const list = this.active.get(program.id);
        if (list) {
          const rest = list.filter((a) => a.run !== run);
          if (rest.length > 0) this.active.set(program.id, rest);
          else this.active.delete(program.id);
        }
        events.emit('program.run_finished', { run: { ...run }, at: run.finishedAt });
        if (isAutomationRun) events.emit('automation.finished', { programId: program.id, run: { ...run }, at: run.finishedAt });
        return run;
      });
    const active = { run, abort, done };
    this.active.set(program.id, [...(this.active.get(program.id) ?? []), active]);
    return active;
  }

  /** Refuses unknown devices, programs, macros, zones and scenes, recursion, and loops a trigger would make. */
  private checkReferences(id: string, steps: Step[], offSteps: Step[] | undefined, triggers: Trigger[], program: Pick<Program, 'conditions'>): void {
    const refs = referencesOf({ steps, ...(offSteps ? { offSteps } : {}), triggers, conditions: program.conditions ?? [] });
    const { devices, macros, zones } = this.deps;
    const missing: Record<string, string[]> = {
      devices: [...refs.devices].filter((d) => !devices.registry.find(d) || devices.registry.find(d)!.removed),
      programs: [...refs.programs].filter((p) => p !== id && !this.programs.find(p)),
      macros: [...refs.macros].filter((m) => !macros.macros.find(m)),
      zones: [...refs.zones].filter((z) => !zones.zones.find(z)),
    };
    const named = Object.entries(missing).filter(([, ids]) => ids.length > 0);
    if (named.length > 0) {
      throw programErrors.UNKNOWN_REFERENCE({ missing: named.map(([k, ids]) => `${k} ${ids.join(', ')}`).join('; ') }, { details: missing });
    }
    const cycle = findCycle(
      id,
      (pid) => {
        if (pid === id) return [...steps, ...(offSteps ?? [])];
        const p = this.programs.find(pid);
        return p ? [...p.steps, ...(p.offSteps ?? [])] : undefined;
      },
      () => [],
    );
    if (cycle) throw programErrors.PROGRAM_RECURSION({ cycle: cycle.join(' → ') }, { details: { cycle } });
    const loop = findAutomationLoop(id, { steps, triggers, conditions: program.conditions ?? [] });
    if (loop) throw programErrors.AUTOMATION_LOOP({ why: loop.why }, { details: { path: loop.path, why: loop.why } });
  }

  private environment(): StepEnvironment {
    const { devices, macros, zones, alerts, scenes, automation } = this.deps;
    return {
      command: async (deviceId, command, params, timeoutMs) => {
        await this.untilBackAfterStart(deviceId, timeoutMs ?? 30_000);
        return devices.command(deviceId, command, params, timeoutMs);
      },
      deviceState: (deviceId) => (devices.registry.find(deviceId) ? devices.state.get(deviceId).state : undefined),
      waitForState: (deviceId, check, timeoutMs) => this.waitForState(deviceId, check, timeoutMs),
      runProgram: async (programId, trigger) => {
        const run = await this.run(programId, { trigger, wait: true });
        if (run.status !== 'succeeded') throw programErrors.NESTED_PROGRAM_FAILED({ id: programId, status: run.status }, { details: { runId: run.id, error: run.error } });
        return { runId: run.id };
      },
      runMacro: async (macroId) => {
        const result = await macros.run(macroId);
        if (!result.ok) throw homeErrors.MACRO_FAILED({ macro: macroId }, { details: result });
        return result;
      },
      zoneVolume: async (zoneId, change) => {
        const result = await zones.setVolume(zoneId, change);
        const failed = result.results.filter((r) => !r.ok);
        if (failed.length > 0) throw programErrors.ZONE_VOLUME_FAILED({ deviceIds: failed.map((f) => f.deviceId).join(', ') }, { details: result });
        return result;
      },
      conditions: (conditions, scope) => automation.holds(conditions, scope),
      waitForTrigger: (triggers, timeoutMs, signal) => automation.waitForTrigger(triggers, timeoutMs, signal),
      alert: async (alert) => {
        const submitted = await alerts.submit({ type: alert.type, severity: alert.severity, message: alert.message, source: 'automations', ...(alert.deviceId ? { deviceId: alert.deviceId } : {}) });
        return { alertId: submitted.id };
      },
      scene: (sceneId) => scenes.run(sceneId),
    };
  }

  /** Shortly after the start, an offline device's driver may still be connecting: wait for it a while. */
  private untilBackAfterStart(deviceId: string, timeoutMs: number): Promise<void> {
    const { devices, events, timers, clock } = this.deps;
    const left = this.startedAt + STARTUP_RECONNECT_GRACE_MS - clock.now();
    const device = devices.registry.find(deviceId);
    if (left <= 0 || !device || device.removed || devices.isOnline(device)) return Promise.resolve();
    return new Promise((resolve) => {
      const owner = {};
      const done = () => {
        events.removeOwner(owner);
        timers.clearTimeout(timer);
        resolve();
      };
      const timer = timers.setTimeout(done, Math.min(left, timeoutMs));
      events.on(owner, 'device.online_changed', (e) => {
        if (e.deviceId === deviceId && e.online) done();
      });
    });
  }

  private waitForState(deviceId: string, check: (state: Record<string, unknown>) => boolean, timeoutMs: number): Promise<void> {
    const { devices, events, timers } = this.deps;
    if (check(devices.state.get(deviceId).state)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const owner = {};
      const done = (err?: DomainError) => {
        events.removeOwner(owner);
        timers.clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const timer = timers.setTimeout(
        () => done(programErrors.STEP_TIMEOUT({ subject: `Device ${deviceId}`, what: 'reach the expected state', timeoutMs }, { details: { deviceId } })),
        timeoutMs,
      );
      events.on(owner, 'device.state_changed', (e) => {
        if (e.deviceId === deviceId && check(e.state)) done();
      });
    });
  }
}

function withoutTrigger(variables: Record<string, unknown>): Record<string, unknown> {
  const { trigger: _t, wait: _w, repeat: _r, ...rest } = variables;
  return rest;
}
