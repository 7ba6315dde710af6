import net from 'node:net';
import { Aedes, type AuthenticateError, type AuthErrorCode, type Client } from 'aedes';
import type { TimerHandle, Timers } from '../../platform/clock.js';

export interface EmbeddedBrokerOptions {
  host: string; // listen address, e.g. '0.0.0.0' or '127.0.0.1'
  port: number; // 0 = ephemeral
  /** Checks a client's credentials; the hub's own client and admin-created users. */
  authenticate(username: string, password: string): boolean | Promise<boolean>;
  maxPayloadBytes: number; // a PUBLISH with a larger payload is refused (not delivered), and the client is disconnected
  maxTopicChars: number; // same for a longer topic
  maxClients?: number; // default 200; further connections are refused at CONNECT
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  timers: Timers; // the hub's; they bound close()
}

export interface EmbeddedBroker {
  readonly port: number; // the bound port
  clients(): number; // connected clients now
  close(): Promise<void>; // closes the listener, disconnects every client, closes aedes; bounded (≤ 2 s) even with stuck clients
}

/** The configured broker port is taken, most likely by another MQTT broker already on this host. */
export class BrokerPortInUseError extends Error {
  override readonly name = 'BrokerPortInUseError';
  constructor(readonly port: number) {
    super(`MQTT broker port ${port} is already in use; stop the other broker or choose another port`);
  }
}

// CONNACK return codes (MQTT 3.1.1 table 3.1). aedes declares them as an ambient const enum,
// which isolatedModules cannot read, hence the numbers.
const SERVER_UNAVAILABLE = 3 as AuthErrorCode;
const BAD_USERNAME_OR_PASSWORD = 4 as AuthErrorCode;
const NOT_AUTHORIZED = 5 as AuthErrorCode;

// Remembered refusals, so a client retrying in a loop is logged once per reason; the map is
// emptied when it grows this large, which only re-logs.
const MAX_REMEMBERED_REFUSALS = 1000;

