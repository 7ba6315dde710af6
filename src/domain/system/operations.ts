import { Type } from 'typebox';
import type { Clock } from '../../platform/clock.js';
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
  database: Type.Object({
    engine: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
    location: Type.String({ description: 'The SQLite file, or the PostgreSQL URL with its password masked.' }),
  }),
  cluster: Type.Union(
    [
      Type.Object({
        instance: Type.String({ description: "This instance's id (what `runsOn` of a standby local driver names)." }),
        peers: Type.Array(Type.String(), { description: 'The other instances on the same database, as this one sees them.' }),
        leasesHeld: Type.Integer({ description: 'Local drivers this instance runs for the cluster.' }),
      }),
      Type.Null(),
    ],
    { description: 'PostgreSQL only: this instance in the cluster of the instances sharing the database (docs/scale-out.md).' },
  ),
});

export interface SystemFacts {
  version: string;
  dataDir: string;
  readiness: Readiness;
  /** Migration names applied to the database, once started. */
  migrations(): string[];
  drivers(): { connected: number; local: number; localRunning: number };
  census: ClientCensus;
  /** The newest log lines (pino's JSON lines), oldest first; empty when the process keeps none. */
  recentLogs(): readonly string[];
  database: { engine: 'sqlite' | 'postgres'; location: string };
  /** This instance in a cluster (PostgreSQL), or null. */
  cluster(): { instance: string; peers: string[]; leasesHeld: number } | null;
  /** The hub's clock: the usage measure's age and the reported start time are read on it. */
  clock: Clock;
}

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
const LEVEL_NAMES = Object.fromEntries(Object.entries(LEVELS).map(([k, v]) => [v, k]));

const LogLine = Type.Object({
  time: Type.Integer({ description: 'Epoch ms.' }),
  level: Type.String(),
  msg: Type.String(),
  component: Type.Optional(Type.String()),
  fields: Type.Record(Type.String(), Type.Unknown(), { description: 'The rest of the line (secrets were masked when it was written).' }),
});

/** How long a measured data folder usage is reused: walking a folder with driver dependencies costs, and it changes slowly. */
const USAGE_TTL_MS = 30_000;

export function systemOperations(facts: SystemFacts) {
  let usage: { at: number; value: Promise<Awaited<ReturnType<typeof folderUsage>>> } | undefined;
  const dataDirUsage = () => {
    const now = facts.clock.now();
    if (!usage || now - usage.at > USAGE_TTL_MS) usage = { at: now, value: folderUsage(facts.dataDir) };
    return usage.value;
  };
  return {
    logs: defineOperation({
      name: 'system.logs',
      summary: 'The newest log lines of this hub, newest first, filtered by level and text.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({
        level: Type.Optional(Type.Union(Object.keys(LEVELS).map((l) => Type.Literal(l)), { default: 'info', description: 'This level and above.' })),
        contains: Type.Optional(Type.String({ maxLength: 200, description: 'Only lines whose text holds this.' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 2000, default: 200 })),
      }),
      output: Type.Object({ lines: Type.Array(LogLine), kept: Type.Integer({ description: 'Lines the hub keeps in memory in all.' }) }),
      async handler({ level, contains, limit }) {
        const min = LEVELS[level ?? 'info']!;
        const max = limit ?? 200;
        const all = facts.recentLogs();
        const lines: Array<{ time: number; level: string; msg: string; component?: string; fields: Record<string, unknown> }> = [];
        for (let i = all.length - 1; i >= 0 && lines.length < max; i--) {
          const text = all[i]!;
          if (contains && !text.includes(contains)) continue;
          let parsed: Record<string, unknown>;
          try {
            parsed = JSON.parse(text) as Record<string, unknown>;
          } catch {
            continue;
          }
          const { time, level: n, msg, component, pid: _pid, ...fields } = parsed;
          if (typeof n !== 'number' || n < min) continue;
          lines.push({
            time: typeof time === 'number' ? time : 0,
            level: LEVEL_NAMES[n] ?? String(n),
            msg: typeof msg === 'string' ? msg : '',
            ...(typeof component === 'string' ? { component } : {}),
            fields,
          });
        }
        return { lines, kept: all.length };
      },
    }),
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
          startedAt: new Date(facts.clock.now() - process.uptime() * 1000).toISOString(),
          dataDirUsage: await dataDirUsage(),
          drivers: facts.drivers(),
          clients: facts.census.counts(),
          database: facts.database,
          cluster: facts.cluster(),
        };
      },
    }),
  };
}
