import type { Namespace, Socket } from 'socket.io';
import type { Hub } from '../../hub.js';
import type { Outcome, SocketRun } from './index.js';
import { asPlainJson } from './json-packets.js';

const SETTLED = new Set(['paired', 'rejected', 'expired']);

interface PairingMessage {
  requestId?: unknown;
  code?: unknown;
}

/**
 * `/socket/remote-connect` (docs/remote.md): `remote:pairing` opens a request (`{name, kind?}`),
 * submits the code (`{requestId, code}`) or asks for the status (`{requestId}`); every answer and
 * every later change of a request this socket opened is a `remote:pairing:status`. A paired
 * remote's socket may press keys (`remote:key`) and is closed when the remote is revoked.
 */
export function bindRemoteConnect(hub: Hub, namespace: Namespace, run: SocketRun, owner: object): void {
  const { remotes: pairing, remote } = hub.ops;
  const log = hub.log.child({ component: 'socket.io' });
  /** The socket that opened each request: it is told of every change. */
  const openers = new Map<string, Socket>();
  /** Code submissions in flight, by request: their own answer tells the outcome, so no push doubles it. */
  const answering = new Map<string, string>();

  const statusOf = (outcome: Outcome, requestId: string | undefined) => {
    if (outcome.ok) return outcome.data as { requestId: string; status: string };
    const { error } = outcome.data;
    const known = (error.details ?? {}) as { status?: unknown };
    return { ...(requestId ? { requestId } : {}), status: typeof known.status === 'string' ? known.status : 'failed', error };
  };

  const push = async (requestId: string) => {
    const opener = openers.get(requestId);
    if (!opener || answering.get(requestId) === opener.id) return;
    const status = statusOf(await run(pairing.pairingStatus.name, { requestId }, opener, `${opener.id}:pairing:${requestId}`), requestId);
    opener.emit('remote:pairing:status', asPlainJson(status));
    if (SETTLED.has(status.status)) openers.delete(requestId);
  };
  hub.events.on(owner, 'remote.pairing_updated', (e) => {
    push(e.requestId).catch((err: unknown) => log.error({ err, requestId: e.requestId }, 'pairing status not delivered'));
  });

  namespace.on('connection', (socket) => {
    socket.on('remote:pairing', async (message: unknown, ack?: unknown) => {
      const body = (message !== null && typeof message === 'object' ? message : {}) as PairingMessage;
      const requestId = typeof body.requestId === 'string' ? body.requestId : undefined;
      const submitting = body.code !== undefined;
      const operation = submitting ? pairing.pairingSubmitCode : body.requestId !== undefined ? pairing.pairingStatus : pairing.pairingStart;
      if (submitting && requestId) answering.set(requestId, socket.id);
      let outcome: Outcome;
      try {
        outcome = await run(operation.name, body, socket, `${socket.id}:pairing`);
      } finally {
        if (submitting && requestId && answering.get(requestId) === socket.id) answering.delete(requestId);
      }
      const status = statusOf(outcome, requestId);
      if (outcome.ok && operation === pairing.pairingStart) openers.set((outcome.data as { requestId: string }).requestId, socket);
      socket.emit('remote:pairing:status', asPlainJson(status));
      if (typeof ack === 'function') ack(status);
    });
    socket.on('remote:key', async (message: unknown, ack?: unknown) => {
      const outcome = await run(remote.pressKey.name, message ?? {}, socket, `${socket.id}:key`);
      const body = outcome.ok ? { ok: true, data: outcome.data } : { ok: false, error: outcome.data.error };
      if (typeof ack === 'function') ack(body);
      else socket.emit('remote:key:result', asPlainJson(body));
    });
    socket.once('disconnect', () => {
      for (const [requestId, opener] of openers) if (opener === socket) openers.delete(requestId);
    });
  });
}
