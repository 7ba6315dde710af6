import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../hub.js';
import { CREDENTIALS_CHANGED } from '../../domain/events.js';
import { ErrorBody } from '../http/errors.js';
import { operationIdFor } from '../http/bind-operation.js';
import { callerOf } from '../http/credentials.js';
import { osApiStreamCredential } from '../http/os-api/options.js';
import { SseStream } from './sse.js';

/**
 * `GET {base}/media-controller/stream`: `ready`, `snapshot` (the controller's state), then a
 * `state` event for every change MPD reports through `idle` (and when the connection to MPD is
 * lost or regained), and `ping`. Authenticated like the state stream (`?accessToken=`).
 */
export const mediaControllerStreamRoute: FastifyPluginAsync<{ hub: Hub; base: string }> = async (app, { hub, base }) => {
  app.get(
    '/media-controller/stream',
    {
      config: { access: 'stream' },
      schema: {
        tags: ['media'],
        operationId: operationIdFor(base, 'media.controller.stream'),
        summary: 'Server-sent events of the local media controller: ready, snapshot, then state (driven by MPD idle) and ping.',
        description: 'Pass a stream token (POST /auth/stream-token) or an access token as `?accessToken=`. A `state` event with `connected: false` says MPD was lost; the next `state` with `connected: true` says it is back.',
        security: [],
        querystring: Type.Object({ accessToken: Type.Optional(Type.String({ description: 'Stream token or access token.' })) }),
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), '4xx': ErrorBody },
      },
    },
    async (request, reply) => {
      // The state operation authenticates and authorizes the token before anything is sent.
      const caller = callerOf(request, osApiStreamCredential);
      const snapshot = await hub.operations.invoke(hub.ops.music.controllerState.name, {}, caller);
      const stream = new SseStream(reply, { heartbeatMs: hub.config.ssePingIntervalMs, maxBufferedBytes: hub.config.sseMaxBufferBytes, timers: hub.timers });
      stream.send('ready', {});
      stream.send('snapshot', snapshot);
      const owner = {};
      hub.events.on(owner, 'media_controller.state_changed', ({ state }) => stream.send('state', state));
      for (const name of CREDENTIALS_CHANGED) {
        hub.events.on(owner, name, () => {
          if (!hub.operations.stillAuthenticates(caller.credential)) stream.close();
        });
      }
      stream.onClose(() => hub.events.removeOwner(owner));
    },
  );
};
