import { Type } from 'typebox';
import { ADMIN_FROM_ANY_APP, ANY_ACCOUNT, defineOperation, OS_ADMIN, type Principal } from '../../platform/operations.js';
import type { AudienceResolver } from '../access/audience.js';
import type { RoutineReach } from '../home/routine-reach.js';
import { DeviceActionResultSchema } from '../home/schemas.js';
import { programErrors } from './errors.js';
import type { Program, Step } from './model.js';
import type { ProgramService } from './program-service.js';
import { ProgramRunSchema } from './run-schema.js';
import { ProgramInputSchema, ProgramSchema, TimerSchema, withStepDefinitions } from './steps.js';
import { TriggerSchema } from './automation-schemas.js';
import { isAutomation, type AutomationEngine } from '../automations/engine.js';

const Id = Type.String({ minLength: 1, maxLength: 200 });
const Wait = Type.Optional(Type.Boolean({ description: 'Answer when the run has finished (status succeeded/failed) instead of at once with status running.' }));

// The list reuses the Program definition (with its recursive Step) inside its own cyclic schema.
const ProgramList = withStepDefinitions('ProgramList', Type.Object({ programs: Type.Array(Type.Ref('Program')) }));
(ProgramList as unknown as { $defs: Record<string, unknown> }).$defs.Program = (ProgramSchema as unknown as { $defs: Record<string, unknown> }).$defs.Program;

const ScriptInput = withStepDefinitions(
  'ProgramScriptInput',
  Type.Object({
    id: Id,
    steps: Type.Array(Type.Ref('Step'), { description: 'The canonical step array (see docs/programs.md).' }),
    offSteps: Type.Optional(Type.Union([Type.Array(Type.Ref('Step')), Type.Null()], { description: 'The off path; null removes it.' })),
  }),
);

/**
 * Programs are household routines: admins create, change and remove them; every signed-in account
 * may list, read and run those within its reach (RoutineReach: a user, the programs whose every
 * device is granted to them). One out of reach answers as one that does not exist.
 */
