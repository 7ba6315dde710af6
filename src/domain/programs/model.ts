/**
 * Programs: executable scripts with an optional off path, and automations: programs with
 * triggers, conditions and a mode (`automation-model.ts`). The canonical script is an array of
 * typed steps (see `steps.ts` for the schemas).
 */
import type { AutomationMode, AutomationPause, Condition, ConditionResult, Trigger, TriggerData } from './automation-model.js';

export type Comparison = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'truthy' | 'falsy';

/** A condition on one device's state key. */
export interface StateCondition {
  deviceId: string;
  key: string;
  op: Comparison;
  value?: unknown;
}

export type Step =
  | { type: 'command'; deviceId: string; command: string; params?: Record<string, unknown>; timeoutMs?: number; label?: string }
  | { type: 'delay'; ms: number; label?: string }
  | { type: 'wait_until'; condition: StateCondition; timeoutMs: number; label?: string }
  | { type: 'run_program'; programId: string; label?: string }
  | { type: 'run_macro'; macroId: string; label?: string }
  | { type: 'zone_volume'; zoneId: string; volume?: number; delta?: number; label?: string }
  | { type: 'parallel'; branches: Step[][]; label?: string }
  | { type: 'condition'; condition: StateCondition; then: Step[]; else?: Step[]; label?: string }
  /** The first choice whose conditions all hold runs; else `default`. */
  | { type: 'choose'; choices: Array<{ conditions: Condition[]; steps: Step[] }>; default?: Step[]; label?: string }
  /** Exactly one of `count`, `while` (checked before each pass), `until` (after each pass). */
  | { type: 'repeat'; count?: number; while?: Condition[]; until?: Condition[]; steps: Step[]; label?: string }
  /** Sets run variables; string values may be templates (`{{ trigger.to }}`). */
  | { type: 'variables'; variables: Record<string, unknown>; label?: string }
  /** Waits for one of `triggers`; past `timeoutMs` the run goes on (`continueOnTimeout`, default) or fails. */
  | { type: 'wait_for_trigger'; triggers: Trigger[]; timeoutMs: number; continueOnTimeout?: boolean; label?: string }
  /** Ends the run here: succeeded, or failed with `error: true`. */
  | { type: 'stop'; reason?: string; error?: boolean; label?: string }
  /** Submits an alert (the alerts of the home: stored, on the streams, an `alert_submitted` hub event). */
  | { type: 'alert'; message: string; severity?: 'info' | 'warning' | 'critical'; alertType?: string; deviceId?: string; label?: string }
  /** Runs a scene a device exposes (`<deviceId>:<sceneId>`). */
  | { type: 'scene'; sceneId: string; label?: string };

export type Timer =
  | { kind: 'daily'; time: string; weekdays?: number[]; timezone?: string; enabled: boolean; catchUp?: boolean }
  | { kind: 'cron'; expression: string; timezone?: string; enabled: boolean; catchUp?: boolean }
  | { kind: 'interval'; everyMs: number; enabled: boolean; catchUp?: boolean }
  /** Once, at a local date-time ("2026-12-24T18:00"). */
  | { kind: 'at'; at: string; timezone?: string; enabled: boolean; catchUp?: boolean };

/** What a second run of a running program does. */
export type ConcurrencyPolicy = 'reject' | 'restart' | 'queue' | 'parallel';

export interface Program {
  id: string;
  name: string;
  description?: string;
  steps: Step[];
  offSteps?: Step[];
  /**
   * Kept on records stored before automations; migrated forward into a `time` trigger with id
   * `timer` (migration 0008). Views still show it, derived from that trigger.
   */
  timer?: Timer | null;
  /** An automation has at least one. */
  triggers?: Trigger[];
  /** All must hold for a trigger to start the run. */
  conditions?: Condition[];
  /** Absent: derived from `concurrency` (reject → single, restart → restart, queue → queued). */
  mode?: AutomationMode;
  /** queued: how many may wait; parallel: how many may run at once. */
  max?: number;
  /** Whether the triggers fire (default true). A disabled automation still runs by hand. */
  enabled?: boolean;
  /** Set by runaway protection; cleared when an admin enables the automation again. */
  pause?: AutomationPause | null;
  /** A run inside a delay or wait when the hub stopped continues from that step after the start. */
  resume?: boolean;
  concurrency: ConcurrencyPolicy;
  /** User tags for intents ("movie", "bedtime"). */
  semantics?: string[];
  /** The YAML it was authored in, kept verbatim when the program came from YAML. */
  yaml?: string;
  createdAt: number;
  updatedAt: number;
}

/**
 * `skipped`: a trigger came while the mode allowed no run; `not_passed`: a trigger came and the
 * conditions did not hold; `interrupted`: the hub stopped inside a delay or wait.
 */
export type RunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled' | 'skipped' | 'not_passed' | 'interrupted';

export interface StepResult {
  path: string;
  type: Step['type'];
  label?: string;
  status: 'succeeded' | 'failed' | 'skipped';
  startedAt: number;
  finishedAt: number;
  result?: unknown;
  error?: { code: string; message: string };
}

export interface ProgramRun {
  id: string;
  programId: string;
  path: 'on' | 'off';
  trigger: 'manual' | 'timer' | 'program' | 'zone' | 'preset' | 'intent' | 'macro' | 'action_map' | 'automation' | 'test';
  status: RunStatus;
  startedAt: number;
  finishedAt?: number;
  steps: StepResult[];
  error?: { code: string; message: string; step?: string };
  /** The trace of an automation run: what started it, what the conditions read, the variables. */
  triggered?: TriggerData;
  conditions?: ConditionResult[];
  variables?: Record<string, unknown>;
  /** Why the run did not start (skipped) or how it ended (stopped, interrupted), in words. */
  reason?: string;
  /** The same outcome again (a skip or a failed condition repeated): counted on the newest record. */
  count?: number;
  lastAt?: number;
  /** Resumed after a restart: the run it continues. */
  resumedFrom?: string;
  /** While the run waits at a delay or wait: where and until when (what a restart resumes from). */
  checkpoint?: { path: string; until: number };
}

/**
 * What the executor needs from the rest of the hub. Each call may reject with a DomainError,
 * which fails the step.
 */
export interface StepEnvironment {
  command(deviceId: string, command: string, params: Record<string, unknown>, timeoutMs: number | undefined): Promise<unknown>;
  deviceState(deviceId: string): Record<string, unknown> | undefined;
  /** Resolves when `check` holds for a state change of `deviceId` (or at once if it does now). */
  waitForState(deviceId: string, check: (state: Record<string, unknown>) => boolean, timeoutMs: number): Promise<void>;
  runProgram(programId: string, trigger: ProgramRun['trigger']): Promise<unknown>;
  runMacro(macroId: string): Promise<unknown>;
  zoneVolume(zoneId: string, change: { volume?: number; delta?: number }): Promise<unknown>;
  /** Evaluates automation conditions for choose and repeat (with the run's variables). */
  conditions(conditions: Condition[], scope: Record<string, unknown>): boolean;
  /** Resolves with what fired first of `triggers`, or undefined past `timeoutMs`. */
  waitForTrigger(triggers: Trigger[], timeoutMs: number, signal: AbortSignal | undefined): Promise<TriggerData | undefined>;
  alert(alert: { message: string; severity: 'info' | 'warning' | 'critical'; type: string; deviceId?: string }): Promise<unknown>;
  scene(sceneId: string): Promise<unknown>;
}
