import { Type } from 'typebox';
import { ADMIN_ACCOUNT, defineOperation } from '../../platform/operations.js';
import { RequirementsStatusSchema } from '../../platform/requirements.js';
import type { ZwaveNetwork } from './network.js';

const NodeParams = Type.Object({ nodeId: Type.Integer({ minimum: 2, maximum: 4000, description: 'The node id (the controller is 1).' }) });

export const ZwaveStatusSchema = Type.Object({
  state: Type.Union([Type.Literal('off'), Type.Literal('starting'), Type.Literal('running'), Type.Literal('failed'), Type.Literal('standby')], {
    description: '`off`: ZWAVE_PORT is not set; `starting`: opening the stick (and installing zwave-js the first time); `failed`: `error` says why, retried with back-off; `standby`: another instance of the cluster runs it.',
  }),
  port: Type.Union([Type.String(), Type.Null()], { description: 'ZWAVE_PORT: a serial device or tcp://host:port.' }),
  error: Type.Optional(Type.String()),
  homeId: Type.Optional(Type.String({ description: "The network's home id (hex); device ids begin with it." })),
  holder: Type.Optional(Type.String()),
  requirements: Type.Optional(RequirementsStatusSchema),
  inclusion: Type.Object({
    mode: Type.Union([Type.Literal('idle'), Type.Literal('including'), Type.Literal('excluding')]),
    pinRequested: Type.Boolean({ description: 'An S2 device being included waits for its PIN (POST /zwave/inclusion/pin).' }),
    dsk: Type.Optional(Type.String({ description: "The device's DSK without its first five digits (the PIN): compare it with the label." })),
    last: Type.Optional(Type.Object({ nodeId: Type.Integer(), security: Type.String(), at: Type.Number() }, { description: 'The last node included, and its security class.' })),
  }),
  nodes: Type.Array(
    Type.Object({
      nodeId: Type.Integer(),
      name: Type.String(),
      status: Type.String({ description: '`alive`, `dead` (its devices are offline), `asleep`, `awake` or `unknown`.' }),
      interviewStage: Type.String({ description: '`Complete` once zwave-js has interviewed it.' }),
      ready: Type.Boolean(),
      manufacturer: Type.Optional(Type.String()),
      product: Type.Optional(Type.String()),
      security: Type.Optional(Type.String()),
      devices: Type.Array(Type.Object({ id: Type.String(), deviceClass: Type.String(), name: Type.String() })),
      unmapped: Type.Array(Type.String(), { description: 'Its command classes that no hub device uses.' }),
    }),
  ),
});

const Done = Type.Object({ ok: Type.Literal(true) });

export function zwaveOperations(network: ZwaveNetwork) {
  return {
    zwave: {
      status: defineOperation({
        name: 'zwave.status',
        summary: 'Z-Wave: the controller, the inclusion in progress (the DSK while an S2 device waits for its PIN), and every node with its status, interview stage and devices.',
        access: ADMIN_ACCOUNT,
        input: Type.Object({}),
        output: ZwaveStatusSchema,
        handler: () => network.snapshot(),
      }),
      startInclusion: defineOperation({
        name: 'zwave.inclusion.start',
        summary: 'Start including a device (then press its button); S2 devices ask for their PIN. 409 ZWAVE_INCLUSION_ACTIVE while an inclusion or exclusion runs.',
        access: ADMIN_ACCOUNT,
        input: Type.Object({ security: Type.Optional(Type.Union([Type.Literal('default'), Type.Literal('insecure')], { description: '`default`: S2 where the device can, else S0 where it must; `insecure`: none.' })) }, { additionalProperties: false }),
        output: ZwaveStatusSchema,
        handler: async (input: { security?: 'default' | 'insecure' }) => {
          await network.startInclusion(input.security ?? 'default');
          return network.snapshot();
        },
      }),
      enterPin: defineOperation({
        name: 'zwave.inclusion.pin',
        summary: 'The PIN of the S2 device being included: the first five digits of its DSK, on its label. 409 ZWAVE_NO_PIN_ASKED when no device waits for one.',
        access: ADMIN_ACCOUNT,
        input: Type.Object({ pin: Type.String({ pattern: '^[0-9]{5}$', description: 'Five digits.' }) }, { additionalProperties: false }),
        output: Done,
        handler: async (input: { pin: string }) => {
          await network.enterPin(input.pin);
          return { ok: true as const };
        },
      }),
      startExclusion: defineOperation({
        name: 'zwave.exclusion.start',
        summary: 'Start excluding a device (then press its button): it leaves the network and its devices are removed. 409 ZWAVE_INCLUSION_ACTIVE while an inclusion or exclusion runs.',
        access: ADMIN_ACCOUNT,
        input: Type.Object({}),
        output: ZwaveStatusSchema,
        handler: async () => {
          await network.startExclusion();
          return network.snapshot();
        },
      }),
      stopInclusion: defineOperation({
        name: 'zwave.inclusion.stop',
        summary: 'Stop the inclusion or exclusion in progress (nothing happens when none runs).',
        access: ADMIN_ACCOUNT,
        input: Type.Object({}),
        output: ZwaveStatusSchema,
        handler: async () => {
          await network.stopInclusion();
          return network.snapshot();
        },
      }),
      reinterview: defineOperation({
        name: 'zwave.nodes.reinterview',
        summary: 'Interview a node again (after a firmware update, or when its features look wrong); the status shows its stage.',
        access: ADMIN_ACCOUNT,
        input: NodeParams,
        output: Done,
        handler: async ({ nodeId }) => {
          await network.reinterview(nodeId);
          return { ok: true as const };
        },
      }),
      heal: defineOperation({
        name: 'zwave.nodes.heal',
        summary: 'Rebuild the routes of a node ("heal"): for a node that moved or answers slowly.',
        access: ADMIN_ACCOUNT,
        input: NodeParams,
        output: Type.Object({ ok: Type.Boolean({ description: 'Whether the controller rebuilt them.' }) }),
        handler: async ({ nodeId }) => ({ ok: await network.heal(nodeId) }),
      }),
      removeFailed: defineOperation({
        name: 'zwave.nodes.remove_failed',
        summary: 'Remove a node that no longer answers (broken, or reset without exclusion). 409 ZWAVE_NODE_NOT_FAILED when it still answers.',
        access: ADMIN_ACCOUNT,
        input: NodeParams,
        output: Done,
        handler: async ({ nodeId }) => {
          await network.removeFailed(nodeId);
          return { ok: true as const };
        },
      }),
    },
  };
}

