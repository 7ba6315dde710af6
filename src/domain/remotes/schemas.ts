import { Type } from 'typebox';
import { JsonObject, RemoteSourceView, SpaceSchema } from '../home/schemas.js';
import { ActionMapTargetSchema, ErrorInfo } from '../programs/action-map-schemas.js';

const Status = Type.Union([Type.Literal('pending'), Type.Literal('paired'), Type.Literal('rejected'), Type.Literal('expired')]);

export const RequestId = Type.String({ format: 'uuid', description: 'The pairing request id; knowing it is what lets a remote poll its request.' });
export const KeyName = Type.String({ minLength: 1, maxLength: 100, description: 'A remote key, e.g. "power", "volume_up", "red".' });
export const KeyParams = Type.Optional(JsonObject);

export const RemoteViewSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  kind: Type.Optional(Type.String()),
  pairedBy: Type.String({ description: 'The account that confirmed the pairing, or `code`.' }),
  activeSpaceId: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
  lastSeenAt: Type.Union([Type.Integer(), Type.Null()]),
  lastAddress: Type.Union([Type.String(), Type.Null()]),
});

export const PairingViewSchema = Type.Object({
  requestId: Type.String(),
  status: Status,
  expiresAt: Type.String({ format: 'date-time', description: 'When the code stops working (two minutes after the request opened).' }),
  codeLength: Type.Integer({ description: 'Digits of the code shown on the hub.' }),
  attemptsLeft: Type.Optional(Type.Integer({ description: 'Pending requests: wrong codes still allowed.' })),
  reason: Type.Optional(Type.Union([Type.Literal('rejected_by_household'), Type.Literal('too_many_attempts')])),
  token: Type.Optional(Type.String({ description: "The remote's bearer token (remoteAuth), in the first answer after pairing only." })),
  tokenDelivered: Type.Optional(Type.Boolean({ description: 'Paired: the token was handed over already.' })),
  remote: Type.Optional(Type.Object({ id: Type.String(), name: Type.String(), activeSpaceId: Type.Union([Type.String(), Type.Null()]) })),
});

export const PendingPairingSchema = Type.Object({
  requestId: Type.String(),
  name: Type.String(),
  kind: Type.Optional(Type.String()),
  code: Type.Optional(Type.String({ description: 'The code to tell the person holding the remote; shown to admins only.' })),
  clientAddress: Type.String(),
  openedAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
});

export const SessionSchema = Type.Object({
  remote: RemoteViewSchema,
  space: Type.Union([SpaceSchema, Type.Null()]),
  activeSourceId: Type.Union([Type.String(), Type.Null()]),
  sources: Type.Array(RemoteSourceView),
});

export const KeyOutcomeSchema = Type.Object({
  key: Type.String(),
  resolvedBy: Type.Union([Type.Literal('action_map'), Type.Literal('source_device')]),
  actionMapId: Type.Optional(Type.String()),
  target: ActionMapTargetSchema,
  ok: Type.Boolean(),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(ErrorInfo),
});

export const BatchEntrySchema = Type.Object({
  key: Type.String(),
  ok: Type.Boolean(),
  skipped: Type.Optional(Type.Boolean({ description: 'Not run: an earlier key failed and `stopOnError` was set.' })),
  resolvedBy: Type.Optional(Type.Union([Type.Literal('action_map'), Type.Literal('source_device')])),
  actionMapId: Type.Optional(Type.String()),
  target: Type.Optional(ActionMapTargetSchema),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(ErrorInfo),
});
