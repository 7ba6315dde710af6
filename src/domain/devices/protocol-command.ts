import { Type } from 'typebox';
import { defineOperation, type Access } from '../../platform/operations.js';
import type { DeviceService } from './device-service.js';

/**
 * The operation a protocol surface inside the hub (MQTT dashboards, Matter controllers) runs a
 * device command through, as its own caller: one of the class's standard commands, checked and
 * translated like any device command, and journalled as activity with the caller's address.
 */
export function protocolDeviceCommand<const N extends string>(name: N, access: Access, summary: string, devices: DeviceService) {
  return defineOperation({
    name,
    journal: 'activity',
    summary,
    access,
    input: Type.Object({
      deviceId: Type.String({ minLength: 1, maxLength: 200 }),
      command: Type.String({ minLength: 1, maxLength: 100 }),
      params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
    output: Type.Object({ ok: Type.Literal(true), result: Type.Optional(Type.Unknown()) }),
    async handler({ deviceId, command, params }) {
      const result = await devices.command(deviceId, command, params ?? {});
      return { ok: true as const, ...(result === undefined ? {} : { result }) };
    },
  });
}
