/**
 * Schemas of the canonical program script (steps), timers and the `/programs/save` input, and the
 * structural checks that go beyond what a JSON schema says (timezones, cron expressions, totals).
 *
 * Recursion: `parallel.branches` and `condition.then/else` hold steps. The schemas use TypeBox's
 * `Type.Cyclic` with one definition named `Step` (`$id: "Step"`). Ajv resolves such a schema as
 * long as the `Step` definition appears ONCE per compiled schema, so never embed `StepSchema`
 * twice in one schema (e.g. for `steps` and `offSteps`): build the outer schema with
 * `withStepDefinitions(name, schema)` instead, which puts `Step` and the outer schema in one
 * `$defs` (that is how `ProgramInputSchema` and `ProgramSchema` are built).
 *
 * The schemas describe the shape; `validateSteps`, `validateTimer` and `parseProgramInput` also
 * check what a schema cannot (exactly one of volume/delta, timezone names, cron expressions, the
 * 500-step total, nesting depth) and report the first problem with its path, as a DomainError
 * `invalid` / `INVALID_PROGRAM`.
 */
import { Type, type TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { programErrors } from './errors.js';
import type { ConcurrencyPolicy, Step, Timer } from './model.js';
import { cronProblem, isValidTimezone, PROGRAM_LIMITS } from './limits.js';
import { compileProgramYaml } from './yaml.js';


const ID_PATTERN = '^[A-Za-z0-9_.:-]{1,100}$';
const TIME_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]$';

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const Label = Type.Optional(Type.String({ maxLength: 200, description: 'Shown in run results instead of the step type.' }));
const Timeout = (description: string) => Type.Integer({ minimum: 1, maximum: PROGRAM_LIMITS.maxTimeoutMs, description });

