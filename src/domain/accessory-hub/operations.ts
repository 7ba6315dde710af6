import { Type } from 'typebox';
import { defineOperation, OS_ADMIN } from '../../platform/operations.js';
import { accessoryHubErrors } from './errors.js';
import type { HomebridgeSupervisor } from './homebridge.js';

const Status = Type.Object({
  enabled: Type.Boolean(),
  state: Type.String({ description: '`off` (ACCESSORY_HUB=off or Homebridge not installed), `stopped`, `starting`, `running` or `backoff` (restarting after a crash).' }),
  pid: Type.Optional(Type.Integer()),
  uptimeSeconds: Type.Optional(Type.Integer()),
  version: Type.Optional(Type.String({ description: "Homebridge's version." })),
  restarts: Type.Optional(Type.Integer()),
  bridge: Type.Optional(
    Type.Object({
      name: Type.String(),
      port: Type.Integer(),
      pin: Type.String({ description: 'The setup code a phone pairs with.' }),
      setupUri: Type.Optional(Type.String({ description: 'The pairing QR code payload (X-HM://…), once Homebridge told it.' })),
    }),
  ),
  pluginCount: Type.Optional(Type.Integer()),
  lastExit: Type.Optional(Type.Object({ code: Type.Union([Type.Integer(), Type.Null()]), signal: Type.Union([Type.String(), Type.Null()]), at: Type.Integer() })),
  lastError: Type.Optional(Type.String()),
  recentOutput: Type.Optional(Type.Array(Type.String(), { description: "Homebridge's last output lines." })),
});

const Characteristic = Type.Object({
  iid: Type.Integer(),
  type: Type.String(),
  description: Type.Optional(Type.String()),
  value: Type.Optional(Type.Unknown()),
  format: Type.Optional(Type.String()),
  perms: Type.Optional(Type.Array(Type.String())),
  unit: Type.Optional(Type.String()),
  minValue: Type.Optional(Type.Number()),
  maxValue: Type.Optional(Type.Number()),
});

export function accessoryHubOperations(homebridge: HomebridgeSupervisor | undefined) {
  const running = () => {
    if (!homebridge) throw accessoryHubErrors.ACCESSORY_HUB_OFF();
    return homebridge;
  };
  return {
    status: defineOperation({
      name: 'accessory_hub.status',
      summary: 'The managed Homebridge: process state, pid, uptime, version, pairing (setup code and QR payload), plugin count, last error.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Status,
      async handler() {
        if (!homebridge) return { enabled: false, state: 'off' };
        return homebridge.status();
      },
    }),
    resync: defineOperation({
      name: 'accessory_hub.resync',
      summary: 'Reload the configuration by restarting Homebridge; answers the status as the restart left it.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Status,
      async handler() {
        const hb = running();
        await hb.restart();
        return hb.status();
      },
    }),
    settings: defineOperation({
      name: 'accessory_hub.settings',
      summary: "Change the bridge's settings (name, port, setup code, mDNS advertiser); Homebridge restarts into them.",
      access: OS_ADMIN,
      input: Type.Object(
        {
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          port: Type.Optional(Type.Integer({ minimum: 1024, maximum: 65535 })),
          pin: Type.Optional(Type.String({ pattern: '^\\d{3}-\\d{2}-\\d{3}$', description: 'XXX-XX-XXX.' })),
          advertiser: Type.Optional(Type.Union([Type.Literal('ciao'), Type.Literal('bonjour-hap'), Type.Literal('avahi'), Type.Literal('resolved')])),
        },
        { additionalProperties: false },
      ),
      output: Type.Object({ name: Type.String(), port: Type.Integer(), pin: Type.String(), advertiser: Type.String() }),
      async handler(change) {
        return running().updateSettings(change);
      },
    }),
    accessories: defineOperation({
      name: 'accessory_hub.accessories',
      summary: "Homebridge's accessories with their services and characteristics, read over HAP.",
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({
        accessories: Type.Array(
          Type.Object({ aid: Type.Integer(), name: Type.Union([Type.String(), Type.Null()]), services: Type.Array(Type.Object({ iid: Type.Integer(), type: Type.String(), characteristics: Type.Array(Characteristic) })) }),
        ),
      }),
      async handler() {
        const accessories = await running().accessories();
        return {
          accessories: accessories.map((a) => {
            const name = a.services.flatMap((s) => s.characteristics).find((c) => c.description === 'Name' || c.type === '23' || c.type.startsWith('00000023-'));
            return { aid: a.aid, name: typeof name?.value === 'string' ? name.value : null, services: a.services.map((s) => ({ iid: s.iid, type: s.type, characteristics: s.characteristics })) };
          }),
        };
      },
    }),
  };
}
