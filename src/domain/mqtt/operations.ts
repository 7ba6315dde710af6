import { Type } from 'typebox';
import { ADMIN_ACCOUNT, defineOperation, type Access } from '../../platform/operations.js';
import type { DeviceService } from '../devices/device-service.js';
import { protocolDeviceCommand } from '../devices/protocol-command.js';
import type { BrokerUsers } from './broker-users.js';
import { mqttErrors } from './errors.js';
import type { MqttRuntime } from './ports.js';

/** The MQTT exposure's credential: commands from MQTT dashboards run as scope `mqtt`, on this operation only. */
export const MQTT_CALLER: Access = { scopes: ['mqtt'] };

const Rejected = Type.Object({ topic: Type.String(), reason: Type.String(), at: Type.Integer({ description: 'When, epoch ms.' }) });

export const MqttStatusSchema = Type.Object({
  enabled: Type.Boolean({ description: 'MQTT_URL is set.' }),
  mode: Type.Union([Type.Literal('off'), Type.Literal('external'), Type.Literal('embedded')]),
  broker: Type.Union([Type.String(), Type.Null()], { description: 'The broker, without credentials.' }),
  role: Type.Union([Type.Literal('active'), Type.Literal('standby'), Type.Literal('off')], { description: '`standby`: another instance of the cluster holds the MQTT link (`holder`).' }),
  holder: Type.Optional(Type.String()),
  connection: Type.Union([
    Type.Object({
      connected: Type.Boolean(),
      since: Type.Union([Type.Integer(), Type.Null()], { description: 'When the connection (or the outage) began, epoch ms.' }),
      reconnects: Type.Integer(),
      lastError: Type.Optional(Type.String()),
      nextAttemptAt: Type.Optional(Type.Integer({ description: 'While disconnected: when the next try is due (back-off).' })),
    }),
    Type.Null(),
  ]),
  embedded: Type.Union([Type.Object({ port: Type.Integer(), clients: Type.Integer(), users: Type.Integer(), error: Type.Optional(Type.String()) }), Type.Null()]),
  discovery: Type.Union([
    Type.Object({
      prefix: Type.String(),
      devices: Type.Integer({ description: 'Hub devices from MQTT: entities and buttons.' }),
      entities: Type.Integer(),
      buttons: Type.Integer({ description: 'Buttons made from device triggers (device_automation).' }),
      disabled: Type.Integer({ description: 'Configs left out: entities their integration disables by default (`enabled_by_default: false`), and button releases.' }),
      messages: Type.Integer(),
      dropped: Type.Integer({ description: 'Messages over the size bounds.' }),
      unreadable: Type.Integer({ description: 'Payloads a template failed on.' }),
      physicalDevices: Type.Array(
        Type.Object({
          key: Type.String(),
          name: Type.Optional(Type.String()),
          manufacturer: Type.Optional(Type.String()),
          model: Type.Optional(Type.String()),
          entities: Type.Array(Type.String(), { description: 'The hub device ids of its entities (their driver device ids).' }),
        }),
      ),
    }),
    Type.Null(),
  ]),
  rejected: Type.Array(Rejected, { description: 'Discovery configs the hub could not use, newest first, with the reason.' }),
  exposure: Type.Object({ enabled: Type.Boolean(), baseTopic: Type.String(), devices: Type.Integer() }),
});

const BrokerUserSchema = Type.Object({ username: Type.String(), createdAt: Type.Integer() });

export interface MqttOperationDeps {
  runtime: MqttRuntime | undefined;
  mode: 'off' | 'external' | 'embedded';
  users: BrokerUsers;
  devices: DeviceService;
  baseTopic: string;
}

export function mqttOperations({ runtime, mode, users, devices, baseTopic }: MqttOperationDeps) {
  const embeddedOnly = () => {
    if (mode === 'off' || !runtime) throw mqttErrors.MQTT_OFF();
    if (mode !== 'embedded') throw mqttErrors.MQTT_BROKER_NOT_EMBEDDED({ broker: runtime.status().broker });
  };
  return {
    status: defineOperation({
      name: 'mqtt.status',
      summary: 'The MQTT integration: the connection to the broker, the embedded broker, what discovery imported, the configs it rejected and why, and what is exposed.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: MqttStatusSchema,
      handler() {
        if (!runtime) {
          return { enabled: false, mode: 'off' as const, broker: null, role: 'off' as const, connection: null, embedded: null, discovery: null, rejected: [], exposure: { enabled: false, baseTopic, devices: 0 } };
        }
        const s = runtime.status();
        return {
          enabled: true,
          mode: s.mode,
          broker: s.broker,
          role: s.role,
          ...(s.holder ? { holder: s.holder } : {}),
          connection: s.connection,
          embedded: s.embedded ? { ...s.embedded, users: users.size } : null,
          discovery: s.discovery,
          rejected: s.rejected,
          exposure: s.exposure,
        };
      },
    }),
    listUsers: defineOperation({
      name: 'mqtt.users.list',
      summary: "The embedded broker's users (MQTT_URL=embedded).",
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ users: Type.Array(BrokerUserSchema) }),
      handler() {
        return { users: users.list() };
      },
    }),
    createUser: defineOperation({
      name: 'mqtt.users.create',
      summary: 'Create a user of the embedded broker, for a device or dashboard to connect with (409 MQTT_USER_EXISTS; 409 MQTT_BROKER_NOT_EMBEDDED with an external broker).',
      access: ADMIN_ACCOUNT,
      input: Type.Object({
        username: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._@-]+$' }),
        password: Type.String({ minLength: 8, maxLength: 200 }),
      }),
      output: BrokerUserSchema,
      async handler({ username, password }) {
        embeddedOnly();
        return users.create(username, password);
      },
    }),
    removeUser: defineOperation({
      name: 'mqtt.users.remove',
      summary: 'Remove a user of the embedded broker; clients connected with it keep their connection until they reconnect.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ username: Type.String({ minLength: 1, maxLength: 64 }) }),
      output: BrokerUserSchema,
      async handler({ username }) {
        embeddedOnly();
        return users.remove(username);
      },
    }),
    exposedCommand: protocolDeviceCommand('mqtt.exposed.command', MQTT_CALLER, "For the MQTT exposure: a command an MQTT client published to an exposed device, as one of its class's standard commands, checked and translated like any device command.", devices),
  };
}
