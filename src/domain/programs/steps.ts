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
import type { ConcurrencyPolicy, Step, Timer } from './model.js';
import { PROGRAM_LIMITS } from './limits.js';
import { compileProgramYaml } from './yaml.js';
import { AUTOMATION_LIMITS, type AutomationMode, type Condition, type Trigger } from './automation-model.js';
import { checkConditions, checkTimer, checkTriggers, ConditionDefinition, invalid, schemaProblem, TimerSchema, TriggerSchema } from './automation-schemas.js';
import { checkDeep, TemplateError } from '../automations/templates.js';

export { TimerSchema } from './automation-schemas.js';


const ID_PATTERN = '^[A-Za-z0-9_.:-]{1,100}$';

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

const Conditions = (inner: TSchema) => Type.Array(inner, { maxItems: AUTOMATION_LIMITS.maxConditions, description: 'All must hold.' });
const ChooseStep = (inner: TSchema, condition: TSchema) =>
  Type.Object(
    {
      type: Type.Literal('choose'),
      choices: Type.Array(Type.Object({ conditions: Conditions(condition), steps: Type.Array(inner) }, { additionalProperties: false }), {
        minItems: 1,
        maxItems: PROGRAM_LIMITS.maxBranches,
        description: 'The first choice whose conditions all hold runs.',
      }),
      default: Type.Optional(Type.Array(inner, { description: 'Runs when no choice holds.' })),
      label: Label,
    },
    { additionalProperties: false },
  );
const RepeatStep = (inner: TSchema, condition: TSchema) =>
  Type.Object(
    {
      type: Type.Literal('repeat'),
      count: Type.Optional(Type.Integer({ minimum: 1, maximum: AUTOMATION_LIMITS.maxRepeat })),
      while: Type.Optional(Conditions(condition)),
      until: Type.Optional(Conditions(condition)),
      steps: Type.Array(inner),
      label: Label,
    },
    { additionalProperties: false, description: `Exactly one of count, while (checked before each pass), until (after each pass); at most ${AUTOMATION_LIMITS.maxRepeat} passes.` },
  );
const VariablesStep = Type.Object(
  {
    type: Type.Literal('variables'),
    variables: Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$' }), Type.Unknown(), { description: 'Values; text may be a template such as "{{ trigger.to }}".' }),
    label: Label,
  },
  { additionalProperties: false },
);
const WaitForTriggerStep = Type.Object(
  {
    type: Type.Literal('wait_for_trigger'),
    triggers: Type.Array(TriggerSchema, { minItems: 1, maxItems: AUTOMATION_LIMITS.maxTriggers }),
    timeoutMs: Timeout('How long to wait.'),
    continueOnTimeout: Type.Optional(Type.Boolean({ description: 'Go on past the timeout (default) or fail with STEP_TIMEOUT.' })),
    label: Label,
  },
  { additionalProperties: false },
);
const StopStep = Type.Object(
  { type: Type.Literal('stop'), reason: Type.Optional(Type.String({ maxLength: 500 })), error: Type.Optional(Type.Boolean({ description: 'End the run as failed.' })), label: Label },
  { additionalProperties: false },
);
const AlertStep = Type.Object(
  {
    type: Type.Literal('alert'),
    message: Type.String({ minLength: 1, maxLength: 2000, description: 'May be a template.' }),
    severity: Type.Optional(Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')])),
    alertType: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The alert\'s type (default "automation").' })),
    deviceId: Type.Optional(Id('The device the alert is about.')),
    label: Label,
  },
  { additionalProperties: false },
);
const SceneStep = Type.Object({ type: Type.Literal('scene'), sceneId: Type.String({ minLength: 3, maxLength: 401, description: '`<deviceId>:<sceneId>` as scenes.list gives it.' }), label: Label }, { additionalProperties: false });

/** The union with nested steps as `inner` (a `Ref('Step')` for the public schema). */
const stepUnion = (inner: TSchema, condition: TSchema) =>
  Type.Union(
    [
      CommandStep, DelayStep, WaitUntilStep, RunProgramStep, RunMacroStep, ZoneVolumeStep, ParallelStep(inner), ConditionStep(inner),
      ChooseStep(inner, condition), RepeatStep(inner, condition), VariablesStep, WaitForTriggerStep, StopStep, AlertStep, SceneStep,
    ],
    { description: 'One program step; `type` selects the kind.' },
  );

const StepDefinition = stepUnion(Type.Ref('Step'), Type.Ref('Condition'));

/** One step (recursive). Do not embed twice in one schema; see `withStepDefinitions`. */
export const StepSchema = Type.Cyclic({ Step: StepDefinition, Condition: ConditionDefinition }, 'Step');

