import { Agent } from 'node:http';
import type { TimerHandle, Timers } from '../../platform/clock.js';
import type { BuiltInDriverContext } from '../../domain/drivers/builtin.js';
import type { ServerToDriverMessage } from '../../domain/drivers/messages.js';
import type { DiscoveredEndpoint, MediaEndpoint } from '../../domain/media/model.js';
import type { EndpointController } from '../../domain/media/ports.js';
import { ROKU_ECP_PORT, RokuEcpClient, type RokuDeviceInfo } from './ecp-client.js';
import { RokuEcpError } from './ecp-errors.js';
import { ECP_KEYS } from './ecp-keys.js';

export interface RokuIntegrationOptions {
  /** How often each Roku is asked for its power, app and playback (ms). */
  pollIntervalMs: number;
  /** Per ECP request, connection included (ms). */
  requestTimeoutMs: number;
  timers: Timers;
  log: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
}

type Action = Extract<ServerToDriverMessage, { type: 'ACTION' }>;

/** Roku's system channel that plays a URL. */
const PLAY_ON_ROKU = '15985';

/** Named convenience commands: one ECP key each. */
const KEY_COMMANDS: Record<string, string> = {
  home: 'Home',
  back: 'Back',
  select: 'Select',
  up: 'Up',
  down: 'Down',
  left: 'Left',
  right: 'Right',
  info: 'Info',
  rewind: 'Rev',
  fast_forward: 'Fwd',
  instant_replay: 'InstantReplay',
  search: 'Search',
  play_pause: 'Play',
  volume_up: 'VolumeUp',
  volume_down: 'VolumeDown',
  mute: 'VolumeMute',
  channel_up: 'ChannelUp',
  channel_down: 'ChannelDown',
};

/** A Roku TV's inputs, by the names select_input takes (`hdmi1`, `InputHDMI1`, `tvinput.hdmi1` alike). */
const INPUT_KEYS: Record<string, string> = {
  tuner: 'InputTuner',
  hdmi1: 'InputHDMI1',
  hdmi2: 'InputHDMI2',
  hdmi3: 'InputHDMI3',
  hdmi4: 'InputHDMI4',
  av1: 'InputAV1',
};

function inputKey(input: unknown): string | undefined {
  if (typeof input !== 'string') return undefined;
  const name = input.toLowerCase().replace(/^tvinput\./, '').replace(/^input/, '').replace(/[\s_-]/g, '');
  return INPUT_KEYS[name];
}

/** ECP's media-player states, as the capability model's `playback`. */
function playbackOf(state: string): string {
  switch (state) {
    case 'play':
      return 'playing';
    case 'pause':
      return 'paused';
    case 'buffer':
    case 'startup':
    case 'open':
      return 'buffering';
    case 'stop':
    case 'finished':
      return 'stopped';
    default:
      return 'idle';
  }
}

/** `PowerOn` is on; a Roku TV in standby says `DisplayOff` (or `Suspend`, `Headless`). */
const powerOf = (mode: string | undefined) => (mode === undefined ? undefined : mode === 'PowerOn' ? 'on' : 'off');

function commandsFor(info: RokuDeviceInfo) {
  const key = (name: string, label: string) => ({ name, label });
  const commands: Array<{ name: string; label: string; params?: Record<string, unknown> }> = [
    key('play', 'Play (presses Play unless already playing)'),
    key('pause', 'Pause (presses Play while playing)'),
    key('play_pause', 'Play/Pause'),
    key('volume_up', 'Volume up'),
    key('volume_down', 'Volume down'),
    key('mute', 'Mute toggle'),
    key('home', 'Home'),
    key('back', 'Back'),
    key('select', 'OK'),
    key('up', 'Up'),
    key('down', 'Down'),
    key('left', 'Left'),
    key('right', 'Right'),
    key('info', 'Options (*)'),
    key('rewind', 'Rewind'),
    key('fast_forward', 'Fast forward'),
    key('instant_replay', 'Instant replay'),
    key('search', 'Search'),
    { name: 'keypress', label: 'Any ECP key', params: { type: 'object', properties: { key: { type: 'string', enum: [...ECP_KEYS] } }, required: ['key'] } },
    {
      name: 'play_url',
      label: 'Play a URL (Play on Roku)',
      params: { type: 'object', properties: { url: { type: 'string', format: 'uri' }, kind: { type: 'string', enum: ['audio', 'video'] }, title: { type: 'string' }, artist: { type: 'string' } }, required: ['url'] },
    },
    { name: 'apps.list', label: 'Installed apps' },
    { name: 'apps.icon', label: 'App icon', params: { type: 'object', properties: { appId: { type: 'string' } }, required: ['appId'] } },
    {
      name: 'apps.launch',
      label: 'Launch an app',
      params: { type: 'object', properties: { appId: { type: 'string' }, contentId: { type: 'string' }, mediaType: { type: 'string' } }, required: ['appId'] },
    },
  ];
  if (info.isTv || info.supportsSuspend) commands.push(key('turn_on', 'Power on'), key('turn_off', 'Power off (standby)'));
  if (info.isTv) {
    commands.push(
      { name: 'select_input', label: 'Select input', params: { type: 'object', properties: { input: { type: 'string', enum: Object.keys(INPUT_KEYS) } }, required: ['input'] } },
      key('channel_up', 'Channel up'),
      key('channel_down', 'Channel down'),
    );
  }
  return commands;
}

