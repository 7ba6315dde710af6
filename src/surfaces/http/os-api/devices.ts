import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

export const deviceRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.devices;
  const route = osRoutes(app, hub, base, ['devices']);
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

  // Bytes, not JSON: the icon is written as it is, with its own type and cache lifetime.
  route('GET', '/devices/:id/apps/:appId/icon', ops.appIcon, {
    produces: ['image/png', 'image/jpeg', 'image/webp', 'image/svg+xml'],
    respond: {
      schema: Type.Unknown({ description: 'Icon bytes.' }),
      shape(result, _request, reply) {
        const icon = result as { contentType: string; bytes: Buffer };
        reply.type(icon.contentType).header('cache-control', 'private, max-age=3600').header('content-length', String(icon.bytes.length));
        return icon.bytes;
      },
    },
  });
};

export const driverRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const route = osRoutes(app, hub, base, ['drivers']);
  route('GET', '/drivers', hub.ops.drivers.list);
  route('GET', '/drivers/:driverKey/settings', hub.ops.drivers.getSettings);
  route('POST', '/drivers/:driverKey/settings', hub.ops.drivers.updateSettings);
  route('POST', '/drivers/:driverKey/restart', hub.ops.drivers.restart);
  route('GET', '/integrations', hub.ops.integrations.integrations);
};

export const stateRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const route = osRoutes(app, hub, base, ['state']);
  route('GET', '/state/snapshot', hub.ops.state.snapshot);
  route('GET', '/state/telemetry/:deviceId', hub.ops.state.telemetry);
};
