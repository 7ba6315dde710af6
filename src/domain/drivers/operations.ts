import { Type } from 'typebox';
import { defineOperation } from '../../platform/operations.js';
import type { DriverManager } from './driver-manager.js';
import type { LocalDriverSupervisor } from './local/supervisor.js';

const Loose = Type.Record(Type.String(), Type.Unknown());
const DriverKey = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' });

const ConnectedDriver = Type.Object({
  driverKey: Type.String(),
  instanceId: Type.String(),
  transport: Type.String({ description: '`websocket` or `process`.' }),
  connectedAt: Type.Integer(),
  devices: Type.Integer({ description: 'Devices this instance currently speaks for.' }),
});

const LocalDriver = Type.Object(
  {
    driverKey: Type.String(),
    name: Type.Optional(Type.String()),
    version: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    file: Type.String({ description: 'The manifest, relative to DRIVERS_DIR.' }),
    driverType: Type.Union([Type.String(), Type.Null()]),
    status: Type.String({ description: '`running`, `starting`, `backoff`, `stopped` or `invalid`.' }),
    pid: Type.Optional(Type.Integer()),
    restarts: Type.Integer(),
    startedAt: Type.Optional(Type.Integer()),
    lastExit: Type.Optional(Type.Object({ code: Type.Union([Type.Integer(), Type.Null()]), signal: Type.Union([Type.String(), Type.Null()]), at: Type.Integer() })),
    lastError: Type.Optional(Type.String()),
    error: Type.Optional(Type.String({ description: 'Why the manifest is invalid.' })),
    nextRestartAt: Type.Optional(Type.Integer()),
    missingSettings: Type.Optional(Type.Array(Type.String())),
    lastPongAt: Type.Optional(Type.Integer()),
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

export function driverOperations(manager: DriverManager, local: LocalDriverSupervisor) {
  return {
    list: defineOperation({
      name: 'drivers.list',
      summary: 'Connected driver instances (WebSocket and local) and every local driver manifest with its process status.',
      access: 'authenticated',
      input: Type.Object({}),
      output: Type.Object({ connected: Type.Array(ConnectedDriver), local: Type.Array(LocalDriver) }),
      async handler() {
        return { connected: manager.list(), local: local.list() };
      },
    }),
    getSettings: defineOperation({
      name: 'drivers.settings.get',
      summary: "A local driver's setup properties and stored values.",
      access: 'authenticated',
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
      access: 'authenticated',
      input: Type.Object({ driverKey: DriverKey, values: Type.Record(Type.String(), Type.Unknown()) }),
      output: LocalDriver,
      async handler({ driverKey, values }) {
        return local.updateSettings(driverKey, values);
      },
    }),
    restart: defineOperation({
      name: 'drivers.restart',
      summary: 'Restart one local driver process now (its backoff is reset).',
      access: 'authenticated',
      input: Type.Object({ driverKey: DriverKey }),
      output: LocalDriver,
      async handler({ driverKey }) {
        return local.restart(driverKey);
      },
    }),
  };
}

export type DriverOperations = ReturnType<typeof driverOperations>;
