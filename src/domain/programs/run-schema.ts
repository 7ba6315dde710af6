import { Type } from 'typebox';

const ErrorInfo = Type.Object({ code: Type.String(), message: Type.String(), step: Type.Optional(Type.String()) });

export const StepResultSchema = Type.Object({
  path: Type.String({ description: 'Position of the step: "0", "3.branch1.2", "4.then.0".' }),
  type: Type.String(),
  label: Type.Optional(Type.String()),
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('skipped')]),
  startedAt: Type.Integer(),
  finishedAt: Type.Integer(),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});

export const ProgramRunSchema = Type.Object(
  {
    id: Type.String(),
    programId: Type.String(),
    path: Type.Union([Type.Literal('on'), Type.Literal('off')]),
    trigger: Type.String({ description: 'manual, timer, program, zone, preset, intent, macro or action_map.' }),
    status: Type.Union([Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled')]),
    startedAt: Type.Integer(),
    finishedAt: Type.Optional(Type.Integer()),
    steps: Type.Array(StepResultSchema),
    error: Type.Optional(ErrorInfo),
  },
  { description: 'One run of a program; `steps` fills in as it runs.' },
);