export function programOperations(programs: ProgramService, { audiences, reach }: { audiences: AudienceResolver; reach: RoutineReach }) {
  const requireReach = (id: string, principal: Principal | undefined) => {
    if (!reach.seesProgram(audiences.audienceOf(principal), id)) throw programErrors.PROGRAM_NOT_FOUND({ id }, { details: { programId: id } });
  };
  return {
    list: defineOperation({
      name: 'programs.list',
      summary: 'List programs with each timer\'s next fire time.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: ProgramList,
      async handler(_input, { principal }) {
        const audience = audiences.audienceOf(principal);
        const within = audience.everything ? programs.list() : programs.list().filter((p) => reach.seesProgram(audience, p.id));
        return { programs: within.map((p) => programs.view(p)) } as never;
      },
    }),
    get: defineOperation({
      name: 'programs.get',
      summary: 'One program with its timer\'s next fire time.',
      access: ANY_ACCOUNT,
      input: Type.Object({ id: Id }),
      output: ProgramSchema,
      async handler({ id }, { principal }) {
        const program = programs.find(id);
        if (!program) throw programErrors.PROGRAM_NOT_FOUND({ id }, { details: { programId: id } });
        requireReach(id, principal);
        return programs.view(program) as never;
      },
    }),
    save: defineOperation({
      name: 'programs.save',
      summary: 'Create or update a program from canonical steps or from YAML (exactly one of `steps`, `yaml`).',
      description: 'YAML errors answer 400 YAML_ERROR with details {line, column}. Unknown devices, programs, macros or zones answer 422 UNKNOWN_REFERENCE; a program that would run itself 422 PROGRAM_RECURSION.',
      access: ADMIN_FROM_ANY_APP,
      input: ProgramInputSchema,
      output: ProgramSchema,
      async handler(input) {
        return programs.view(await programs.save(input)) as never;
      },
    }),
    run: defineOperation({
      name: 'programs.run',
      journal: 'activity',
      summary: 'Run a program; answers the run at once (status running), or when it ends with wait=true.',
      access: ANY_ACCOUNT,
      input: Type.Object({ id: Id, wait: Wait }),
      output: ProgramRunSchema,
      async handler({ id, wait }, { principal }) {
        if (programs.find(id)) requireReach(id, principal);
        return programs.run(id, { trigger: 'manual', wait: wait ?? false });
      },
    }),
    runOff: defineOperation({
      name: 'programs.run_off',
      journal: 'activity',
      summary: 'Run the program\'s off path (422 NO_OFF_PATH when it has none).',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, wait: Wait }),
      output: ProgramRunSchema,
      async handler({ id, wait }) {
        return programs.run(id, { trigger: 'manual', path: 'off', wait: wait ?? false });
      },
    }),
    remove: defineOperation({
      name: 'programs.remove',
      summary: 'Remove a program; refused with 409 PROGRAM_IN_USE naming the zones and programs that use it.',
      access: ADMIN_FROM_ANY_APP,
      input: Type.Object({ id: Id }),
      output: Type.Object({ removed: Type.Literal(true), id: Type.String() }),
      async handler({ id }) {
        await programs.remove(id);
        return { removed: true as const, id };
      },
    }),
    copy: defineOperation({
      name: 'programs.copy',
      summary: 'Duplicate a program under a new id (its timer is copied disabled).',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }),
      output: ProgramSchema,
      async handler({ id, name }) {
        return programs.view(await programs.copy(id, name)) as never;
      },
    }),
    timer: defineOperation({
      name: 'programs.timer',
      summary: 'Replace the timer (null removes it); the script is left as it is.',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, timer: Type.Union([TimerSchema, Type.Null()]) }),
      output: ProgramSchema,
      async handler({ id, timer }) {
        return programs.view(await programs.updateTimer(id, timer)) as never;
      },
    }),
    script: defineOperation({
      name: 'programs.script',
      summary: 'Replace the steps (and optionally the off path); the timer is left as it is.',
      access: OS_ADMIN,
      input: ScriptInput,
      output: ProgramSchema,
      async handler(input) {
        const { id, steps, offSteps } = input as unknown as { id: string; steps: Step[]; offSteps?: Step[] | null };
        return programs.view(await programs.updateScript(id, { steps, ...(offSteps !== undefined ? { offSteps } : {}) })) as never;
      },
    }),
    lightingOff: defineOperation({
      name: 'programs.lighting_off',
      summary: 'Turn off every lighting device the program controls; per-device results.',
      access: OS_ADMIN,
      input: Type.Object({ id: Id }),
      output: Type.Object({ programId: Type.String(), results: Type.Array(DeviceActionResultSchema) }),
      async handler({ id }) {
        return programs.lightingOff(id);
      },
    }),
    runs: defineOperation({
      name: 'programs.runs',
      summary: 'Run history of a program, newest first (the last 50 runs are kept).',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 20 })) }),
      output: Type.Object({ runs: Type.Array(ProgramRunSchema) }),
      async handler({ id, limit }) {
        return { runs: await programs.history(id, limit ?? 20) };
      },
    }),
    getRun: defineOperation({
      name: 'programs.runs.get',
      summary: 'One program run, live while it runs.',
      access: OS_ADMIN,
      input: Type.Object({ runId: Id }),
      output: ProgramRunSchema,
      async handler({ runId }) {
        return programs.getRun(runId);
      },
    }),
  };
}

const Semantic = Type.String({ minLength: 1, maxLength: 50, description: 'A user tag such as "movie" or "bedtime"; stored lower-case.' });
const ProgramSemantics = Type.Object({ programId: Type.String(), programName: Type.String(), semantics: Type.Array(Type.String()) });
const Automation = Type.Object({
  programId: Type.String(),
  name: Type.String(),
  timer: Type.Unknown({ description: 'The time trigger "timer", as automations of before had it (null without one).' }),
  triggers: Type.Array(TriggerSchema),
  conditionCount: Type.Integer(),
  mode: Type.String(),
  enabled: Type.Boolean(),
  pause: Type.Union([Type.Object({ reason: Type.String(), message: Type.String(), at: Type.Integer() }), Type.Null()]),
  nextFireAt: Type.Union([Type.Integer(), Type.Null()]),
  running: Type.Boolean(),
});
const Traces = Type.Object({ traces: Type.Array(ProgramRunSchema) });

