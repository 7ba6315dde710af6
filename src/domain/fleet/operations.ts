import { Type } from 'typebox';
import { ANY_ACCOUNT, defineOperation, OS_ADMIN, type Access, type OperationContext, type Principal } from '../../platform/operations.js';
import type { AudienceResolver } from '../access/audience.js';
import type { AuthService } from '../auth/auth-service.js';
import type { DeviceService } from '../devices/device-service.js';
import { DeviceSchema } from '../devices/schemas.js';
import { fleetErrors } from './errors.js';
import type { FleetService } from './fleet-service.js';

/** `osBridgeAuth`: a bridge token another hub presents (issued here by POST /bridge/token). */
export const BRIDGE: Access = { scopes: ['bridge'] };

const Loose = Type.Record(Type.String(), Type.Unknown());
const FleetId = Type.String({ minLength: 3, maxLength: 300, pattern: '^[^:]+:.+$', description: '`<hubId>:<deviceId>`.' });
const Command = Type.Object({ name: Type.String(), label: Type.Optional(Type.String()), params: Type.Optional(Loose) });
const ReleaseStatusSchema = Type.Union([Type.Literal('pending'), Type.Literal('installing'), Type.Literal('installed'), Type.Literal('failed'), Type.Literal('rolled_back')]);

const FleetDeviceSchema = Type.Object({
  fleetDeviceId: Type.String(),
  hubId: Type.String(),
  deviceId: Type.String(),
  name: Type.String(),
  category: Type.Union([Type.String(), Type.Null()]),
  driverKey: Type.Union([Type.String(), Type.Null()]),
  commands: Type.Array(Command),
  online: Type.Boolean(),
  origin: Type.Union([Type.Literal('local'), Type.Literal('peer'), Type.Literal('registered')]),
});

const StatusRecord = Type.Object({
  key: Type.String(),
  status: ReleaseStatusSchema,
  error: Type.Union([Type.String(), Type.Null()]),
  history: Type.Array(Type.Object({ status: ReleaseStatusSchema, at: Type.Integer(), error: Type.Optional(Type.String()) })),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
});

const LinkViewSchema = Type.Object({
  peerUrl: Type.Union([Type.String(), Type.Null()]),
  peerHubId: Type.Union([Type.String(), Type.Null()]),
  state: Type.Union([Type.Literal('unlinked'), Type.Literal('linking'), Type.Literal('linked'), Type.Literal('error'), Type.Literal('needs_token')], {
    description: "`needs_token`: the stored token cannot be opened with this hub's secret key (restored on another box); save the link again with its token.",
  }),
  lastContactAt: Type.Union([Type.Integer(), Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()]),
  nextAttemptAt: Type.Union([Type.Integer(), Type.Null()], { description: 'While in error: when the next attempt is due (back-off from 1 s, doubling).' }),
  failures: Type.Integer({ description: 'Failed attempts in a row.' }),
  peerDevices: Type.Integer({ description: 'Devices the peer listed at the last contact.' }),
});

const principalOf = (ctx: OperationContext): Principal => ctx.principal!;

