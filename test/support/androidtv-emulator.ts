import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type protobuf from 'protobufjs';
import { generateClientIdentity } from '../../src/adapters/androidtv/identity.js';
import { FrameReader, frame, OuterMessage, RemoteMessage } from '../../src/adapters/androidtv/messages.js';
import { systemClock } from '../../src/platform/clock.js';

/**
 * The TV's side of Android TV Remote v2, for tests: a pairing server and a remote server, TLS on
 * 127.0.0.1, each asking for the client's certificate. Written from the protocol (polo pairing,
 * the remote channel); it shares only the wire message definitions with the hub's adapter.
 *
 * Pairing shows a fresh code per exchange (`shownCode()`): its first byte is the first byte of
 * SHA-256(client n, e, TV n, e, last two code bytes), as a TV computes it. A right secret gets
 * SecretAck and the client's certificate is remembered; a wrong one gets status 402 and the
 * connection closes. The remote server closes at once on a certificate it has not paired, runs
 * configure / set-active, then reports power, volume and the app in front, and follows keys.
 */
export interface AndroidTvEmulator {
  readonly host: '127.0.0.1';
  readonly pairingPort: number;
  readonly remotePort: number;
  shownCode(): string | null;
  readonly pairedClients: string[];
  readonly keys: number[];
  readonly appLinks: string[];
  readonly state: { power: boolean; volume: number; muted: boolean; app: string };
  /** Remote connections open now. */
  connections(): number;
  setPower(on: boolean): void;
  setVolume(level: number, muted?: boolean): void;
  setApp(pkg: string): void;
  /** Sends a ping to every remote client; resolves with how many answered with the same value. */
  ping(): Promise<number>;
  /** Sends raw bytes to every remote client (garbage tests). */
  sendRaw(bytes: Buffer): void;
  close(): Promise<void>;
}

const OK = 200;
const BAD_SECRET = 402;
const VOLUME_MAX = 100;
const FEATURES = 1 | 2 | 4 | 32 | 64 | 512;

function rsa(cert: X509Certificate): Buffer[] {
  const jwk = cert.publicKey.export({ format: 'jwk' });
  return [Buffer.from(jwk.n as string, 'base64url'), Buffer.from(jwk.e as string, 'base64url')];
}

function hashFor(client: X509Certificate, tv: X509Certificate, lastTwoBytes: Buffer): Buffer {
  const h = createHash('sha256');
  for (const part of [...rsa(client), ...rsa(tv)]) h.update(part);
  return h.update(lastTwoBytes).digest();
}

type Decoded = Record<string, Record<string, unknown> | undefined>;

/** Calls `handle` with each decoded message from the client; a bad frame or message ends the connection. */
function onMessages(socket: TLSSocket, type: protobuf.Type, handle: (m: Decoded) => void): void {
  const reader = new FrameReader();
  socket.on('data', (chunk: Buffer) => {
    try {
      for (const bytes of reader.push(chunk)) handle(type.toObject(type.decode(bytes)) as Decoded);
    } catch {
      socket.destroy();
    }
  });
}

