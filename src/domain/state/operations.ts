import { Type } from 'typebox';
import { defineOperation, OS_ADMIN } from '../../platform/operations.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DeviceStateView } from './state-authority.js';
import { DeviceStateSchema, IdParam } from '../devices/schemas.js';

const DeviceStateViewSchema = Type.Object({
  deviceId: Type.String(),
  name: Type.String(),
  state: Type.Record(Type.String(), Type.Unknown()),
  online: Type.Boolean(),
  confirmed: Type.Boolean({ description: 'False while the state is the one stored before a restart and no driver has reported since.' }),
  updatedAt: Type.Union([Type.Integer(), Type.Null()]),
});

/**
 * Device state as clients read it: each device's state joined with the device (its name, whether
 * it is online). The devices module offers these, since the join needs the device service.
 */
export function stateOperations(devices: DeviceService, now: () => number) {
  const stateView = (id: string) => {
    const device = devices.registry.get(id);
    const view = devices.state.get(id);
    return { deviceId: id, name: device.name, state: view.state, online: devices.isOnline(device), confirmed: view.confirmed, updatedAt: view.updatedAt };
  };

  return {
    snapshot: defineOperation({
      name: 'state.snapshot',
      summary: 'Point-in-time state of every device.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({
        at: Type.Integer({ description: 'When this snapshot was taken (ms since epoch). It holds until a device, its state or its connectivity changes, and is served unchanged until then.' }),
        devices: Type.Record(Type.String(), DeviceStateSchema),
      }),
      handler() {
        // The same frozen value until something changes: the surfaces reuse its JSON. At once (no promise).
        return devices.stateSnapshot() as { at: number; devices: Record<string, DeviceStateView> };
      },
    }),
    telemetry: defineOperation({
      name: 'state.telemetry',
      summary: 'Recent state changes and metrics of one device, newest last.',
      description: 'Kept in memory per device, bounded by TELEMETRY_MAX_ENTRIES and TELEMETRY_MAX_AGE_SECONDS.',
      access: OS_ADMIN,
      input: Type.Object({
        deviceId: IdParam,
        since: Type.Optional(Type.Integer({ description: 'Oldest time, ms since epoch.' })),
        until: Type.Optional(Type.Integer({ description: 'Newest time, ms since epoch.' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 500 })),
        kind: Type.Optional(Type.Union([Type.Literal('state'), Type.Literal('metric')])),
      }),
      output: Type.Object({
        deviceId: Type.String(),
        entries: Type.Array(Type.Object({ at: Type.Integer(), kind: Type.String(), data: Type.Record(Type.String(), Type.Unknown()) })),
      }),
      async handler({ deviceId, since, until, limit, kind }) {
        devices.registry.get(deviceId);
        return { deviceId, entries: devices.state.telemetry.query(deviceId, { since, until, limit, kind, now: now() }) };
      },
    }),

    listStates: defineOperation({
      name: 'state.list',
      summary: "Every device's state with its online and confirmed flags.",
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ at: Type.Integer(), states: Type.Array(DeviceStateViewSchema) }),
      async handler() {
        return { at: now(), states: devices.registry.list().map((d) => stateView(d.id)) };
      },
    }),

    getDeviceState: defineOperation({
      name: 'state.get',
      summary: "One device's state with its online and confirmed flags (404 DEVICE_NOT_FOUND).",
      access: OS_ADMIN,
      input: Type.Object({ deviceId: IdParam }),
      output: DeviceStateViewSchema,
      async handler({ deviceId }) {
        return stateView(deviceId);
      },
    }),
  };
}