/**
 * An object schema that may refer to steps with `Type.Ref('Step')` (and conditions with
 * `Type.Ref('Condition')`) any number of times, wrapped so that each definition appears once
 * (e.g. `withStepDefinitions('Macro', Type.Object({ steps: Type.Array(Type.Ref('Step')) }))`).
 */
export function withStepDefinitions<Name extends string, T extends TSchema>(name: Name, schema: T) {
  return Type.Cyclic(
    { Step: StepDefinition, Condition: ConditionDefinition, [name]: schema } as { Step: typeof StepDefinition; Condition: typeof ConditionDefinition } & { [K in Name]: T },
    name,
  );
}



export const ConcurrencySchema = Type.Union([Type.Literal('reject'), Type.Literal('restart'), Type.Literal('queue'), Type.Literal('parallel')], {
  description: 'What a second run of a running program does: reject it, cancel the running one and restart, queue it, or (mode parallel) run it beside. `mode` says the same for automations.',
});

export const ModeSchema = Type.Union([Type.Literal('single'), Type.Literal('restart'), Type.Literal('queued'), Type.Literal('parallel')], {
  description: 'single: a trigger while running is skipped (recorded); restart; queued (at most `max` waiting); parallel (at most `max` at once). Default single.',
});
const MaxSchema = Type.Integer({ minimum: 1, maximum: AUTOMATION_LIMITS.maxModeMax, description: 'queued: runs that may wait; parallel: runs at once (default 10).' });

const SemanticsSchema = Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 50, description: 'Intent tags, e.g. "movie".' });

