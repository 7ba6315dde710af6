import { Type } from 'typebox';
import { DeviceAttributesSchema, DeviceClassSchema, DeviceReadingSchema } from './capability-schemas.js';

const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const DeviceCommandSchema = Type.Object({
  name: Type.String(),
  label: Type.Optional(Type.String()),
  params: Type.Optional(JsonObject),
});

export const RemoteSourceSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  label: Type.String({ minLength: 1, maxLength: 200 }),
  input: Type.Optional(Type.String({ maxLength: 100, description: 'Input to select on this device, e.g. "hdmi2".' })),
  requires: Type.Optional(Type.Array(Type.String(), { maxItems: 20, description: 'Other devices (ids) to power on for this source.' })),
});

export const DeviceSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    driverKey: Type.String(),
    driverDeviceId: Type.Union([Type.String(), Type.Null()], { description: 'The id the driver reported; null for hub-managed devices such as GENERIC_IR.' }),
    category: Type.String(),
    room: Type.Union([Type.String(), Type.Null()], { description: 'Primary room (space id).' }),
    tags: Type.Array(Type.String()),
    capabilities: Type.Array(Type.String()),
    properties: JsonObject,
    commands: Type.Array(DeviceCommandSchema),
    remoteSources: Type.Array(RemoteSourceSchema),
    deviceClass: DeviceClassSchema,
    attributes: DeviceAttributesSchema,
    reading: DeviceReadingSchema,
    online: Type.Boolean(),
    removed: Type.Boolean(),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
  },
  { description: 'Logical device.' },
);

export const DeviceStateSchema = Type.Object({
  state: JsonObject,
  online: Type.Boolean(),
  confirmed: Type.Boolean({ description: 'False while the state is the last one stored before a restart and no driver has reported since.' }),
  updatedAt: Type.Union([Type.Integer(), Type.Null()]),
});

export const DeviceDetailSchema = Type.Intersect([DeviceSchema, Type.Object({ state: DeviceStateSchema })]);

export const CommandResultSchema = Type.Object({
  ok: Type.Literal(true),
  result: Type.Optional(Type.Unknown()),
});

export const IdParam = Type.String({ minLength: 1, maxLength: 200 });