export function fleetOperations(fleet: FleetService, devices: DeviceService, auth: AuthService, audiences: AudienceResolver) {
  return {
    devices: defineOperation({
      name: 'fleet.devices',
      summary: "The home's fleet devices (this hub's, the linked hub's, and those announced here) with each one's integration release statuses.",
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ hubId: Type.String(), devices: Type.Array(Type.Object({ ...FleetDeviceSchema.properties, state: Type.Optional(Loose), releases: Type.Array(StatusRecord) })) }),
      async handler() {
        return { hubId: fleet.id, devices: fleet.fleet() as never };
      },
    }),
    setReleaseStatus: defineOperation({
      name: 'fleet.release_status.set',
      summary: "Move one device's status for release `key`: none → pending → installing → installed | failed; installed → rolled_back | pending; failed → pending | rolled_back; rolled_back → pending.",
      description: 'An illegal move is 409 FLEET_STATUS_TRANSITION with the current status and the allowed ones in details. `error` is kept with `failed`.',
      access: OS_ADMIN,
      input: Type.Object({
        key: Type.String({ minLength: 1, maxLength: 100 }),
        fleetDeviceId: FleetId,
        status: ReleaseStatusSchema,
        error: Type.Optional(Type.String({ maxLength: 2000 })),
      }),
      output: Type.Object({ ...StatusRecord.properties, deviceId: Type.String(), id: Type.String() }),
      async handler({ key, fleetDeviceId, status, error }) {
        return fleet.setStatus(key, fleetDeviceId, status, error);
      },
    }),
    setCategory: defineOperation({
      name: 'fleet.device_category.set',
      summary: "Create or update a device's category (this hub's devices; by device id or fleet id).",
      access: ANY_ACCOUNT,
      input: Type.Object({ deviceId: Type.String({ minLength: 1, maxLength: 300 }), category: Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z0-9_-]+$' }) }),
      output: DeviceSchema,
      async handler({ deviceId, category }, ctx) {
        const local = deviceId.startsWith(`${fleet.id}:`) ? deviceId.slice(fleet.id.length + 1) : deviceId;
        const device = devices.registry.find(local);
        if (!device || device.removed || !audiences.audienceOf(ctx.principal).seesDevice(device)) throw fleetErrors.FLEET_DEVICE_NOT_FOUND({ fleetDeviceId: deviceId });
        return devices.updateMetadata(local, { category });
      },
    }),
    command: defineOperation({
      name: 'fleet.command',
      journal: 'activity',
      summary: 'Dispatch a command to a fleet device: here, to its driver; on the linked hub, through the bridge. Waits for the result.',
      description: '404 FLEET_DEVICE_NOT_FOUND; 503 BRIDGE_NOT_LINKED; 502 BRIDGE_UNREACHABLE or the driver failure; 504 BRIDGE_TIMEOUT or the device timing out on either hub.',
      access: ANY_ACCOUNT,
      input: Type.Object({ fleetDeviceId: FleetId, command: Type.String({ minLength: 1, maxLength: 100 }), params: Type.Optional(Loose) }),
      output: Type.Object({ ok: Type.Literal(true), fleetDeviceId: Type.String(), hubId: Type.String(), result: Type.Optional(Type.Unknown()) }),
      async handler({ fleetDeviceId, command, params }, ctx) {
        return fleet.command(fleetDeviceId, command, params ?? {}, audiences.audienceOf(ctx.principal));
      },
    }),
    link: defineOperation({
      name: 'bridge.link.get',
      summary: "This hub's link to a peer hub: peer URL and id, state (unlinked, linking, linked, error, needs_token), last contact, the last error and the next retry.",
      access: OS_ADMIN,
      input: Type.Object({}),
      output: LinkViewSchema,
      async handler() {
        return fleet.link();
      },
    }),
    saveLink: defineOperation({
      name: 'bridge.link.save',
      summary: "Link this hub to a peer: its URL and the bridge token it issued (POST /bridge/token there), stored sealed with this hub's secret key; checked at once with the peer's /bridge/health. A null peerUrl unlinks.",
      access: OS_ADMIN,
      input: Type.Object({ peerUrl: Type.Union([Type.String({ minLength: 1, maxLength: 500 }), Type.Null()]), token: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) }, { additionalProperties: false }),
      output: LinkViewSchema,
      async handler({ peerUrl, token }) {
        return fleet.saveLink(peerUrl, token ?? null);
      },
    }),
    issueToken: defineOperation({
      name: 'bridge.token.issue',
      summary: "Issue a bridge token (scope `bridge`) for a peer hub to present here as a bearer; shown once, stored as its hash, expiring, revocable.",
      access: OS_ADMIN,
      input: Type.Object({ expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, default: 90 })) }),
      output: Type.Object({
        token: Type.String(),
        tokenType: Type.Literal('Bearer'),
        scope: Type.Literal('bridge'),
        id: Type.String({ description: 'Names the token (its hash) for revocation.' }),
        expiresIn: Type.Integer({ description: 'Seconds.' }),
        expiresAt: Type.Integer(),
        hubId: Type.String({ description: 'This hub: the peer will see it as its peer.' }),
      }),
      async handler({ expiresInDays }, ctx) {
        const issued = await auth.issueScoped(principalOf(ctx), 'bridge', (expiresInDays ?? 90) * 86_400);
        return { token: issued.accessToken, tokenType: 'Bearer' as const, scope: 'bridge' as const, id: issued.id, expiresIn: issued.expiresIn, expiresAt: issued.expiresAt, hubId: fleet.id };
      },
    }),
    revokeToken: defineOperation({
      name: 'bridge.token.revoke',
      summary: 'Revoke a bridge token by its id: the peer presenting it is refused at once.',
      access: OS_ADMIN,
      input: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
      output: Type.Object({ id: Type.String(), revoked: Type.Literal(true) }),
      async handler({ id }) {
        if (!(await auth.revoke(id, 'bridge'))) throw fleetErrors.BRIDGE_TOKEN_NOT_FOUND({ id });
        return { id, revoked: true as const };
      },
    }),
    health: defineOperation({
      name: 'bridge.health',
      summary: 'For a linked hub: this hub is up, its id and version.',
      access: BRIDGE,
      input: Type.Object({}),
      output: Type.Object({ ok: Type.Literal(true), hubId: Type.String(), version: Type.String(), at: Type.String() }),
      async handler() {
        return fleet.health();
      },
    }),
    capabilities: defineOperation({
      name: 'bridge.capabilities',
      summary: 'For a linked hub: what this hub offers over the bridge.',
      access: BRIDGE,
      input: Type.Object({}),
      output: Type.Object({ hubId: Type.String(), protocol: Type.Literal(1), features: Type.Array(Type.String()) }),
      async handler() {
        return { hubId: fleet.id, protocol: 1 as const, features: ['devices', 'devices.state', 'devices.command', 'devices.register', 'devices.update'] };
      },
    }),
    bridgeDevices: defineOperation({
      name: 'bridge.devices',
      summary: "For a linked hub: this hub's devices as fleet devices, with stable fleet ids.",
      access: BRIDGE,
      input: Type.Object({}),
      output: Type.Object({ hubId: Type.String(), devices: Type.Array(FleetDeviceSchema) }),
      async handler() {
        return { hubId: fleet.id, devices: fleet.localDevices() };
      },
    }),
    bridgeStates: defineOperation({
      name: 'bridge.devices.state',
      summary: "For a linked hub: the state of this hub's devices, by fleet id.",
      access: BRIDGE,
      input: Type.Object({}),
      output: Type.Object({ devices: Type.Record(Type.String(), Type.Object({ state: Loose, online: Type.Boolean() })) }),
      async handler() {
        return { devices: fleet.localStates() };
      },
    }),
    register: defineOperation({
      name: 'bridge.devices.register',
      summary: 'For a linked hub: announce its devices here (they are listed as fleet devices of origin `registered`).',
      access: BRIDGE,
      input: Type.Object({
        hubId: Type.String({ minLength: 1, maxLength: 100, pattern: '^[^:]+$' }),
        devices: Type.Array(
          Type.Object({
            deviceId: Type.String({ minLength: 1, maxLength: 200 }),
            name: Type.String({ minLength: 1, maxLength: 200 }),
            category: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
            commands: Type.Optional(Type.Array(Command, { maxItems: 200 })),
            online: Type.Optional(Type.Boolean()),
            state: Type.Optional(Loose),
          }),
          { maxItems: 1000 },
        ),
      }),
      output: Type.Object({ registered: Type.Array(Type.Object({ fleetDeviceId: Type.String(), name: Type.String() })) }),
      async handler(input) {
        return { registered: (await fleet.register(input)).map((r) => ({ fleetDeviceId: r.id, name: r.name })) };
      },
    }),
    update: defineOperation({
      name: 'bridge.devices.update',
      summary: 'For a linked hub: change a device it announced here (name, category, online, a partial state).',
      access: BRIDGE,
      input: Type.Object({
        fleetDeviceId: FleetId,
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        category: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
        online: Type.Optional(Type.Boolean()),
        state: Type.Optional(Loose),
      }),
      output: Type.Object({ fleetDeviceId: Type.String(), name: Type.String(), online: Type.Boolean(), state: Loose }),
      async handler(input) {
        const r = await fleet.updateRegistered(input);
        return { fleetDeviceId: r.id, name: r.name, online: r.online, state: r.state };
      },
    }),
    bridgeCommand: defineOperation({
      name: 'bridge.devices.command',
      journal: 'activity',
      summary: "For a linked hub: a command to one of this hub's devices; it reaches the device's driver as ACTION and the result comes back (502/504 as for any command).",
      access: BRIDGE,
      input: Type.Object({ fleetDeviceId: FleetId, command: Type.String({ minLength: 1, maxLength: 100 }), params: Type.Optional(Loose) }),
      output: Type.Object({ ok: Type.Literal(true), fleetDeviceId: Type.String(), hubId: Type.String(), result: Type.Optional(Type.Unknown()) }),
      async handler({ fleetDeviceId, command, params }) {
        if (!fleetDeviceId.startsWith(`${fleet.id}:`)) throw fleetErrors.FLEET_DEVICE_NOT_FOUND({ fleetDeviceId });
        return fleet.command(fleetDeviceId, command, params ?? {});
      },
    }),
  };
}
