import type { Timers } from '../../platform/clock.js';
import { NetworkFailureError, rejected } from '../../platform/network-failures.js';
import { DeviceAvailability, runBuiltInAction, type ActionSpec, type BuiltInDriverContext, type IntegrationStatus } from '../../domain/drivers/builtin.js';
import type { ServerToDriverMessage } from '../../domain/drivers/messages.js';
import type { MediaEndpoint } from '../../domain/media/model.js';
import type { EndpointController } from '../../domain/media/ports.js';
import { CastSender } from './cast-channel.js';

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
  readonly name = 'Google Cast';
  private context: BuiltInDriverContext | null = null;
  private readonly receivers = new Map<string, Receiver>();
  private readonly availability = new DeviceAvailability();
  private readonly actions: ActionSpec<Receiver>;

  constructor(private readonly options: { timeoutMs: number; timers: Timers }) {
    this.actions = {
      context: () => this.context,
      timers: options.timers,
      // A first command opens the session (connect, receiver status) before it is sent: three steps.
      timeoutMs: options.timeoutMs * 3,
      target: (deviceId) => {
        const r = this.receivers.get(deviceId);
        if (!r) throw new NetworkFailureError('unreachable', 'the cast receiver is not controlled (disabled)');
        return r;
      },
      handler: (command) => {
        const handler = COMMAND_HANDLERS[command];
        return handler ? (r, params) => this.run(r, handler, params) : undefined;
      },
      settled: (r, outcome) => {
        if (this.receivers.get(r.endpoint.id) !== r) return;
        if (outcome.ok) return void this.availability.set(r.endpoint.id, true);
        if (outcome.failure === 'unreachable' || outcome.failure === 'timeout') {
          this.drop(r);
          this.availability.set(r.endpoint.id, false, outcome.error);
        }
      },
    };
  }

  connect(context: BuiltInDriverContext): void {
    this.context = context;
    this.availability.bind(context);
    for (const r of this.receivers.values()) {
      this.announce(r);
      this.greet(r);
    }
  }

  disconnect(): void {
    this.context = null;
    this.availability.bind(null);
    for (const r of this.receivers.values()) this.drop(r);
  }

  status(): IntegrationStatus {
    return this.availability.status();
  }

  control(endpoint: MediaEndpoint): void {
    let r = this.receivers.get(endpoint.id);
    if (r && (r.endpoint.host !== endpoint.host || r.endpoint.port !== endpoint.port)) this.drop(r);
    if (r) r.endpoint = endpoint;
    else {
      r = { endpoint, sender: null, opening: null, state: {} };
      this.receivers.set(endpoint.id, r);
      this.availability.track(endpoint.id);
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
    this.availability.forget(endpointId);
    this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: endpointId });
  }

  receive(message: ServerToDriverMessage): void {
    runBuiltInAction(this.actions, message);
  }

  /** A command on the receiver's session (opened first when there is none). */
  private async run(r: Receiver, handler: CastCommand, params: Record<string, unknown>): Promise<unknown> {
    const sender = await this.session(r);
    return handler(sender, params, r, (change) => this.pushState(r, change));
  }

  private session(r: Receiver): Promise<CastSender> {
    if (r.sender) return Promise.resolve(r.sender);
    r.opening ??= (async () => {
      const sender = new CastSender({ host: r.endpoint.host, port: r.endpoint.port, timeoutMs: this.options.timeoutMs, timers: this.options.timers });
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
      () => {
        if (this.receivers.get(r.endpoint.id) === r) this.availability.set(r.endpoint.id, true);
      },
      (err: unknown) => {
        this.drop(r);
        if (this.receivers.get(r.endpoint.id) === r) this.availability.set(r.endpoint.id, false, err);
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
    this.availability.reassert(r.endpoint.id);
  }

  private pushState(r: Receiver, change: Record<string, unknown>): void {
    r.state = { ...r.state, ...change };
    this.context?.emit({ type: 'STATE_UPDATE', deviceId: r.endpoint.id, state: change });
  }

  private drop(r: Receiver): void {
    r.sender?.close();
    r.sender = null;
  }
}

/** One command on an open session; `push` reports the state it leaves. */
type CastCommand = (sender: CastSender, params: Record<string, unknown>, r: Receiver, push: (change: Record<string, unknown>) => void) => Promise<unknown>;

const COMMAND_HANDLERS: Record<string, CastCommand> = {
  play_url: async (sender, params, _r, push) => {
    const url = typeof params.url === 'string' ? params.url : '';
    if (!/^https?:\/\/\S+$/.test(url)) throw rejected('url must be an http(s) URL the receiver can fetch');
    const contentType = typeof params.contentType === 'string' ? params.contentType : contentTypeOf(url);
    const metadata = { ...(typeof params.title === 'string' ? { title: params.title } : {}), ...(typeof params.artist === 'string' ? { artist: params.artist } : {}) };
    await sender.load(url, contentType, metadata);
    push({ playback: 'playing', app: 'Default Media Receiver', title: (metadata as { title?: string }).title ?? url });
    return { url, contentType };
  },
  ...Object.fromEntries(
    (['play', 'pause', 'stop'] as const).map((command): [string, CastCommand] => [
      command,
      async (sender, _params, _r, push) => {
        await sender.media(command.toUpperCase() as 'PLAY' | 'PAUSE' | 'STOP');
        push({ playback: command === 'play' ? 'playing' : command === 'pause' ? 'paused' : 'stopped' });
        return { command };
      },
    ]),
  ),
  seek: async (sender, params) => {
    await sender.media('SEEK', { currentTime: Number(params.position) });
    return { position: Number(params.position) };
  },
  volume_set: async (sender, params, _r, push) => {
    const volume = Math.max(0, Math.min(100, Number(params.volume)));
    await sender.setVolume({ level: volume / 100 });
    push({ volume });
    return { volume };
  },
  mute: async (sender, params, r, push) => {
    const muted = typeof params.muted === 'boolean' ? params.muted : r.state.muted !== true;
    await sender.setVolume({ muted });
    push({ muted });
    return { muted };
  },
};
