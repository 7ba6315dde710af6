/**
 * Programs: executable scripts with an optional off path and an optional timer.
 * The canonical script is an array of typed steps (see `steps.ts` for the schemas).
 */

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
  | { type: 'condition'; condition: StateCondition; then: Step[]; else?: Step[]; label?: string };

export type Timer =
  | { kind: 'daily'; time: string; weekdays?: number[]; timezone?: string; enabled: boolean; catchUp?: boolean }
  | { kind: 'cron'; expression: string; timezone?: string; enabled: boolean; catchUp?: boolean }
  | { kind: 'interval'; everyMs: number; enabled: boolean; catchUp?: boolean };

/** What a second run of a running program does. */
export type ConcurrencyPolicy = 'reject' | 'restart' | 'queue';

export interface Program {
  id: string;
  name: string;
  description?: string;
  steps: Step[];
  offSteps?: Step[];
  timer?: Timer | null;
  concurrency: ConcurrencyPolicy;
  /** User tags for intents ("movie", "bedtime"). */
  semantics?: string[];
  /** The YAML it was authored in, kept verbatim when the program came from YAML. */
  yaml?: string;
  createdAt: number;
  updatedAt: number;
}

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled';

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
  trigger: 'manual' | 'timer' | 'program' | 'zone' | 'preset' | 'intent' | 'macro' | 'action_map';
  status: RunStatus;
  startedAt: number;
  finishedAt?: number;
  steps: StepResult[];
  error?: { code: string; message: string; step?: string };
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
}
