import { Type } from 'typebox';
import { JsonObject } from '../home/schemas.js';

const ErrorInfo = Type.Object({ code: Type.String(), message: Type.String() });

export const ActionMapTargetSchema = Type.Union([
  Type.Object({ kind: Type.Literal('device_command'), deviceId: Type.String(), command: Type.String(), params: Type.Optional(JsonObject) }),
  Type.Object({ kind: Type.Literal('macro'), macroId: Type.String() }),
  Type.Object({ kind: Type.Literal('program'), programId: Type.String() }),
]);

export const ActionMapOutcomeSchema = Type.Object({
  actionMapId: Type.String(),
  target: ActionMapTargetSchema,
  ok: Type.Boolean(),
  result: Type.Optional(Type.Unknown({ description: "A device command's driver result, the macro run, or the started program run." })),
  error: Type.Optional(ErrorInfo),
  deviceId: Type.Optional(Type.String({ description: 'Device command targets: the device, as before other targets existed.' })),
  command: Type.Optional(Type.String()),
});

export { ErrorInfo };
