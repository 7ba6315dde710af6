/**
 * Schemas of automation triggers and conditions (automation-model.ts), and the checks a schema
 * cannot say: time zones, "HH:MM" windows, durations within the limits, one of above/below,
 * template syntax. Conditions nest (and/or/not), so their public schema is the cyclic definition
 * `Condition`, which `steps.ts` puts beside `Step` in one `$defs`.
 */
import { Type, type TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { AUTOMATION_LIMITS, type Condition, type Trigger } from './automation-model.js';
import { programErrors } from './errors.js';
import { cronProblem, isValidTimezone } from './limits.js';
import type { Timer } from './model.js';

const TIME_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
const Id = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const DeviceIds = Type.Array(Id('A device id.'), { minItems: 1, maxItems: AUTOMATION_LIMITS.maxDevicesPerTrigger, uniqueItems: true });
const Field = Type.String({ minLength: 1, maxLength: 100, description: 'A reading field (`on`, `brightness`, `detected`, `currentTemperature`…), `online`, or a raw state key of a device without a class.' });
const Scalar = Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean(), Type.Null()]);
const Match = Type.Union([Scalar, Type.Array(Scalar, { minItems: 1, maxItems: 50 })], { description: 'A value, or a list of values any of which matches.' });
const ForMs = Type.Optional(Type.Integer({ minimum: 0, maximum: AUTOMATION_LIMITS.maxForMs, description: 'How long the new value must hold, in ms (at most 7 days).' }));
const OffsetMs = Type.Optional(
  Type.Integer({ minimum: -AUTOMATION_LIMITS.maxSunOffsetMs, maximum: AUTOMATION_LIMITS.maxSunOffsetMs, description: 'Signed offset from the sun event, in ms (at most 6 h either way).' }),
);
const SunEventSchema = Type.Union([Type.Literal('sunrise'), Type.Literal('sunset'), Type.Literal('dawn'), Type.Literal('dusk')]);
const TriggerId = Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Read by the actions as `trigger.id`.' }));

const DailyTimer = Type.Object(
  {
    kind: Type.Literal('daily'),
    time: Type.String({ pattern: TIME_PATTERN, description: 'Local time "HH:MM" (24 h).' }),
    weekdays: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0, maximum: 6 }), { minItems: 1, maxItems: 7, uniqueItems: true, description: '0 = Sunday … 6 = Saturday; every day when absent.' }),
    ),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'IANA zone, e.g. "Europe/Berlin"; the home\'s zone when absent.' })),
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
    everyMs: Type.Integer({ minimum: 1000, maximum: 31 * 24 * 60 * 60 * 1000 }),
    enabled: Type.Boolean(),
    catchUp: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const AtTimer = Type.Object(
  {
    kind: Type.Literal('at'),
    at: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$', description: 'Local date-time "YYYY-MM-DDTHH:MM", once.' }),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    enabled: Type.Boolean(),
    catchUp: Type.Optional(Type.Boolean({ description: 'Fire at start-up when the moment passed while the hub was down.' })),
  },
  { additionalProperties: false },
);

export const TimerSchema = Type.Union([DailyTimer, CronTimer, IntervalTimer, AtTimer], { description: 'When the program runs by itself.' });
export const timerChecks: Record<'daily' | 'cron' | 'interval' | 'at', Validator> = {
  daily: Compile(DailyTimer),
  cron: Compile(CronTimer),
  interval: Compile(IntervalTimer),
  at: Compile(AtTimer),
};

