import type http from 'node:http';
import { createRequire } from 'node:module';
import type { createAdapter as CreateAdapter } from '@socket.io/postgres-adapter';
import { Server, type Namespace, type Socket } from 'socket.io';
import { HUB_COMMANDS, type HubCommandName } from '../../domain/protocol/command-table.js';
import { CREDENTIALS_CHANGED } from '../../domain/events.js';
import type { FeedItem } from '../../domain/protocol/feed.js';
import type { Hub } from '../../hub.js';
import { DomainError } from '../../platform/errors.js';
import type { Caller, Credential, Scope } from '../../platform/operations.js';
import { ADMIN_COOKIE } from '../http/credentials.js';
import { Newcomers, type FeedFanout } from '../realtime/feed-fanout.js';
import { batchWebSocketFlushes } from './batched-writes.js';
import { HUB_PROTOCOL_CODE_FOR, hubProtocolErrors } from './failures.js';
import { asPlainJson, plainJsonParser } from './json-packets.js';
import { bindRemoteConnect } from './remote-connect.js';

export const NAMESPACES = {
  deviceState: '/socket/device-state',
  hubProtocol: '/socket/hub-protocol',
  remoteConnect: '/socket/remote-connect',
  designer: '/socket/designer',
  irTest: '/socket/device-ir-test',
} as const;

/** Packets a client may have waiting before it counts as too slow and is disconnected. */
const MAX_PENDING_PACKETS = 5000;

interface HubCommandMessage {
  command?: unknown;
  payload?: unknown;
  requestId?: unknown;
}

export type Outcome = { ok: true; data: unknown } | { ok: false; data: { error: { code: string; message: string; details?: unknown } } };
/** Runs an operation through the registry for a socket, as REST does, and says how it went. */
export type SocketRun = (operation: string, payload: unknown, socket: Socket, requestId: string) => Promise<Outcome>;

function authError(code: string, message: string): Error & { data: { code: string; message: string } } {
  return Object.assign(new Error(message), { data: { code, message } });
}

/**
 * Socket.IO on the service's HTTP server. Every namespace authenticates in the handshake
 * (`auth: {token}` or `?accessToken=`); the namespaces adapt the change feed and the operation
 * registry, and hold no logic of their own.
 */
