import type { TimerHandle, Timers } from '../../platform/clock.js';
import type { BuiltInDriverContext } from '../../domain/drivers/builtin.js';
import type { ServerToDriverMessage } from '../../domain/drivers/messages.js';
import type { MediaEndpoint } from '../../domain/media/model.js';
import type { EndpointController } from '../../domain/media/ports.js';
import { ANDROID_TV_KEYS, type AndroidTvKey } from './messages.js';
import { AndroidTvRemote, type AndroidTvState } from './remote.js';
import { AndroidTvError } from './session.js';

export interface AndroidTvIntegrationOptions {
  /** Bound of the connection and handshake (ms). */
  connectTimeoutMs: number;
  /** First reconnect delay after a lost or failed connection; doubles up to `maxRetryMs`. */
  retryMs: number;
  maxRetryMs: number;
  timers: Timers;
  log: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
}

type Action = Extract<ServerToDriverMessage, { type: 'ACTION' }>;

/** Device commands that are one key each. */
const KEY_COMMANDS: Record<string, AndroidTvKey> = {
  play: 'MEDIA_PLAY',
  pause: 'MEDIA_PAUSE',
  play_pause: 'MEDIA_PLAY_PAUSE',
  stop: 'MEDIA_STOP',
  next: 'MEDIA_NEXT',
  previous: 'MEDIA_PREVIOUS',
  rewind: 'MEDIA_REWIND',
  fast_forward: 'MEDIA_FAST_FORWARD',
  volume_up: 'VOLUME_UP',
  volume_down: 'VOLUME_DOWN',
  mute: 'VOLUME_MUTE',
  home: 'HOME',
  back: 'BACK',
  up: 'DPAD_UP',
  down: 'DPAD_DOWN',
  left: 'DPAD_LEFT',
  right: 'DPAD_RIGHT',
  select: 'DPAD_CENTER',
  menu: 'MENU',
  info: 'INFO',
  channel_up: 'CHANNEL_UP',
  channel_down: 'CHANNEL_DOWN',
};

const INPUT_KEYS: Record<string, AndroidTvKey> = { hdmi1: 'TV_INPUT_HDMI_1', hdmi2: 'TV_INPUT_HDMI_2', hdmi3: 'TV_INPUT_HDMI_3', hdmi4: 'TV_INPUT_HDMI_4' };
/** An Android package name, or a deep link (`https://…`, `market://…`). */
const APP_ID = /^([A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+|[a-z][a-z0-9+.-]*:\/\/\S{1,1000})$/;

const COMMANDS = [
  ...Object.keys(KEY_COMMANDS).map((name) => ({ name })),
  { name: 'turn_on' },
  { name: 'turn_off' },
  { name: 'select_input', params: { type: 'object', properties: { input: { type: 'string', enum: Object.keys(INPUT_KEYS) } }, required: ['input'] } },
  { name: 'keypress', params: { type: 'object', properties: { key: { type: 'string', enum: Object.keys(ANDROID_TV_KEYS) } }, required: ['key'] } },
  { name: 'apps.launch', params: { type: 'object', properties: { appId: { type: 'string', description: 'Package name (com.netflix.ninja) or deep link.' } }, required: ['appId'] } },
];

interface Tv {
  endpoint: MediaEndpoint;
  remote: AndroidTvRemote | null;
  reachable: boolean | null;
  retry: TimerHandle | null;
  retryMs: number;
  last: Record<string, unknown>;
}

/** The capability model's state keys from the TV's own report. */
function stateOf(s: AndroidTvState): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (s.poweredOn !== undefined) out.power = s.poweredOn ? 'on' : 'off';
  if (s.volume) {
    out.volume = s.volume.max > 0 ? Math.round((s.volume.level / s.volume.max) * 100) : s.volume.level;
    out.muted = s.volume.muted;
  }
  if (s.currentApp) {
    out.app = s.currentApp;
    out.app_id = s.currentApp;
  }
  return out;
}

