import type { FastifyPluginAsync } from 'fastify';
import { osRoutes, type OsApiOptions } from './options.js';

/** The household's side of remotes: pending pairing requests, paired remotes, revocation. */
export const remoteRoutes: FastifyPluginAsync<OsApiOptions> = async (app, { hub, base }) => {
  const ops = hub.ops.remotes;
  const route = osRoutes(app, hub, base, ['remotes']);
  route('GET', '/remotes/pairing', ops.pairingList);
  route('POST', '/remotes/pairing/:requestId/confirm', ops.pairingConfirm);
  route('POST', '/remotes/pairing/:requestId/reject', ops.pairingReject);
  route('GET', '/remotes', ops.list);
  route('DELETE', '/remotes/:id', ops.revoke);
};