export const ComparisonSchema = Type.Union(
  (['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'truthy', 'falsy'] as const).map((op) => Type.Literal(op)),
  { description: 'eq/ne compare values (a number equals its decimal text); gt/gte/lt/lte compare numbers (or two strings); truthy/falsy ignore `value`.' },
);

export const StateConditionSchema = Type.Object(
  {
    deviceId: Id('Device whose state is tested.'),
    key: Type.String({ minLength: 1, maxLength: 200, description: 'State key, e.g. "power".' }),
    op: ComparisonSchema,
    value: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false, description: 'True when the device has state, the key is present and the comparison holds.' },
);

const CommandStep = Type.Object(
  {
    type: Type.Literal('command'),
    deviceId: Id('Device to command.'),
    command: Type.String({ minLength: 1, maxLength: 200 }),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    timeoutMs: Type.Optional(Timeout('Per-step timeout; the executor default (30 s) when absent.')),
    label: Label,
  },
  { additionalProperties: false },
);
const DelayStep = Type.Object(
  { type: Type.Literal('delay'), ms: Type.Integer({ minimum: 0, maximum: PROGRAM_LIMITS.maxDelayMs }), label: Label },
  { additionalProperties: false },
);
const WaitUntilStep = Type.Object(
  { type: Type.Literal('wait_until'), condition: StateConditionSchema, timeoutMs: Timeout('Fails with STEP_TIMEOUT after this long.'), label: Label },
  { additionalProperties: false },
);
const RunProgramStep = Type.Object({ type: Type.Literal('run_program'), programId: Id('Program to run (and wait for).'), label: Label }, { additionalProperties: false });
const RunMacroStep = Type.Object({ type: Type.Literal('run_macro'), macroId: Id('Macro to run (and wait for).'), label: Label }, { additionalProperties: false });
const ZoneVolumeStep = Type.Object(
  {
    type: Type.Literal('zone_volume'),
    zoneId: Id('Zone whose volume changes.'),
    volume: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Absolute volume; exactly one of volume/delta.' })),
    delta: Type.Optional(Type.Number({ minimum: -100, maximum: 100, description: 'Relative change; exactly one of volume/delta.' })),
    label: Label,
  },
  { additionalProperties: false },
);
const ParallelStep = (inner: TSchema) =>
  Type.Object(
    {
      type: Type.Literal('parallel'),
      branches: Type.Array(Type.Array(inner), { minItems: 1, maxItems: PROGRAM_LIMITS.maxBranches, description: 'Step lists run concurrently; the step fails (and cancels the others) when one fails.' }),
      label: Label,
    },
    { additionalProperties: false },
  );
const ConditionStep = (inner: TSchema) =>
  Type.Object(
    { type: Type.Literal('condition'), condition: StateConditionSchema, then: Type.Array(inner), else: Type.Optional(Type.Array(inner)), label: Label },
    { additionalProperties: false },
  );

/** The union with nested steps as `inner` (a `Ref('Step')` for the public schema). */
const stepUnion = (inner: TSchema) =>
  Type.Union([CommandStep, DelayStep, WaitUntilStep, RunProgramStep, RunMacroStep, ZoneVolumeStep, ParallelStep(inner), ConditionStep(inner)], {
    description: 'One program step; `type` selects the kind.',
  });

const StepDefinition = stepUnion(Type.Ref('Step'));

/** One step (recursive). Do not embed twice in one schema; see `withStepDefinitions`. */
export const StepSchema = Type.Cyclic({ Step: StepDefinition }, 'Step');

/**
 * An object schema that may refer to steps with `Type.Ref('Step')` any number of times, wrapped
 * so that the `Step` definition appears once (e.g. `withStepDefinitions('Macro', Type.Object({ steps:
 * Type.Array(Type.Ref('Step')) }))`).
 */
export function withStepDefinitions<Name extends string, T extends TSchema>(name: Name, schema: T) {
  return Type.Cyclic({ Step: StepDefinition, [name]: schema } as { Step: typeof StepDefinition } & { [K in Name]: T }, name);
}

const DailyTimer = Type.Object(
  {
    kind: Type.Literal('daily'),
    time: Type.String({ pattern: TIME_PATTERN, description: 'Local time "HH:MM" (24 h).' }),
    weekdays: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0, maximum: 6 }), { minItems: 1, maxItems: 7, uniqueItems: true, description: '0 = Sunday … 6 = Saturday; every day when absent.' }),
    ),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'IANA zone, e.g. "Europe/Berlin"; the hub\'s zone when absent.' })),
    enabled: Type.Boolean(),
    catchUp: Type.Optional(Type.Boolean({ description: 'Fire once at start-up when a scheduled time passed while the hub was down.' })),
  },
  { additionalProperties: false },
);
const CronTimer = Type.Object(
  {
    kind: Type.Literal('cron'),
    expression: Type.String({ minLength: 9, maxLength: 200, description: '5 fields (minute hour day month weekday) or 6 (seconds first).' }),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    enabled: Type.Boolean(),
    catchUp: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const IntervalTimer = Type.Object(
  {
    kind: Type.Literal('interval'),
    everyMs: Type.Integer({ minimum: PROGRAM_LIMITS.minIntervalMs, maximum: PROGRAM_LIMITS.maxIntervalMs }),
    enabled: Type.Boolean(),
    catchUp: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const TimerSchema = Type.Union([DailyTimer, CronTimer, IntervalTimer], { description: 'When the program runs by itself.' });

export const ConcurrencySchema = Type.Union([Type.Literal('reject'), Type.Literal('restart'), Type.Literal('queue')], {
  description: 'What a second run of a running program does: reject it, cancel the running one and restart, or queue it.',
});

const SemanticsSchema = Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 50, description: 'Intent tags, e.g. "movie".' });

const programInputProperties = (steps: TSchema, timer: TSchema) => ({
  id: Type.Optional(Type.String({ pattern: ID_PATTERN, description: 'Replaces the program with this id (or creates it with this id).' })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Required unless `yaml` has a `name`.' })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  steps: Type.Optional(Type.Array(steps, { description: 'Canonical script; exactly one of `steps` and `yaml`.' })),
  offSteps: Type.Optional(Type.Array(steps, { description: 'Run by "off".' })),
  timer: Type.Optional(Type.Union([timer, Type.Null()])),
  concurrency: Type.Optional(ConcurrencySchema),
  semantics: Type.Optional(SemanticsSchema),
  yaml: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: PROGRAM_LIMITS.maxYamlLength,
      description: 'The program as a YAML document (the authoring format); then only `id` (and `name` when the document has none) may accompany it.',
    }),
  ),
});