/**
 * The built-in Android TV integration (driver `androidtv`): every paired, enabled Android TV
 * endpoint is a device, announced at once (it is paired, so it is known) and online while its
 * remote channel is up. The channel reconnects with back-off when lost; state the TV pushes
 * (power, volume, app) goes straight into the state authority.
 */
export class AndroidTvIntegration implements EndpointController {
  readonly kind = 'androidtv' as const;
  readonly driverKey = 'androidtv';
  readonly needsPairing = true;
  private context: BuiltInDriverContext | null = null;
  private readonly tvs = new Map<string, Tv>();

  constructor(private readonly options: AndroidTvIntegrationOptions) {}

  connect(context: BuiltInDriverContext): void {
    this.context = context;
    for (const tv of this.tvs.values()) this.start(tv);
  }

  disconnect(): void {
    this.context = null;
    for (const tv of this.tvs.values()) this.stop(tv);
  }

  control(endpoint: MediaEndpoint): void {
    const existing = this.tvs.get(endpoint.id);
    const same = existing && existing.endpoint.host === endpoint.host && existing.endpoint.port === endpoint.port && existing.endpoint.pairing?.certificatePem === endpoint.pairing?.certificatePem;
    if (existing && same) {
      existing.endpoint = endpoint;
      this.announce(existing);
      return;
    }
    if (existing) this.stop(existing);
    const tv: Tv = { endpoint, remote: null, reachable: null, retry: null, retryMs: this.options.retryMs, last: existing?.last ?? {} };
    this.tvs.set(endpoint.id, tv);
    if (this.context) this.start(tv);
  }

