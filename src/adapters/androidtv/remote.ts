import type { Timers } from '../../platform/clock.js';
import type { ClientIdentity } from './identity.js';
import { ANDROID_TV_KEYS, CLIENT_FEATURES, DIRECTION, RemoteMessage, type AndroidTvKey, type KeyDirection } from './messages.js';
import { AndroidTvError, FramedSession } from './session.js';

export const ANDROID_TV_REMOTE_PORT = 6466;

export interface AndroidTvState {
  poweredOn?: boolean;
  /** Package of the app in front, e.g. `com.netflix.ninja`. */
  currentApp?: string;
  volume?: { level: number; max: number; muted: boolean };
}

type Message = Record<string, unknown>;
const object = (v: unknown): Message | undefined => (v && typeof v === 'object' ? (v as Message) : undefined);

/**
 * The remote channel of an Android TV (port 6466), with the identity the TV accepted at pairing:
 * configure and set-active handshake, pings answered, power, current app and volume followed,
 * keys and app links sent. A TV that does not know the identity ends the connection before the
 * handshake completes: `rejected`.
 */
export class AndroidTvRemote {
  readonly state: AndroidTvState = {};
  private session: FramedSession | null = null;
  private started = false;
  private closedByUs = false;

  constructor(
    private readonly o: {
      host: string;
      port?: number;
      identity: ClientIdentity;
      timeoutMs?: number;
      /** Bounds the connection and the handshake. */
      timers: Timers;
      onState?: (state: AndroidTvState) => void;
      onClose?: (error: AndroidTvError) => void;
    },
  ) {}

  get connected(): boolean {
    return this.started && this.session?.isOpen === true;
  }

  /** Connects and completes the handshake; resolves with the first state (power) the TV sends. */
  connect(): Promise<AndroidTvState> {
    const timeoutMs = this.o.timeoutMs ?? 10_000;
    this.closedByUs = false;
    return new Promise((resolve, reject) => {
      let settled = false;
      const timer = this.o.timers.setTimeout(() => {
        if (settled) return;
        settled = true;
        reject(new AndroidTvError('timeout', `the TV did not complete the remote handshake within ${timeoutMs} ms`));
        session.close();
      }, timeoutMs);
      const session = new FramedSession(
        RemoteMessage,
        {
          onMessage: (m) => {
            this.handle(m, session);
            if (!settled && this.started) {
              settled = true;
              this.o.timers.clearTimeout(timer);
              resolve({ ...this.state });
            }
          },
          onEnd: (error) => {
            this.started = false;
            if (!settled) {
              settled = true;
              this.o.timers.clearTimeout(timer);
              // Closed before the handshake: the TV does not know this client.
              reject(error.failure === 'closed' ? new AndroidTvError('rejected', 'the TV closed the connection before the handshake: pair again') : error);
              return;
            }
            if (!this.closedByUs) this.o.onClose?.(error);
          },
        },
        this.o.timers,
      );
      this.session = session;
      session.open({ host: this.o.host, port: this.o.port ?? ANDROID_TV_REMOTE_PORT, ...this.o.identity, timeoutMs }).catch(() => {
        // onEnd has reported it.
      });
    });
  }

  async sendKey(key: AndroidTvKey | number, direction: KeyDirection = 'SHORT'): Promise<void> {
    const keyCode = typeof key === 'number' ? key : ANDROID_TV_KEYS[key];
    this.require().send({ remoteKeyInject: { keyCode, direction: DIRECTION[direction] } });
  }

  async launchAppLink(link: string): Promise<void> {
    this.require().send({ remoteAppLinkLaunchRequest: { appLink: link } });
  }

  close(): void {
    this.closedByUs = true;
    this.started = false;
    this.session?.close();
    this.session = null;
  }

  private require(): FramedSession {
    if (!this.session || !this.connected) throw new AndroidTvError('closed', 'the remote channel is not connected');
    return this.session;
  }

  private handle(m: Message, session: FramedSession): void {
    const configure = object(m.remoteConfigure);
    if (configure) {
      const offered = typeof configure.code1 === 'number' ? configure.code1 : 0;
      session.send({ remoteConfigure: { code1: CLIENT_FEATURES & offered, deviceInfo: { model: 'Home Control Service', vendor: 'home-control-service', unknown1: 1, unknown2: '1', packageName: 'atvremote', appVersion: '1.0.0' } } });
      return;
    }
    if (object(m.remoteSetActive)) {
      session.send({ remoteSetActive: { active: CLIENT_FEATURES } });
      return;
    }
    const ping = object(m.remotePingRequest);
    if (ping) {
      session.send({ remotePingResponse: { val1: typeof ping.val1 === 'number' ? ping.val1 : 0 } });
      return;
    }
    const start = object(m.remoteStart);
    if (start) {
      this.started = true;
      this.update({ poweredOn: start.started === true });
      return;
    }
    const ime = object(m.remoteImeKeyInject);
    const app = object(ime?.appInfo)?.appPackage;
    if (typeof app === 'string' && app !== '') {
      this.update({ currentApp: app });
      return;
    }
    const volume = object(m.remoteSetVolumeLevel);
    if (volume) {
      this.update({ volume: { level: Number(volume.volumeLevel ?? 0), max: Number(volume.volumeMax ?? 100), muted: volume.volumeMuted === true } });
    }
  }

  private update(change: AndroidTvState): void {
    Object.assign(this.state, change);
    if (this.started) this.o.onState?.({ ...this.state });
  }
}
