import type { Clock, Timers } from '../../platform/clock.js';
import { NetworkFailureError, rejected } from '../../platform/network-failures.js';
import { runBuiltInAction, type ActionSpec, type BuiltInDriverContext, type CommandHandler, type IntegrationStatus } from '../../domain/drivers/builtin.js';
import { PollingCoordinator } from '../../domain/drivers/coordinator.js';
import type { ServerToDriverMessage } from '../../domain/drivers/messages.js';
import type { MediaEndpoint } from '../../domain/media/model.js';
import type { EndpointController } from '../../domain/media/ports.js';
import { ANDROID_TV_KEYS, type AndroidTvKey } from './messages.js';
import { AndroidTvRemote, type AndroidTvState } from './remote.js';

export interface AndroidTvIntegrationOptions {
  /** Bound of the connection and handshake (ms). */
  connectTimeoutMs: number;
  /** First reconnect delay after a lost or failed connection; doubles up to `maxRetryMs` (the coordinator's back-off). */
  retryMs: number;
  maxRetryMs: number;
  /** How often a TV whose channel is up is checked (ms; default 30 s): the channel pushes the state, a check only sees that it is up. */
  checkIntervalMs?: number;
  clock: Clock;
  timers: Timers;
  log: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
}

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
  last: Record<string, unknown>;
}

/** What a command runs on: the TV and its open channel. */
interface Target {
  tv: Tv;
  remote: AndroidTvRemote;
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
 * remote channel is up. The polling coordinator keeps the channel up: its poll opens the channel
 * when it is down (nothing to read when it is up: the TV pushes power, volume and app straight
 * into the state authority), a lost channel is a failure, and the back-off spaces the reconnects.
 */
export class AndroidTvIntegration implements EndpointController {
  readonly kind = 'androidtv' as const;
  readonly driverKey = 'androidtv';
  readonly name = 'Android TV (Remote v2)';
  readonly needsPairing = true;
  private context: BuiltInDriverContext | null = null;
  private readonly tvs = new Map<string, Tv>();
  private readonly coordinator: PollingCoordinator;
  private readonly actions: ActionSpec<Target>;

  constructor(private readonly options: AndroidTvIntegrationOptions) {
    this.coordinator = new PollingCoordinator({
      name: 'androidtv',
      intervalMs: options.checkIntervalMs ?? 30_000,
      backoff: { initialMs: options.retryMs, maxMs: options.maxRetryMs },
      clock: options.clock,
      timers: options.timers,
      update: (id) => this.keepConnected(id),
      log: options.log,
    });
    this.actions = {
      context: () => this.context,
      timers: options.timers,
      // Keys and app links are written to an open channel: the bound only guards a stuck write.
      timeoutMs: options.connectTimeoutMs,
      target: (deviceId) => {
        const tv = this.tvs.get(deviceId);
        if (!tv) throw new NetworkFailureError('unreachable', 'the TV is not controlled (disabled or not paired)');
        if (!tv.remote?.connected) {
          // A command for a TV that is down asks for a reconnect now rather than at the back-off's time.
          this.coordinator.refresh(deviceId);
          throw new NetworkFailureError('unreachable', 'the TV is not connected (off the network, or its remote channel is reconnecting)');
        }
        return { tv, remote: tv.remote };
      },
      handler: (command) => COMMAND_HANDLERS[command],
    };
  }

  connect(context: BuiltInDriverContext): void {
    this.context = context;
    for (const tv of this.tvs.values()) this.announce(tv);
    this.coordinator.start(context);
  }

  disconnect(): void {
    this.context = null;
    this.coordinator.stop();
    for (const tv of this.tvs.values()) this.close(tv);
  }

  status(): IntegrationStatus {
    return this.coordinator.status();
  }

  control(endpoint: MediaEndpoint): void {
    const existing = this.tvs.get(endpoint.id);
    const same = existing && existing.endpoint.host === endpoint.host && existing.endpoint.port === endpoint.port && existing.endpoint.pairing?.certificatePem === endpoint.pairing?.certificatePem;
    if (existing && same) {
      existing.endpoint = endpoint;
      this.announce(existing);
      return;
    }
    if (existing) {
      this.close(existing);
      this.coordinator.remove(endpoint.id);
    }
    const tv: Tv = { endpoint, remote: null, last: existing?.last ?? {} };
    this.tvs.set(endpoint.id, tv);
    this.announce(tv);
    this.coordinator.add(endpoint.id);
  }

