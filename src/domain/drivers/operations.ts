import { Type } from 'typebox';
import { ADMIN_FROM_ANY_APP, defineOperation, OS_ADMIN } from '../../platform/operations.js';
import type { BuiltInIntegrations } from './builtin.js';
import type { DriverManager } from './driver-manager.js';
import type { DriverTokens } from './driver-tokens.js';
import { driverErrors } from './errors.js';
import type { DriverPackages, DriverUpload } from './local/packages.js';
import type { LocalDriverSupervisor } from './local/supervisor.js';

const Loose = Type.Record(Type.String(), Type.Unknown());
const DriverKey = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' });

const ConnectedDriver = Type.Object({
  driverKey: Type.String(),
  instanceId: Type.String(),
  transport: Type.String({ description: '`websocket` or `process`.' }),
  connectedAt: Type.Integer(),
  devices: Type.Integer({ description: 'Devices this instance currently speaks for.' }),
  address: Type.Optional(Type.String({ description: 'WebSocket instances: the IP address the driver connected from.' })),
  tokenId: Type.Optional(Type.String({ description: 'The driver token the instance registered with (DRIVER_AUTH=token).' })),
});

const LocalDriver = Type.Object(
  {
    driverKey: Type.String(),
    name: Type.Optional(Type.String()),
    version: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    file: Type.String({ description: 'The manifest, relative to DRIVERS_DIR.' }),
    driverType: Type.Union([Type.String(), Type.Null()]),
    status: Type.String({ description: '`running`, `starting`, `backoff`, `stopped`, `invalid`, or `standby` (in a cluster: another instance runs it, named in `runsOn`).' }),
    pid: Type.Optional(Type.Integer()),
    restarts: Type.Integer(),
    startedAt: Type.Optional(Type.Integer()),
    lastExit: Type.Optional(Type.Object({ code: Type.Union([Type.Integer(), Type.Null()]), signal: Type.Union([Type.String(), Type.Null()]), at: Type.Integer() })),
    lastError: Type.Optional(Type.String()),
    error: Type.Optional(Type.String({ description: 'Why the manifest is invalid.' })),
    nextRestartAt: Type.Optional(Type.Integer()),
    missingSettings: Type.Optional(Type.Array(Type.String())),
    runsOn: Type.Optional(Type.String({ description: 'Status `standby`: the cluster instance that runs the driver now.' })),
    lastPongAt: Type.Optional(Type.Integer()),
    recentStderr: Type.Optional(Type.Array(Type.String(), { description: 'The last lines the driver wrote to stderr, oldest first.' })),
    properties: Loose,
    commands: Loose,
    io: Type.Optional(Type.Unknown({ description: 'Resolved io settings (restart backoff, limits, timeouts).' })),
  },
  { description: 'A local driver from a *.driver.json manifest, valid or not.' },
);

const Settings = Type.Object({
  driverKey: Type.String(),
  properties: Loose,
  values: Type.Record(Type.String(), Type.Unknown(), { description: 'Stored setup values; secrets read "********".' }),
});

const InstalledPackage = Type.Object({
  driverKey: Type.String(),
  folder: Type.String({ description: 'Relative to DRIVERS_DIR.' }),
  version: Type.Optional(Type.String()),
  installedAt: Type.Optional(Type.Integer()),
  installLog: Type.Optional(Type.String({ description: "The dependency installer's command and output (its end)." })),
  previous: Type.Optional(Type.Object({ version: Type.Optional(Type.String()), installedAt: Type.Optional(Type.Integer()) }, { description: 'The version a rollback brings back.' })),
});

const Base64 = Type.String({ pattern: '^[A-Za-z0-9+/]*={0,2}$', description: 'Base64.' });

/** A driver package in JSON: one archive, or loose files (base64 each). */
export const DriverUploadInput = Type.Object(
  {
    archive: Type.Optional({ ...Base64, description: 'A .zip or .tar.gz, base64.' }),
    files: Type.Optional(
      Type.Array(Type.Object({ path: Type.String({ minLength: 1, maxLength: 400 }), content: { ...Base64, description: 'The file, base64.' } }, { additionalProperties: false }), {
        minItems: 1,
        maxItems: 2000,
      }),
    ),
  },
  { additionalProperties: false },
);