/** Body of `/programs/save`. Exactly one of `steps`/`yaml` is enforced by `parseProgramInput`. */
export const ProgramInputSchema = withStepDefinitions(
  'ProgramInput',
  Type.Object(programInputProperties(Type.Ref('Step'), TimerSchema), { additionalProperties: false }),
);

/** A stored program, for responses. */
export const ProgramSchema = withStepDefinitions(
  'Program',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    description: Type.Optional(Type.String()),
    steps: Type.Array(Type.Ref('Step')),
    offSteps: Type.Optional(Type.Array(Type.Ref('Step'))),
    timer: Type.Optional(Type.Union([TimerSchema, Type.Null()])),
    concurrency: ConcurrencySchema,
    semantics: Type.Optional(SemanticsSchema),
    yaml: Type.Optional(Type.String()),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
    nextFireAt: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'Next timer fire, ms since epoch; null without an enabled timer (in lists).' })),
    running: Type.Optional(Type.Boolean({ description: 'Whether a run is in progress (in lists).' })),
  }),
);

// ---------------------------------------------------------------------------------------------
// Structural validation
// ---------------------------------------------------------------------------------------------

/** One step's own members, nested step lists left to the recursion (which knows their paths). */
const shallowStepChecks: Record<Step['type'], Validator> = {
  command: Compile(CommandStep),
  delay: Compile(DelayStep),
  wait_until: Compile(WaitUntilStep),
  run_program: Compile(RunProgramStep),
  run_macro: Compile(RunMacroStep),
  zone_volume: Compile(ZoneVolumeStep),
  parallel: Compile(ParallelStep(Type.Unknown())),
  condition: Compile(ConditionStep(Type.Unknown())),
};
const timerChecks: Record<Timer['kind'], Validator> = { daily: Compile(DailyTimer), cron: Compile(CronTimer), interval: Compile(IntervalTimer) };
const inputCheck = Compile(Type.Object(programInputProperties(Type.Unknown(), Type.Unknown()), { additionalProperties: false }));

const STEP_TYPES = Object.keys(shallowStepChecks) as Step['type'][];
const TIMER_KINDS = Object.keys(timerChecks) as Timer['kind'][];