/**
 * Automations are programs with at least one trigger (the timers of before are time triggers);
 * program semantics are their intent tags.
 */
export function automationOperations(programs: ProgramService, engine: AutomationEngine) {
  const semanticsOf = (id: string) => {
    const p = programs.programs.get(id);
    return { programId: p.id, programName: p.name, semantics: p.semantics ?? [] };
  };
  const requireAutomation = (id: string) => {
    const program = programs.programs.get(id);
    if (!isAutomation(program)) throw programErrors.NOT_AN_AUTOMATION({ program: program.name }, { details: { programId: id } });
    return program;
  };
  const summary = (p: Program) => {
    const view = programs.view(p);
    return {
      programId: p.id, name: p.name, timer: view.timer, triggers: view.triggers, conditionCount: view.conditions.length, mode: view.mode,
      enabled: view.enabled, pause: p.pause ?? null, nextFireAt: view.nextFireAt, running: view.running,
    };
  };
  /** Enable and disable: one shape, the flag they set. */
  const switchOperations = () => {
    const op = <N extends string>(name: N, enabled: boolean, summaryText: string) =>
      defineOperation({
        name,
        summary: summaryText,
        access: OS_ADMIN,
        input: Type.Object({ id: Id }),
        output: Automation,
        async handler({ id }) {
          requireAutomation(id);
          return summary(await programs.setEnabled(id, enabled)) as never;
        },
      });
    return {
      enable: op('automations.enable', true, 'Let the automation\'s triggers fire again; also lifts a pause set by runaway protection.'),
      disable: op('automations.disable', false, 'Stop the automation\'s triggers from firing (it still runs by hand).'),
    };
  };
  return {
    list: defineOperation({
      name: 'automations.list',
      summary: 'Automations: programs with at least one trigger, with their next time or sun fire and whether they are enabled.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ automations: Type.Array(Automation) }),
      async handler() {
        return { automations: programs.list().filter(isAutomation).map(summary) } as never;
      },
    }),
    run: defineOperation({
      name: 'automations.run',
      journal: 'activity',
      summary: 'Run an automation now, skipping its triggers and conditions (422 NOT_AN_AUTOMATION for a program without triggers).',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, wait: Wait }),
      output: ProgramRunSchema,
      async handler({ id, wait }) {
        const program = requireAutomation(id);
        const onlyTimer = program.triggers?.every((t) => t.type === 'time');
        return programs.run(id, { trigger: onlyTimer ? 'timer' : 'manual', wait: wait ?? false });
      },
    }),
    ...switchOperations(),
    test: defineOperation({
      name: 'automations.test',
      journal: 'activity',
      summary: 'Run the automation now as if one of its triggers fired (`triggerId`, else the first), with `data` as the trigger\'s data; its conditions are evaluated unless `skipConditions`.',
      description: 'Answers the trace: a run, or why none started (not_passed with each condition\'s result, skipped by the mode).',
      access: OS_ADMIN,
      input: Type.Object({
        id: Id,
        triggerId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'What the actions read as `trigger.*` (deviceId, from, to, payload…).' })),
        skipConditions: Type.Optional(Type.Boolean()),
      }),
      output: ProgramRunSchema,
      async handler({ id, triggerId, data, skipConditions }) {
        requireAutomation(id);
        return engine.test(id, { ...(triggerId !== undefined ? { triggerId } : {}), ...(data ? { data } : {}), ...(skipConditions !== undefined ? { skipConditions } : {}) });
      },
    }),
    traces: defineOperation({
      name: 'automations.traces',
      summary: 'An automation\'s traces, newest first: the newest 50 runs and evaluations, and apart from them the newest 20 that failed, did not pass, were skipped or were interrupted (`notable`).',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, notable: Type.Optional(Type.Boolean()), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 50 })) }),
      output: Traces,
      async handler({ id, notable, limit }) {
        requireAutomation(id);
        return { traces: await programs.history(id, limit ?? 50, { notable: notable === true }) };
      },
    }),
    trace: defineOperation({
      name: 'automations.traces.get',
      summary: 'One trace: the trigger and its data, each condition\'s result, each step\'s outcome and the variables.',
      access: OS_ADMIN,
      input: Type.Object({ runId: Id }),
      output: ProgramRunSchema,
      async handler({ runId }) {
        return programs.getRun(runId);
      },
    }),
    status: defineOperation({
      name: 'automations.status',
      summary: 'The automation engine: whether this instance listens for triggers (a cluster has one that does), how many automations are armed and how many device fields they watch.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ role: Type.String(), armed: Type.Integer(), indexedFields: Type.Integer(), trackedFields: Type.Integer(), mqtt: Type.Boolean() }),
      async handler() {
        return engine.status;
      },
    }),
    webhook: defineOperation({
      name: 'webhooks.call',
      journal: 'activity',
      summary: 'Call an automation\'s webhook: no token; the id is the secret. The body is what the actions read as `trigger.payload`.',
      description: '404 WEBHOOK_NOT_FOUND for an unknown id; 429 TOO_MANY_WEBHOOK_CALLS past the rate per id and address.',
      access: 'public',
      input: Type.Object({ webhookId: Type.String({ minLength: 1, maxLength: 100 }), body: Type.Optional(Type.Unknown()) }),
      output: Type.Object({ programId: Type.String(), runId: Type.Union([Type.String(), Type.Null()]), status: Type.String() }),
      async handler({ webhookId, body }, { clientAddress }) {
        return engine.callWebhook(webhookId, body, clientAddress);
      },
    }),
    listSemantics: defineOperation({
      name: 'program_semantics.list',
      summary: 'The semantic tags of every program (used by intents).',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ semantics: Type.Array(ProgramSemantics) }),
      async handler() {
        return { semantics: programs.list().map((p) => semanticsOf(p.id)) };
      },
    }),
    upsertSemantic: defineOperation({
      name: 'program_semantics.upsert',
      summary: 'Add semantic tags to a program (`semantic` or `semantics`), or replace them all with `replace: true`.',
      access: OS_ADMIN,
      input: Type.Object({ programId: Id, semantic: Type.Optional(Semantic), semantics: Type.Optional(Type.Array(Semantic, { maxItems: 50 })), replace: Type.Optional(Type.Boolean()) }),
      output: ProgramSemantics,
      async handler({ programId, semantic, semantics, replace }) {
        const added = [...(semantics ?? []), ...(semantic ? [semantic] : [])];
        if (added.length === 0 && !replace) throw programErrors.SEMANTIC_REQUIRED({}, { details: { fields: ['semantic', 'semantics'] } });
        await programs.setSemantics(programId, (current) => (replace ? added : [...current, ...added]));
        return semanticsOf(programId);
      },
    }),
    deleteSemantic: defineOperation({
      name: 'program_semantics.delete',
      summary: 'Remove one semantic tag from a program (404 SEMANTIC_NOT_FOUND when it has no such tag).',
      access: OS_ADMIN,
      input: Type.Object({ programId: Id, semantic: Semantic }),
      output: ProgramSemantics,
      async handler({ programId, semantic }) {
        const tag = semantic.trim().toLowerCase();
        if (!(programs.programs.get(programId).semantics ?? []).includes(tag)) {
          throw programErrors.SEMANTIC_NOT_FOUND({ programId, semantic: tag }, { details: { programId, semantic: tag } });
        }
        await programs.setSemantics(programId, (current) => current.filter((t) => t !== tag));
        return semanticsOf(programId);
      },
    }),
  };
}

export type ProgramOperations = ReturnType<typeof programOperations>;
