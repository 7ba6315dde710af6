import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

export const programRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.programs;
  const route = osRoutes(app, hub, base, ['programs']);
  route('GET', '/programs', ops.list);
  route('POST', '/programs/save', ops.save);
  route('GET', '/programs/runs/:runId', ops.getRun);
  route('GET', '/programs/:id', ops.get);
  route('POST', '/programs/:id/run', ops.run, { queryFields: ['wait'] });
  route('POST', '/programs/:id/run-off', ops.runOff, { queryFields: ['wait'] });
  route('POST', '/programs/:id/remove', ops.remove);
  route('POST', '/programs/:id/copy', ops.copy);
  route('POST', '/programs/:id/timer', ops.timer);
  route('POST', '/programs/:id/script', ops.script);
  route('POST', '/programs/:id/lighting/off', ops.lightingOff);
  route('GET', '/programs/:id/runs', ops.runs);

  const automations = hub.ops.automations;
  const automationRoute = osRoutes(app, hub, base, ['automations']);
  automationRoute('GET', '/automations', automations.list);
  automationRoute('GET', '/automations/status', automations.status);
  automationRoute('GET', '/automations/traces/:runId', automations.trace);
  automationRoute('POST', '/automations/:id/enable', automations.enable);
  automationRoute('POST', '/automations/:id/disable', automations.disable);
  automationRoute('POST', '/automations/:id/test', automations.test);
  automationRoute('POST', '/automations/:id/run', automations.run, { queryFields: ['wait'] });
  automationRoute('GET', '/automations/:id/traces', automations.traces);

  osRoutes(app, hub, base, ['bootstrap'])('GET', '/bootstrap', hub.ops.bootstrap.bootstrap);
};
