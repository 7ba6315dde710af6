import { Type, type Static } from 'typebox';

/**
 * The driver wire protocol (CONTRACT.md "Driver messages"), shared by the driver WebSocket and
 * the local process protocol. One JSON object per message; `type` names it.
 */
export const PROTOCOL_VERSION = 1;
export const MAX_DRIVER_MESSAGE_BYTES = 1024 * 1024;

const Id = Type.String({ minLength: 1, maxLength: 200 });
const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const DriverRegistration = Type.Object({
  method: Type.Literal('driver.register'),
  driverKey: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' }),
  instanceId: Id,
  protocolVersion: Type.Number(),
  name: Type.Optional(Type.String({ maxLength: 200 })),
  version: Type.Optional(Type.String({ maxLength: 50 })),
  /**
   * With DRIVER_AUTH=token: a token an admin issued for this driverKey (or send it as
   * `Authorization: Bearer` on the upgrade request). Ignored with DRIVER_AUTH=open.
   */
  token: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});
export type DriverRegistration = Static<typeof DriverRegistration>;

export const DiscoveredDevice = Type.Object({
  id: Id,
  name: Type.String({ minLength: 1, maxLength: 200 }),
  category: Type.Optional(Type.String({ maxLength: 100 })),
  commands: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 1000 })),
  properties: Type.Optional(JsonObject),
  capabilities: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
  /** The device class (docs/devices.md); an unknown one is ignored and the class derived. */
  deviceClass: Type.Optional(Type.String({ maxLength: 50 })),
  /** Ranges, units and modes of the class; fields that do not fit the model are ignored. */
  attributes: Type.Optional(JsonObject),
  state: Type.Optional(JsonObject),
});
export type DiscoveredDevice = Static<typeof DiscoveredDevice>;

export const DeviceDiscoveredMessage = Type.Object({ type: Type.Literal('DEVICE_DISCOVERED'), device: DiscoveredDevice });
export const DeviceUpdatedMessage = Type.Object({
  type: Type.Literal('DEVICE_UPDATED'),
  device: Type.Intersect([Type.Object({ id: Id }), Type.Partial(Type.Omit(DiscoveredDevice, ['id']))]),
});
export const DeviceRemovedMessage = Type.Object({ type: Type.Literal('DEVICE_REMOVED'), deviceId: Id });
export const StateUpdateMessage = Type.Object({ type: Type.Literal('STATE_UPDATE'), deviceId: Id, state: JsonObject });
export const ActionResultMessage = Type.Object({
  type: Type.Literal('ACTION_RESULT'),
  actionId: Id,
  ok: Type.Boolean(),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.String({ maxLength: 2000 })),
});
export const ButtonPressedMessage = Type.Object({
  type: Type.Literal('BUTTON_PRESSED'),
  deviceId: Id,
  press: Type.Union([Type.Literal('single'), Type.Literal('double'), Type.Literal('long')]),
});
export const MetricUpdateMessage = Type.Object({ type: Type.Literal('METRIC_UPDATE'), deviceId: Id, metrics: JsonObject });
export const PongMessage = Type.Object({ type: Type.Literal('PONG'), id: Type.Optional(Type.String()) });

export const DRIVER_EVENT_SCHEMAS = {
  DEVICE_DISCOVERED: DeviceDiscoveredMessage,
  DEVICE_UPDATED: DeviceUpdatedMessage,
  DEVICE_REMOVED: DeviceRemovedMessage,
  STATE_UPDATE: StateUpdateMessage,
  ACTION_RESULT: ActionResultMessage,
  METRIC_UPDATE: MetricUpdateMessage,
  BUTTON_PRESSED: ButtonPressedMessage,
  PONG: PongMessage,
} as const;

export type DriverEventType = keyof typeof DRIVER_EVENT_SCHEMAS;
export type DriverEvent = { [K in DriverEventType]: Static<(typeof DRIVER_EVENT_SCHEMAS)[K]> }[DriverEventType];

/** Server → driver. `deviceId` is always the driver's own device id. */
export type ServerToDriverMessage =
  | { type: 'ACTION'; actionId: string; deviceId: string; command: string; params: Record<string, unknown> }
  | { type: 'COMMAND_EXECUTE'; actionId: string; deviceId: string; command: string; params: Record<string, unknown> }
  | { type: 'PING'; id: string }
  | { type: 'DRIVER_STATUS'; status: string; message?: string; code?: string }
  | { type: 'DRIVER_MESSAGE'; payload: unknown };