function fail(path: string, problem: string): never {
  throw programErrors.INVALID_PROGRAM({ path, problem }, { details: { path, problem } });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `steps/3/branches/0` + `/deviceId` → a readable path in the caller's terms. */
function joinPath(base: string, pointer: string): string {
  if (!pointer) return base;
  return base + pointer.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('');
}

/** The first schema error in words, with its path. */
function firstSchemaProblem(check: Validator, value: unknown, base: string): never {
  const errors = check.Errors(value);
  const unknownMember = errors.find((e) => e.keyword === 'boolean' || e.keyword === 'additionalProperties');
  if (unknownMember) {
    if (unknownMember.keyword === 'boolean') fail(joinPath(base, unknownMember.instancePath), 'is not allowed here (unknown member)');
    const extra = (unknownMember.params as { additionalProperties?: string[] }).additionalProperties;
    fail(joinPath(base, unknownMember.instancePath), `unknown member ${extra?.map((k) => `"${k}"`).join(', ') ?? ''}`.trim());
  }
  const first = errors[0];
  if (!first) fail(base, 'is not valid');
  const params = first.params as { requiredProperties?: string[]; allowedValues?: unknown[] };
  if (first.keyword === 'pattern' && first.instancePath === '/time') fail(joinPath(base, first.instancePath), 'must be "HH:MM" (24 h), e.g. "07:30"');
  if (first.keyword === 'required' && params.requiredProperties?.length) {
    fail(joinPath(base, first.instancePath), `missing ${params.requiredProperties.map((k) => `"${k}"`).join(', ')}`);
  }
  fail(joinPath(base, first.instancePath), first.message ?? 'is not valid');
}

/** Number of steps, nested ones and the containers themselves counted. */
export function countSteps(steps: readonly Step[]): number {
  let n = 0;
  for (const step of steps) {
    n += 1;
    if (step.type === 'parallel') for (const b of step.branches) n += countSteps(b);
    else if (step.type === 'condition') n += countSteps(step.then) + countSteps(step.else ?? []);
  }
  return n;
}

/**
 * Checks a step list (as received, e.g. from JSON) and answers it typed. Throws
 * `invalid`/`INVALID_PROGRAM` with `details.path` (e.g. "steps[2].branches[0][1].command") for the
 * first problem. `path` names the list in messages.
 */
export function validateSteps(value: unknown, path = 'steps'): Step[] {
  const counter = { n: 0 };
  const steps = checkStepList(value, path, 0, counter);
  if (counter.n > PROGRAM_LIMITS.maxSteps) fail(path, `has ${counter.n} steps (nested ones counted); at most ${PROGRAM_LIMITS.maxSteps}`);
  return steps;
}

function checkStepList(value: unknown, path: string, depth: number, counter: { n: number }): Step[] {
  if (!Array.isArray(value)) fail(path, 'must be a list of steps');
  if (depth > PROGRAM_LIMITS.maxNesting) fail(path, `is nested too deeply (at most ${PROGRAM_LIMITS.maxNesting} levels)`);
  return value.map((step, i) => checkStep(step, `${path}[${i}]`, depth, counter));
}

function checkStep(value: unknown, path: string, depth: number, counter: { n: number }): Step {
  counter.n += 1;
  if (counter.n > PROGRAM_LIMITS.maxSteps) fail(path, `too many steps (at most ${PROGRAM_LIMITS.maxSteps} per program, nested ones counted)`);
  if (!isRecord(value)) fail(path, 'must be an object');
  const type = value['type'];
  if (typeof type !== 'string' || !STEP_TYPES.includes(type as Step['type'])) {
    fail(`${path}.type`, `must be one of ${STEP_TYPES.join(', ')}`);
  }
  const check = shallowStepChecks[type as Step['type']];
  if (!check.Check(value)) firstSchemaProblem(check, value, path);
  const step = value as unknown as Step;
  switch (step.type) {
    case 'zone_volume':
      if ((step.volume === undefined) === (step.delta === undefined)) fail(path, 'needs exactly one of "volume" and "delta"');
      return step;
    case 'parallel':
      return { ...step, branches: step.branches.map((b, i) => checkStepList(b, `${path}.branches[${i}]`, depth + 1, counter)) };
    case 'condition': {
      const checked: Step = { ...step, then: checkStepList(step.then, `${path}.then`, depth + 1, counter) };
      if (step.else !== undefined) checked.else = checkStepList(step.else, `${path}.else`, depth + 1, counter);
      return checked;
    }
    default:
      return step;
  }
}

/** Checks a timer (as received) and answers it typed; `null`/`undefined` pass through. */
export function validateTimer(value: unknown, path = 'timer'): Timer | null | undefined {
  if (value === null || value === undefined) return value;
  if (!isRecord(value)) fail(path, 'must be an object');
  const kind = value['kind'];
  if (typeof kind !== 'string' || !TIMER_KINDS.includes(kind as Timer['kind'])) fail(`${path}.kind`, `must be one of ${TIMER_KINDS.join(', ')}`);
  const check = timerChecks[kind as Timer['kind']];
  if (!check.Check(value)) firstSchemaProblem(check, value, path);
  const timer = value as unknown as Timer;
  if (timer.kind !== 'interval' && timer.timezone !== undefined && !isValidTimezone(timer.timezone)) {
    fail(`${path}.timezone`, `unknown time zone "${timer.timezone}" (use an IANA name such as "Europe/Berlin")`);
  }
  if (timer.kind === 'cron') {
    const problem = cronProblem(timer.expression, timer.timezone);
    if (problem) fail(`${path}.expression`, problem);
  }
  return timer;
}

/** What `/programs/save` resolves to: a canonical program without its stored fields. */
export interface ProgramDraft {
  id?: string;
  name: string;
  description?: string;
  steps: Step[];
  offSteps?: Step[];
  /** `undefined`: not given; `null`: no timer. */
  timer?: Timer | null;
  concurrency?: ConcurrencyPolicy;
  semantics?: string[];
  /** The YAML text, verbatim, when the program was authored in YAML. */
  yaml?: string;
}

/**
 * Checks a `/programs/save` body and resolves it to canonical form (compiling `yaml` when given).
 * Throws `invalid` with code `INVALID_PROGRAM` (details `{ path, problem }`) or, for the YAML,
 * `YAML_ERROR` (details `{ line, column, path }`).
 */
export function parseProgramInput(body: unknown): ProgramDraft {
  if (!isRecord(body)) fail('body', 'must be an object');
  if (!inputCheck.Check(body)) firstSchemaProblem(inputCheck, body, 'body');
  const input = body as {
    id?: string; name?: string; description?: string; steps?: unknown[]; offSteps?: unknown[]; timer?: unknown;
    concurrency?: ConcurrencyPolicy; semantics?: string[]; yaml?: string;
  };
  if ((input.steps === undefined) === (input.yaml === undefined)) fail('body', 'give exactly one of "steps" (canonical) and "yaml" (authoring format)');

  if (input.yaml !== undefined) {
    const beside = (['description', 'offSteps', 'timer', 'concurrency', 'semantics'] as const).filter((k) => input[k] !== undefined);
    if (beside.length) fail(`body.${beside[0]}`, 'comes from the YAML document when "yaml" is given; put it there');
    const compiled = compileProgramYaml(input.yaml);
    if (compiled.name !== undefined && input.name !== undefined && compiled.name !== input.name) {
      fail('body.name', `differs from the YAML document's name "${compiled.name}"; give one or make them agree`);
    }
    const name = compiled.name ?? input.name;
    if (name === undefined) fail('body.name', 'missing: give "name" or a "name:" in the YAML document');
    const draft: ProgramDraft = { name, steps: compiled.steps, yaml: input.yaml };
    if (input.id !== undefined) draft.id = input.id;
    if (compiled.description !== undefined) draft.description = compiled.description;
    if (compiled.offSteps !== undefined) draft.offSteps = compiled.offSteps;
    draft.timer = compiled.timer ?? null;
    if (compiled.concurrency !== undefined) draft.concurrency = compiled.concurrency;
    if (compiled.semantics !== undefined) draft.semantics = compiled.semantics;
    return draft;
  }

  if (input.name === undefined) fail('body.name', 'missing');
  const steps = validateSteps(input.steps, 'steps');
  const draft: ProgramDraft = { name: input.name, steps };
  if (input.id !== undefined) draft.id = input.id;
  if (input.description !== undefined) draft.description = input.description;
  if (input.offSteps !== undefined) draft.offSteps = validateSteps(input.offSteps, 'offSteps');
  const total = countSteps(steps) + countSteps(draft.offSteps ?? []);
  if (total > PROGRAM_LIMITS.maxSteps) fail('body', `has ${total} steps on and off paths together (nested ones counted); at most ${PROGRAM_LIMITS.maxSteps}`);
  if (input.timer !== undefined) draft.timer = validateTimer(input.timer, 'timer') ?? null;
  if (input.concurrency !== undefined) draft.concurrency = input.concurrency;
  if (input.semantics !== undefined) draft.semantics = [...new Set(input.semantics)];
  return draft;
}

/** Checks a whole canonical program (e.g. one loaded from storage or built by the YAML compiler). */
export function validateProgramScript(program: { steps: unknown; offSteps?: unknown; timer?: unknown }): void {
  const steps = validateSteps(program.steps, 'steps');
  const off = program.offSteps === undefined ? [] : validateSteps(program.offSteps, 'offSteps');
  const total = countSteps(steps) + countSteps(off);
  if (total > PROGRAM_LIMITS.maxSteps) fail('program', `has ${total} steps on and off paths together; at most ${PROGRAM_LIMITS.maxSteps}`);
  validateTimer(program.timer);
}
