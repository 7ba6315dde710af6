/**
 * Runs a canonical step list against a StepEnvironment.
 *
 * - Steps run in order. Each step's result carries a path: "0", "3.branch1.2" (step 2 of the
 *   second branch of parallel step 3; branches count from 0), "4.then.0", "4.else.1".
 * - Results are reported (to `onStep` and in `steps`) when a step finishes, so a container
 *   (parallel, condition) comes after the steps inside it.
 * - A failing step stops the run: the outcome is `ok:false` with `error.step` the path of the
 *   step that failed first (the innermost one; the containers around it are reported failed
 *   with the same code). Steps after it are NOT run and NOT reported.
 * - Error codes: the DomainError's code when a step rejects with one, `STEP_TIMEOUT` when a
 *   command / zone volume change / wait_until outlives its timeout, `CANCELLED` when the signal
 *   aborts (the step in progress is reported failed with CANCELLED), else `STEP_FAILED`.
 * - parallel: branches run concurrently; when one fails, the others are cancelled (their steps
 *   in progress are reported failed with CANCELLED) and the parallel step fails with the first
 *   failure.
 * - condition/wait_until: a device without state, or a state without the key, is "false".
 * - Timeouts: command → its `timeoutMs` or the default (30 s), passed to `env.command` and raced
 *   against a timer; zone_volume → the default; wait_until → its `timeoutMs`; run_program and
 *   run_macro have none (they end when the nested run ends; cancelling ends the wait for it, not
 *   the nested run — the environment has no way to cancel those).
 * - All waiting goes through the injected timers, and every timer is cleared when its wait ends.
 */
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import { DomainError } from '../../platform/errors.js';
import { renderDeep, renderTemplate, TemplateError } from '../automations/templates.js';
import { AUTOMATION_LIMITS } from './automation-model.js';
import { programErrors } from './errors.js';
import type { StateCondition, Step, StepEnvironment, StepResult } from './model.js';

/** Where a run waits (a delay or a wait) and until when: what a run resumes from after a restart. */
export interface Checkpoint {
  path: string;
  until: number;
}

/** Step results kept per run; a longer run (a repeat of thousands) counts the rest. */
export const MAX_STEP_RESULTS = 1000;

export const DEFAULT_STEP_TIMEOUT_MS = 30_000;

export interface ExecutorOptions {
  /** Timeout of command and zone volume steps without their own (default 30 s). */
  defaultStepTimeoutMs?: number;
}

export interface RunContext {
  signal?: AbortSignal;
  /** Called as each step finishes (containers after their contents). Exceptions are ignored. */
  onStep?: (result: StepResult) => void;
  /**
   * The run's variables (`trigger` among them), read by templates and set by `variables` steps;
   * changed in place, so the caller sees what the run set.
   */
  scope?: Record<string, unknown>;
  /** A delay or wait begins (with where and until when) or ends (undefined). */
  onCheckpoint?: (checkpoint: Checkpoint | undefined) => void;
  /** Continue a run from the delay or wait it was in: the steps before it are not run again. */
  resume?: Checkpoint;
}

/** Whether a run can be continued from this checkpoint (not from inside a parallel step). */
export function resumable(checkpoint: Checkpoint): boolean {
  return !checkpoint.path.split('.').some((segment) => segment.startsWith('branch'));
}

export interface RunError {
  code: string;
  message: string;
  /** Path of the step that failed first. */
  step?: string;
}

export interface RunOutcome {
  ok: boolean;
  steps: StepResult[];
  error?: RunError;
  /** A `stop` step ended the run, with its reason. */
  stopped?: string;
  /** Step results not kept (past MAX_STEP_RESULTS). */
  omittedSteps?: number;
}

/** A `stop` step: unwinds the run. */
class StopRun extends Error {
  constructor(
    readonly reason: string,
    readonly failed: boolean,
    readonly path: string,
  ) {
    super(reason);
  }
}