/** One Roku the integration controls: its client, its last known state and its poll timer. */
class RokuPlayer {
  client: RokuEcpClient;
  info: RokuDeviceInfo | null = null;
  state: Record<string, unknown> = {};
  announced = false;
  reachable: boolean | null = null;
  polling: Promise<void> | null = null;
  timer: TimerHandle | null = null;
  soon: TimerHandle | null = null;

  constructor(
    public endpoint: MediaEndpoint,
    agent: Agent,
    timeoutMs: number,
  ) {
    this.client = new RokuEcpClient({ host: endpoint.host, port: endpoint.port, timeoutMs, agent });
  }
}

/**
 * The built-in Roku integration: every enabled Roku endpoint is a logical device of driver `roku`
 * (its id is the endpoint id). It polls each device over ECP (device-info, active-app,
 * media-player) into the state authority, and answers the device's commands with ECP requests,
 * each bounded by the request time-out so a dead Roku fails its own commands and nothing else.
 */
export class RokuIntegration implements EndpointController {
  readonly kind = 'roku' as const;
  readonly driverKey = 'roku';
  private context: BuiltInDriverContext | null = null;
  private readonly players = new Map<string, RokuPlayer>();
  /** One keep-alive pool for every Roku: a few sockets per device, reused by polls and commands. */
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 4, maxFreeSockets: 2 });

  constructor(private readonly options: RokuIntegrationOptions) {}

  connect(context: BuiltInDriverContext): void {
    this.context = context;
    for (const player of this.players.values()) this.schedule(player, 0);
  }

  disconnect(): void {
    this.context = null;
    for (const player of this.players.values()) this.stopPolling(player);
    this.agent.destroy();
  }

  control(endpoint: MediaEndpoint): void {
    const existing = this.players.get(endpoint.id);
    if (existing && existing.endpoint.host === endpoint.host && existing.endpoint.port === endpoint.port) {
      const renamed = (existing.endpoint.label ?? existing.endpoint.name) !== (endpoint.label ?? endpoint.name);
      existing.endpoint = endpoint;
      if (renamed && existing.announced && existing.info) this.announce(existing, existing.info);
      return;
    }
    if (existing) this.stopPolling(existing);
    const player = new RokuPlayer(endpoint, this.agent, this.options.requestTimeoutMs);
    if (existing) {
      player.state = existing.state;
      player.announced = existing.announced;
      player.info = existing.info;
    }
    this.players.set(endpoint.id, player);
    if (this.context) this.schedule(player, 0);
  }

  release(endpointId: string): void {
    const player = this.players.get(endpointId);
    if (!player) return;
    this.stopPolling(player);
    this.players.delete(endpointId);
    if (player.announced) this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: endpointId });
  }

  async probe(host: string, port: number | undefined): Promise<DiscoveredEndpoint> {
    const client = new RokuEcpClient({ host, port: port ?? ROKU_ECP_PORT, timeoutMs: this.options.requestTimeoutMs, agent: this.agent });
    const info = await client.deviceInfo();
    return endpointOf(info, host, port ?? ROKU_ECP_PORT, 'manual');
  }

  receive(message: ServerToDriverMessage): void {
    if (message.type !== 'ACTION' && message.type !== 'COMMAND_EXECUTE') return;
    const action = message as Action;
    const player = this.players.get(action.deviceId);
    if (!player) {
      this.context?.emit({ type: 'ACTION_RESULT', actionId: action.actionId, ok: false, error: `Roku ${action.deviceId} is not controlled (disabled or removed).` });
      return;
    }
    this.act(player, action).then(
      (result) => this.context?.emit({ type: 'ACTION_RESULT', actionId: action.actionId, ok: true, ...(result === undefined ? {} : { result }) }),
      (err: unknown) => this.failAction(player, action, err),
    );
  }

  private async act(player: RokuPlayer, { command, params }: Action): Promise<unknown> {
    const client = player.client;
    const pressed = async (key: string) => {
      await client.keypress(key);
      this.schedule(player, 300);
      return { key };
    };
    switch (command) {
      case 'play':
      case 'pause': {
        // ECP has one Play key that toggles: ask the player first, press only when it changes something.
        const media = await client.mediaPlayer();
        const playing = media.state === 'play' || media.state === 'buffer';
        if ((command === 'play') === playing) return { key: null, unchanged: true };
        return pressed('Play');
      }
      case 'turn_on':
        return pressed('PowerOn');
      case 'turn_off':
        return pressed('PowerOff');
      case 'select_input': {
        const key = inputKey(params.input);
        if (!key) throw new InvalidParams(`input must be one of ${Object.keys(INPUT_KEYS).join(', ')}`);
        return pressed(key);
      }
      case 'keypress': {
        if (typeof params.key !== 'string') throw new InvalidParams('key is required');
        return pressed(params.key);
      }
      case 'play_url': {
        // The Play on Roku system channel (15985) fetches and plays what `u` names.
        const url = typeof params.url === 'string' ? params.url : '';
        if (!/^https?:\/\/\S+$/.test(url)) throw new InvalidParams('url must be an http(s) URL the Roku can fetch');
        const query: Record<string, string> = { t: params.kind === 'video' ? 'v' : 'a', u: url };
        if (typeof params.title === 'string') query.songname = params.title;
        if (typeof params.artist === 'string') query.artistname = params.artist;
        await client.launch(PLAY_ON_ROKU, query);
        this.schedule(player, 500);
        return { url };
      }
      case 'apps.list': {
        const apps = await client.apps();
        return { apps: apps.map((a) => ({ id: a.id, name: a.name, type: a.type ?? 'appl', version: a.version ?? null })) };
      }
      case 'apps.icon': {
        if (typeof params.appId !== 'string') throw new InvalidParams('appId is required');
        const icon = await client.icon(params.appId);
        return { contentType: icon.contentType, data: icon.bytes.toString('base64') };
      }
      case 'apps.launch': {
        if (typeof params.appId !== 'string') throw new InvalidParams('appId is required');
        const deepLink: Record<string, string> = {};
        if (typeof params.contentId === 'string') deepLink.contentId = params.contentId;
        if (typeof params.mediaType === 'string') deepLink.mediaType = params.mediaType;
        await client.launch(params.appId, deepLink);
        this.schedule(player, 500);
        return { appId: params.appId };
      }
      default: {
        const key = KEY_COMMANDS[command];
        if (!key) throw new InvalidParams(`unknown command ${command}`);
        return pressed(key);
      }
    }
  }

  private failAction(player: RokuPlayer, action: Action, err: unknown): void {
    const context = this.context;
    if (!context) return;
    if (err instanceof InvalidParams) return context.fail(action.actionId, 'rejected', err.message);
    if (err instanceof RokuEcpError) {
      if (err.failure === 'invalid_request') return context.fail(action.actionId, 'rejected', err.message);
      if (err.failure === 'unreachable' || err.failure === 'timeout') {
        this.markReachable(player, false);
        return context.fail(action.actionId, err.failure, err.message);
      }
      // 404 to a launch or icon: the app is not installed; other statuses are the device's trouble.
      if (err.failure === 'http_status' && err.status === 404) return context.fail(action.actionId, 'rejected', err.message);
      return context.emit({ type: 'ACTION_RESULT', actionId: action.actionId, ok: false, error: err.message });
    }
    context.emit({ type: 'ACTION_RESULT', actionId: action.actionId, ok: false, error: err instanceof Error ? err.message : String(err) });
  }

  /** Polls now-ish (after `delayMs`), then every poll interval; a poll in flight is not doubled. */
  private schedule(player: RokuPlayer, delayMs: number): void {
    if (!this.context) return;
    if (player.soon) this.options.timers.clearTimeout(player.soon);
    player.soon = this.options.timers.setTimeout(() => {
      player.soon = null;
      void this.poll(player);
    }, delayMs);
    if (!player.timer) {
      player.timer = this.options.timers.setInterval(() => void this.poll(player), this.options.pollIntervalMs);
    }
  }

  private stopPolling(player: RokuPlayer): void {
    if (player.timer) this.options.timers.clearInterval(player.timer);
    if (player.soon) this.options.timers.clearTimeout(player.soon);
    player.timer = null;
    player.soon = null;
  }

  private poll(player: RokuPlayer): Promise<void> {
    player.polling ??= this.pollOnce(player).finally(() => {
      player.polling = null;
    });
    return player.polling;
  }

  private async pollOnce(player: RokuPlayer): Promise<void> {
    if (!this.context || this.players.get(player.endpoint.id) !== player) return;
    try {
      const [info, active, media] = await Promise.all([player.client.deviceInfo(), player.client.activeApp(), player.client.mediaPlayer()]);
      if (this.players.get(player.endpoint.id) !== player) return;
      const next: Record<string, unknown> = {
        power: powerOf(info.powerMode) ?? null,
        app: active.app?.name ?? 'Home',
        app_id: active.app?.id ?? null,
        playback: playbackOf(media.state),
        position: media.positionMs === undefined ? null : Math.round(media.positionMs / 1000),
        duration: media.durationMs === undefined ? null : Math.round(media.durationMs / 1000),
      };
      if (!player.announced) {
        player.info = info;
        player.state = next;
        player.reachable = true;
        this.announce(player, info);
        return;
      }
      // The owner renamed it on the TV: the device follows, unless the hub has a label for it.
      const renamed = player.info?.userDeviceName !== info.userDeviceName;
      player.info = info;
      if (renamed && player.endpoint.label === null) this.announce(player, info);
      const changed = Object.fromEntries(Object.entries(next).filter(([k, v]) => player.state[k] !== v));
      player.state = next;
      if (Object.keys(changed).length > 0) this.context.emit({ type: 'STATE_UPDATE', deviceId: player.endpoint.id, state: changed });
      this.markReachable(player, true);
    } catch (err) {
      if (player.reachable !== false) this.options.log.warn({ endpointId: player.endpoint.id, err: err instanceof Error ? err.message : String(err) }, 'Roku did not answer its poll');
      this.markReachable(player, false);
    }
  }

  private announce(player: RokuPlayer, info: RokuDeviceInfo): void {
    player.announced = true;
    this.context?.emit({
      type: 'DEVICE_DISCOVERED',
      device: {
        id: player.endpoint.id,
        name: player.endpoint.label ?? (info.userDeviceName || info.friendlyDeviceName),
        category: info.isTv ? 'tv' : 'media_player',
        capabilities: ['media', 'volume', 'apps', ...(info.isTv ? ['input'] : [])],
        commands: commandsFor(info),
        properties: {
          host: player.endpoint.host,
          port: player.endpoint.port,
          serialNumber: info.serialNumber,
          model: info.modelName,
          ...(info.modelNumber ? { modelNumber: info.modelNumber } : {}),
          ...(info.softwareVersion ? { softwareVersion: info.softwareVersion } : {}),
          isTv: info.isTv,
        },
        state: player.state,
      },
    });
  }

  /** Reports a change of reachability of an announced device (an unannounced one has no device yet). */
  private markReachable(player: RokuPlayer, reachable: boolean): void {
    const was = player.reachable;
    player.reachable = reachable;
    if (player.announced && was !== reachable) this.context?.setOnline(player.endpoint.id, reachable);
  }
}

/** A parameter the integration refuses before anything is sent. */
class InvalidParams extends Error {}

/** The endpoint a Roku's device-info describes; its serial number is its identity. */
export function endpointOf(info: RokuDeviceInfo, host: string, port: number, origin: DiscoveredEndpoint['origin']): DiscoveredEndpoint {
  return {
    kind: 'roku',
    key: info.serialNumber,
    name: info.userDeviceName || info.friendlyDeviceName,
    host,
    port,
    model: info.modelName,
    origin,
    details: {
      udn: info.udn,
      ...(info.modelNumber ? { modelNumber: info.modelNumber } : {}),
      ...(info.softwareVersion ? { softwareVersion: info.softwareVersion } : {}),
      isTv: String(info.isTv),
    },
  };
}