export function createSocketSurface(hub: Hub, server: http.Server, fanout: FeedFanout) {
  batchWebSocketFlushes();
  const log = hub.log.child({ component: 'socket.io' });
  const io = new Server(server, {
    path: '/socket.io',
    serveClient: false,
    parser: plainJsonParser,
    // The driver WebSocket shares this server: upgrades that are not Socket.IO's are left alone.
    destroyUpgrade: false,
    maxHttpBufferSize: 1024 * 1024,
    pingInterval: 25_000,
    pingTimeout: 20_000,
  });
  // Several instances on one PostgreSQL: rooms and namespace broadcasts reach every instance's
  // sockets through the database (LISTEN/NOTIFY), as the Socket.IO PostgreSQL adapter does it.
  const pool = hub.storage.pool;
  // Its LISTEN connection comes from the storage's pool, which guards every connection it makes
  // against a dropped one (src/storage/postgres.ts); the adapter reconnects by itself.
  if (pool) {
    // Loaded only then: a hub on SQLite does not pay for it at start.
    const { createAdapter } = createRequire(import.meta.url)('@socket.io/postgres-adapter') as { createAdapter: typeof CreateAdapter };
    io.adapter(createAdapter(pool, { errorHandler: (err) => log.warn({ err }, 'socket.io cluster adapter error') }));
  }

  // The admin panel's pages connect with their session cookie (SameSite=Strict: another site's
  // page cannot make the browser send it, so there is nothing to forge).
  const adminSessionOf = (socket: Socket): string | undefined => {
    const header = socket.handshake.headers.cookie;
    const match = header ? new RegExp(`(?:^|;\\s*)${ADMIN_COOKIE}=([^;]+)`).exec(header) : null;
    return match ? decodeURIComponent(match[1]!) : undefined;
  };
  // Socket namespaces serve the OS API's household administration (CONTRACT: handshake auth).
  const admits: readonly Scope[] = ['os_api_admin'];
  const credentialOf = (socket: Socket, accepted = admits): Credential | undefined => {
    const fromAuth = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
    const fromQuery = socket.handshake.query.accessToken;
    const token = typeof fromAuth === 'string' ? fromAuth : typeof fromQuery === 'string' ? fromQuery : accepted.includes('os_api_admin') ? adminSessionOf(socket) : undefined;
    return token ? { token, admits: accepted } : undefined;
  };
  // Every call presents the handshake's token again, so a revoked token stops working at once.
  const callerOf = (socket: Socket, requestId: string): Caller => ({
    credential: socket.data.credential as Credential | undefined,
    clientAddress: socket.handshake.address,
    requestId,
  });
  const authenticateWith = (accepted: readonly Scope[], tokenOptional: boolean) => (socket: Socket, next: (err?: Error) => void) => {
    const credential = credentialOf(socket, accepted);
    if (!credential && tokenOptional) return next();
    try {
      hub.operations.authenticate(credential);
      socket.data.credential = credential;
      next();
    } catch (err) {
      if (!(err instanceof DomainError)) return next(err as Error);
      next(authError(err.code, err.message));
    }
  };
  const authenticate = authenticateWith(admits, false);
  // A remote pairs before it holds a token: without one it may only pair; a token it presents must be good.
  const remoteAuthenticate = authenticateWith(['remote', 'os_api_admin'], true);
  // The main namespace carries nothing, but it must not be an unauthenticated way in either.
  io.of('/').use(authenticate);
  const nsp = Object.fromEntries(
    Object.entries(NAMESPACES).map(([key, name]) => [key, io.of(name).use(key === 'remoteConnect' ? remoteAuthenticate : authenticate)]),
  ) as Record<keyof typeof NAMESPACES, Namespace>;

  // Changes still on their way when a socket connected were in its snapshot (device state) or
  // happened before it came (hub events): they are not sent to it.
  const joined = { deviceState: new Newcomers<string>(), hubProtocol: new Newcomers<string>() };
  const track = (socket: Socket, newcomers: Newcomers<string>) => {
    newcomers.add(socket.id, hub.feed.lastSeq);
    socket.once('disconnect', () => newcomers.remove(socket.id));
  };
  const broadcast = (namespace: Namespace, newcomers: Newcomers<string>, event: string, item: FeedItem) => {
    const covered = newcomers.having(item);
    // `local`: every instance's own feed carries the change to its own sockets (replicated changes
    // included), with per-instance newcomer bookkeeping; through the adapter they would arrive twice.
    (covered.length > 0 ? namespace.local.except(covered) : namespace.local).emit(event, asPlainJson(item.data));
  };
  const owner = {};
  fanout.subscribe(owner, (items) => {
    // Socket.IO encodes a broadcast even when nobody is there to receive it.
    const toHub = nsp.hubProtocol.sockets.size > 0;
    const toDeviceState = nsp.deviceState.sockets.size > 0;
    for (const item of items) {
      try {
        if (item.kind === 'event') {
          if (toHub) broadcast(nsp.hubProtocol, joined.hubProtocol, 'hub:event', item);
        } else if (toDeviceState) {
          broadcast(nsp.deviceState, joined.deviceState, 'device:state:update', item);
        }
      } catch (err) {
        log.error({ err, seq: item.seq }, 'socket delivery failed');
      }
    }
    joined.deviceState.clear();
    joined.hubProtocol.clear();
  });
  // A live socket keeps its handshake's rights only while its token still authenticates.
  for (const event of CREDENTIALS_CHANGED) {
    hub.events.on(owner, event, () => {
      for (const namespace of [io.of('/'), ...Object.values(nsp)]) {
        for (const socket of namespace.sockets.values()) {
          const credential = socket.data.credential as Credential | undefined;
          if (credential && !hub.operations.stillAuthenticates(credential)) socket.disconnect(true);
        }
      }
    });
  }
  // Namespace broadcasts: the Socket.IO adapter carries them to every instance's sockets (the
  // PostgreSQL adapter in a cluster), so only the instance where the change happened sends them.
  hub.events.on(owner, 'design.published', (e) => nsp.designer.emit('designer:published', e.design), { origin: 'local' });
  hub.events.on(owner, 'preferences.updated', (e) => nsp.designer.emit('designer:refresh', { reason: 'preferences', at: e.at }), { origin: 'local' });
  hub.events.on(owner, 'ir.transmitted', (e) => nsp.irTest.emit('ir:data', e), { origin: 'local' });

  nsp.deviceState.on('connection', async (socket) => {
    track(socket, joined.deviceState);
    const outcome = await run(hub.ops.state.snapshot.name, {}, socket, `${socket.id}:snapshot`);
    if (!outcome.ok) return socket.disconnect(true);
    const { devices } = outcome.data as { devices: Record<string, { state: Record<string, unknown> }> };
    for (const deviceId in devices) socket.emit('device:state:snapshot', asPlainJson({ deviceId, state: devices[deviceId]!.state }));
  });

  nsp.designer.on('connection', async (socket) => {
    const outcome = await run(hub.ops.home.liveDesign.name, {}, socket, `${socket.id}:design`);
    if (outcome.ok) socket.emit('designer:published', outcome.data);
  });


  /** Runs an operation through the registry, as REST does, and says how it went. */
  const run: SocketRun = async (operation, payload, socket, requestId) => {
    try {
      return { ok: true, data: await hub.operations.invoke(operation, { json: payload, jsonLabel: 'payload' }, callerOf(socket, requestId)) };
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const code = HUB_PROTOCOL_CODE_FOR.get(err.code) ?? err.code;
      return { ok: false, data: { error: { code, message: err.message, ...(err.details === undefined ? {} : { details: err.details }) } } };
    }
  };

  nsp.hubProtocol.on('connection', (socket) => {
    track(socket, joined.hubProtocol);
    socket.on('hub:command', async (message: HubCommandMessage, ack?: unknown) => {
      const command = typeof message?.command === 'string' ? message.command : '';
      const requestId = typeof message?.requestId === 'string' || typeof message?.requestId === 'number' ? message.requestId : undefined;
      const answer = ({ ok, data }: Outcome) => {
        const response = asPlainJson({ command, data, ok, ...(requestId === undefined ? {} : { requestId }) });
        socket.emit('hub:response', response);
        if (typeof ack === 'function') ack(response);
      };
      const operationName = Object.hasOwn(HUB_COMMANDS, command) ? HUB_COMMANDS[command as HubCommandName] : undefined;
      if (!operationName) {
        return answer({ ok: false, data: { error: hubProtocolErrors.UNKNOWN_COMMAND.info({ command: JSON.stringify(command) }) } });
      }
      answer(await run(operationName, message.payload ?? {}, socket, `${socket.id}:${String(requestId ?? command)}`));
    });
  });

  nsp.irTest.on('connection', (socket) => {
    socket.on('ir:send', async (message: unknown, ack?: unknown) => {
      const outcome = await run(hub.ops.devices.testIr.name, message ?? {}, socket, `${socket.id}:ir:send`);
      const body = outcome.ok ? { ok: true, data: outcome.data } : { ok: false, error: outcome.data.error };
      if (typeof ack === 'function') ack(body);
      else socket.emit('ir:result', body);
    });
  });

  bindRemoteConnect(hub, nsp.remoteConnect, run, owner);

  const sweep = hub.timers.setInterval(() => {
    for (const namespace of Object.values(nsp)) {
      for (const socket of namespace.sockets.values()) {
        const pending = (socket.conn as unknown as { writeBuffer: unknown[] }).writeBuffer.length;
        if (pending > MAX_PENDING_PACKETS) {
          log.warn({ namespace: namespace.name, pending }, 'socket client too slow; disconnected');
          socket.disconnect(true);
        }
      }
    }
  }, 1000);

  return {
    io,
    async close() {
      hub.timers.clearInterval(sweep);
      fanout.unsubscribe(owner);
      hub.events.removeOwner(owner);
      io.disconnectSockets(true);
      // Not io.close(): it would close the HTTP server, which belongs to Fastify. The adapters
      // are closed as it would (the cluster adapter holds a database connection and timers).
      const namespaces = (io as unknown as { _nsps: Map<string, Namespace> })._nsps;
      await Promise.allSettled([...namespaces.values()].map(async (nsp) => nsp.adapter.close()));
      io.engine.close();
    },
  };
}

export type SocketSurface = ReturnType<typeof createSocketSurface>;
