import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../../../hub.js';
import { html } from '../../web/html.js';
import { bindPage } from '../panel-kit.js';

interface SystemInfo {
  version: string;
  nodeVersion: string;
  uptimeSeconds: number;
  startedAt: string;
  rssBytes: number;
  dataDir: string;
  dataDirUsage: { bytes: number; files: number; complete: boolean };
  migrations: string[];
  ready: boolean;
  waitingFor: string[];
  drivers: { connected: number; local: number; localRunning: number };
  clients: Record<string, number>;
  database: { engine: 'sqlite' | 'postgres'; location: string };
  cluster: { instance: string; peers: string[]; leasesHeld: number } | null;
}

export const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d > 0 ? `${d} d ${h} h` : h > 0 ? `${h} h ${m} min` : `${m} min ${Math.floor(seconds % 60)} s`;
}

/** The panel's home: what runs, for how long, on how much disk, and who is connected. */
export function systemPage(app: FastifyInstance, hub: Hub): void {
  bindPage(app, hub, {
    url: '/',
    title: 'System',
    summary: 'Admin panel: version, uptime, data folder usage, connected drivers and clients.',
    async build({ call }) {
      const s = await call<SystemInfo>(hub.ops.system.info);
      const rows: Array<[string, string]> = [
        ['Version', s.version],
        ['Node.js', s.nodeVersion],
        ['Status', s.ready ? 'ready' : `starting (${s.waitingFor.join(', ')})`],
        ['Uptime', `${duration(s.uptimeSeconds)} (since ${s.startedAt})`],
        ['Memory (RSS)', megabytes(s.rssBytes)],
        ['Data folder', `${s.dataDir}: ${megabytes(s.dataDirUsage.bytes)} in ${s.dataDirUsage.files} files${s.dataDirUsage.complete ? '' : ' (at least)'}`],
        ['Drivers', `${s.drivers.connected} connected; ${s.drivers.localRunning} of ${s.drivers.local} local drivers running`],
        ['Clients', Object.entries(s.clients).map(([k, v]) => `${v} ${k}`).join(', ') || 'none'],
        ['Database', `${s.database.engine === 'postgres' ? 'PostgreSQL' : 'SQLite'}: ${s.database.location}; ${s.migrations.length} migrations`],
        ...(s.cluster
          ? ([['Cluster', `instance ${s.cluster.instance} with ${s.cluster.peers.length} other${s.cluster.peers.length === 1 ? '' : 's'}${s.cluster.peers.length ? ` (${s.cluster.peers.join(', ')})` : ''}; runs ${s.cluster.leasesHeld} local driver${s.cluster.leasesHeld === 1 ? '' : 's'} for the cluster`]] as Array<[string, string]>)
          : []),
      ];
      return html`<section aria-labelledby="facts"><h2 id="facts">This hub</h2><table><tbody>${rows.map(
        ([k, v]) => html`<tr><th scope="row">${k}</th><td data-fact="${k}">${v}</td></tr>`,
      )}</tbody></table></section>
<p><a href="/docs">API reference</a> · <a href="/openapi.json">OpenAPI document</a></p>`;
    },
  });
}
