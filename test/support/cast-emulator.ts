import { createServer, type TLSSocket } from 'node:tls';
import { generateClientIdentity } from '../../src/adapters/androidtv/identity.js';
import { CastReader, DEFAULT_MEDIA_RECEIVER, encodeCast, NS, type CastEnvelope } from '../../src/adapters/cast/cast-channel.js';
import { systemClock } from '../../src/platform/clock.js';

/**
 * A Google Cast receiver for tests: TLS on 127.0.0.1 (its own self-signed certificate), CASTV2
 * framing, the receiver namespace (GET_STATUS, LAUNCH of the Default Media Receiver, SET_VOLUME),
 * the media namespace (LOAD, PLAY, PAUSE, STOP, SEEK) and heartbeats. It shares only the wire
 * format with the hub's sender.
 */
export interface CastEmulator {
  readonly host: string;
  readonly port: number;
  readonly loads: Array<{ contentId: string; contentType: string }>;
  readonly mediaCommands: string[];
  readonly state: { running: boolean; level: number; muted: boolean; playerState: string };
  close(): Promise<void>;
}

export async function startCastEmulator(options: { host?: string } = {}): Promise<CastEmulator> {
  const identity = generateClientIdentity('Emulated Cast', systemClock);
  const loads: CastEmulator['loads'] = [];
  const mediaCommands: string[] = [];
  const state = { running: false, level: 0.5, muted: false, playerState: 'IDLE' };
  const sockets = new Set<TLSSocket>();
  const receiverStatus = () => ({
    applications: state.running ? [{ appId: DEFAULT_MEDIA_RECEIVER, displayName: 'Default Media Receiver', sessionId: 's-1', transportId: 'web-1', namespaces: [{ name: NS.media }] }] : [],
    volume: { level: state.level, muted: state.muted },
  });
  const mediaStatus = (contentId?: string) => [{ mediaSessionId: 1, playerState: state.playerState, ...(contentId ? { media: { contentId } } : {}) }];

  const server = createServer({ cert: identity.certificatePem, key: identity.privateKeyPem }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const reader = new CastReader();
    const reply = (to: CastEnvelope, data: Record<string, unknown>) => socket.write(encodeCast({ sourceId: to.destinationId, destinationId: to.sourceId, namespace: to.namespace, data }));
    socket.on('data', (chunk: Buffer) => {
      let messages: CastEnvelope[];
      try {
        messages = reader.push(chunk);
      } catch {
        return socket.destroy();
      }
      for (const m of messages) {
        const type = m.data.type;
        const requestId = m.data.requestId;
        if (m.namespace === NS.heartbeat && type === 'PING') reply(m, { type: 'PONG' });
        else if (m.namespace === NS.receiver) {
          if (type === 'LAUNCH' && m.data.appId === DEFAULT_MEDIA_RECEIVER) state.running = true;
          else if (type === 'LAUNCH') {
            reply(m, { type: 'LAUNCH_ERROR', requestId, reason: 'NOT_FOUND' });
            continue;
          } else if (type === 'SET_VOLUME') {
            const v = m.data.volume as { level?: number; muted?: boolean };
            if (typeof v.level === 'number') state.level = v.level;
            if (typeof v.muted === 'boolean') state.muted = v.muted;
          }
          reply(m, { type: 'RECEIVER_STATUS', requestId, status: receiverStatus() });
        } else if (m.namespace === NS.media) {
          if (m.destinationId !== 'web-1' || !state.running) {
            reply(m, { type: 'INVALID_REQUEST', requestId, reason: 'INVALID_COMMAND' });
            continue;
          }
          if (type === 'LOAD') {
            const media = m.data.media as { contentId: string; contentType: string };
            loads.push({ contentId: media.contentId, contentType: media.contentType });
            state.playerState = 'PLAYING';
            reply(m, { type: 'MEDIA_STATUS', requestId, status: mediaStatus(media.contentId) });
          } else {
            mediaCommands.push(String(type));
            state.playerState = type === 'PLAY' ? 'PLAYING' : type === 'PAUSE' ? 'PAUSED' : type === 'STOP' ? 'IDLE' : state.playerState;
            reply(m, { type: 'MEDIA_STATUS', requestId, status: mediaStatus() });
          }
        }
      }
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    host,
    port: (server.address() as { port: number }).port,
    loads,
    mediaCommands,
    state,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