export function uploadOf(input: { archive?: string; files?: Array<{ path: string; content: string }> }): DriverUpload {
  if ((input.archive === undefined) === (input.files === undefined)) {
    throw driverErrors.DRIVER_PACKAGE_INVALID({ problem: 'give either archive or files' }, { details: [{ field: 'body', message: 'needs exactly one of archive, files' }] });
  }
  if (input.archive !== undefined) return { kind: 'archive', data: Buffer.from(input.archive, 'base64') };
  return { kind: 'files', files: input.files!.map((f) => ({ path: f.path, data: Buffer.from(f.content, 'base64') })) };
}

export function driverOperations(manager: DriverManager, local: LocalDriverSupervisor, packages: DriverPackages) {
  return {
    install: defineOperation({
      name: 'drivers.packages.install',
      summary: 'Install or replace a local driver from a package: a manifest with its driver file (and package.json or requirements.txt), or one .zip / .tar.gz.',
      description:
        'The package is validated (manifest schema, driverFile extension matching driverType, sizes, no absolute paths, `..` or links), staged, its dependencies installed into its own folder (`npm install --omit=dev --ignore-scripts`, `pip install --target`), then swapped into `DRIVERS_DIR/<driverKey>/` and started. The version it replaces is kept for `drivers.packages.rollback`. Any failure leaves the running version as it was.',
      access: OS_ADMIN,
      input: DriverUploadInput,
      output: Type.Object({ ...LocalDriver.properties, package: InstalledPackage }),
      async handler(input) {
        return packages.install(uploadOf(input));
      },
    }),
    describePackage: defineOperation({
      name: 'drivers.packages.get',
      summary: "What an upload installed of a driver: version, install log, and the version a rollback would bring back.",
      access: OS_ADMIN,
      input: Type.Object({ driverKey: DriverKey }),
      output: InstalledPackage,
      async handler({ driverKey }) {
        return packages.describe(driverKey);
      },
    }),
    rollback: defineOperation({
      name: 'drivers.packages.rollback',
      summary: 'Make the previous version of a driver current again, and restart it (a second rollback goes forward again).',
      access: OS_ADMIN,
      input: Type.Object({ driverKey: DriverKey }),
      output: Type.Object({ ...LocalDriver.properties, package: InstalledPackage }),
      async handler({ driverKey }) {
        return packages.rollback(driverKey);
      },
    }),
    remove: defineOperation({
      name: 'drivers.remove',
      summary: 'Stop a local driver and remove its folder (kept as its previous version, so a rollback restores it).',
      access: OS_ADMIN,
      input: Type.Object({ driverKey: DriverKey }),
      output: Type.Object({ driverKey: Type.String(), removed: Type.Literal(true) }),
      async handler({ driverKey }) {
        return packages.remove(driverKey);
      },
    }),
    list: defineOperation({
      name: 'drivers.list',
      summary: 'Connected driver instances (WebSocket and local) and every local driver manifest with its process status.',
      access: ADMIN_FROM_ANY_APP,
      input: Type.Object({}),
      output: Type.Object({ connected: Type.Array(ConnectedDriver), local: Type.Array(LocalDriver) }),
      async handler() {
        return { connected: manager.list(), local: local.list() };
      },
    }),
    getSettings: defineOperation({
      name: 'drivers.settings.get',
      summary: "A local driver's setup properties and stored values.",
      access: OS_ADMIN,
      input: Type.Object({ driverKey: DriverKey }),
      output: Settings,
      async handler({ driverKey }) {
        return local.getSettings(driverKey);
      },
    }),
    updateSettings: defineOperation({
      name: 'drivers.settings.update',
      summary: "Replace a local driver's setup values (validated against its manifest) and restart that driver.",
      description: 'Omitted or null values are unset; a secret sent back as "********" keeps its stored value.',
      access: OS_ADMIN,
      input: Type.Object({ driverKey: DriverKey, values: Type.Record(Type.String(), Type.Unknown()) }),
      output: LocalDriver,
      async handler({ driverKey, values }) {
        return local.updateSettings(driverKey, values);
      },
    }),
    restart: defineOperation({
      name: 'drivers.restart',
      summary: 'Restart one local driver process now (its backoff is reset).',
      access: OS_ADMIN,
      input: Type.Object({ driverKey: DriverKey }),
      output: LocalDriver,
      async handler({ driverKey }) {
        return local.restart(driverKey);
      },
    }),
  };
}

