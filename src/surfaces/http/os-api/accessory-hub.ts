import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { BridgeStreamMessage, BridgedDevice } from '../../../domain/accessory-hub/plugin-bridge.js';
import { Coalescer } from '../../../platform/coalescer.js';
import { SseStream } from '../../sse/sse.js';
import { callerOf, requestCredential, streamCredential } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { operationIdFor, osRoutes, type OsApiOptions } from './options.js';

/** The plugin bridge's token (scope `plugin-bridge`), as a bearer; its stream takes it too. */
const pluginCredential = requestCredential({ admits: ['plugin-bridge'] });
const pluginStreamCredential = streamCredential({ admits: ['plugin-bridge'] });

/** Under a steady flow of changes the plugin hears of each device at most this often. */
const BRIDGE_FLUSH_GAP_MS = 100;

/** The accessory hub (docs/accessory-hub.md): the managed Homebridge, its plugins and accessories. */
export const accessoryHubRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.accessoryHub;
  const route = osRoutes(app, hub, base, ['accessory-hub']);
  route('GET', '/accessory-hub/status', ops.status);
  route('GET', '/accessory-hub/homekit', ops.homekit);
  route('POST', '/accessory-hub/homekit', ops.updateHomekit);
  route('POST', '/accessory-hub/resync', ops.resync);
  route('POST', '/accessory-hub/settings', ops.settings);
  route('GET', '/accessory-hub/accessories', ops.accessories);
  route('GET', '/accessory-hub/import-accessories', ops.importable);
  route('POST', '/accessory-hub/import-accessories/resync', ops.resyncImportable);
  route('POST', '/accessory-hub/import-accessories/:accessoryId/import', ops.importAccessory);
  route('POST', '/accessory-hub/import-accessories/:accessoryId/remove', ops.removeImport);
  route('GET', '/accessory-hub/plugins', ops.list);
  route('GET', '/accessory-hub/plugins/search', ops.search);
  route('GET', '/accessory-hub/plugins/resolve', ops.resolve);
  route('POST', '/accessory-hub/plugins/custom', ops.addCustom);
  route('GET', '/accessory-hub/plugins/:pluginId', ops.get);
  route('GET', '/accessory-hub/plugins/:pluginId/config-schema', ops.configSchema);
  route('POST', '/accessory-hub/plugins/:pluginId/catalog-remove', ops.removeCustom);
  route('POST', '/accessory-hub/plugins/:pluginId/install', ops.install);
  route('POST', '/accessory-hub/plugins/:pluginId/uninstall', ops.uninstall);
  route('POST', '/accessory-hub/plugins/:pluginId/enable', ops.enable);
  route('POST', '/accessory-hub/plugins/:pluginId/disable', ops.disable);
  // The body is the plugin's configuration as a whole (validated against its own schema).
  route('GET', '/accessory-hub/plugins/:pluginId/config', ops.currentConfig);
  route('POST', '/accessory-hub/plugins/:pluginId/config', ops.configure);
  route('GET', '/accessory-hub/external-accessories', ops.external);

  const plugin = osRoutes(app, hub, base, ['accessory-hub-plugin']);
  const asPlugin = { credential: pluginCredential };
  plugin('GET', '/accessory-hub/plugin/bootstrap', ops.bootstrap, asPlugin);
  plugin('POST', '/accessory-hub/plugin/devices/:id/command', ops.command, asPlugin);
  plugin('POST', '/accessory-hub/plugin/external-accessories/sync', ops.syncExternal, asPlugin);
  plugin('GET', '/accessory-hub/plugin/import-commands', ops.importCommands, asPlugin);
  plugin('POST', '/accessory-hub/plugin/import-commands/:commandId/ack', ops.ack, asPlugin);
  app.get(
    '/accessory-hub/plugin/state/stream',
    {
      config: { access: 'stream' },
      schema: {
        tags: ['accessory-hub-plugin'],
        operationId: operationIdFor(base, 'accessory_hub.plugin.state_stream'),
        summary:
          'For the plugin bridge: server-sent events `ready` ({devices}: those it exposes), then `device` (a device to add, or to build anew: its service, name, attributes or capabilities changed), `state` ({deviceId, reading, on, online}) when what a bridged device shows changed, `removed` ({deviceId}) when one leaves (removed, no longer chosen for Apple Home, or no longer something HomeKit shows), and `button` ({deviceId, press}) when a bridged button is pressed. Changes are gathered per device: each device is sent once per turn, and at most every 100 ms while changes keep coming.',
        description: 'The plugin-bridge token as a bearer header (or `?accessToken=`).',
        security: [],
        querystring: Type.Object({ accessToken: Type.Optional(Type.String()) }),
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), '4xx': ErrorBody },
      },
    },
    async (request, reply) => {
      const { devices } = (await hub.operations.invoke(ops.stream.name, {}, callerOf(request, pluginStreamCredential))) as { devices: BridgedDevice[] };
      const bridge = hub.accessoryBridge;
      const stream = new SseStream(reply, { heartbeatMs: hub.config.ssePingIntervalMs, maxBufferedBytes: hub.config.sseMaxBufferBytes, timers: hub.timers });
      const owner = {};
      stream.send('ready', { devices });
      if (!bridge) return;
      const follower = bridge.follower(devices);
      const send = (message: BridgeStreamMessage | undefined) => message && stream.send(message.event, message.data);
      const pending = new Coalescer<string>({ timers: hub.timers, clock: hub.clock, minGapMs: BRIDGE_FLUSH_GAP_MS, flush: (ids) => ids.forEach((id) => send(follower.changed(id))) });
      stream.onClose(() => {
        hub.events.removeOwner(owner);
        pending.close();
      });
      const follow = (deviceId: string) => pending.mark(deviceId);
      hub.events.on(owner, 'device.discovered', (e) => follow(e.device.id));
      hub.events.on(owner, 'device.updated', (e) => follow(e.device.id));
      hub.events.on(owner, 'device.removed', (e) => follow(e.deviceId));
      hub.events.on(owner, 'device.state_changed', (e) => follow(e.deviceId));
      hub.events.on(owner, 'device.online_changed', (e) => follow(e.deviceId));
      hub.events.on(owner, 'accessory_hub.homekit_changed', () => follower.all(bridge.devices().map((d) => d.id)).forEach(send));
      // A press is an event, not a state: it goes at once, in order.
      hub.events.on(owner, 'device.button_pressed', (e) => send(follower.pressed(e.deviceId, e.press)));
    },
  );
};
