import { Agent } from 'node:http';
import type { Clock, Timers } from '../../platform/clock.js';
import { NetworkFailureError, rejected } from '../../platform/network-failures.js';
import { runBuiltInAction, type ActionSpec, type BuiltInDriverContext, type CommandHandler, type IntegrationStatus } from '../../domain/drivers/builtin.js';
import { PollingCoordinator } from '../../domain/drivers/coordinator.js';
import type { ServerToDriverMessage } from '../../domain/drivers/messages.js';
import type { DiscoveredEndpoint, MediaEndpoint } from '../../domain/media/model.js';
import type { EndpointController } from '../../domain/media/ports.js';
import { ROKU_ECP_PORT, RokuEcpClient, type RokuDeviceInfo } from './ecp-client.js';
import { ECP_KEYS } from './ecp-keys.js';

export interface RokuIntegrationOptions {
  /** How often each Roku is asked for its power, app and playback (ms). */
  pollIntervalMs: number;
  /** Per ECP request, connection included (ms). */
  requestTimeoutMs: number;
  clock: Clock;
  timers: Timers;
  log: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
}

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

/** One Roku the integration controls: its client and its last known state (its polls are the coordinator's). */
class RokuPlayer {
  client: RokuEcpClient;
  info: RokuDeviceInfo | null = null;
  state: Record<string, unknown> = {};
  announced = false;

  constructor(
    public endpoint: MediaEndpoint,
    agent: Agent,
    timeoutMs: number,
  ) {
    this.client = new RokuEcpClient({ host: endpoint.host, port: endpoint.port, timeoutMs, agent });
  }
}

type Handler = CommandHandler<RokuPlayer>;

/**
 * The built-in Roku integration: every enabled Roku endpoint is a logical device of driver `roku`
 * (its id is the endpoint id). The polling coordinator reads each device over ECP (device-info,
 * active-app, media-player) into the state authority, every poll interval while it answers and
 * after a back-off while it does not (offline meanwhile); the device's commands are ECP requests,
 * each bounded by the request time-out so a dead Roku fails its own commands and nothing else.
 */