const programInputProperties = (steps: TSchema, timer: TSchema, condition: TSchema = Type.Unknown(), trigger: TSchema = Type.Unknown()) => ({
  id: Type.Optional(Type.String({ pattern: ID_PATTERN, description: 'Replaces the program with this id (or creates it with this id).' })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Required unless `yaml` has a `name`.' })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  steps: Type.Optional(Type.Array(steps, { description: 'Canonical script; exactly one of `steps` and `yaml`.' })),
  offSteps: Type.Optional(Type.Array(steps, { description: 'Run by "off".' })),
  timer: Type.Optional(Type.Union([timer, Type.Null()])),
  concurrency: Type.Optional(ConcurrencySchema),
  triggers: Type.Optional(Type.Array(trigger, { maxItems: AUTOMATION_LIMITS.maxTriggers, description: 'What starts the program by itself; a program with one is an automation.' })),
  conditions: Type.Optional(Type.Array(condition, { maxItems: AUTOMATION_LIMITS.maxConditions, description: 'All must hold for a trigger to start a run.' })),
  mode: Type.Optional(ModeSchema),
  max: Type.Optional(MaxSchema),
  enabled: Type.Optional(Type.Boolean({ description: 'Whether the triggers fire (default true).' })),
  resume: Type.Optional(Type.Boolean({ description: 'A run inside a delay or wait when the hub stopped continues from that step after the start.' })),
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
  Type.Object(programInputProperties(Type.Ref('Step'), TimerSchema, Type.Ref('Condition'), TriggerSchema), { additionalProperties: false }),
);

const PauseSchema = Type.Object({ reason: Type.Literal('runaway'), message: Type.String(), at: Type.Integer() });

/** A stored program, for responses. */
export const ProgramSchema = withStepDefinitions(
  'Program',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    description: Type.Optional(Type.String()),
    steps: Type.Array(Type.Ref('Step')),
    offSteps: Type.Optional(Type.Array(Type.Ref('Step'))),
    timer: Type.Optional(Type.Union([TimerSchema, Type.Null()], { description: 'The time trigger with id "timer", as programs had before triggers.' })),
    triggers: Type.Array(TriggerSchema),
    conditions: Type.Array(Type.Ref('Condition')),
    mode: ModeSchema,
    max: Type.Optional(Type.Integer()),
    enabled: Type.Boolean(),
    pause: Type.Optional(Type.Union([PauseSchema, Type.Null()], { description: 'Set when runaway protection paused the automation.' })),
    resume: Type.Optional(Type.Boolean()),
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
  choose: Compile(ChooseStep(Type.Unknown(), Type.Unknown())),
  repeat: Compile(RepeatStep(Type.Unknown(), Type.Unknown())),
  variables: Compile(VariablesStep),
  wait_for_trigger: Compile(Type.Object({ ...WaitForTriggerStep.properties, triggers: Type.Array(Type.Unknown()) }, { additionalProperties: false })),
  stop: Compile(StopStep),
  alert: Compile(AlertStep),
  scene: Compile(SceneStep),
};
const inputCheck = Compile(Type.Object(programInputProperties(Type.Unknown(), Type.Unknown()), { additionalProperties: false }));

const STEP_TYPES = Object.keys(shallowStepChecks) as Step['type'][];

function fail(path: string, problem: string): never {
  invalid(path, problem);
}
function firstSchemaProblem(check: Validator, value: unknown, base: string): never {
  schemaProblem(check, value, base);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Template syntax in a step's values, checked at save so that a run never meets a broken one. */
function checkTemplates(value: unknown, path: string): void {
  try {
    checkDeep(value, path);
  } catch (e) {
    if (e instanceof TemplateError) fail(path, e.message);
    throw e;
  }
}

/** The step lists inside a step, with the path segment each is reported under. */
export function nestedStepLists(step: Step): Array<{ segment: string; steps: Step[] }> {
  switch (step.type) {
    case 'parallel':
      return step.branches.map((steps, i) => ({ segment: `branch${i}`, steps }));
    case 'condition':
      return [{ segment: 'then', steps: step.then }, ...(step.else ? [{ segment: 'else', steps: step.else }] : [])];
    case 'choose':
      return [...step.choices.map((c, i) => ({ segment: `choice${i}`, steps: c.steps })), ...(step.default ? [{ segment: 'default', steps: step.default }] : [])];
    case 'repeat':
      return [{ segment: 'pass', steps: step.steps }];
    default:
      return [];
  }
}

/** Number of steps, nested ones and the containers themselves counted. */
export function countSteps(steps: readonly Step[]): number {
  let n = 0;
  for (const step of steps) {
    n += 1;
    for (const nested of nestedStepLists(step)) n += countSteps(nested.steps);
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
    case 'command':
      if (step.params) checkTemplates(step.params, `${path}.params`);
      return step;
    case 'variables':
      if (Object.keys(step.variables).length > AUTOMATION_LIMITS.maxVariables) fail(`${path}.variables`, `at most ${AUTOMATION_LIMITS.maxVariables} variables`);
      for (const reserved of ['trigger', 'this', 'now']) if (Object.hasOwn(step.variables, reserved)) fail(`${path}.variables.${reserved}`, `"${reserved}" is the hub's own name; choose another`);
      checkTemplates(step.variables, `${path}.variables`);
      return step;
    case 'alert':
      checkTemplates(step.message, `${path}.message`);
      return step;
    case 'wait_for_trigger': {
      const triggers = checkTriggers(step.triggers, `${path}.triggers`);
      if (triggers.some((t) => t.type === 'webhook' || t.type === 'time' || t.type === 'sun')) fail(`${path}.triggers`, 'a wait takes device, hub and MQTT triggers (not time, sun or webhook)');
      return { ...step, triggers };
    }
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
    case 'choose': {
      const checked: Step = {
        ...step,
        choices: step.choices.map((c, i) => ({
          conditions: checkConditions(c.conditions, `${path}.choices[${i}].conditions`),
          steps: checkStepList(c.steps, `${path}.choices[${i}].steps`, depth + 1, counter),
        })),
      };
      if (step.default !== undefined) checked.default = checkStepList(step.default, `${path}.default`, depth + 1, counter);
      return checked;
    }
    case 'repeat': {
      const kinds = (['count', 'while', 'until'] as const).filter((k) => step[k] !== undefined);
      if (kinds.length !== 1) fail(path, 'needs exactly one of "count", "while" and "until"');
      const checked: Step = { ...step, steps: checkStepList(step.steps, `${path}.steps`, depth + 1, counter) };
      if (step.while) checked.while = checkConditions(step.while, `${path}.while`);
      if (step.until) checked.until = checkConditions(step.until, `${path}.until`);
      return checked;
    }
    default:
      return step;
  }
}

/** Checks a timer (as received) and answers it typed; `null`/`undefined` pass through. */
export function validateTimer(value: unknown, path = 'timer'): Timer | null | undefined {
  if (value === null || value === undefined) return value;
  return checkTimer(value, path);
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
  triggers?: Trigger[];
  conditions?: Condition[];
  mode?: AutomationMode;
  max?: number;
  enabled?: boolean;
  resume?: boolean;
  concurrency?: ConcurrencyPolicy;
  semantics?: string[];
  /** The YAML text, verbatim, when the program was authored in YAML. */
  yaml?: string;
}

/** The hub's YAML format compiles here; a Home Assistant automation goes through `importYaml`. */
export type YamlImporter = (text: string) => Record<string, unknown> | undefined;

/**
 * Checks a `/programs/save` body and resolves it to canonical form (compiling `yaml` when given).
 * Throws `invalid` with code `INVALID_PROGRAM` (details `{ path, problem }`) or, for the YAML,
 * `YAML_ERROR` (details `{ line, column, path }`). `importYaml` answers the canonical body of a
 * YAML document in another dialect (a Home Assistant automation), or undefined for the hub's own.
 */
export function parseProgramInput(body: unknown, importYaml?: YamlImporter): ProgramDraft {
  if (!isRecord(body)) fail('body', 'must be an object');
  if (!inputCheck.Check(body)) firstSchemaProblem(inputCheck, body, 'body');
  const input = body as {
    id?: string; name?: string; description?: string; steps?: unknown[]; offSteps?: unknown[]; timer?: unknown;
    concurrency?: ConcurrencyPolicy; semantics?: string[]; yaml?: string; triggers?: unknown[]; conditions?: unknown[];
    mode?: AutomationMode; max?: number; enabled?: boolean; resume?: boolean;
  };
  if ((input.steps === undefined) === (input.yaml === undefined)) fail('body', 'give exactly one of "steps" (canonical) and "yaml" (authoring format)');

  if (input.yaml !== undefined) {
    const beside = (['description', 'offSteps', 'timer', 'concurrency', 'semantics', 'triggers', 'conditions', 'mode', 'max', 'resume'] as const).filter((k) => input[k] !== undefined);
    if (beside.length) fail(`body.${beside[0]}`, 'comes from the YAML document when "yaml" is given; put it there');
    const imported = importYaml?.(input.yaml);
    if (imported) {
      if (imported.name !== undefined && input.name !== undefined && imported.name !== input.name) {
        fail('body.name', `differs from the YAML document's name "${String(imported.name)}"; give one or make them agree`);
      }
      const draft = parseProgramInput({
        ...imported,
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.id !== undefined ? { id: input.id } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      });
      return { ...draft, yaml: input.yaml };
    }
    const compiled = compileProgramYaml(input.yaml);
    if (compiled.name !== undefined && input.name !== undefined && compiled.name !== input.name) {
      fail('body.name', `differs from the YAML document's name "${compiled.name}"; give one or make them agree`);
    }
    const name = compiled.name ?? input.name;
    if (name === undefined) fail('body.name', 'missing: give "name" or a "name:" in the YAML document');
    const draft: ProgramDraft = { name, steps: compiled.steps, yaml: input.yaml };
    if (input.id !== undefined) draft.id = input.id;
    if (input.enabled !== undefined) draft.enabled = input.enabled;
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
  if (input.triggers !== undefined) draft.triggers = checkTriggers(input.triggers, 'triggers', { allowEmpty: true });
  if (input.conditions !== undefined) draft.conditions = checkConditions(input.conditions, 'conditions');
  if (input.mode !== undefined) draft.mode = input.mode;
  if (input.max !== undefined) {
    const mode = input.mode ?? (input.concurrency === 'queue' ? 'queued' : input.concurrency);
    if (mode !== 'queued' && mode !== 'parallel') fail('body.max', 'goes with mode queued or parallel');
    draft.max = input.max;
  }
  if (input.enabled !== undefined) draft.enabled = input.enabled;
  if (input.resume !== undefined) draft.resume = input.resume;
  if (input.concurrency !== undefined) draft.concurrency = input.concurrency;
  if (input.mode !== undefined && input.concurrency !== undefined && concurrencyOfMode(input.mode) !== input.concurrency) {
    fail('body.concurrency', `disagrees with mode "${input.mode}" (give one of them)`);
  }
  if (input.semantics !== undefined) draft.semantics = [...new Set(input.semantics)];
  return draft;
}

/** The older field for the same thing, kept for clients that read `concurrency`. */
export function concurrencyOfMode(mode: AutomationMode): ConcurrencyPolicy {
  return mode === 'single' ? 'reject' : mode === 'queued' ? 'queue' : mode;
}

export function modeOfConcurrency(concurrency: ConcurrencyPolicy): AutomationMode {
  return concurrency === 'reject' ? 'single' : concurrency === 'queue' ? 'queued' : concurrency;
}

/** Checks a whole canonical program (e.g. one loaded from storage or built by the YAML compiler). */
export function validateProgramScript(program: { steps: unknown; offSteps?: unknown; timer?: unknown }): void {
  const steps = validateSteps(program.steps, 'steps');
  const off = program.offSteps === undefined ? [] : validateSteps(program.offSteps, 'offSteps');
  const total = countSteps(steps) + countSteps(off);
  if (total > PROGRAM_LIMITS.maxSteps) fail('program', `has ${total} steps on and off paths together; at most ${PROGRAM_LIMITS.maxSteps}`);
  validateTimer(program.timer);
}
