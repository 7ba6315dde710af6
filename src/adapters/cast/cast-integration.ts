import type { BuiltInDriverContext } from '../../domain/drivers/builtin.js';
import type { ServerToDriverMessage } from '../../domain/drivers/messages.js';
import type { MediaEndpoint } from '../../domain/media/model.js';
import type { EndpointController } from '../../domain/media/ports.js';
import { CastError, CastSender } from './cast-channel.js';

type Action = Extract<ServerToDriverMessage, { type: 'ACTION' }>;

const COMMANDS = [
  {
    name: 'play_url',
    label: 'Play a URL (Default Media Receiver)',
    params: { type: 'object', properties: { url: { type: 'string' }, contentType: { type: 'string' }, title: { type: 'string' }, artist: { type: 'string' } }, required: ['url'] },
  },
  { name: 'play' },
  { name: 'pause' },
  { name: 'stop' },
  { name: 'seek', params: { type: 'object', properties: { position: { type: 'number' } }, required: ['position'] } },
  { name: 'volume_set', params: { type: 'object', properties: { volume: { type: 'number', minimum: 0, maximum: 100 } }, required: ['volume'] } },
  { name: 'mute', params: { type: 'object', properties: { muted: { type: 'boolean' } } } },
];

interface Receiver {
  endpoint: MediaEndpoint;
  sender: CastSender | null;
  /** A session being opened: a command arriving meanwhile waits for it rather than opening a second. */
  opening: Promise<CastSender> | null;
  reachable: boolean | null;
  state: Record<string, unknown>;
}