export class RokuIntegration implements EndpointController {
  readonly kind = 'roku' as const;
  readonly driverKey = 'roku';
  readonly name = 'Roku (ECP)';
  private context: BuiltInDriverContext | null = null;
  private readonly players = new Map<string, RokuPlayer>();
  /** One keep-alive pool for every Roku: a few sockets per device, reused by polls and commands. */
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 4, maxFreeSockets: 2 });
  private readonly coordinator: PollingCoordinator;
  private readonly commands: Record<string, Handler>;
  private readonly actions: ActionSpec<RokuPlayer>;

  constructor(private readonly options: RokuIntegrationOptions) {
    this.coordinator = new PollingCoordinator({
      name: 'roku',
      intervalMs: options.pollIntervalMs,
      // A Roku that stopped answering is asked again after one interval, then less often, at most every 12.
      backoff: { initialMs: options.pollIntervalMs, maxMs: options.pollIntervalMs * 12 },
      clock: options.clock,
      timers: options.timers,
      update: (id) => this.pollOnce(id),
      log: options.log,
    });
    this.commands = this.commandTable();
    this.actions = {
      context: () => this.context,
      timers: options.timers,
      // play and pause read the player before pressing: two requests.
      timeoutMs: options.requestTimeoutMs * 2 + 1000,
      target: (deviceId) => {
        const player = this.players.get(deviceId);
        if (!player) throw new NetworkFailureError('unreachable', `Roku ${deviceId} is not controlled (disabled or removed).`);
        return player;
      },
      handler: (command) => this.commands[command],
      settled: (player, outcome) => {
        if (outcome.ok || this.players.get(player.endpoint.id) !== player) return;
        if (outcome.failure === 'unreachable' || outcome.failure === 'timeout') this.coordinator.setUpdateError(player.endpoint.id, outcome.error);
      },
    };
  }

  connect(context: BuiltInDriverContext): void {
    this.context = context;
    this.coordinator.start(context);
  }

  disconnect(): void {
    this.context = null;
    this.coordinator.stop();
    this.agent.destroy();
  }

  status(): IntegrationStatus {
    return this.coordinator.status();
  }

  control(endpoint: MediaEndpoint): void {
    const existing = this.players.get(endpoint.id);
    if (existing && existing.endpoint.host === endpoint.host && existing.endpoint.port === endpoint.port) {
      const renamed = (existing.endpoint.label ?? existing.endpoint.name) !== (endpoint.label ?? endpoint.name);
      existing.endpoint = endpoint;
      if (renamed && existing.announced && existing.info) this.announce(existing, existing.info);
      return;
    }
    // A new address: a new client, polled afresh (its presence unknown until it answers).
    if (existing) this.coordinator.remove(endpoint.id);
    const player = new RokuPlayer(endpoint, this.agent, this.options.requestTimeoutMs);
    if (existing) {
      player.state = existing.state;
      player.announced = existing.announced;
      player.info = existing.info;
    }
    this.players.set(endpoint.id, player);
    this.coordinator.add(endpoint.id);
  }

  release(endpointId: string): void {
    const player = this.players.get(endpointId);
    if (!player) return;
    this.coordinator.remove(endpointId);
    this.players.delete(endpointId);
    if (player.announced) this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: endpointId });
  }

  async probe(host: string, port: number | undefined): Promise<DiscoveredEndpoint> {
    const client = new RokuEcpClient({ host, port: port ?? ROKU_ECP_PORT, timeoutMs: this.options.requestTimeoutMs, agent: this.agent });
    const info = await client.deviceInfo();
    return endpointOf(info, host, port ?? ROKU_ECP_PORT, 'manual');
  }

  receive(message: ServerToDriverMessage): void {
    runBuiltInAction(this.actions, message);
  }

  /** Every command's handler: the named keys, and those that read, launch or check first. */
  private commandTable(): Record<string, Handler> {
    const pressed = async (player: RokuPlayer, key: string) => {
      await player.client.keypress(key);
      this.coordinator.refresh(player.endpoint.id, 300);
      return { key };
    };
    const table: Record<string, Handler> = {};
    for (const [command, key] of Object.entries(KEY_COMMANDS)) table[command] = (player) => pressed(player, key);
    // ECP has one Play key that toggles: ask the player first, press only when it changes something.
    const playOrPause = (wantPlaying: boolean): Handler => async (player) => {
      const media = await player.client.mediaPlayer();
      const playing = media.state === 'play' || media.state === 'buffer';
      if (wantPlaying === playing) return { key: null, unchanged: true };
      return pressed(player, 'Play');
    };
    return {
      ...table,
      play: playOrPause(true),
      pause: playOrPause(false),
      turn_on: (player) => pressed(player, 'PowerOn'),
      turn_off: (player) => pressed(player, 'PowerOff'),
      select_input: (player, params) => {
        const key = inputKey(params.input);
        if (!key) throw rejected(`input must be one of ${Object.keys(INPUT_KEYS).join(', ')}`);
        return pressed(player, key);
      },
      keypress: (player, params) => {
        if (typeof params.key !== 'string') throw rejected('key is required');
        return pressed(player, params.key);
      },
      play_url: async (player, params) => {
        // The Play on Roku system channel (15985) fetches and plays what `u` names.
        const url = typeof params.url === 'string' ? params.url : '';
        if (!/^https?:\/\/\S+$/.test(url)) throw rejected('url must be an http(s) URL the Roku can fetch');
        const query: Record<string, string> = { t: params.kind === 'video' ? 'v' : 'a', u: url };
        if (typeof params.title === 'string') query.songname = params.title;
        if (typeof params.artist === 'string') query.artistname = params.artist;
        await player.client.launch(PLAY_ON_ROKU, query);
        this.coordinator.refresh(player.endpoint.id, 500);
        return { url };
      },
      'apps.list': async (player) => {
        const apps = await player.client.apps();
        return { apps: apps.map((a) => ({ id: a.id, name: a.name, type: a.type ?? 'appl', version: a.version ?? null })) };
      },
      'apps.icon': async (player, params) => {
        if (typeof params.appId !== 'string') throw rejected('appId is required');
        const icon = await player.client.icon(params.appId);
        return { contentType: icon.contentType, data: icon.bytes.toString('base64') };
      },
      'apps.launch': async (player, params) => {
        if (typeof params.appId !== 'string') throw rejected('appId is required');
        const deepLink: Record<string, string> = {};
        if (typeof params.contentId === 'string') deepLink.contentId = params.contentId;
        if (typeof params.mediaType === 'string') deepLink.mediaType = params.mediaType;
        await player.client.launch(params.appId, deepLink);
        this.coordinator.refresh(player.endpoint.id, 500);
        return { appId: params.appId };
      },
    };
  }

  /** One poll of one Roku (the coordinator's `update`): throws when it did not answer. */
  private async pollOnce(id: string): Promise<void> {
    const player = this.players.get(id);
    if (!this.context || !player) return;
    const [info, active, media] = await Promise.all([player.client.deviceInfo(), player.client.activeApp(), player.client.mediaPlayer()]);
    if (this.players.get(id) !== player || !this.context) return;
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
      this.announce(player, info);
      return;
    }
    // The owner renamed it on the TV: the device follows, unless the hub has a label for it.
    const renamed = player.info?.userDeviceName !== info.userDeviceName;
    player.info = info;
    if (renamed && player.endpoint.label === null) this.announce(player, info);
    const changed = Object.fromEntries(Object.entries(next).filter(([k, v]) => player.state[k] !== v));
    player.state = next;
    if (Object.keys(changed).length > 0) this.context.emit({ type: 'STATE_UPDATE', deviceId: id, state: changed });
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
}

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