export async function startAndroidTvEmulator(options: { name?: string; silentPairing?: boolean } = {}): Promise<AndroidTvEmulator> {
  const identity = generateClientIdentity(options.name ?? 'Emulated TV', systemClock);
  const tvCert = new X509Certificate(identity.certificatePem);
  const paired = new Set<string>();
  const pairedClients: string[] = [];
  const keys: number[] = [];
  const appLinks: string[] = [];
  const state = { power: true, volume: 20, muted: false, app: 'com.google.android.tvlauncher' };
  let code: string | null = null;
  const remotes = new Set<TLSSocket>();
  const pings = new Map<TLSSocket, (val: number) => void>();

  const tlsOptions = { cert: identity.certificatePem, key: identity.privateKeyPem, requestCert: true, rejectUnauthorized: false };

  const pairing = createServer(tlsOptions, (socket) => {
    socket.on('error', () => undefined);
    if (options.silentPairing) return;
    const client = socket.getPeerX509Certificate();
    if (!client) return socket.destroy();
    let expected: Buffer | null = null;
    const reply = (m: Record<string, unknown>) => socket.write(frame(OuterMessage, { protocolVersion: 2, status: OK, ...m }));
    onMessages(socket, OuterMessage, (m) => {
      if (m.pairingRequest) reply({ pairingRequestAck: { serverName: options.name ?? 'Emulated TV' } });
      else if (m.options) reply({ options: { preferredRole: 1, inputEncodings: [{ type: 3, symbolLength: 6 }] } });
      else if (m.configuration) {
        const lastTwo = randomBytes(2);
        expected = hashFor(client, tvCert, lastTwo);
        code = (expected.subarray(0, 1).toString('hex') + lastTwo.toString('hex')).toUpperCase();
        reply({ configurationAck: {} });
      } else if (m.secret) {
        const secret = m.secret.secret as Uint8Array | undefined;
        if (expected && secret && Buffer.from(secret).equals(expected)) {
          paired.add(client.fingerprint256);
          pairedClients.push(client.fingerprint256);
          code = null;
          reply({ secretAck: { secret: expected } });
        } else {
          socket.end(frame(OuterMessage, { protocolVersion: 2, status: BAD_SECRET }));
        }
      }
    });
  });

  const push = (m: Record<string, unknown>) => {
    for (const socket of remotes) socket.write(frame(RemoteMessage, m));
  };
  const pushVolume = () => push({ remoteSetVolumeLevel: { playerModel: 'Emulated TV', volumeMax: VOLUME_MAX, volumeLevel: state.volume, volumeMuted: state.muted } });
  const pushPower = () => push({ remoteStart: { started: state.power } });
  const pushApp = () => push({ remoteImeKeyInject: { appInfo: { appPackage: state.app } } });

  const remote = createServer(tlsOptions, (socket) => {
    socket.on('error', () => undefined);
    const client = socket.getPeerX509Certificate();
    // A TV ends the connection of a client it has not paired with.
    if (!client || !paired.has(client.fingerprint256)) return socket.destroy();
    const send = (m: Record<string, unknown>) => socket.write(frame(RemoteMessage, m));
    send({ remoteConfigure: { code1: FEATURES, deviceInfo: { model: 'Emulated TV', vendor: 'Test', unknown1: 1, unknown2: '1', packageName: 'androidtvremote', appVersion: '5.0' } } });
    socket.on('close', () => {
      remotes.delete(socket);
      pings.delete(socket);
    });
    onMessages(socket, RemoteMessage, (m) => {
      if (m.remoteConfigure) send({ remoteSetActive: {} });
      else if (m.remoteSetActive) {
        remotes.add(socket);
        send({ remoteStart: { started: state.power } });
        send({ remoteSetVolumeLevel: { playerModel: 'Emulated TV', volumeMax: VOLUME_MAX, volumeLevel: state.volume, volumeMuted: state.muted } });
        send({ remoteImeKeyInject: { appInfo: { appPackage: state.app } } });
      } else if (m.remotePingResponse) pings.get(socket)?.(Number(m.remotePingResponse.val1 ?? 0));
      else if (m.remoteKeyInject) {
        const key = Number(m.remoteKeyInject.keyCode ?? 0);
        keys.push(key);
        if (key === 26) {
          state.power = !state.power;
          pushPower();
        } else if (key === 24 || key === 25) {
          state.volume = Math.max(0, Math.min(VOLUME_MAX, state.volume + (key === 24 ? 1 : -1)));
          state.muted = false;
          pushVolume();
        } else if (key === 164) {
          state.muted = !state.muted;
          pushVolume();
        }
      } else if (m.remoteAppLinkLaunchRequest) {
        const link = String(m.remoteAppLinkLaunchRequest.appLink ?? '');
        appLinks.push(link);
        const pkg = /[?&]id=([^&]+)/.exec(link)?.[1];
        state.app = pkg ?? link;
        pushApp();
      }
    });
  });

  const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  const [pairingPort, remotePort] = [await listen(pairing), await listen(remote)];
  const sockets = new Set<TLSSocket>();
  for (const server of [pairing, remote]) server.on('secureConnection', (s: TLSSocket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  return {
    host: '127.0.0.1',
    pairingPort,
    remotePort,
    shownCode: () => code,
    pairedClients,
    keys,
    appLinks,
    state,
    connections: () => remotes.size,
    setPower(on) {
      state.power = on;
      pushPower();
    },
    setVolume(level, muted = state.muted) {
      state.volume = level;
      state.muted = muted;
      pushVolume();
    },
    setApp(pkg) {
      state.app = pkg;
      pushApp();
    },
    async ping() {
      const val = Math.floor(Math.random() * 1e6);
      const answers = [...remotes].map(
        (socket) =>
          new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), 2000);
            pings.set(socket, (got) => {
              clearTimeout(timer);
              resolve(got === val);
            });
            socket.write(frame(RemoteMessage, { remotePingRequest: { val1: val, val2: 0 } }));
          }),
      );
      return (await Promise.all(answers)).filter(Boolean).length;
    },
    sendRaw(bytes) {
      for (const socket of remotes) socket.write(bytes);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all([pairing, remote].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}
