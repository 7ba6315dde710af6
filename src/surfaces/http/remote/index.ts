import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Hub } from '../../../hub.js';
import type { Operation } from '../../../platform/operations.js';
import { ErrorBody } from '../errors.js';
import { bindOperation, operationIdFor, type RouteBinding } from '../bind-operation.js';
import { requestCredential } from '../credentials.js';

export const REMOTE_BASES = ['/remote', '/v1/remote'] as const;

/** remoteAuth: a paired remote's bearer token; account tokens are refused here (403). */
export const remoteCredential = requestCredential({ admits: ['remote'] });

const RemoteInfo = Type.Object({
  service: Type.String(),
  apiVersion: Type.Integer(),
  pairing: Type.Object({
    socketNamespace: Type.String({ description: 'Socket.IO namespace that carries pairing.' }),
    requestEvent: Type.String(),
    statusEvent: Type.String(),
    startPath: Type.String({ description: 'REST alternative: open a request here, then poll or submit the code.' }),
  }),
});

/**
 * Remote-controller API (docs/remote.md). `/info` and pairing are public, so that a new remote
 * can pair before it holds a token; everything else takes the remote's own token (remoteAuth).
 */
export const remoteApi: FastifyPluginAsync<{ hub: Hub; base: string }> = async (app, { hub, base }) => {
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
      pairing: { socketNamespace: '/socket/remote-connect', requestEvent: 'remote:pairing', statusEvent: 'remote:pairing:status', startPath: `${base}/pair/start` },
    }),
  );

  const route = (method: RouteBinding<Operation>['method'], url: string, operation: Operation, extra: Partial<RouteBinding<Operation>> = {}) =>
    bindOperation(app, hub.operations, { method, url, operation, credential: remoteCredential, tags: ['remote'], operationId: operationIdFor(base, operation.name), ...extra });
  const { remotes: pairing, remote } = hub.ops;
  route('POST', '/pair/start', pairing.pairingStart, { successStatus: 201 });
  route('GET', '/pair/:requestId', pairing.pairingStatus);
  route('POST', '/pair/:requestId/code', pairing.pairingSubmitCode);
  route('GET', '/session', remote.session);
  route('POST', '/space', remote.selectSpace);
  route('POST', '/source', remote.activateSource);
  route('POST', '/keys/:key', remote.pressKey);
  route('POST', '/keys', remote.pressKeys);
};
