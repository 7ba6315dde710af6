import { Type } from 'typebox';

const ErrorInfo = Type.Object({ code: Type.String(), message: Type.String(), step: Type.Optional(Type.String()) });

export const StepResultSchema = Type.Object({
  path: Type.String({ description: 'Position of the step: "0", "3.branch1.2", "4.then.0", "5.choice1.0", "6.pass2.0".' }),
  type: Type.String(),
  label: Type.Optional(Type.String()),
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('skipped')]),
  startedAt: Type.Integer(),
  finishedAt: Type.Integer(),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});

export const TriggerDataSchema = Type.Object(
  {
    id: Type.String({ description: 'The trigger\'s id, else its position; `manual` or `test` for runs by hand.' }),
    index: Type.Optional(Type.Integer()),
    type: Type.String(),
    deviceId: Type.Optional(Type.String()),
    field: Type.Optional(Type.String()),
    from: Type.Optional(Type.Unknown()),
    to: Type.Optional(Type.Unknown()),
    press: Type.Optional(Type.String()),
    topic: Type.Optional(Type.String()),
    payload: Type.Optional(Type.Unknown()),
    event: Type.Optional(Type.String()),
    programId: Type.Optional(Type.String()),
    alertId: Type.Optional(Type.String()),
    at: Type.Integer(),
    description: Type.String(),
  },
  { description: 'What started the run; the actions read it as `trigger.*`.' },
);

export const ConditionResultSchema = Type.Object({
  path: Type.String(),
  type: Type.String(),
  result: Type.Boolean(),
  detail: Type.Optional(Type.String()),
});

export const RunStatusSchema = Type.Union(
  [
    Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled'),
    Type.Literal('skipped'), Type.Literal('not_passed'), Type.Literal('interrupted'),
  ],
  { description: 'skipped: the mode allowed no run; not_passed: the conditions did not hold; interrupted: the hub stopped inside a delay or wait.' },
);

export const ProgramRunSchema = Type.Object(
  {
    id: Type.String(),
    programId: Type.String(),
    path: Type.Union([Type.Literal('on'), Type.Literal('off')]),
    trigger: Type.String({ description: 'manual, timer, automation, test, program, zone, preset, intent, macro or action_map.' }),
    status: RunStatusSchema,
    startedAt: Type.Integer(),
    finishedAt: Type.Optional(Type.Integer()),
    steps: Type.Array(StepResultSchema),
    error: Type.Optional(ErrorInfo),
    triggered: Type.Optional(TriggerDataSchema),
    conditions: Type.Optional(Type.Array(ConditionResultSchema, { description: 'Each condition\'s result, in order (the first that failed ends the list).' })),
    variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    reason: Type.Optional(Type.String()),
    count: Type.Optional(Type.Integer({ description: 'The same outcome this many times in a row (the newest is `lastAt`).' })),
    lastAt: Type.Optional(Type.Integer()),
    resumedFrom: Type.Optional(Type.String()),
  },
  { description: 'One run of a program (an automation\'s trace): `steps` fills in as it runs.' },
);
