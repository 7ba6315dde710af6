import { Type } from 'typebox';

const Id = Type.String({ minLength: 1, maxLength: 200 });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Stamps = { createdAt: Type.Integer(), updatedAt: Type.Integer() };
const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const SpaceSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  icon: Type.Optional(Type.String()),
  floor: Type.Optional(Type.String()),
  order: Type.Optional(Type.Integer()),
  activeSourceId: Type.Union([Type.String(), Type.Null()]),
  ...Stamps,
});

export const SpaceInput = {
  id: Type.Optional(Id),
  name: Name,
  icon: Type.Optional(Type.String({ maxLength: 100 })),
  floor: Type.Optional(Type.String({ maxLength: 100 })),
  order: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
};

export const RemoteSourceView = Type.Object({
  id: Type.String({ description: '`<deviceId>:<source id>`.' }),
  spaceId: Type.String(),
  deviceId: Type.String(),
  label: Type.String(),
  input: Type.Optional(Type.String()),
  requires: Type.Array(Type.String()),
  active: Type.Boolean(),
});

export const DeviceActionResultSchema = Type.Object({
  deviceId: Type.String(),
  ok: Type.Boolean(),
  command: Type.Optional(Type.String()),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});

export const ZoneSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  deviceIds: Type.Array(Type.String()),
  programId: Type.Union([Type.String(), Type.Null()]),
  devices: Type.Array(
    Type.Object({ id: Type.String(), name: Type.String(), online: Type.Boolean(), volumeCapable: Type.Boolean(), volume: Type.Union([Type.Number(), Type.Null()]) }),
  ),
  program: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()]),
  ...Stamps,
});

export const ZoneGroupSchema = Type.Object({ id: Type.String(), name: Type.String(), zoneIds: Type.Array(Type.String()), ...Stamps });

export const MacroStepSchema = Type.Object({
  deviceId: Id,
  command: Type.String({ minLength: 1, maxLength: 200 }),
  params: Type.Optional(JsonObject),
  delayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000, description: 'Pause before this step.' })),
});

export const MacroSchema = Type.Object({ id: Type.String(), name: Type.String(), steps: Type.Array(MacroStepSchema), stopOnError: Type.Boolean(), ...Stamps });

export const MacroRunSchema = Type.Object({
  macroId: Type.String(),
  ok: Type.Boolean(),
  steps: Type.Array(
    Type.Intersect([DeviceActionResultSchema, Type.Object({ index: Type.Integer(), status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('skipped')]) })]),
  ),
});

export const ActionMapSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  controlKey: Type.String(),
  deviceId: Type.Optional(Type.String({ description: 'Device command target: the device (with `command`).' })),
  command: Type.Optional(Type.String()),
  params: Type.Optional(JsonObject),
  macroId: Type.Optional(Type.String({ description: 'Macro target.' })),
  programId: Type.Optional(Type.String({ description: 'Program target.' })),
  spaceId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  sourceId: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "Applies only while this remote source is its space's active one." })),
  ...Stamps,
});

/** Exactly one target: `deviceId` + `command` (+ `params`), `macroId` or `programId`. */
export const ActionMapInput = {
  id: Type.Optional(Id),
  name: Name,
  controlKey: Type.String({ minLength: 1, maxLength: 100, description: 'A remote button or panel tile, e.g. "red", "tile-3".' }),
  deviceId: Type.Optional(Id),
  command: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  params: Type.Optional(JsonObject),
  macroId: Type.Optional(Id),
  programId: Type.Optional(Id),
  spaceId: Type.Optional(Type.Union([Id, Type.Null()])),
  sourceId: Type.Optional(Type.Union([Id, Type.Null()], { description: 'A remote source (`<deviceId>:<source id>`); the map then applies only while that source is active.' })),
};

export const PresetSchema = Type.Object({
  id: Type.String({ description: '`program:<id>` or `action:<id>`.' }),
  kind: Type.Union([Type.Literal('program'), Type.Literal('action_map')]),
  name: Type.String(),
  programId: Type.Optional(Type.String()),
  actionMapId: Type.Optional(Type.String()),
  macroId: Type.Optional(Type.String()),
  controlKey: Type.Optional(Type.String()),
  deviceId: Type.Optional(Type.String()),
  command: Type.Optional(Type.String()),
  spaceId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  semantics: Type.Optional(Type.Array(Type.String())),
});

export const Severity = Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')]);

export const AlertSchema = Type.Object({
  id: Type.String(),
  at: Type.Integer(),
  type: Type.String(),
  severity: Severity,
  message: Type.String(),
  deviceId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  source: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  payload: Type.Optional(JsonObject),
});

export const PreferencesSchema = Type.Object({
  layout: Type.Union([Type.Literal('grid'), Type.Literal('list')]),
  theme: Type.Union([Type.Literal('system'), Type.Literal('light'), Type.Literal('dark')]),
  temperatureUnit: Type.Union([Type.Literal('C'), Type.Literal('F')]),
  showOfflineDevices: Type.Boolean(),
  defaultSpaceId: Type.Union([Type.String(), Type.Null()]),
  sections: Type.Array(Type.String()),
  favorites: Type.Array(Type.String()),
  updatedAt: Type.Integer(),
});

export const DesignProfileSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  builtIn: Type.Boolean(),
  tokens: Type.Object({
    colorScheme: Type.String(),
    background: Type.String(),
    surface: Type.String(),
    accent: Type.String(),
    text: Type.String(),
    radius: Type.Number(),
    fontFamily: Type.String(),
  }),
});

export const LiveDesignSchema = Type.Object({ profile: DesignProfileSchema, selectedAt: Type.Union([Type.Integer(), Type.Null()]) });

export { Id, Name, JsonObject };
