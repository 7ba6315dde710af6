import { Type } from 'typebox';
import { RequirementsStatusSchema } from '../../platform/requirements.js';
import { ADMIN_ACCOUNT, defineOperation, type Access } from '../../platform/operations.js';
import type { DeviceService } from '../devices/device-service.js';
import { protocolDeviceCommand } from '../devices/protocol-command.js';
import type { MatterBridgeControl } from './module.js';

/** A Matter controller's command: runs as scope `matter`, on this operation only. */
export const MATTER_CALLER: Access = { scopes: ['matter'] };

export const MatterStatusSchema = Type.Object({
  enabled: Type.Boolean({ description: 'Whether the bridge is to run (MATTER, else the admin\'s choice).' }),
  setBy: Type.Union([Type.Literal('environment'), Type.Literal('admin')], { description: '`environment`: MATTER decides; `admin`: the admin panel (POST /v1/os/matter/settings).' }),
  state: Type.Union([Type.Literal('off'), Type.Literal('starting'), Type.Literal('running'), Type.Literal('failed'), Type.Literal('standby')]),
  error: Type.Optional(Type.String()),
  holder: Type.Optional(Type.String({ description: '`standby`: the instance of the cluster that runs the bridge.' })),
  runsIn: Type.Union([Type.Literal('process'), Type.Literal('hub')], { description: "`process`: the bridge runs in a process of its own, restarted with back-off when it ends (the default); `hub`: in the hub's process (MATTER_PROCESS=inline)." }),
  requirements: Type.Optional(RequirementsStatusSchema),
  pid: Type.Optional(Type.Integer({ description: 'The bridge process, while it runs in one.' })),
  restarts: Type.Integer({ description: 'Times the bridge process ended by itself and was restarted since the hub started (`error` says why, while it restarts).' }),
  port: Type.Integer(),
  commissioned: Type.Boolean({ description: 'Paired with at least one ecosystem.' }),
  fabrics: Type.Array(
    Type.Object({
      fabricIndex: Type.Integer(),
      label: Type.String(),
      vendorId: Type.Integer(),
      ecosystem: Type.Optional(Type.String({ description: 'Apple Home, Google Home, Amazon Alexa, SmartThings, Home Assistant, when the vendor id is known.' })),
    }),
  ),
  pairing: Type.Optional(
    Type.Object(
      { manualPairingCode: Type.String({ description: 'The 11-digit code to type in.' }), qrPairingCode: Type.String({ description: 'The QR payload (MT:…) to scan.' }) },
      { description: 'While the bridge can be paired (not yet commissioned, or a commissioning window is open).' },
    ),
  ),
  devices: Type.Array(
    Type.Object({
      deviceId: Type.String(),
      name: Type.String(),
      deviceClass: Type.String(),
      endpoint: Type.Union([Type.Integer(), Type.Null()]),
      deviceType: Type.String({ description: 'The Matter device type.' }),
    }),
    { description: 'The hub devices on the bridge, one bridged endpoint each.' },
  ),
  unmapped: Type.Array(Type.Object({ deviceId: Type.String(), name: Type.String(), deviceClass: Type.String() }), { description: 'Hub devices left out: their class has no Matter device type.' }),
});

export function matterOperations(bridge: MatterBridgeControl, devices: DeviceService) {
  return {
    status: defineOperation({
      name: 'matter.status',
      summary: 'The Matter bridge: whether it runs, its fabrics (the ecosystems paired), the pairing codes while it can be paired, and the devices it bridges and leaves out.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: MatterStatusSchema,
      handler() {
        return bridge.status();
      },
    }),
    settings: defineOperation({
      name: 'matter.settings.set',
      summary: 'Turn the Matter bridge on or off (kept across restarts; 409 MATTER_SET_BY_ENVIRONMENT when MATTER is set).',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ enabled: Type.Boolean() }),
      output: MatterStatusSchema,
      async handler({ enabled }) {
        await bridge.setEnabled(enabled);
        return bridge.status();
      },
    }),
    openCommissioning: defineOperation({
      name: 'matter.commissioning.open',
      summary: 'Open a commissioning window (15 minutes) so that another ecosystem can pair the bridge; answers the status with the pairing codes.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: MatterStatusSchema,
      async handler() {
        await bridge.openCommissioningWindow();
        return bridge.status();
      },
    }),
    removeFabric: defineOperation({
      name: 'matter.fabrics.remove',
      summary: 'Unpair one ecosystem (its fabric); its controllers lose the bridge.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ fabricIndex: Type.Integer({ minimum: 1, maximum: 254 }) }),
      output: MatterStatusSchema,
      async handler({ fabricIndex }) {
        await bridge.removeFabric(fabricIndex);
        return bridge.status();
      },
    }),
    bridgedCommand: protocolDeviceCommand('matter.bridged.command', MATTER_CALLER, "For the Matter bridge: a controller's command to a bridged device, as one of its class's standard commands, checked and translated like any device command.", devices),
  };
}
