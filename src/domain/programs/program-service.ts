import { randomUUID } from 'node:crypto';
import type { Clock, Timers } from '../../platform/clock.js';
import type { DomainError } from '../../platform/errors.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import { errorInfo, tryCommand } from '../devices/command-results.js';
import type { DeviceActionResult } from '../devices/model.js';
import { homeErrors } from '../home/errors.js';
import type { MacroService } from '../home/macros.js';
import type { ZoneService } from '../home/zones.js';
import { programErrors } from './errors.js';
import { ProgramExecutor } from './executor.js';
import type { ConcurrencyPolicy, Program, ProgramRun, Step, StepEnvironment, Timer } from './model.js';
import { findCycle, lightingDevices, referencesOf } from './references.js';
import { ProgramScheduler, type FireStore } from './scheduler.js';
import { parseProgramInput, validateProgramScript, validateTimer } from './steps.js';

export interface ProgramRunRepository {
  save(run: ProgramRun): Promise<void>;
  list(programId: string, limit: number): Promise<ProgramRun[]>;
  get(runId: string): Promise<ProgramRun | undefined>;
  /** Keeps the newest `keep` runs of a program. */
  prune(programId: string, keep: number): Promise<void>;
}

export interface ProgramUser {
  kind: 'zone' | 'program';
  id: string;
  name: string;
}

const RUN_HISTORY_PER_PROGRAM = 50;
const MAX_QUEUED_RUNS = 5;

interface Active {
  run: ProgramRun;
  abort: AbortController;
  done: Promise<ProgramRun>;
}

/**
 * Programs: saving (canonical steps or YAML, with references and recursion checked), running with
 * a concurrency policy, run history, timers through the scheduler, and the lighting-off helper.
 *
 * Second run of a running program, by its `concurrency`: `reject` answers 409 PROGRAM_RUNNING;
 * `restart` cancels the running one and starts again; `queue` runs it after the current one
 * (at most 5 waiting; more answers 409 RUN_QUEUE_FULL).
 */
export class ProgramService {
  private readonly active = new Map<string, Active>();
  private readonly queued = new Map<string, number>();
  private readonly executor: ProgramExecutor;
  readonly scheduler: ProgramScheduler;

  constructor(
    /** The records the program catalog holds (and loads). */
    readonly programs: DocumentCollection<Program>,
    private readonly runs: ProgramRunRepository,
    fires: FireStore,
    private readonly devices: DeviceService,
    /** What steps reach besides devices: zones (volume) and macros. */
    private readonly zones: ZoneService,
    private readonly macros: MacroService,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: { error(obj: unknown, msg: string): void },
  ) {
    this.executor = new ProgramExecutor(this.environment(), clock, timers);
    this.scheduler = new ProgramScheduler({
      clock,
      timers,
      store: fires,
      log,
      fire: (programId) => {
        this.run(programId, { trigger: 'timer' }).catch((err: unknown) => log.error({ err, programId }, 'timer run not started'));
      },
    });
  }

  async start(): Promise<void> {
    await this.scheduler.start(this.programs.list().map((p) => ({ id: p.id, timer: p.timer, since: p.updatedAt })));
    // Programs saved on another instance of a cluster: their timers are armed here too (each slot
    // fires once, on whichever instance claims it first).
    const follow = ({ program }: { program: Program }) => void this.scheduler.schedule(program.id, program.timer);
    this.events.on(this, 'program.created', follow, { origin: 'replica' });
    this.events.on(this, 'program.updated', follow, { origin: 'replica' });
    this.events.on(this, 'program.removed', ({ programId }) => this.scheduler.unschedule(programId), { origin: 'replica' });
  }

  async stop(): Promise<void> {
    this.events.removeOwner(this);
    this.scheduler.stop();
    for (const { abort } of this.active.values()) abort.abort();
    await Promise.allSettled([...this.active.values()].map((a) => a.done));
  }

  list(): Program[] {
    return this.programs.list();
  }

  find(id: string): Program | undefined {
    return this.programs.find(id);
  }

  view(program: Program) {
    return { ...program, nextFireAt: this.scheduler.nextFire(program.id) ?? null, running: this.active.has(program.id) };
  }

  async save(body: unknown): Promise<Program> {
    const draft = parseProgramInput(body);
    const existing = draft.id ? this.programs.find(draft.id) : undefined;
    const id = draft.id ?? randomUUID();
    const candidate = {
      id,
      name: draft.name,
      ...(draft.description !== undefined ? { description: draft.description } : {}),
      steps: draft.steps,
      ...(draft.offSteps ? { offSteps: draft.offSteps } : {}),
      timer: draft.timer === undefined ? (existing?.timer ?? null) : draft.timer,
      concurrency: draft.concurrency ?? existing?.concurrency ?? 'reject',
      semantics: draft.semantics ?? existing?.semantics ?? [],
      ...(draft.yaml !== undefined ? { yaml: draft.yaml } : {}),
    };
    this.checkReferences(id, candidate.steps, candidate.offSteps);
    const { item, created } = await this.programs.save(candidate);
    await this.scheduler.schedule(item.id, item.timer);
    this.events.emit(created ? 'program.created' : 'program.updated', { program: item, at: this.clock.now() });
    return item;
  }

