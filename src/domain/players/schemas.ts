import { Type } from 'typebox';

const MAX_ACCESS_DETAILS = 100;

/** Fleet ids travel in URLs and to other hubs: a conservative alphabet. */
export const PlayerId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$', description: 'Fleet identity of the player.' });
const Id = Type.String({ minLength: 1, maxLength: 200 });
const Stamps = { createdAt: Type.Integer(), updatedAt: Type.Integer() };

const AccessDetailValue = Type.Union([Type.String({ maxLength: 2000 }), Type.Number(), Type.Boolean()]);
const AccessKey = Type.String({ minLength: 1, maxLength: 200 });

export const AccessDetailsInput = Type.Union(
  [
    Type.Record(AccessKey, AccessDetailValue, { maxProperties: MAX_ACCESS_DETAILS }),
    Type.Array(Type.Object({ key: AccessKey, value: AccessDetailValue }, { additionalProperties: false }), { maxItems: MAX_ACCESS_DETAILS }),
  ],
  { description: 'Credentials and settings a client needs to reach the player: an object `{key: value}` or a list `[{key, value}]`, stored as given.' },
);

export const ConnectionSchema = Type.Object(
  {
    ip: Type.String({ minLength: 1, maxLength: 253, description: 'IP address or host name of the player on the LAN.' }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    secure: Type.Optional(Type.Boolean()),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
  },
  { additionalProperties: false },
);

const Status = Type.Union([Type.Literal('online'), Type.Literal('offline')]);
const LastSeenAt = Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'ISO 8601; null when never seen online.' });

export const StatusSourceSchema = Type.Union([Type.Literal('runtime'), Type.Literal('persisted'), Type.Literal('unknown')], {
  description: '`runtime`: the linked logical device is live in the state authority; `persisted`: the last status the hub recorded or a peer reported; `unknown`: neither (status `offline`).',
});

export const RosterRecordSchema = Type.Object({
  id: Type.String(),
  logicalDeviceId: Type.Optional(Type.String({ description: 'The runtime logical device: use it for commands and polling.' })),
  name: Type.String(),
  brand: Type.Optional(Type.String()),
  category: Type.String(),
  room: Type.String({ description: 'Space name; empty when the player has no room.' }),
  roomId: Type.Union([Type.String(), Type.Null()]),
  accessDetails: Type.Array(Type.Object({ key: Type.String(), value: Type.String() })),
  connection: ConnectionSchema,
  online: Type.Boolean(),
  status: Status,
  statusSource: StatusSourceSchema,
  lastSeenAt: LastSeenAt,
});

export const PersistedStatusSchema = Type.Object({
  status: Status,
  lastSeenAt: LastSeenAt,
  origin: Type.Union([Type.Literal('runtime'), Type.Literal('report')], { description: 'Who recorded it: the hub watching the linked device, or a report.' }),
});

export const PlayerRecordSchema = Type.Object({
  id: Type.String(),
  logicalDeviceId: Type.Optional(Type.String()),
  name: Type.String(),
  brand: Type.Optional(Type.String()),
  category: Type.String(),
  roomId: Type.Optional(Type.String()),
  accessDetails: AccessDetailsInput,
  connection: ConnectionSchema,
  persistedStatus: Type.Optional(PersistedStatusSchema),
  ...Stamps,
});

/** What the admin sees of a player: the record as stored, the roster answer, and who has it. */
export const PlayerEntrySchema = Type.Object({
  record: PlayerRecordSchema,
  roster: RosterRecordSchema,
  assignedUserIds: Type.Array(Type.String()),
});

export const PlayerInput = Type.Object({
  id: Type.Optional(PlayerId),
  logicalDeviceId: Type.Optional(Id),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  brand: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  category: Type.Optional(Type.String({ minLength: 1, maxLength: 100, default: 'media_player' })),
  roomId: Type.Optional(Id),
  accessDetails: Type.Optional(AccessDetailsInput),
  connection: ConnectionSchema,
});

export const StatusReportInput = Type.Object({
  id: PlayerId,
  status: Status,
  lastSeenAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the player was last seen online; defaults to now for `online`. A time after the hub\'s now counts as now.' })),
});

export const AssignmentSchema = Type.Object({ userId: Type.String(), playerIds: Type.Array(Type.String()) });
export const AssignmentInput = Type.Object({ id: Id, playerIds: Type.Array(PlayerId, { maxItems: 1000 }) });
export { Id };
