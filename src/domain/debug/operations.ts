import { Type } from 'typebox';
import { defineErrors, failureOf } from '../../platform/errors.js';
import { ADMIN_ACCOUNT, defineOperation } from '../../platform/operations.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { DriverManager } from '../drivers/driver-manager.js';
import type { StateAuthority } from '../state/state-authority.js';

export const debugErrors = defineErrors({
  DRIVER_INSTANCE_NOT_FOUND: ['not_found', 'No connected instance of driver {driverKey}{instance}.'],
});

const Loose = Type.Record(Type.String(), Type.Unknown());

/**
 * Development tools (mounted under `/dev` only when NODE_ENV=development): the hub's insides, and
 * a driver message injected as if a connected driver had sent it. Admin accounts only.
 */
const SECRET_KEY = /pass(word)?|secret|token|key$/i;

/** The configuration with every secret-looking value replaced by `<set>` (or null when unset). */
export function maskedConfig(config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (SECRET_KEY.test(key)) out[key] = value === undefined || value === null || value === '' ? null : '<set>';
    else if (value && typeof value === 'object' && !Array.isArray(value)) out[key] = maskedConfig(value as Record<string, unknown>);
    else if (Array.isArray(value)) out[key] = value.map((v) => (v && typeof v === 'object' ? maskedConfig(v as Record<string, unknown>) : v));
    else out[key] = value;
  }
  return out;
}

export function debugOperations(registry: DeviceRegistry, state: StateAuthority, drivers: DriverManager, config: Record<string, unknown>) {
  return {
    config: defineOperation({
      name: 'debug.config',
      summary: 'The effective configuration, every secret-looking value (passwords, tokens, secrets, keys) masked.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: Loose,
      async handler() {
        return maskedConfig(config);
      },
    }),
    events: defineOperation({
      name: 'debug.events',
      summary: 'Opens the live tail of domain events (the SSE route calls this first: it checks the caller and the filter).',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ type: Type.Optional(Type.String({ maxLength: 100, description: 'Only events whose name starts with this, e.g. `device.`.' })) }),
      output: Type.Object({ type: Type.Union([Type.String(), Type.Null()]) }),
      async handler({ type }) {
        return { type: type ?? null };
      },
    }),
    state: defineOperation({
      name: 'debug.state',
      summary: 'The state authority and the device registry as they are in memory, and the connected driver instances.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({
        devices: Type.Array(Type.Object({ device: Loose, state: Loose })),
        drivers: Type.Array(Loose),
      }),
      async handler() {
        return {
          devices: registry.list({ includeRemoved: true }).map((device) => ({ device: { ...device } as Record<string, unknown>, state: { ...state.view(device.id) } as Record<string, unknown> })),
          drivers: drivers.list().map((d) => ({ ...d })),
        };
      },
    }),
    inject: defineOperation({
      name: 'debug.inject',
      summary: 'Handles a driver → hub message as if a connected instance of the driver had sent it (same checks, same effects).',
      access: ADMIN_ACCOUNT,
      input: Type.Object({
        driverKey: Type.String({ minLength: 1, maxLength: 100 }),
        instanceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        message: Type.Record(Type.String(), Type.Unknown(), { description: 'E.g. {"type":"STATE_UPDATE","deviceId":"lamp","state":{"on":true}}.' }),
      }),
      output: Type.Object({ ok: Type.Literal(true), driverKey: Type.String(), instanceId: Type.String() }),
      async handler({ driverKey, instanceId, message }) {
        const link = drivers.linkOf(driverKey, instanceId);
        if (!link) throw debugErrors.DRIVER_INSTANCE_NOT_FOUND({ driverKey, instance: instanceId ? ` with instance id ${instanceId}` : '' });
        const receipt = await drivers.receive(link, message);
        if (!receipt.ok) throw failureOf(receipt, { field: 'message' });
        return { ok: true as const, driverKey, instanceId: link.instanceId };
      },
    }),
  };
}