/** A content type from a URL's extension, for the receiver; audio/mpeg when unknown. */
function contentTypeOf(url: string): string {
  const ext = /\.([a-z0-9]{2,5})(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  return { mp3: 'audio/mpeg', aac: 'audio/aac', m4a: 'audio/mp4', flac: 'audio/flac', ogg: 'audio/ogg', wav: 'audio/wav', mp4: 'video/mp4', webm: 'video/webm', m3u8: 'application/x-mpegURL' }[ext ?? ''] ?? 'audio/mpeg';
}

/**
 * The built-in Google Cast integration (driver `cast`): every enabled cast endpoint (a Chromecast
 * Audio, a Nest speaker, a TV's cast receiver) is a device that plays a URL through the Default
 * Media Receiver and takes play, pause, stop, seek, volume and mute. A session is opened on the
 * first command and kept; a failure drops it (and takes the device offline) until the next command.
 */
export class CastIntegration implements EndpointController {
  readonly kind = 'cast' as const;
  readonly driverKey = 'cast';
  private context: BuiltInDriverContext | null = null;
  private readonly receivers = new Map<string, Receiver>();

  constructor(private readonly options: { timeoutMs: number }) {}

  connect(context: BuiltInDriverContext): void {
    this.context = context;
    for (const r of this.receivers.values()) {
      this.announce(r);
      this.greet(r);
    }
  }

  disconnect(): void {
    this.context = null;
    for (const r of this.receivers.values()) this.drop(r);
  }

  control(endpoint: MediaEndpoint): void {
    let r = this.receivers.get(endpoint.id);
    if (r && (r.endpoint.host !== endpoint.host || r.endpoint.port !== endpoint.port)) this.drop(r);
    if (r) r.endpoint = endpoint;
    else {
      r = { endpoint, sender: null, opening: null, reachable: null, state: {} };
      this.receivers.set(endpoint.id, r);
    }
    if (this.context) {
      this.announce(r);
      this.greet(r);
    }
  }

  release(endpointId: string): void {
    const r = this.receivers.get(endpointId);
    if (!r) return;
    this.drop(r);
    this.receivers.delete(endpointId);
    this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: endpointId });
  }

  receive(message: ServerToDriverMessage): void {
    if (message.type !== 'ACTION' && message.type !== 'COMMAND_EXECUTE') return;
    const action = message as Action;
    const r = this.receivers.get(action.deviceId);
    if (!r) {
      this.context?.fail(action.actionId, 'rejected', 'the cast receiver is not controlled (disabled)');
      return;
    }
    this.act(r, action).then(
      (result) => {
        this.setReachable(r, true);
        this.context?.emit({ type: 'ACTION_RESULT', actionId: action.actionId, ok: true, ...(result === undefined ? {} : { result }) });
      },
      (err: unknown) => {
        const failure = err instanceof CastError ? err.failure : 'protocol';
        if (failure === 'unreachable' || failure === 'timeout' || failure === 'closed') {
          this.drop(r);
          this.setReachable(r, false);
          this.context?.fail(action.actionId, failure === 'timeout' ? 'timeout' : 'unreachable', err instanceof Error ? err.message : String(err));
        } else {
          this.context?.fail(action.actionId, 'rejected', err instanceof Error ? err.message : String(err));
        }
      },
    );
  }

  private async act(r: Receiver, { command, params }: Action): Promise<unknown> {
    const sender = await this.session(r);
    switch (command) {
      case 'play_url': {
        const url = typeof params.url === 'string' ? params.url : '';
        if (!/^https?:\/\/\S+$/.test(url)) throw new CastError('rejected', 'url must be an http(s) URL the receiver can fetch');
        const contentType = typeof params.contentType === 'string' ? params.contentType : contentTypeOf(url);
        const metadata = { ...(typeof params.title === 'string' ? { title: params.title } : {}), ...(typeof params.artist === 'string' ? { artist: params.artist } : {}) };
        await sender.load(url, contentType, metadata);
        this.pushState(r, { playback: 'playing', app: 'Default Media Receiver', title: (metadata as { title?: string }).title ?? url });
        return { url, contentType };
      }
      case 'play':
      case 'pause':
      case 'stop': {
        await sender.media(command.toUpperCase() as 'PLAY' | 'PAUSE' | 'STOP');
        this.pushState(r, { playback: command === 'play' ? 'playing' : command === 'pause' ? 'paused' : 'stopped' });
        return { command };
      }
      case 'seek':
        await sender.media('SEEK', { currentTime: Number(params.position) });
        return { position: Number(params.position) };
      case 'volume_set': {
        const volume = Math.max(0, Math.min(100, Number(params.volume)));
        await sender.setVolume({ level: volume / 100 });
        this.pushState(r, { volume });
        return { volume };
      }
      case 'mute': {
        const muted = typeof params.muted === 'boolean' ? params.muted : r.state.muted !== true;
        await sender.setVolume({ muted });
        this.pushState(r, { muted });
        return { muted };
      }
      default:
        throw new CastError('rejected', `unknown command ${command}`);
    }
  }

  private session(r: Receiver): Promise<CastSender> {
    if (r.sender) return Promise.resolve(r.sender);
    r.opening ??= (async () => {
      const sender = new CastSender({ host: r.endpoint.host, port: r.endpoint.port, timeoutMs: this.options.timeoutMs });
      await sender.open();
      // What the receiver says of itself: volume (so volume steps work), mute, the app in front.
      const status = await sender.receiverStatus().catch((err: unknown) => {
        sender.close();
        throw err;
      });
      r.sender = sender;
      this.pushState(r, { ...(status.volume !== null ? { volume: status.volume } : {}), ...(status.muted !== null ? { muted: status.muted } : {}), app: status.app ?? 'Idle' });
      return sender;
    })().finally(() => {
      r.opening = null;
    });
    return r.opening;
  }

  /** Opens the session once the device is known, so its state and presence are read before the first command. */
  private greet(r: Receiver): void {
    this.session(r).then(
      () => this.setReachable(r, true),
      () => {
        this.drop(r);
        this.setReachable(r, false);
      },
    );
  }

  private announce(r: Receiver): void {
    this.context?.emit({
      type: 'DEVICE_DISCOVERED',
      device: {
        id: r.endpoint.id,
        name: r.endpoint.label ?? r.endpoint.name,
        category: 'media_player',
        capabilities: ['media', 'volume'],
        commands: COMMANDS,
        properties: { host: r.endpoint.host, port: r.endpoint.port, ...(r.endpoint.model ? { model: r.endpoint.model } : {}) },
      },
    });
    // Known from discovery; online once a command reached it.
    if (r.reachable !== true) this.context?.setOnline(r.endpoint.id, false);
  }

  private pushState(r: Receiver, change: Record<string, unknown>): void {
    r.state = { ...r.state, ...change };
    this.context?.emit({ type: 'STATE_UPDATE', deviceId: r.endpoint.id, state: change });
  }

  private setReachable(r: Receiver, reachable: boolean): void {
    if (r.reachable === reachable) return;
    r.reachable = reachable;
    this.context?.setOnline(r.endpoint.id, reachable);
  }

  private drop(r: Receiver): void {
    r.sender?.close();
    r.sender = null;
  }
}
