import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { IdParam } from '../../../domain/devices/schemas.js';
import { ErrorBody } from '../errors.js';
import { operationIdFor, osRoutes, type OsApiOptions } from './options.js';

export const deviceRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.devices;
  const route = osRoutes(app, base, ['devices']);
  route('GET', '/devices', ops.list);
  route('POST', '/devices/ir/save', ops.saveIr);
  route('GET', '/devices/:id', ops.get);
  route('GET', '/devices/:id/apps', ops.apps);
  route('POST', '/devices/:id/apps/:appId/launch', ops.launchApp);
  route('GET', '/devices/:id/equalizer', ops.getEqualizer);
  route('POST', '/devices/:id/equalizer', ops.setEqualizer);
  route('POST', '/devices/:id/command', ops.command);
  route('GET', '/devices/:id/scenes', ops.scenes);
  route('POST', '/devices/:id/metadata', ops.metadata);

  // Bytes, not JSON: the one device route that is not a plain operation binding.
  app.get(
    '/devices/:id/apps/:appId/icon',
    {
      schema: {
        tags: ['devices'],
        operationId: operationIdFor(base, 'devices.apps.icon'),
        summary: 'Stream an app icon (driver command apps.icon answering {contentType, data: base64}); cached for an hour.',
        params: Type.Object({ id: IdParam, appId: IdParam }),
        produces: ['image/png', 'image/jpeg', 'image/webp', 'image/svg+xml'],
        response: { 200: Type.Unknown({ description: 'Icon bytes.' }), '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request, reply) => {
      const { id, appId } = request.params as { id: string; appId: string };
      const icon = await hub.devices.appIcon(id, appId);
      return reply
        .type(icon.contentType)
        .header('cache-control', 'private, max-age=3600')
        .header('content-length', String(icon.bytes.length))
        .send(icon.bytes);
    },
  );
};

export const driverRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const route = osRoutes(app, base, ['drivers']);
  route('GET', '/drivers', hub.ops.drivers.list);
  route('GET', '/drivers/:driverKey/settings', hub.ops.drivers.getSettings);
  route('POST', '/drivers/:driverKey/settings', hub.ops.drivers.updateSettings);
  route('POST', '/drivers/:driverKey/restart', hub.ops.drivers.restart);
};

export const stateRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const route = osRoutes(app, base, ['state']);
  route('GET', '/state/snapshot', hub.ops.state.snapshot);
  route('GET', '/state/telemetry/:deviceId', hub.ops.state.telemetry);
};