  async updateScript(id: string, script: { steps: Step[]; offSteps?: Step[] | null }): Promise<Program> {
    const program = this.programs.get(id);
    validateProgramScript({ steps: script.steps, ...(script.offSteps ? { offSteps: script.offSteps } : {}) });
    this.checkReferences(id, script.steps, script.offSteps ?? undefined);
    const updated = await this.programs.update(id, () => {
      const next: Partial<Program> = { steps: script.steps, yaml: undefined };
      if (script.offSteps !== undefined) next.offSteps = script.offSteps ?? undefined;
      return next;
    });
    void program;
    this.events.emit('program.updated', { program: updated, at: this.clock.now() });
    return updated;
  }

  async updateTimer(id: string, timer: unknown): Promise<Program> {
    this.programs.get(id);
    const parsed = validateTimer(timer) ?? null;
    const updated = await this.programs.update(id, () => ({ timer: parsed as Timer | null }));
    await this.scheduler.schedule(id, updated.timer);
    this.events.emit('program.updated', { program: updated, at: this.clock.now() });
    return updated;
  }

  /** Replaces a program's semantic tags (what intents match besides its name). */
  async setSemantics(id: string, change: (current: string[]) => string[]): Promise<Program> {
    const updated = await this.programs.update(id, (p) => ({ semantics: [...new Set(change(p.semantics ?? []).map((t) => t.trim().toLowerCase()).filter(Boolean))] }));
    this.events.emit('program_semantics.updated', { programId: id, semantics: updated.semantics ?? [], at: this.clock.now() });
    return updated;
  }

  async copy(id: string, name?: string): Promise<Program> {
    const source = this.programs.get(id);
    const { id: _id, createdAt: _c, updatedAt: _u, ...rest } = source;
    // A copy starts with its timer off: two programs firing at once is rarely what one wants.
    const timer = source.timer ? { ...source.timer, enabled: false } : null;
    const { item } = await this.programs.save({ ...rest, timer, name: name ?? `${source.name} (copy)` });
    this.events.emit('program.created', { program: item, at: this.clock.now() });
    return item;
  }

  usersOf(id: string): ProgramUser[] {
    const users: ProgramUser[] = this.zones.zonesUsingProgram(id).map((z) => ({ kind: 'zone' as const, id: z.id, name: z.name }));
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
    this.active.get(id)?.abort.abort();
    this.scheduler.unschedule(id);
    await this.programs.remove(id);
    this.events.emit('program.removed', { programId: id, at: this.clock.now() });
  }

  async run(programId: string, options: { trigger: ProgramRun['trigger']; path?: 'on' | 'off'; wait?: boolean }): Promise<ProgramRun> {
    const program = this.programs.get(programId);
    const path = options.path ?? 'on';
    const steps = path === 'off' ? program.offSteps : program.steps;
    if (!steps) throw programErrors.NO_OFF_PATH({ program: program.name }, { details: { programId } });
    const running = this.active.get(programId);
    if (running) await this.admitSecondRun(program.concurrency, running, programId);
    const started = this.begin(program, steps, path, options.trigger);
    return options.wait ? started.done : { ...started.run, steps: [...started.run.steps] };
  }

  /** Runs the program assigned to a zone (409 ZONE_HAS_NO_PROGRAM when it has none). */
  async runZoneProgram(zoneId: string, wait: boolean): Promise<ProgramRun> {
    const zone = this.zones.zones.get(zoneId);
    if (!zone.programId) throw programErrors.ZONE_HAS_NO_PROGRAM({ zone: zone.name }, { details: { zoneId } });
    return this.run(zone.programId, { trigger: 'zone', wait });
  }

  async history(programId: string, limit: number): Promise<ProgramRun[]> {
    this.programs.get(programId);
    const stored = await this.runs.list(programId, limit);
    const live = this.active.get(programId)?.run;
    return live && !stored.some((r) => r.id === live.id) ? [live, ...stored].slice(0, limit) : stored;
  }

  async getRun(runId: string): Promise<ProgramRun> {
    for (const { run } of this.active.values()) if (run.id === runId) return run;
    const run = await this.runs.get(runId);
    if (!run) throw programErrors.RUN_NOT_FOUND({ runId }, { details: { runId } });
    return run;
  }

  /** Turns off every lighting device the program's steps command (on and off paths). */
  async lightingOff(id: string): Promise<{ programId: string; results: DeviceActionResult[] }> {
    const program = this.programs.get(id);
    const isLighting = (deviceId: string) => {
      const device = this.devices.registry.find(deviceId);
      return !!device && !device.removed && this.devices.model(device).deviceClass === 'light';
    };
    const targets = lightingDevices([...program.steps, ...(program.offSteps ?? [])], isLighting);
    // The light class's standard turn_off: each light's own off command (or its toggle) is found for it.
    const results = await Promise.all(targets.map((deviceId) => tryCommand(this.devices, deviceId, 'turn_off')));
    this.events.emit('program.lighting_off', { programId: id, results, at: this.clock.now() });
    return { programId: id, results };
  }