  release(endpointId: string): void {
    const tv = this.tvs.get(endpointId);
    if (!tv) return;
    this.close(tv);
    this.coordinator.remove(endpointId);
    this.tvs.delete(endpointId);
    this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: endpointId });
  }

  receive(message: ServerToDriverMessage): void {
    runBuiltInAction(this.actions, message);
  }

  private announce(tv: Tv): void {
    if (!this.context) return;
    this.context.emit({
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
    if (this.coordinator.available(tv.endpoint.id) !== true) this.context.setOnline(tv.endpoint.id, false);
  }

  /** The coordinator's poll: opens the remote channel when it is down; throws when it cannot. */
  private async keepConnected(id: string): Promise<void> {
    const tv = this.tvs.get(id);
    if (!tv || !this.context || tv.remote?.connected) return;
    const pairing = tv.endpoint.pairing;
    if (!pairing) throw new NetworkFailureError('rejected', 'the TV is not paired');
    this.close(tv);
    const remote = new AndroidTvRemote({
      host: tv.endpoint.host,
      port: tv.endpoint.port,
      identity: { certificatePem: pairing.certificatePem, privateKeyPem: pairing.privateKeyPem },
      timeoutMs: this.options.connectTimeoutMs,
      timers: this.options.timers,
      onState: (s) => {
        if (tv.remote === remote) this.pushState(tv, s);
      },
      onClose: (err) => {
        if (tv.remote !== remote) return;
        this.options.log.warn({ endpointId: id, failure: err.failure, err: err.message }, 'Android TV remote channel lost');
        this.coordinator.setUpdateError(id, err);
      },
    });
    tv.remote = remote;
    const first = await remote.connect();
    if (tv.remote !== remote || this.tvs.get(id) !== tv) return remote.close();
    // Back: everything known of it, as one update (pushes were held while it was away).
    tv.last = { ...tv.last, ...stateOf(first) };
    if (Object.keys(tv.last).length > 0) this.context?.emit({ type: 'STATE_UPDATE', deviceId: id, state: tv.last });
  }

  private pushState(tv: Tv, s: AndroidTvState): void {
    const next = stateOf(s);
    const changed = Object.fromEntries(Object.entries(next).filter(([k, v]) => tv.last[k] !== v));
    tv.last = { ...tv.last, ...next };
    if (Object.keys(changed).length > 0 && this.coordinator.available(tv.endpoint.id) !== false) this.context?.emit({ type: 'STATE_UPDATE', deviceId: tv.endpoint.id, state: changed });
  }

  private close(tv: Tv): void {
    const remote = tv.remote;
    tv.remote = null;
    remote?.close();
  }
}

const press =
  (key: AndroidTvKey | number): CommandHandler<Target> =>
  async ({ remote }) => {
    await remote.sendKey(key);
    return { key };
  };

/** What each command sends; a parameter it refuses is `rejected`. */
const COMMAND_HANDLERS: Record<string, CommandHandler<Target>> = {
  ...Object.fromEntries(Object.entries(KEY_COMMANDS).map(([command, key]) => [command, press(key)])),
  // POWER toggles: pressed only when the TV says it is the other way.
  turn_on: (target, params, scope) => (target.remote.state.poweredOn === true ? { unchanged: true } : press('POWER')(target, params, scope)),
  turn_off: (target, params, scope) => (target.remote.state.poweredOn === false ? { unchanged: true } : press('POWER')(target, params, scope)),
  select_input: (target, params, scope) => {
    const key = typeof params.input === 'string' ? INPUT_KEYS[params.input.toLowerCase().replace(/[\s_-]/g, '')] : undefined;
    if (!key) throw rejected(`input must be one of ${Object.keys(INPUT_KEYS).join(', ')}`);
    return press(key)(target, params, scope);
  },
  keypress: (target, params, scope) => {
    const key = typeof params.key === 'string' ? params.key.toUpperCase().replace(/^KEYCODE_/, '') : '';
    if (!(key in ANDROID_TV_KEYS)) throw rejected(`key must be one of ${Object.keys(ANDROID_TV_KEYS).join(', ')}`);
    return press(key as AndroidTvKey)(target, params, scope);
  },
  'apps.launch': async ({ remote }, params) => {
    const appId = typeof params.appId === 'string' ? params.appId : '';
    if (!APP_ID.test(appId)) throw rejected('appId must be an Android package name (com.example.app) or a deep link URL');
    const link = appId.includes('://') ? appId : `market://launch?id=${appId}`;
    await remote.launchAppLink(link);
    return { appId, link };
  },
};
