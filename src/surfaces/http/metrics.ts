import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Hub } from '../../hub.js';
import { callerOf, requestCredential } from './credentials.js';
import { ErrorBody } from './errors.js';
import { RouteTraffic } from './route-traffic.js';
import { httpErrors } from './failures.js';

const metricsCredential = requestCredential({ admits: ['metrics'] });
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * `GET /metrics` in Prometheus text format (prom-client), one registry per service instance:
 * requests by route and status with latency histograms, connected drivers, clients by surface
 * and Socket.IO namespace, SSE streams, command latencies and time-outs, state updates, and
 * Node's own (event-loop lag, heap, RSS). Who may read it: METRICS_ACCESS (docs/metrics.md).
 */
export const metricsRoute: FastifyPluginAsync<{ hub: Hub }> = async (app, { hub }) => {
  const access = hub.config.metricsAccess;
  if (access === 'off') return;
  const register = new Registry();
  collectDefaultMetrics({ register, prefix: 'hcs_' });
  const traffic = new RouteTraffic([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]);
  traffic.registerWith(register, { requests: 'hcs_http_requests_total', latency: 'hcs_http_request_duration_seconds' });
  const commands = new Histogram({ name: 'hcs_command_duration_seconds', help: 'Device commands answered by their driver, by outcome.', labelNames: ['ok'], buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [register] });
  const timeouts = new Counter({ name: 'hcs_command_timeouts_total', help: 'Device commands whose driver did not answer in time.', registers: [register] });
  const stateUpdates = new Counter({ name: 'hcs_state_updates_total', help: 'Device state changes absorbed (rate() gives per second).', registers: [register] });
  new Gauge({
    name: 'hcs_drivers_connected',
    help: 'Driver instances connected, by transport.',
    labelNames: ['transport'],
    registers: [register],
    collect() {
      this.reset();
      for (const d of hub.drivers.list()) this.inc({ transport: d.transport });
    },
  });
  new Gauge({
    name: 'hcs_clients',
    help: 'Connected clients by surface (socket.io and each namespace, sse).',
    labelNames: ['surface'],
    registers: [register],
    collect() {
      this.reset();
      for (const [surface, count] of Object.entries(hub.census.counts())) this.set({ surface }, count);
    },
  });
  const cluster = hub.cluster;
  if (cluster) {
    type Stats = ReturnType<NonNullable<Hub['cluster']>['stats']>;
    const figure = (name: string, help: string, read: (s: Stats) => number) =>
      new Gauge({
        name,
        help,
        registers: [register],
        collect() {
          this.set(read(cluster.stats()));
        },
      });
    figure('hcs_cluster_peers', 'Other instances on the same PostgreSQL database, as this one sees them.', (s) => s.peers);
    figure('hcs_cluster_leases_held', 'Local driver leases this instance holds (the drivers it runs).', (s) => s.leasesHeld);
    figure('hcs_cluster_forwarded_commands', 'Device commands this instance sent to the instance holding the driver, since start.', (s) => s.forwarded);
    figure('hcs_cluster_forwarded_pending', 'Forwarded commands waiting for their answer.', (s) => s.forwardedPending);
    figure('hcs_cluster_commands_run_for_others', 'Device commands other instances forwarded here, since start.', (s) => s.ranForOthers);
  }
  const owner = {};
  // The two label sets bound once: prom-client hashes a label object on every observe.
  const commandsBy = { true: commands.labels({ ok: 'true' }), false: commands.labels({ ok: 'false' }) };
  hub.events.on(owner, 'device.command_executed', (e) => commandsBy[e.ok ? 'true' : 'false'].observe(e.durationMs / 1000), { origin: 'local' });
  hub.events.on(owner, 'device.command_timed_out', () => timeouts.inc(), { origin: 'local' });
  // This instance's updates: another instance counts its own.
  hub.events.on(owner, 'device.state_changed', () => stateUpdates.inc(), { origin: 'local' });
  app.addHook('onClose', async () => hub.events.removeOwner(owner));
  // A callback hook, not an async one: no promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    traffic.record(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  app.get(
    '/metrics',
    {
      config: { access: access === 'loopback' ? 'public' : 'authenticated', servesBeforeReady: true },
      schema: {
        tags: ['metrics'],
        summary: 'Prometheus metrics of this instance (text exposition format).',
        description: 'METRICS_ACCESS=token (default): a bearer of scope `metrics` (POST /metrics/token, admin); `loopback`: any caller from 127.0.0.1 or ::1; `off`: not served.',
        produces: ['text/plain'],
        ...(access === 'loopback' ? { security: [] } : {}),
        response: { 200: Type.String(), '4xx': ErrorBody },
      },
    },
    async (request, reply) => {
      if (access === 'loopback') {
        if (!LOOPBACK.has(request.ip)) throw httpErrors.METRICS_LOOPBACK_ONLY();
      } else {
        await hub.operations.invoke(hub.ops.metrics.scrape.name, {}, callerOf(request, metricsCredential));
      }
      return reply.type(register.contentType).send(await register.metrics());
    },
  );
};