const Integration = Type.Object({
  key: Type.String({ description: 'The driverKey (`mpd` for the MPD targets, which are no driver).' }),
  name: Type.String(),
  kind: Type.String({ description: '`local` (a manifest run by the hub), `websocket` (an external driver) or `builtin` (an integration built into the hub: GENERIC_IR, Roku, Android TV, Cast, media bridge endpoints, MPD targets, Homebridge imports).' }),
  status: Type.String({
    description:
      'A local driver: its process status (`running`, `starting`, `backoff`, `stopped`, `invalid`, `standby`). A WebSocket driver: `connected`. A built-in integration: `running` (every device it controls answers), `degraded` (`unreachable` of them do not), `failed` (it cannot work at all; `lastError` says why) or `off` (not in service).',
  }),
  connected: Type.Boolean(),
  instances: Type.Integer(),
  devices: Type.Integer(),
  unreachable: Type.Optional(Type.Integer({ description: 'Status `degraded`: how many of its devices (GENERIC_IR: IR extenders) cannot be reached now.' })),
  lastError: Type.Optional(Type.String({ description: 'Why it is not `running`, when it knows.' })),
});

type IntegrationView = { key: string; name: string; kind: string; status: string; connected: boolean; instances: number; devices: number; unreachable?: number; lastError?: string };

/** Integrations (every kind of driver the hub knows), live connections and driver messages. */
export function integrationOperations(manager: DriverManager, local: LocalDriverSupervisor, deviceCount: (driverKey: string) => number, builtIns: BuiltInIntegrations) {
  return {
    integrations: defineOperation({
      name: 'integrations.list',
      summary: 'Every integration with its status: local driver manifests, connected WebSocket drivers and the built-in integrations (GENERIC_IR, Roku, Android TV, Cast, media bridge, MPD targets, Homebridge imports).',
      description:
        'Admins only, from any app: what runs the home (driver processes, their errors, device counts) is for those who administer it. A built-in integration is listed when it is configured, with its real status: `degraded` while some of its devices cannot be reached (`unreachable`, `lastError`), `failed` when it cannot work, `off` when not in service.',
      access: ADMIN_FROM_ANY_APP,
      input: Type.Object({}),
      output: Type.Object({ integrations: Type.Array(Integration) }),
      async handler() {
        const connected = manager.list();
        const instances = (key: string) => connected.filter((c) => c.driverKey === key).length;
        const out: IntegrationView[] = local.list().map((d) => ({
          key: d.driverKey,
          name: d.name ?? d.driverKey,
          kind: 'local',
          status: d.status,
          connected: instances(d.driverKey) > 0,
          instances: instances(d.driverKey),
          devices: deviceCount(d.driverKey),
          ...(d.lastError ? { lastError: d.lastError } : {}),
        }));
        for (const key of new Set(connected.filter((c) => c.transport === 'websocket').map((c) => c.driverKey))) {
          if (out.some((o) => o.key === key)) continue;
          out.push({ key, name: key, kind: 'websocket', status: 'connected', connected: true, instances: instances(key), devices: deviceCount(key) });
        }
        for (const report of await builtIns.list()) {
          out.push({
            key: report.key,
            name: report.name,
            kind: 'builtin',
            status: report.status,
            connected: report.status !== 'off',
            instances: instances(report.key),
            devices: report.devices ?? deviceCount(report.key),
            ...(report.unreachable !== undefined && report.status === 'degraded' ? { unreachable: report.unreachable } : {}),
            ...(report.lastError !== undefined && report.status !== 'running' ? { lastError: report.lastError } : {}),
          });
        }
        return { integrations: out };
      },
    }),
    connections: defineOperation({
      name: 'drivers.connections',
      summary: 'Driver instances connected now, over either transport.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ connections: Type.Array(ConnectedDriver) }),
      async handler() {
        return { connections: manager.list() };
      },
    }),
    message: defineOperation({
      name: 'drivers.message',
      summary: 'Send a free-form DRIVER_MESSAGE to every connected instance of a driver.',
      access: OS_ADMIN,
      input: Type.Object({ driverKey: DriverKey, payload: Type.Unknown({ description: 'Delivered as {"type":"DRIVER_MESSAGE","payload":…}.' }) }),
      output: Type.Object({ driverKey: Type.String(), delivered: Type.Integer({ description: 'Instances the message was sent to.' }) }),
      async handler({ driverKey, payload }) {
        const delivered = manager.message(driverKey, payload);
        if (delivered === 0) throw driverErrors.DRIVER_OFFLINE({ driverKey }, { details: { driverKey }, retryAfterSeconds: 5 });
        return { driverKey, delivered };
      },
    }),
  };
}

