import { Type, type TSchema } from 'typebox';
import type { FailureFormatter } from '../error-handler.js';

/** The legacy App API envelope `{status, message, data}`. */
export const Envelope = <T extends TSchema>(data: T) =>
  Type.Object({ status: Type.Boolean(), message: Type.String(), data });

export const FailureEnvelope = Type.Object(
  {
    status: Type.Literal(false),
    message: Type.String(),
    data: Type.Null(),
    code: Type.Optional(Type.String({ description: 'Stable SNAKE_CASE code, as in the OS API error body.' })),
    details: Type.Optional(Type.Unknown()),
    requestId: Type.Optional(Type.String()),
  },
  { $id: 'AppFailureEnvelope' },
);

export const envelopeFailure: FailureFormatter = (failure, request) => ({
  status: false,
  message: failure.message,
  data: null,
  code: failure.code,
  ...(failure.details === undefined ? {} : { details: failure.details }),
  requestId: String(request.id),
});

export const ok = (message: string, data: unknown) => ({ status: true, message, data });