  private async admitSecondRun(policy: ConcurrencyPolicy, running: Active, programId: string): Promise<void> {
    if (policy === 'reject') throw programErrors.PROGRAM_RUNNING({ id: programId, runId: running.run.id }, { details: { runId: running.run.id } });
    if (policy === 'restart') {
      running.abort.abort();
      await running.done;
      return;
    }
    const waiting = this.queued.get(programId) ?? 0;
    if (waiting >= MAX_QUEUED_RUNS) throw programErrors.RUN_QUEUE_FULL({ id: programId, waiting }, { details: { programId } });
    this.queued.set(programId, waiting + 1);
    try {
      while (this.active.has(programId)) await this.active.get(programId)!.done;
    } finally {
      this.queued.set(programId, (this.queued.get(programId) ?? 1) - 1);
    }
  }

  private begin(program: Program, steps: Step[], path: 'on' | 'off', trigger: ProgramRun['trigger']): Active {
    const run: ProgramRun = { id: randomUUID(), programId: program.id, path, trigger, status: 'running', startedAt: this.clock.now(), steps: [] };
    const abort = new AbortController();
    this.events.emit('program.run_started', { run: { ...run }, at: run.startedAt });
    const done = this.executor
      .run(steps, { signal: abort.signal, onStep: (result) => run.steps.push(result) })
      .then((outcome) => {
        run.status = outcome.ok ? 'succeeded' : abort.signal.aborted ? 'cancelled' : 'failed';
        if (outcome.error) run.error = outcome.error;
        run.steps = outcome.steps;
      })
      .catch((err: unknown) => {
        run.status = 'failed';
        run.error = errorInfo(err);
      })
      .then(async () => {
        run.finishedAt = this.clock.now();
        try {
          await this.runs.save(run);
          await this.runs.prune(program.id, RUN_HISTORY_PER_PROGRAM);
        } catch (err) {
          this.log.error({ err, runId: run.id }, 'run history not saved');
        }
        if (this.active.get(program.id)?.run === run) this.active.delete(program.id);
        this.events.emit('program.run_finished', { run: { ...run }, at: run.finishedAt });
        return run;
      });
    const active = { run, abort, done };
    this.active.set(program.id, active);
    return active;
  }

  /** Refuses unknown devices, programs, macros and zones, and recursion through programs or macros. */
  private checkReferences(id: string, steps: Step[], offSteps?: Step[]): void {
    const refs = referencesOf({ steps, ...(offSteps ? { offSteps } : {}) });
    const missing: Record<string, string[]> = {
      devices: [...refs.devices].filter((d) => !this.devices.registry.find(d) || this.devices.registry.find(d)!.removed),
      programs: [...refs.programs].filter((p) => p !== id && !this.programs.find(p)),
      macros: [...refs.macros].filter((m) => !this.macros.macros.find(m)),
      zones: [...refs.zones].filter((z) => !this.zones.zones.find(z)),
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
  }

  private environment(): StepEnvironment {
    return {
      command: (deviceId, command, params, timeoutMs) => this.devices.command(deviceId, command, params, timeoutMs),
      deviceState: (deviceId) => (this.devices.registry.find(deviceId) ? this.devices.state.get(deviceId).state : undefined),
      waitForState: (deviceId, check, timeoutMs) => this.waitForState(deviceId, check, timeoutMs),
      runProgram: async (programId, trigger) => {
        const run = await this.run(programId, { trigger, wait: true });
        if (run.status !== 'succeeded') throw programErrors.NESTED_PROGRAM_FAILED({ id: programId, status: run.status }, { details: { runId: run.id, error: run.error } });
        return { runId: run.id };
      },
      runMacro: async (macroId) => {
        const result = await this.macros.run(macroId);
        if (!result.ok) throw homeErrors.MACRO_FAILED({ macro: macroId }, { details: result });
        return result;
      },
      zoneVolume: async (zoneId, change) => {
        const result = await this.zones.setVolume(zoneId, change);
        const failed = result.results.filter((r) => !r.ok);
        if (failed.length > 0) throw programErrors.ZONE_VOLUME_FAILED({ deviceIds: failed.map((f) => f.deviceId).join(', ') }, { details: result });
        return result;
      },
    };
  }

  private waitForState(deviceId: string, check: (state: Record<string, unknown>) => boolean, timeoutMs: number): Promise<void> {
    if (check(this.devices.state.get(deviceId).state)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const owner = {};
      const done = (err?: DomainError) => {
        this.events.removeOwner(owner);
        this.timers.clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const timer = this.timers.setTimeout(
        () => done(programErrors.STEP_TIMEOUT({ subject: `Device ${deviceId}`, what: 'reach the expected state', timeoutMs }, { details: { deviceId } })),
        timeoutMs,
      );
      this.events.on(owner, 'device.state_changed', (e) => {
        if (e.deviceId === deviceId && check(e.state)) done();
      });
    });
  }
}
