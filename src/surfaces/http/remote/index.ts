import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import { ErrorBody } from '../errors.js';
import { operationIdFor } from '../bind-operation.js';

export const REMOTE_BASES = ['/remote', '/v1/remote'] as const;

const RemoteInfo = Type.Object({
  service: Type.String(),
  apiVersion: Type.Integer(),
  pairing: Type.Object({
    socketNamespace: Type.String({ description: 'Socket.IO namespace that carries pairing.' }),
    requestEvent: Type.String(),
    statusEvent: Type.String(),
  }),
});

/**
 * Remote-controller API. `/info` is public so that a new remote can find out how to pair before
 * it holds a token (remoteAuth).
 */
export const remoteApi: FastifyPluginAsync<{ hub: Hub; base: string }> = async (app, { base }) => {
  app.get(
    '/info',
    {
      config: { access: 'public' },
      schema: {
        tags: ['remote'],
        operationId: operationIdFor(base, 'remote.info'),
        summary: 'How a remote controller pairs with this hub.',
        security: [],
        response: { 200: RemoteInfo, '4xx': ErrorBody },
      },
    },
    async () => ({
      service: 'home-control-service',
      apiVersion: 1,
      pairing: { socketNamespace: '/socket/remote-connect', requestEvent: 'remote:pairing', statusEvent: 'remote:pairing:status' },
    }),
  );
};