  release(endpointId: string): void {
    const tv = this.tvs.get(endpointId);
    if (!tv) return;
    this.stop(tv);
    this.tvs.delete(endpointId);
    this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: endpointId });
  }

  receive(message: ServerToDriverMessage): void {
    if (message.type !== 'ACTION' && message.type !== 'COMMAND_EXECUTE') return;
    const action = message as Action;
    const tv = this.tvs.get(action.deviceId);
    const context = this.context;
    if (!context) return;
    if (!tv?.remote?.connected) {
      context.fail(action.actionId, 'unreachable', tv ? 'the TV is not connected (off the network, or its remote channel is reconnecting)' : 'the TV is not controlled (disabled or not paired)');
      return;
    }
    let result: unknown;
    try {
      result = this.act(tv.remote, action);
    } catch (err) {
      context.fail(action.actionId, err instanceof AndroidTvError ? 'unreachable' : 'rejected', err instanceof Error ? err.message : String(err));
      return;
    }
    context.emit({ type: 'ACTION_RESULT', actionId: action.actionId, ok: true, ...(result === undefined ? {} : { result }) });
  }

  /** Sends what the command means; throws a plain Error for parameters it refuses. */
  private act(remote: AndroidTvRemote, { command, params }: Action): unknown {
    const press = (key: AndroidTvKey | number) => {
      void remote.sendKey(key);
      return { key };
    };
    switch (command) {
      case 'turn_on':
      case 'turn_off': {
        // POWER toggles: pressed only when the TV says it is the other way.
        const on = command === 'turn_on';
        if (remote.state.poweredOn === on) return { unchanged: true };
        return press('POWER');
      }
      case 'select_input': {
        const key = typeof params.input === 'string' ? INPUT_KEYS[params.input.toLowerCase().replace(/[\s_-]/g, '')] : undefined;
        if (!key) throw new Error(`input must be one of ${Object.keys(INPUT_KEYS).join(', ')}`);
        return press(key);
      }
      case 'keypress': {
        const key = typeof params.key === 'string' ? params.key.toUpperCase().replace(/^KEYCODE_/, '') : '';
        if (!(key in ANDROID_TV_KEYS)) throw new Error(`key must be one of ${Object.keys(ANDROID_TV_KEYS).join(', ')}`);
        return press(key as AndroidTvKey);
      }
      case 'apps.launch': {
        const appId = typeof params.appId === 'string' ? params.appId : '';
        if (!APP_ID.test(appId)) throw new Error('appId must be an Android package name (com.example.app) or a deep link URL');
        const link = appId.includes('://') ? appId : `market://launch?id=${appId}`;
        void remote.launchAppLink(link);
        return { appId, link };
      }
      default: {
        const key = KEY_COMMANDS[command];
        if (!key) throw new Error(`unknown command ${command}`);
        return press(key);
      }
    }
  }

  private announce(tv: Tv): void {
    this.context?.emit({
      type: 'DEVICE_DISCOVERED',
      device: {
        id: tv.endpoint.id,
        name: tv.endpoint.label ?? tv.endpoint.name,
        category: 'tv',
        capabilities: ['media', 'volume', 'apps', 'input'],
        commands: COMMANDS,
        properties: { host: tv.endpoint.host, port: tv.endpoint.port, ...(tv.endpoint.model ? { model: tv.endpoint.model } : {}) },
        ...(Object.keys(tv.last).length > 0 ? { state: tv.last } : {}),
      },
    });
    // Known, not yet vouched for: online once the remote channel is up.
    if (tv.reachable !== true) this.context?.setOnline(tv.endpoint.id, false);
  }

  private start(tv: Tv): void {
    this.announce(tv);
    this.open(tv);
  }

  private open(tv: Tv): void {
    const pairing = tv.endpoint.pairing;
    if (!pairing || !this.context) return;
    const remote = new AndroidTvRemote({
      host: tv.endpoint.host,
      port: tv.endpoint.port,
      identity: { certificatePem: pairing.certificatePem, privateKeyPem: pairing.privateKeyPem },
      timeoutMs: this.options.connectTimeoutMs,
      onState: (s) => this.pushState(tv, s),
      onClose: (err) => {
        if (tv.remote !== remote) return;
        this.options.log.warn({ endpointId: tv.endpoint.id, failure: err.failure, err: err.message }, 'Android TV remote channel lost');
        this.setReachable(tv, false);
        this.scheduleRetry(tv);
      },
    });
    tv.remote = remote;
    remote.connect().then(
      (s) => {
        if (tv.remote !== remote) return remote.close();
        tv.retryMs = this.options.retryMs;
        this.pushState(tv, s);
        this.setReachable(tv, true);
      },
      (err: unknown) => {
        if (tv.remote !== remote) return;
        if (tv.reachable !== false) this.options.log.warn({ endpointId: tv.endpoint.id, err: err instanceof Error ? err.message : String(err) }, 'Android TV remote channel could not connect');
        this.setReachable(tv, false);
        this.scheduleRetry(tv);
      },
    );
  }

  private pushState(tv: Tv, s: AndroidTvState): void {
    const next = stateOf(s);
    const changed = Object.fromEntries(Object.entries(next).filter(([k, v]) => tv.last[k] !== v));
    tv.last = { ...tv.last, ...next };
    if (Object.keys(changed).length > 0 && tv.reachable !== false) this.context?.emit({ type: 'STATE_UPDATE', deviceId: tv.endpoint.id, state: changed });
  }

  private setReachable(tv: Tv, reachable: boolean): void {
    if (tv.reachable === reachable) return;
    tv.reachable = reachable;
    if (reachable && Object.keys(tv.last).length > 0) this.context?.emit({ type: 'STATE_UPDATE', deviceId: tv.endpoint.id, state: tv.last });
    this.context?.setOnline(tv.endpoint.id, reachable);
  }

  private scheduleRetry(tv: Tv): void {
    if (!this.context || tv.retry || this.tvs.get(tv.endpoint.id) !== tv) return;
    const delay = tv.retryMs;
    tv.retryMs = Math.min(tv.retryMs * 2, this.options.maxRetryMs);
    tv.retry = this.options.timers.setTimeout(() => {
      tv.retry = null;
      if (this.tvs.get(tv.endpoint.id) === tv && this.context) this.open(tv);
    }, delay);
  }

  private stop(tv: Tv): void {
    if (tv.retry) this.options.timers.clearTimeout(tv.retry);
    tv.retry = null;
    const remote = tv.remote;
    tv.remote = null;
    remote?.close();
  }
}
