import { Type } from 'typebox';
import { defineOperation, type OperationRegistry, OS_ADMIN } from '../../platform/operations.js';
import { HUB_EVENT_TYPES } from './feed.js';

export const HUB_PROTOCOL_VERSION = 1;

/**
 * The hub protocol's command names and the operation each one runs. A command is only a name
 * for an operation of the registry: the same operation answers its REST route, if it has one.
 */
export const HUB_COMMANDS = {
  GET_PROTOCOL_CAPABILITIES: 'protocol.capabilities',
  LIST_EVENTS: 'protocol.events',
  SYSTEM_SNAPSHOT: 'system.snapshot',
  GET_CONTEXT_SNAPSHOT: 'graph.context',
  GET_HOME_GRAPH: 'graph.get',
  LIST_CAPABILITY_MODEL: 'capabilities.model',
  LIST_INTEGRATIONS: 'integrations.list',
  LIST_CONNECTIONS: 'drivers.connections',
  LIST_SCENES: 'scenes.list',
  SCENE_RUN: 'scenes.run',
  LIST_ENTITY_DOMAINS: 'entities.domains',
  LIST_ENTITIES: 'entities.list',
  GET_ENTITY: 'entities.get',
  ENTITY_ACTION: 'entities.action',
  LIST_SENSORS: 'entities.sensors',
  LIST_STATES: 'state.list',
  GET_DEVICE_STATE: 'state.get',
  LIST_PROGRAMS: 'programs.list',
  LIST_AUTOMATIONS: 'automations.list',
  LIST_ACTION_MAPS: 'action_maps.list',
  LIST_ZONES: 'zones.list',
  PROGRAM_RUN: 'programs.run',
  AUTOMATION_RUN: 'automations.run',
  ACTION_MAP_TRIGGER: 'action_maps.trigger',
  LIST_PROGRAM_SEMANTICS: 'program_semantics.list',
  UPSERT_PROGRAM_SEMANTIC: 'program_semantics.upsert',
  DELETE_PROGRAM_SEMANTIC: 'program_semantics.delete',
  LIST_DRIVERS: 'drivers.list',
  LIST_DEVICES: 'devices.list',
  LIST_DEVICE_COMMANDS: 'devices.commands',
  GET_DEVICE_COMMAND: 'devices.commands.get',
  EXECUTE_DEVICE_COMMAND: 'devices.command',
  DEVICE_ACTION: 'devices.action',
  DRIVER_MESSAGE: 'drivers.message',
  INTENT_PARSE: 'intents.parse',
  INTENT_EXECUTE: 'intents.execute',
} as const;

export type HubCommandName = keyof typeof HUB_COMMANDS;

/** GET_PROTOCOL_CAPABILITIES and LIST_EVENTS: the protocol describing itself from the registry. */
export function protocolOperations(registry: OperationRegistry) {
  return {
    capabilities: defineOperation({
      name: 'protocol.capabilities',
      summary: 'Protocol version, every command with its operation and payload schema, and the event types.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({
        protocolVersion: Type.Integer(),
        commands: Type.Array(
          Type.Object({
            command: Type.String(),
            operation: Type.String(),
            summary: Type.String(),
            payloadSchema: Type.Unknown({ description: 'JSON Schema of the payload.' }),
            resultSchema: Type.Unknown({ description: 'JSON Schema of `data` on success.' }),
          }),
        ),
        events: Type.Array(Type.String()),
      }),
      async handler() {
        return {
          protocolVersion: HUB_PROTOCOL_VERSION,
          commands: Object.entries(HUB_COMMANDS).map(([command, operation]) => {
            const op = registry.get(operation);
            return { command, operation, summary: op.summary, payloadSchema: op.input, resultSchema: op.output };
          }),
          events: Object.keys(HUB_EVENT_TYPES),
        };
      },
    }),
    events: defineOperation({
      name: 'protocol.events',
      summary: 'The event types `hub:event` (and the SSE `event`) carry, with what each means.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({
        envelope: Type.String(),
        events: Type.Array(Type.Object({ type: Type.String(), description: Type.String() })),
        streams: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
      }),
      async handler() {
        return {
          envelope: '{type: string, at: ms since epoch, data: object}',
          events: Object.entries(HUB_EVENT_TYPES).map(([type, description]) => ({ type, description })),
          streams: [
            { name: 'device:state:update', description: 'Socket.IO /socket/device-state: {deviceId, state} on every change (SSE: `state`).' },
            { name: 'device:state:snapshot', description: 'Socket.IO /socket/device-state: {deviceId, state} per device on connect (SSE: `snapshot`).' },
            { name: 'designer:published', description: 'Socket.IO /socket/designer: the live design when a profile is selected.' },
            { name: 'designer:refresh', description: 'Socket.IO /socket/designer: clients should reload their layout.' },
            { name: 'ir:data', description: 'Socket.IO /socket/device-ir-test: every IR transmission.' },
          ],
        };
      },
    }),
  };
}