export async function startEmbeddedBroker(options: EmbeddedBrokerOptions): Promise<EmbeddedBroker> {
  const maxClients = options.maxClients ?? 200;
  const refusals = new Map<string, string>();
  const refuse = (who: string, reason: string, details: object = {}) => {
    if (refusals.get(who) === reason) return;
    if (refusals.size >= MAX_REMEMBERED_REFUSALS) refusals.clear();
    refusals.set(who, reason);
    options.log.warn({ client: who, reason, ...details }, 'MQTT client refused');
  };
  const authError = (message: string, returnCode: AuthErrorCode): AuthenticateError =>
    Object.assign(new Error(message), { returnCode });

  const broker = await Aedes.createBroker({
    authenticate(client, username, password, done) {
      if (broker.connectedClients >= maxClients) {
        refuse(client.id, 'too many clients', { maxClients });
        return done(authError('too many clients', SERVER_UNAVAILABLE), false);
      }
      if (username === undefined || username === '') {
        refuse(client.id, 'anonymous');
        return done(authError('anonymous clients are not allowed', NOT_AUTHORIZED), false);
      }
      Promise.resolve()
        .then(() => options.authenticate(username, password?.toString('utf8') ?? ''))
        .then(
          (ok) => {
            if (ok) return done(null, true);
            refuse(client.id, 'bad username or password', { username });
            done(authError('bad username or password', BAD_USERNAME_OR_PASSWORD), false);
          },
          (error: unknown) => {
            options.log.warn({ client: client.id, username, err: error }, 'MQTT credential check failed');
            done(authError('credential check failed', SERVER_UNAVAILABLE), false);
          },
        );
    },
    // An error here makes aedes drop the packet and close the connection (MQTT 3.1.1 has no
    // negative PUBACK). Also called for a client's will, whose sizes CONNECT did not check.
    authorizePublish(client, packet, done) {
      const who = client?.id ?? '(will)';
      const payloadBytes = typeof packet.payload === 'string' ? Buffer.byteLength(packet.payload) : packet.payload.length;
      let reason: string | undefined;
      if (packet.topic.startsWith('$SYS/')) reason = '$SYS topics are reserved to the broker';
      else if (packet.topic.length > options.maxTopicChars) reason = `topic longer than ${options.maxTopicChars} characters`;
      else if (payloadBytes > options.maxPayloadBytes) reason = `payload larger than ${options.maxPayloadBytes} bytes`;
      if (reason === undefined) return done(null);
      refuse(who, reason, { topic: packet.topic.slice(0, 200), payloadBytes });
      done(new Error(reason));
    },
  });

  // aedes (via mqtt-packet 9) has no packet size limit: the parser buffers a whole packet, up to
  // MQTT's 256 MiB, before authorizePublish sees it. So the broker bounds frames on the wire: the
  // largest acceptable PUBLISH (UTF-8 is at most 3 bytes per UTF-16 unit) plus room for the
  // other packets (CONNECT with credentials and will, SUBSCRIBE with many filters).
  const maxFrameBytes = options.maxPayloadBytes + 3 * options.maxTopicChars + 64 * 1024;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    // A state report forwarded right after a command must not hold the command's PUBACK back (Nagle).
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const client = broker.handle(socket);
    // aedes reads with 'readable' + read(); a 'data' listener added after it does not switch the
    // socket to flowing mode, yet sees each chunk that read() returns, before aedes parses it.
    socket.on(
      'data',
      frameGuard(maxFrameBytes, (frameBytes) => {
        refuse(clientName(client, socket), `packet larger than ${maxFrameBytes} bytes`, { frameBytes });
        socket.destroy();
      }),
    );
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new BrokerPortInUseError(options.port);
    throw error;
  }
  // After listening, a server error (e.g. EMFILE on accept) must not crash the hub.
  server.on('error', (error) => options.log.warn({ err: error }, 'MQTT broker listener error'));

  const port = (server.address() as net.AddressInfo).port;
  options.log.info({ host: options.host, port }, 'embedded MQTT broker listening');

  let closing: Promise<void> | undefined;
  return {
    port,
    clients: () => broker.connectedClients,
    close() {
      closing ??= (async () => {
        const listenerClosed = new Promise<void>((resolve) => server.close(() => resolve()));
        // aedes closes the clients it knows (those past CONNECT) and waits for them; a client
        // stuck in its will or persistence must not hold the hub's shutdown.
        await within(options.timers, 1500, new Promise<void>((resolve) => broker.close(() => resolve())));
        // What is left: connections that never sent CONNECT, or that aedes did not finish.
        for (const socket of sockets) socket.destroy();
        await within(options.timers, 500, listenerClosed);
        options.log.info({ port }, 'embedded MQTT broker closed');
      })();
      return closing;
    },
  };
}

function clientName(client: Client, socket: net.Socket): string {
  return client.id ?? `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
}

/**
 * Follows MQTT fixed headers (type byte, 1–4 byte "remaining length") across chunks and calls
 * `oversize` as soon as a frame announces more than `maxBytes`, before its body arrives.
 * Malformed lengths are left to mqtt-packet, which rejects them.
 */
function frameGuard(maxBytes: number, oversize: (frameBytes: number) => void): (chunk: Buffer) => void {
  let stage: 'type' | 'length' | 'body' = 'type';
  let length = 0;
  let multiplier = 1;
  let bodyLeft = 0;
  return (chunk) => {
    let i = 0;
    while (i < chunk.length) {
      if (stage === 'body') {
        const n = Math.min(bodyLeft, chunk.length - i);
        bodyLeft -= n;
        i += n;
        if (bodyLeft === 0) stage = 'type';
      } else if (stage === 'type') {
        i++;
        [stage, length, multiplier] = ['length', 0, 1];
      } else {
        const byte = chunk[i++]!;
        length += (byte & 0x7f) * multiplier;
        multiplier *= 128;
        if (byte & 0x80) continue;
        if (length > maxBytes) return oversize(length);
        [stage, bodyLeft] = length > 0 ? ['body', length] : ['type', 0];
      }
    }
  };
}

/** Waits for `promise`, at most `ms` on `timers`. */
async function within(timers: Timers, ms: number, promise: Promise<void>): Promise<void> {
  let timer: TimerHandle | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = timers.setTimeout(resolve, ms)))]);
  timers.clearTimeout(timer);
}
