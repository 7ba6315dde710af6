import { Type } from 'typebox';
import { defineOperation, type OperationRegistry, OS_ADMIN } from '../../platform/operations.js';
import { HUB_EVENT_TYPES } from './feed.js';

export const HUB_PROTOCOL_VERSION = 1;


/** GET_PROTOCOL_CAPABILITIES and LIST_EVENTS: the protocol describing itself from the registry. */
/** Command name → operation name: the table the protocol describes (see command-table.ts). */
export type CommandTable = Readonly<Record<string, string>>;

export function protocolOperations(registry: OperationRegistry, commands: CommandTable) {
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
          commands: Object.entries(commands).map(([command, operation]) => {
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
