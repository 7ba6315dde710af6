import type http from 'node:http';
import { Server, type Namespace, type Socket } from 'socket.io';
import { Compile } from 'typebox/compile';
import { OS_API_SCOPE } from '../../domain/auth/model.js';
import { HUB_COMMANDS, type HubCommandName } from '../../domain/protocol/commands.js';
import type { FeedItem } from '../../domain/protocol/feed.js';
import type { Hub } from '../../hub.js';
import { DomainError } from '../../platform/errors.js';
import type { Operation, Principal } from '../../platform/operations.js';
import { Newcomers, type FeedFanout } from '../realtime/feed-fanout.js';
import { batchWebSocketFlushes } from './batched-writes.js';
import { asPlainJson, plainJsonParser } from './json-packets.js';

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

  const authenticate = (socket: Socket, next: (err?: Error) => void) => {
    const fromAuth = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
    const fromQuery = socket.handshake.query.accessToken;
    const token = typeof fromAuth === 'string' ? fromAuth : typeof fromQuery === 'string' ? fromQuery : undefined;
    if (!token) return next(authError('AUTH_REQUIRED', 'Connect with auth: {token: <access token>}.'));
    const principal = hub.auth.authenticate(token, ['access']);
    if (!principal) return next(authError('INVALID_TOKEN', 'The access token is unknown, expired or revoked.'));
    if (principal.scope !== OS_API_SCOPE) return next(authError('INSUFFICIENT_SCOPE', `Socket namespaces need a token with scope ${OS_API_SCOPE}.`));
    socket.data.principal = principal;
    next();
  };
  // The main namespace carries nothing, but it must not be an unauthenticated way in either.
  io.of('/').use(authenticate);
  const nsp = Object.fromEntries(Object.entries(NAMESPACES).map(([key, name]) => [key, io.of(name).use(authenticate)])) as Record<keyof typeof NAMESPACES, Namespace>;

  // Changes still on their way when a socket connected were in its snapshot (device state) or
  // happened before it came (hub events): they are not sent to it.
  const joined = { deviceState: new Newcomers<string>(), hubProtocol: new Newcomers<string>() };
  const track = (socket: Socket, newcomers: Newcomers<string>) => {
    newcomers.add(socket.id, hub.feed.lastSeq);
    socket.once('disconnect', () => newcomers.remove(socket.id));
  };
  const broadcast = (namespace: Namespace, newcomers: Newcomers<string>, event: string, item: FeedItem) => {
    const covered = newcomers.having(item);
    (covered.length > 0 ? namespace.except(covered) : namespace).emit(event, asPlainJson(item.data));
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
  hub.events.on(owner, 'design.published', (e) => nsp.designer.emit('designer:published', e.design));
  hub.events.on(owner, 'preferences.updated', (e) => nsp.designer.emit('designer:refresh', { reason: 'preferences', at: e.at }));
  hub.events.on(owner, 'ir.transmitted', (e) => nsp.irTest.emit('ir:data', e));

  nsp.deviceState.on('connection', (socket) => {
    track(socket, joined.deviceState);
    for (const device of hub.devices.registry.list()) {
      socket.emit('device:state:snapshot', asPlainJson({ deviceId: device.id, state: hub.devices.state.get(device.id).state }));
    }
  });

  nsp.designer.on('connection', (socket) => socket.emit('designer:published', hub.home.design.live()));

  const validators = new Map<string, ReturnType<typeof Compile>>();
  const validatorFor = (op: Operation) => {
    let v = validators.get(op.name);
    if (!v) {
      v = Compile(op.input);
      validators.set(op.name, v);
    }
    return v;
  };

  type Outcome = { ok: true; data: unknown } | { ok: false; data: { error: { code: string; message: string; details?: unknown } } };

  /** Validates a payload against the operation's input schema and runs it, as REST would. */
  const run = async (op: Operation, payload: unknown, socket: Socket, requestId: string): Promise<Outcome> => {
    const validator = validatorFor(op);
    if (!validator.Check(payload)) {
      const details = validator.Errors(payload).slice(0, 5).map((e) => ({ field: `payload${e.instancePath.replace(/\//g, '.')}`, message: e.message }));
      return { ok: false, data: { error: { code: 'INVALID_PAYLOAD', message: `${details[0]?.field ?? 'payload'} ${details[0]?.message ?? 'is invalid'}`, details } } };
    }
    try {
      const data = await op.handler(payload as never, { principal: socket.data.principal as Principal, clientAddress: socket.handshake.address, requestId });
      return { ok: true, data };
    } catch (err) {
      if (err instanceof DomainError) return { ok: false, data: { error: { code: err.code, message: err.message, ...(err.details === undefined ? {} : { details: err.details }) } } };
      log.error({ err, operation: op.name }, 'socket operation failed');
      return { ok: false, data: { error: { code: 'INTERNAL_ERROR', message: 'The command failed unexpectedly.' } } };
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
      if (!operationName || !hub.operations.has(operationName)) {
        return answer({ ok: false, data: { error: { code: 'UNKNOWN_COMMAND', message: `Unknown command ${JSON.stringify(command)}; GET_PROTOCOL_CAPABILITIES lists them.` } } });
      }
      answer(await run(hub.operations.get(operationName), message.payload ?? {}, socket, `${socket.id}:${String(requestId ?? command)}`));
    });
  });

  nsp.irTest.on('connection', (socket) => {
    socket.on('ir:send', async (message: unknown, ack?: unknown) => {
      const outcome = await run(hub.ops.devices.testIr, message ?? {}, socket, `${socket.id}:ir:send`);
      const body = outcome.ok ? { ok: true, data: outcome.data } : { ok: false, error: outcome.data.error };
      if (typeof ack === 'function') ack(body);
      else socket.emit('ir:result', body);
    });
  });

  // Remote pairing (remote:pairing → remote:pairing:status) arrives with the remote API; until
  // then the namespace accepts authenticated connections and says so to a pairing request.
  nsp.remoteConnect.on('connection', (socket) => {
    socket.on('remote:pairing', () => socket.emit('remote:pairing:status', { status: 'unavailable', message: 'Remote pairing is not enabled on this hub yet.' }));
  });

  const sweep = setInterval(() => {
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
  sweep.unref();

  return {
    io,
    async close() {
      clearInterval(sweep);
      fanout.unsubscribe(owner);
      hub.events.removeOwner(owner);
      io.disconnectSockets(true);
      // Not io.close(): it would close the HTTP server, which belongs to Fastify.
      io.engine.close();
    },
  };
}

export type SocketSurface = ReturnType<typeof createSocketSurface>;
