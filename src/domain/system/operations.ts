import { Type } from 'typebox';
import { ADMIN_ACCOUNT, defineOperation } from '../../platform/operations.js';
import type { Readiness } from '../../platform/readiness.js';

const SystemInfo = Type.Object({
  version: Type.String(),
  nodeVersion: Type.String(),
  uptimeSeconds: Type.Number(),
  rssBytes: Type.Integer(),
  dataDir: Type.String(),
  migrations: Type.Array(Type.String()),
  ready: Type.Boolean(),
  waitingFor: Type.Array(Type.String()),
});

export interface SystemFacts {
  version: string;
  dataDir: string;
  readiness: Readiness;
  /** Migration names applied to the database, once started. */
  migrations(): string[];
}

export function systemOperations(facts: SystemFacts) {
  return {
    info: defineOperation({
      name: 'system.info',
      summary: 'Version, resources and readiness of this hub.',
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
        };
      },
    }),
  };
}
