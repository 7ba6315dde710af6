import { Type } from 'typebox';
import { ADMIN_ACCOUNT, defineOperation } from '../../platform/operations.js';
import type { Readiness } from '../../platform/readiness.js';
import type { ClientCensus } from './census.js';
import { folderUsage } from './disk-usage.js';

const SystemInfo = Type.Object({
  version: Type.String(),
  nodeVersion: Type.String(),
  uptimeSeconds: Type.Number(),
  rssBytes: Type.Integer(),
  dataDir: Type.String(),
  migrations: Type.Array(Type.String()),
  ready: Type.Boolean(),
  waitingFor: Type.Array(Type.String()),
  startedAt: Type.String({ format: 'date-time' }),
  dataDirUsage: Type.Object({
    bytes: Type.Integer(),
    files: Type.Integer(),
    complete: Type.Boolean({ description: 'False when the folder has more entries than are counted (200,000).' }),
  }),
  drivers: Type.Object({
    connected: Type.Integer({ description: 'Driver instances connected now, over any transport.' }),
    local: Type.Integer({ description: 'Local driver manifests.' }),
    localRunning: Type.Integer(),
  }),
  clients: Type.Record(Type.String(), Type.Integer(), { description: 'Connected clients by surface (`socket.io`, `sse`).' }),
});

export interface SystemFacts {
  version: string;
  dataDir: string;
  readiness: Readiness;
  /** Migration names applied to the database, once started. */
  migrations(): string[];
  drivers(): { connected: number; local: number; localRunning: number };
  census: ClientCensus;
}

export function systemOperations(facts: SystemFacts) {
  return {
    info: defineOperation({
      name: 'system.info',
      summary: 'Version, uptime, resources, data folder usage, connected drivers and clients, and readiness of this hub.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: SystemInfo,
      async handler() {
        return {
          version: facts.version,
          nodeVersion: process.version,
          uptimeSeconds: Math.round(process.uptime()),
          rssBytes: process.memoryUsage().rss,
          dataDir: facts.dataDir,
          migrations: facts.migrations(),
          ready: facts.readiness.ready,
          waitingFor: facts.readiness.waitingFor,
          startedAt: new Date(Date.now() - process.uptime() * 1000).toISOString(),
          dataDirUsage: await folderUsage(facts.dataDir),
          drivers: facts.drivers(),
          clients: facts.census.counts(),
        };
      },
    }),
  };
}