interface Walk {
  signal: AbortSignal | undefined;
  emit: (r: StepResult) => void;
  scope: Record<string, unknown>;
  checkpoint: (c: Checkpoint | undefined) => void;
}

/** A step failed; carries the path of the step where it started. */
class StepFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

class Cancelled extends Error {
  constructor() {
    super(programErrors.CANCELLED.template);
  }
}

const hasKey = (state: Record<string, unknown>, key: string) => Object.prototype.hasOwnProperty.call(state, key);

function numeric(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' || typeof b === 'number') {
    const x = numeric(a);
    const y = numeric(b);
    return x !== undefined && y !== undefined && x === y;
  }
  if (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null) return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

function ordered(a: unknown, b: unknown): number | undefined {
  const x = numeric(a);
  const y = numeric(b);
  if (x !== undefined && y !== undefined) return x - y;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

/**
 * True when `state` satisfies `condition`. No state, or no such key, is false (for every
 * operator). eq/ne: equal values (a number equals its decimal text; objects by content);
 * gt/gte/lt/lte: numbers (or numeric text), or two strings; truthy/falsy: JavaScript truthiness.
 */
export function evaluateCondition(condition: StateCondition, state: Record<string, unknown> | undefined): boolean {
  if (!state || !hasKey(state, condition.key)) return false;
  const actual = state[condition.key];
  switch (condition.op) {
    case 'eq':
      return valuesEqual(actual, condition.value);
    case 'ne':
      return !valuesEqual(actual, condition.value);
    case 'truthy':
      return Boolean(actual);
    case 'falsy':
      return !actual;
    default: {
      const d = ordered(actual, condition.value);
      if (d === undefined) return false;
      return condition.op === 'gt' ? d > 0 : condition.op === 'gte' ? d >= 0 : condition.op === 'lt' ? d < 0 : d <= 0;
    }
  }
}

export class ProgramExecutor {
  private readonly defaultTimeoutMs: number;

  constructor(
    private readonly env: StepEnvironment,
    private readonly clock: Clock,
    private readonly timers: Timers,
    options: ExecutorOptions = {},
  ) {
    this.defaultTimeoutMs = options.defaultStepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
  }

  async run(steps: Step[], ctx: RunContext = {}): Promise<RunOutcome> {
    const results: StepResult[] = [];
    let omitted = 0;
    const emit = (r: StepResult) => {
      if (results.length >= MAX_STEP_RESULTS) {
        omitted++;
        return;
      }
      results.push(r);
      try {
        ctx.onStep?.(r);
      } catch {
        // an observer's problem is not the run's
      }
    };
    const walk: Walk = {
      signal: ctx.signal,
      emit,
      scope: ctx.scope ?? {},
      checkpoint: (c) => {
        try {
          ctx.onCheckpoint?.(c);
        } catch {
          // an observer's problem is not the run's
        }
      },
    };
    const omittedSteps = () => (omitted > 0 ? { omittedSteps: omitted } : {});
    try {
      await this.runList(steps, '', walk, ctx.resume && resumable(ctx.resume) ? ctx.resume : undefined);
      return { ok: true, steps: results, ...omittedSteps() };
    } catch (e) {
      if (e instanceof StopRun) {
        if (!e.failed) return { ok: true, steps: results, stopped: e.reason, ...omittedSteps() };
        return { ok: false, steps: results, stopped: e.reason, error: { ...programErrors.RUN_STOPPED.info({ reason: e.reason }), step: e.path }, ...omittedSteps() };
      }
      const f = e instanceof StepFailure ? e : new StepFailure(programErrors.STEP_FAILED.code, e instanceof Error ? e.message : String(e), '');
      const error: RunError = { code: f.code, message: f.message };
      if (f.path) error.step = f.path;
      return { ok: false, steps: results, error, ...omittedSteps() };
    }
  }

  /** Runs a list; with `resume`, from the step it names (the steps before it ran before the restart). */
  private async runList(steps: readonly Step[], prefix: string, walk: Walk, resume?: Checkpoint): Promise<void> {
    let first = 0;
    if (resume) {
      const rest = prefix ? resume.path.slice(prefix.length + 1) : resume.path;
      first = Number(rest.split('.')[0]);
      // A checkpoint that does not fit the steps resumes nothing rather than running them again.
      if (!Number.isInteger(first) || first < 0 || first >= steps.length) return;
    }
    for (let i = first; i < steps.length; i++) {
      await this.runStep(steps[i] as Step, prefix ? `${prefix}.${i}` : String(i), walk, i === first ? resume : undefined);
    }
  }

  private async runStep(step: Step, path: string, walk: Walk, resume?: Checkpoint): Promise<void> {
    const { signal, emit } = walk;
    const startedAt = this.clock.now();
    const base = (): Pick<StepResult, 'path' | 'type' | 'label' | 'startedAt' | 'finishedAt'> => {
      const r: Pick<StepResult, 'path' | 'type' | 'label' | 'startedAt' | 'finishedAt'> = { path, type: step.type, startedAt, finishedAt: this.clock.now() };
      if (step.label !== undefined) r.label = step.label;
      return r;
    };
    try {
      if (signal?.aborted) throw new Cancelled();
      const result = await this.execute(step, path, walk, resume);
      const r: StepResult = { ...base(), status: 'succeeded' };
      if (result !== undefined) r.result = result;
      emit(r);
    } catch (e) {
      if (e instanceof StopRun) {
        emit({ ...base(), status: e.failed ? 'failed' : 'succeeded', ...(step.type === 'stop' ? { result: { reason: e.reason } } : {}) });
        throw e;
      }
      if (e instanceof StepFailure) {
        // A step inside this container failed: the container fails with it.
        emit({ ...base(), status: 'failed', error: { code: e.code, message: e.message } });
        throw e;
      }
      const { code, message } = describe(e, signal);
      emit({ ...base(), status: 'failed', error: { code, message } });
      throw new StepFailure(code, message, path);
    }
  }

  private async execute(step: Step, path: string, walk: Walk, resume?: Checkpoint): Promise<unknown> {
    const { signal, scope } = walk;
    const here = resume?.path === path ? resume : undefined;
    const inside = resume && resume.path !== path ? resume : undefined;
    switch (step.type) {
      case 'command': {
        const timeoutMs = step.timeoutMs ?? this.defaultTimeoutMs;
        const params = step.params ? (render(() => renderDeep(step.params, scope)) as Record<string, unknown>) : {};
        return this.guard(() => this.env.command(step.deviceId, step.command, params, timeoutMs), signal, { timeoutMs, subject: step.deviceId, what: `answer ${step.command}` });
      }
      case 'delay': {
        const until = here ? here.until : this.clock.now() + step.ms;
        walk.checkpoint({ path, until });
        try {
          await this.sleep(Math.max(0, until - this.clock.now()), signal);
        } finally {
          walk.checkpoint(undefined);
        }
        return here ? { resumed: true } : undefined;
      }
      case 'wait_until': {
        const { condition } = step;
        const until = here ? here.until : this.clock.now() + step.timeoutMs;
        const timeoutMs = Math.max(1, until - this.clock.now());
        walk.checkpoint({ path, until });
        try {
          await this.guard(
            () => this.env.waitForState(condition.deviceId, (state) => evaluateCondition(condition, state), timeoutMs),
            signal,
            { timeoutMs, subject: `${condition.deviceId}.${condition.key}`, what: 'reach the condition' },
          );
        } finally {
          walk.checkpoint(undefined);
        }
        return undefined;
      }
      case 'wait_for_trigger': {
        const until = here ? here.until : this.clock.now() + step.timeoutMs;
        walk.checkpoint({ path, until });
        let fired;
        try {
          fired = await this.guard(() => this.env.waitForTrigger(step.triggers, Math.max(1, until - this.clock.now()), signal), signal);
        } finally {
          walk.checkpoint(undefined);
        }
        scope['wait'] = { trigger: fired ?? null, completed: fired !== undefined };
        if (!fired && step.continueOnTimeout === false) {
          throw programErrors.STEP_TIMEOUT({ subject: 'No trigger', what: 'fire', timeoutMs: step.timeoutMs }, { details: { path } });
        }
        return { fired: fired ? fired.description : null };
      }
      case 'run_program':
        return this.guard(() => this.env.runProgram(step.programId, 'program'), signal);
      case 'run_macro':
        return this.guard(() => this.env.runMacro(step.macroId), signal);
      case 'zone_volume': {
        const change: { volume?: number; delta?: number } = step.volume !== undefined ? { volume: step.volume } : { delta: step.delta ?? 0 };
        return this.guard(() => this.env.zoneVolume(step.zoneId, change), signal, { timeoutMs: this.defaultTimeoutMs, subject: `Zone ${step.zoneId}`, what: 'change volume' });
      }
      case 'condition': {
        if (inside) {
          const branch = inside.path.startsWith(`${path}.then`) ? 'then' : 'else';
          await this.runList(branch === 'then' ? step.then : (step.else ?? []), `${path}.${branch}`, walk, inside);
          return { matched: branch === 'then', branch, resumed: true };
        }
        const matched = evaluateCondition(step.condition, this.env.deviceState(step.condition.deviceId));
        if (matched) await this.runList(step.then, `${path}.then`, walk);
        else if (step.else) await this.runList(step.else, `${path}.else`, walk);
        return { matched, branch: matched ? 'then' : step.else ? 'else' : null };
      }
      case 'choose': {
        if (inside) {
          const segment = inside.path.slice(path.length + 1).split('.')[0] ?? '';
          const k = segment === 'default' ? -1 : Number(segment.replace('choice', ''));
          const list = k === -1 ? step.default ?? [] : step.choices[k]?.steps ?? [];
          await this.runList(list, `${path}.${segment}`, walk, inside);
          return { chose: k === -1 ? 'default' : k, resumed: true };
        }
        const k = step.choices.findIndex((c) => this.env.conditions(c.conditions, scope));
        if (k >= 0) await this.runList((step.choices[k] as { steps: Step[] }).steps, `${path}.choice${k}`, walk);
        else if (step.default) await this.runList(step.default, `${path}.default`, walk);
        return { chose: k >= 0 ? k : step.default ? 'default' : null };
      }
      case 'repeat':
        return this.repeat(step, path, walk, inside);
      case 'variables':
        for (const [name, value] of Object.entries(step.variables)) scope[name] = render(() => renderDeep(value, scope));
        return undefined;
      case 'stop':
        throw new StopRun(step.reason ?? 'Stopped by a stop step.', step.error === true, path);
      case 'alert': {
        const message = String(render(() => renderTemplate(step.message, scope)));
        return this.guard(
          () => this.env.alert({ message, severity: step.severity ?? 'info', type: step.alertType ?? 'automation', ...(step.deviceId ? { deviceId: step.deviceId } : {}) }),
          signal,
        );
      }
      case 'scene':
        return this.guard(() => this.env.scene(step.sceneId), signal, { timeoutMs: this.defaultTimeoutMs, subject: `Scene ${step.sceneId}`, what: 'run' });
      case 'parallel':
        await this.parallel(step.branches, path, walk);
        return undefined;
      default:
        throw programErrors.STEP_FAILED({ reason: `Unknown step type ${JSON.stringify((step as { type?: unknown }).type)}.` });
    }
  }

  /** count, while (before each pass) or until (after each pass); at most maxRepeat passes. */
  private async repeat(step: Extract<Step, { type: 'repeat' }>, path: string, walk: Walk, inside?: Checkpoint): Promise<unknown> {
    const limit = Math.min(step.count ?? AUTOMATION_LIMITS.maxRepeat, AUTOMATION_LIMITS.maxRepeat);
    let pass = 0;
    if (inside) pass = Number((inside.path.slice(path.length + 1).split('.')[0] ?? '').replace('pass', '')) || 0;
    for (; pass < limit; pass++) {
      walk.scope['repeat'] = { index: pass + 1, first: pass === 0, ...(step.count ? { last: pass === step.count - 1 } : {}) };
      const resuming = inside && pass === Number((inside.path.slice(path.length + 1).split('.')[0] ?? '').replace('pass', ''));
      if (!resuming && step.while && !this.env.conditions(step.while, walk.scope)) return { passes: pass };
      await this.runList(step.steps, `${path}.pass${pass}`, walk, resuming ? inside : undefined);
      if (step.until && this.env.conditions(step.until, walk.scope)) return { passes: pass + 1 };
    }
    if (!step.count) throw programErrors.STEP_FAILED({ reason: `The repeat ran ${limit} passes, the most one may.` }, { details: { path } });
    return { passes: pass };
  }

  private async parallel(branches: Step[][], path: string, walk: Walk): Promise<void> {
    const { signal } = walk;
    const controller = new AbortController();
    const onOuterAbort = () => controller.abort();
    if (signal?.aborted) controller.abort();
    else signal?.addEventListener('abort', onOuterAbort, { once: true });
    let first: unknown;
    let failed = false;
    try {
      await Promise.all(
        branches.map(async (branch, b) => {
          try {
            // A wait inside a branch is not a place a run can resume from: no checkpoint.
            await this.runList(branch, `${path}.branch${b}`, { ...walk, signal: controller.signal, checkpoint: () => undefined });
          } catch (e) {
            if (!failed) {
              failed = true;
              first = e;
              controller.abort();
            }
          }
        }),
      );
    } finally {
      signal?.removeEventListener('abort', onOuterAbort);
    }
    if (failed) throw first;
  }

  /** Waits `ms` on the injected timers; rejects with Cancelled when the signal aborts. */
  private sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(new Cancelled());
    if (ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.timers.clearTimeout(handle);
        reject(new Cancelled());
      };
      const handle = this.timers.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Settles with `work`, unless the signal aborts first (Cancelled) or `timeoutMs` passes first
   * (STEP_TIMEOUT). The timer is armed before `work` starts, so it wins a tie with a timer of
   * the same length inside the environment.
   */
  private guard<T>(work: () => Promise<T>, signal: AbortSignal | undefined, timeout?: { timeoutMs: number; subject: string; what: string }): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new Cancelled());
        return;
      }
      let handle: TimerHandle | undefined;
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        this.timers.clearTimeout(handle);
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const onAbort = () => finish(() => reject(new Cancelled()));
      if (timeout !== undefined) {
        handle = this.timers.setTimeout(() => finish(() => reject(programErrors.STEP_TIMEOUT(timeout))), timeout.timeoutMs);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      let promise: Promise<T>;
      try {
        promise = Promise.resolve(work());
      } catch (e) {
        promise = Promise.reject(e);
      }
      promise.then(
        (v) => finish(() => resolve(v)),
        (e: unknown) => finish(() => reject(e)),
      );
    });
  }
}

/** A template that fails at run time fails its step, in words. */
function render(work: () => unknown): unknown {
  try {
    return work();
  } catch (e) {
    if (e instanceof TemplateError) throw programErrors.STEP_FAILED({ reason: `Template: ${e.message}` });
    throw e;
  }
}

function describe(e: unknown, signal: AbortSignal | undefined): { code: string; message: string } {
  if (e instanceof Cancelled || (signal?.aborted && !(e instanceof DomainError && e.code === programErrors.STEP_TIMEOUT.code))) {
    return programErrors.CANCELLED.info();
  }
  if (e instanceof DomainError) return { code: e.code, message: e.message };
  return programErrors.STEP_FAILED.info({ reason: e instanceof Error ? e.message : String(e) });
}