export type DriverOperations = ReturnType<typeof driverOperations>;

const DriverTokenRecord = Type.Object(
  {
    id: Type.String(),
    driverKey: Type.String({ description: 'The only driverKey the token registers.' }),
    label: Type.Union([Type.String(), Type.Null()], { description: 'What or where the driver is, for the list.' }),
    createdBy: Type.Union([Type.String(), Type.Null()], { description: 'The account that issued it.' }),
    createdAt: Type.Integer(),
    connected: Type.Integer({ description: 'Instances connected to this hub instance now that registered with it.' }),
  },
  { description: 'A driver token, without the token: only its SHA-256 is stored.' },
);

/** Driver tokens (DRIVER_AUTH=token): issued per driverKey by an admin, shown once, revocable. */
export function driverTokenOperations(tokens: DriverTokens, manager: DriverManager) {
  const connectedWith = (id: string) => manager.list().filter((d) => d.tokenId === id).length;
  return {
    list: defineOperation({
      name: 'drivers.tokens.list',
      summary: 'Driver tokens issued on this hub, oldest first (the tokens themselves are not kept).',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ tokens: Type.Array(DriverTokenRecord) }),
      async handler() {
        return { tokens: tokens.list().map((t) => ({ ...t, connected: connectedWith(t.id) })) };
      },
    }),
    create: defineOperation({
      name: 'drivers.tokens.create',
      summary: 'Issue a token that lets an external driver register its driverKey on the driver WebSocket when DRIVER_AUTH=token; the answer is the only time the token is shown.',
      description:
        'The driver sends it as `token` in `driver.register`, or as `Authorization: Bearer <token>` on the WebSocket upgrade request. The hub stores only its SHA-256. A token registers only the driverKey it was issued for, and never expires: revoke it with `drivers.tokens.revoke`.',
      access: OS_ADMIN,
      input: Type.Object(
        {
          driverKey: DriverKey,
          label: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'What or where the driver is, for the list.' })),
        },
        { additionalProperties: false },
      ),
      output: Type.Object({ ...DriverTokenRecord.properties, token: Type.String({ description: 'Shown once: the hub keeps only its hash.' }) }),
      async handler({ driverKey, label }, ctx) {
        const { record, token } = await tokens.create({ driverKey, ...(label === undefined ? {} : { label }) }, ctx.principal?.username ?? null);
        return { ...record, connected: 0, token };
      },
    }),
    revoke: defineOperation({
      name: 'drivers.tokens.revoke',
      summary: 'Revoke a driver token: it registers nothing any more, and the instances connected with it are closed (their devices go offline).',
      access: OS_ADMIN,
      input: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
      output: Type.Object({ ...DriverTokenRecord.properties, disconnected: Type.Integer({ description: 'Instances closed because they had registered with it.' }) }),
      async handler({ id }) {
        const before = connectedWith(id);
        const record = await tokens.revoke(id);
        return { ...record, connected: 0, disconnected: before - connectedWith(id) };
      },
    }),
  };
}
