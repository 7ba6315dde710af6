import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { CREDENTIALS_CHANGED } from '../../../domain/events.js';
import type { Hub } from '../../../hub.js';
import { SseStream } from '../../sse/sse.js';
import { callerOf } from '../credentials.js';
import { ErrorBody } from '../errors.js';
import { HOME_AREA, householdCredential } from './area.js';

/** What changes which devices a household member sees. */
const VISIBILITY_EVENTS = ['device.discovered', 'device.updated', 'device.removed', 'space.devices_assigned', 'space.removed'] as const;

/**
 * `/os/events`: the live state of the devices the signed-in account sees, for the web UI's pages
 * (an EventSource sends the session cookie). The devices it may see are what `devices.list`
 * answers that account, asked again when devices or rooms change; the stream ends when its
 * session no longer authenticates.
 */
export function liveStateRoute(app: FastifyInstance, hub: Hub): void {
  app.get(
    '/events',
    {
      config: { access: 'stream' },
      schema: {
        tags: [HOME_AREA.tag],
        summary: 'Server-sent events for the web UI: `ready`, then `state` ({deviceId, changed}), `online` ({deviceId, online}) and `reading` ({deviceId, reading, online}: the canonical reading tiles draw) of the devices the session sees; for an administrator also `plugin_progress` (the lines npm prints and the outcome of a plugin install or uninstall).',
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), '4xx': ErrorBody },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request, householdCredential);
      const visible = async () => {
        const { devices } = (await hub.operations.invoke(hub.ops.devices.list.name, {}, caller)) as { devices: Array<{ id: string }> };
        return new Set(devices.map((d) => d.id));
      };
      let ids = await visible();
      const stream = new SseStream(reply, { heartbeatMs: hub.config.ssePingIntervalMs, maxBufferedBytes: hub.config.sseMaxBufferBytes, timers: hub.timers });
      const owner = {};
      stream.onClose(() => hub.events.removeOwner(owner));
      stream.send('ready', { devices: ids.size });
      // The device as the model reads it now: what a tile draws, so the page never reads raw keys.
      const sendReading = (deviceId: string) => {
        hub.operations.invoke(hub.ops.devices.get.name, { json: {}, text: { params: { id: deviceId } } }, caller).then(
          (device) => {
            const { reading, online } = device as { reading: unknown; online: boolean };
            stream.send('reading', { deviceId, reading, online });
          },
          // Gone or no longer visible between the change and the read: its next change says so.
          () => undefined,
        );
      };
      hub.events.on(owner, 'device.state_changed', (e) => {
        if (!ids.has(e.deviceId)) return;
        stream.send('state', { deviceId: e.deviceId, changed: e.changed, at: e.at });
        sendReading(e.deviceId);
      });
      hub.events.on(owner, 'device.online_changed', (e) => {
        if (!ids.has(e.deviceId)) return;
        stream.send('online', { deviceId: e.deviceId, online: e.online, at: e.at });
        sendReading(e.deviceId);
      });
      for (const event of VISIBILITY_EVENTS) {
        hub.events.on(owner, event, () => {
          visible().then(
            (next) => {
              // A device that came into view (found again, moved into a granted room) may have
              // changed while it was out of it: its reading now brings the page up to date.
              const appeared = [...next].filter((id) => !ids.has(id));
              ids = next;
              for (const id of appeared) sendReading(id);
            },
            () => stream.close(),
          );
        });
      }
      // An administrator's pages follow a plugin install or uninstall as npm reports it.
      const me = (await hub.operations.invoke(hub.ops.auth.me.name, {}, caller)) as { role: string };
      if (me.role === 'admin') {
        hub.events.on(owner, 'accessory_hub.plugin_progress', (e) => stream.send('plugin_progress', e));
      }
      for (const event of CREDENTIALS_CHANGED) {
        hub.events.on(owner, event, () => {
          if (!hub.operations.stillAuthenticates(caller.credential)) stream.close();
        });
      }
    },
  );
}