const triggerSchemas = {
  state: Type.Object({ id: TriggerId, type: Type.Literal('state'), deviceIds: DeviceIds, field: Field, from: Type.Optional(Match), to: Type.Optional(Match), forMs: ForMs }, { additionalProperties: false }),
  numeric: Type.Object(
    {
      id: TriggerId,
      type: Type.Literal('numeric'),
      deviceIds: DeviceIds,
      field: Field,
      above: Type.Optional(Type.Number()),
      below: Type.Optional(Type.Number()),
      forMs: ForMs,
      alsoWhenAlreadyPast: Type.Optional(Type.Boolean({ description: 'Also fire once when the value is already in the range at save or start (a crossing is what fires otherwise).' })),
    },
    { additionalProperties: false },
  ),
  button: Type.Object(
    { id: TriggerId, type: Type.Literal('button'), deviceIds: DeviceIds, press: Type.Optional(Type.Union([Type.Literal('single'), Type.Literal('double'), Type.Literal('long')])) },
    { additionalProperties: false },
  ),
  availability: Type.Object(
    { id: TriggerId, type: Type.Literal('availability'), deviceIds: DeviceIds, to: Type.Union([Type.Literal('online'), Type.Literal('offline')]), forMs: ForMs },
    { additionalProperties: false },
  ),
  time: Type.Object({ id: TriggerId, type: Type.Literal('time'), timer: TimerSchema }, { additionalProperties: false }),
  sun: Type.Object({ id: TriggerId, type: Type.Literal('sun'), event: SunEventSchema, offsetMs: OffsetMs, catchUp: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
  hub: Type.Object(
    {
      id: TriggerId,
      type: Type.Literal('hub'),
      event: Type.Union([Type.Literal('started'), Type.Literal('alert_submitted'), Type.Literal('program_finished'), Type.Literal('program_failed')]),
      programId: Type.Optional(Id('program_finished / program_failed: only this program.')),
      severities: Type.Optional(Type.Array(Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')]), { minItems: 1, uniqueItems: true })),
    },
    { additionalProperties: false },
  ),
  mqtt: Type.Object(
    {
      id: TriggerId,
      type: Type.Literal('mqtt'),
      topic: Type.String({ minLength: 1, maxLength: 500, description: 'A topic filter (`+` and `#` wildcards).' }),
      payload: Type.Optional(Type.String({ maxLength: 2000, description: 'Fires only for this exact payload.' })),
    },
    { additionalProperties: false },
  ),
  webhook: Type.Object(
    {
      id: TriggerId,
      type: Type.Literal('webhook'),
      webhookId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{32,100}$', description: 'Generated by the hub at save when absent; unguessable.' })),
    },
    { additionalProperties: false },
  ),
} satisfies Record<Trigger['type'], TSchema>;

const t = triggerSchemas;
export const TriggerSchema = Type.Union([t.state, t.numeric, t.button, t.availability, t.time, t.sun, t.hub, t.mqtt, t.webhook], {
  description: 'What starts an automation; `type` selects the kind.',
});

const SunAt = Type.Object({ event: SunEventSchema, offsetMs: OffsetMs }, { additionalProperties: false });
const leafConditionSchemas = {
  state: Type.Object({ type: Type.Literal('state'), deviceId: Id('Device read.'), field: Field, is: Match, forMs: ForMs }, { additionalProperties: false }),
  numeric: Type.Object(
    { type: Type.Literal('numeric'), deviceId: Id('Device read.'), field: Field, above: Type.Optional(Type.Number()), below: Type.Optional(Type.Number()), forMs: ForMs },
    { additionalProperties: false },
  ),
  time: Type.Object(
    {
      type: Type.Literal('time'),
      after: Type.Optional(Type.String({ pattern: TIME_PATTERN })),
      before: Type.Optional(Type.String({ pattern: TIME_PATTERN })),
      weekdays: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: 6 }), { minItems: 1, maxItems: 7, uniqueItems: true })),
      timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    },
    { additionalProperties: false, description: 'A window of local time; `after` later than `before` crosses midnight.' },
  ),
  sun: Type.Object({ type: Type.Literal('sun'), after: Type.Optional(SunAt), before: Type.Optional(SunAt) }, { additionalProperties: false }),
  trigger: Type.Object({ type: Type.Literal('trigger'), id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
};
const groupCondition = (inner: TSchema) =>
  Type.Object(
    {
      type: Type.Union([Type.Literal('and'), Type.Literal('or'), Type.Literal('not')]),
      conditions: Type.Array(inner, { minItems: 1, maxItems: AUTOMATION_LIMITS.maxConditions, description: '`not`: true when none holds.' }),
    },
    { additionalProperties: false },
  );

/** The cyclic definition of a condition, referring to itself as `Ref('Condition')`. */
const c = leafConditionSchemas;
export const ConditionDefinition = Type.Union([c.state, c.numeric, c.time, c.sun, c.trigger, groupCondition(Type.Ref('Condition'))], {
  description: 'A condition; `type` selects the kind.',
});

// ---------------------------------------------------------------------------------------------
// Checks with paths
// ---------------------------------------------------------------------------------------------

type Fail = (path: string, problem: string) => never;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function invalid(path: string, problem: string): never {
  throw programErrors.INVALID_PROGRAM({ path, problem }, { details: { path, problem } });
}

const compiledTriggers = Object.fromEntries(Object.entries(triggerSchemas).map(([k, s]) => [k, Compile(s)])) as Record<Trigger['type'], Validator>;
const compiledLeafConditions = Object.fromEntries(Object.entries(leafConditionSchemas).map(([k, s]) => [k, Compile(s)])) as Record<string, Validator>;
const compiledGroup = Compile(groupCondition(Type.Unknown()));

/** `/deviceIds/0` → `.deviceIds[0]`. */
export function joinPath(base: string, pointer: string): string {
  if (!pointer) return base;
  return base + pointer.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('');
}

/** The first schema error with its path, in words. */
export function schemaProblem(check: Validator, value: unknown, base: string, fail: Fail = invalid): never {
  const errors = check.Errors(value);
  const unknownMember = errors.find((e) => e.keyword === 'boolean' || e.keyword === 'additionalProperties');
  if (unknownMember) {
    if (unknownMember.keyword === 'boolean') fail(joinPath(base, unknownMember.instancePath), 'is not allowed here (unknown member)');
    const extra = (unknownMember.params as { additionalProperties?: string[] }).additionalProperties;
    fail(joinPath(base, unknownMember.instancePath), `unknown member ${extra?.map((k) => `"${k}"`).join(', ') ?? ''}`.trim());
  }
  const first = errors[0];
  if (!first) fail(base, 'is not valid');
  const params = first.params as { requiredProperties?: string[] };
  if (first.keyword === 'pattern' && /\/(time|after|before)$/.test(first.instancePath)) fail(joinPath(base, first.instancePath), 'must be "HH:MM" (24 h), e.g. "07:30"');
  if (first.keyword === 'required' && params.requiredProperties?.length) fail(joinPath(base, first.instancePath), `missing ${params.requiredProperties.map((k) => `"${k}"`).join(', ')}`);
  if (first.keyword === 'maximum' && /forMs$/.test(first.instancePath)) fail(joinPath(base, first.instancePath), 'is longer than 7 days');
  if ((first.keyword === 'maximum' || first.keyword === 'minimum') && /offsetMs$/.test(first.instancePath)) fail(joinPath(base, first.instancePath), 'is more than 6 hours either way');
  fail(joinPath(base, first.instancePath), first.message ?? 'is not valid');
}

function checkTimezone(timezone: unknown, path: string): void {
  if (typeof timezone === 'string' && !isValidTimezone(timezone)) invalid(path, `unknown time zone "${timezone}" (use an IANA name such as "Europe/Berlin")`);
}

function checkRange(value: { above?: number; below?: number }, path: string): void {
  if (value.above === undefined && value.below === undefined) invalid(path, 'needs "above", "below" or both');
  if (value.above !== undefined && value.below !== undefined && value.above >= value.below) invalid(path, '"above" must be less than "below" (a value between them)');
}

/** Checks a timer as received and answers it typed. */
export function checkTimer(value: unknown, path: string): Timer {
  if (!isRecord(value)) invalid(path, 'must be an object');
  const kind = value['kind'];
  if (kind !== 'daily' && kind !== 'cron' && kind !== 'interval' && kind !== 'at') invalid(`${path}.kind`, 'must be one of daily, cron, interval, at');
  const check = timerChecks[kind];
  if (!check.Check(value)) schemaProblem(check, value, path);
  checkTimezone(value['timezone'], `${path}.timezone`);
  if (kind === 'cron') {
    const problem = cronProblem(value['expression'] as string, value['timezone'] as string | undefined);
    if (problem) invalid(`${path}.expression`, problem);
  }
  if (kind === 'at') {
    const at = value['at'] as string;
    const [date] = at.split('T');
    const [y, m, d] = (date as string).split('-').map(Number);
    const probe = new Date(Date.UTC(y as number, (m as number) - 1, d));
    if (probe.getUTCMonth() !== (m as number) - 1 || probe.getUTCDate() !== d) invalid(`${path}.at`, `no such date ${date}`);
  }
  return value as unknown as Timer;
}

/** Checks a trigger list as received (shapes, time zones, ranges) and answers it typed. */
export function checkTriggers(value: unknown, path: string, options: { allowEmpty?: boolean } = {}): Trigger[] {
  if (!Array.isArray(value)) invalid(path, 'must be a list of triggers');
  if (!options.allowEmpty && value.length === 0) invalid(path, 'needs at least one trigger');
  if (value.length > AUTOMATION_LIMITS.maxTriggers) invalid(path, `has ${value.length} triggers; at most ${AUTOMATION_LIMITS.maxTriggers}`);
  const ids = new Set<string>();
  return value.map((trigger, i) => {
    const at = `${path}[${i}]`;
    if (!isRecord(trigger)) invalid(at, 'must be an object');
    const type = trigger['type'];
    if (typeof type !== 'string' || !Object.hasOwn(compiledTriggers, type)) invalid(`${at}.type`, `must be one of ${Object.keys(compiledTriggers).join(', ')}`);
    const check = compiledTriggers[type as Trigger['type']];
    if (!check.Check(trigger)) schemaProblem(check, trigger, at);
    const typed = trigger as unknown as Trigger;
    if (typed.id !== undefined) {
      if (ids.has(typed.id)) invalid(`${at}.id`, `another trigger already has the id "${typed.id}"`);
      ids.add(typed.id);
    }
    if (typed.type === 'numeric') checkRange(typed, at);
    if (typed.type === 'time') checkTimer(typed.timer, `${at}.timer`);
    if (typed.type === 'hub' && typed.programId !== undefined && typed.event !== 'program_finished' && typed.event !== 'program_failed') invalid(`${at}.programId`, 'goes with program_finished or program_failed');
    if (typed.type === 'hub' && typed.severities !== undefined && typed.event !== 'alert_submitted') invalid(`${at}.severities`, 'goes with alert_submitted');
    if (typed.type === 'mqtt') {
      const levels = typed.topic.split('/');
      if (levels.some((l, k) => (l.includes('#') && (l !== '#' || k !== levels.length - 1)) || (l.includes('+') && l !== '+'))) {
        invalid(`${at}.topic`, 'is not a valid topic filter ("+" stands for one whole level, "#" only for the last)');
      }
    }
    return typed;
  });
}

/** Checks a condition list as received (recursively, at most 16 levels and 100 conditions). */
export function checkConditions(value: unknown, path: string, counter = { n: 0 }, depth = 0): Condition[] {
  if (!Array.isArray(value)) invalid(path, 'must be a list of conditions');
  if (depth > 16) invalid(path, 'is nested too deeply (at most 16 levels)');
  return value.map((condition, i) => {
    const at = `${path}[${i}]`;
    counter.n += 1;
    if (counter.n > AUTOMATION_LIMITS.maxConditions) invalid(at, `too many conditions (at most ${AUTOMATION_LIMITS.maxConditions})`);
    if (!isRecord(condition)) invalid(at, 'must be an object');
    const type = condition['type'];
    if (type === 'and' || type === 'or' || type === 'not') {
      if (!compiledGroup.Check(condition)) schemaProblem(compiledGroup, condition, at);
      return { type, conditions: checkConditions(condition['conditions'], `${at}.conditions`, counter, depth + 1) };
    }
    if (typeof type !== 'string' || !Object.hasOwn(compiledLeafConditions, type)) invalid(`${at}.type`, 'must be one of and, or, not, state, numeric, time, sun, trigger');
    const check = compiledLeafConditions[type] as Validator;
    if (!check.Check(condition)) schemaProblem(check, condition, at);
    const typed = condition as unknown as Condition;
    if (typed.type === 'numeric') checkRange(typed, at);
    if (typed.type === 'time') {
      checkTimezone(typed.timezone, `${at}.timezone`);
      if (typed.after === undefined && typed.before === undefined && typed.weekdays === undefined) invalid(at, 'needs "after", "before" or "weekdays"');
    }
    if (typed.type === 'sun' && !typed.after && !typed.before) invalid(at, 'needs "after", "before" or both');
    return typed;
  });
}
