import type { Audience } from '../access/audience.js';
import type { MediaService } from '../media/media-service.js';
import type { MediaPlayer, NormalizedCommand } from '../media/model.js';
import { paramsProblem } from '../media/player-commands.js';
import { deviceErrors } from '../devices/errors.js';
import { musicErrors } from './errors.js';
import { controlPlayer, playerFailure, queueOf, type MediaControllerService } from './media-controller.js';
import type { ControlAction, LocalPlayerState, MusicItem, SearchType, Song } from './model.js';
import type { LocalPlayer } from './ports.js';

/** An MPD instance the hub plays music on: the local controller's, or another box's (`MPD_TARGETS`). */
export interface MusicTarget {
  id: string;
  name: string;
  player: LocalPlayer;
}

/** The hub box's own player's id among the music targets. */
export const LOCAL_TARGET = 'local';

/** The normalized commands the local player takes, and the controller action each becomes. */
const LOCAL_COMMANDS: Partial<Record<NormalizedCommand, (params: Record<string, unknown>) => { action: ControlAction; params: Record<string, unknown> }>> = {
  play: () => ({ action: 'play', params: {} }),
  pause: () => ({ action: 'pause', params: {} }),
  toggle: () => ({ action: 'toggle', params: {} }),
  stop: () => ({ action: 'stop', params: {} }),
  next: () => ({ action: 'next', params: {} }),
  previous: () => ({ action: 'previous', params: {} }),
  seek: (p) => ({ action: 'seek', params: { position: p.position } }),
  volume_set: (p) => ({ action: 'volume_set', params: { volume: Math.round(Number(p.volume)) } }),
  volume_step: (p) => ({ action: 'volume_step', params: { delta: p.delta } }),
  shuffle: (p) => ({ action: 'random', params: { enabled: p.enabled } }),
  repeat: (p) => ({ action: 'repeat', params: { enabled: p.mode !== 'off' } }),
};
const LOCAL_CAPABILITIES = Object.keys(LOCAL_COMMANDS) as NormalizedCommand[];

export interface MusicPlayerView extends Omit<MediaPlayer, 'kind'> {
  kind: MediaPlayer['kind'] | 'local';
  /** Whether the hub can start playback of music items on it (`POST /media-services/play`). */
  playsItems: boolean;
}

const PLAYBACK = { playing: 'playing', paused: 'paused', stopped: 'stopped' } as const;

/**
 * Music services: the sources a household plays from (the local MPD library now), the targets it
 * plays on (the local controller, and every media player of the roster for commands), search,
 * playback of items, queues and target-level commands.
 */
export class MusicService {
  private readonly targets = new Map<string, MusicTarget>();

  constructor(
    controller: MediaControllerService,
    private readonly media: MediaService,
    /** Other MPD instances music can play on and move between (`mpd:<id>`). */
    extraTargets: readonly MusicTarget[] = [],
  ) {
    this.targets.set(LOCAL_TARGET, { id: LOCAL_TARGET, name: 'Hub player (MPD)', player: controller.player });
    for (const t of extraTargets) this.targets.set(t.id, t);
  }

  /** An MPD target as a roster entry. */
  private targetView({ id, name, player }: MusicTarget): MusicPlayerView {
    const state = player.snapshot();
    return {
      id,
      name,
      kind: 'local',
      deviceId: null,
      endpointId: null,
      driverKey: null,
      room: '',
      roomId: null,
      capabilities: state.connected ? LOCAL_CAPABILITIES : [],
      online: state.connected,
      status: state.connected ? 'online' : 'offline',
      statusSource: 'runtime',
      power: null,
      volume: state.volume,
      muted: null,
      nowPlaying: state.song
        ? {
            playback: state.playback ? PLAYBACK[state.playback] : null,
            app: null,
            appId: null,
            title: state.song.title,
            artist: state.song.artist,
            album: state.song.album,
            positionSeconds: state.elapsedSeconds,
            durationSeconds: state.durationSeconds,
          }
        : null,
      playsItems: state.connected,
    };
  }

  players(audience: Audience): MusicPlayerView[] {
    const own = audience.everything ? [...this.targets.values()].map((t) => this.targetView(t)) : [];
    return [...own, ...this.media.players(audience).map((p) => ({ ...p, playsItems: this.media.playsUrls(p) }))];
  }

  async status(options: { includeQueues?: boolean }, audience: Audience) {
    const local = this.targets.get(LOCAL_TARGET)!.player.snapshot();
    const players = this.players(audience);
    const sessions = players.filter((p) => p.nowPlaying?.playback === 'playing' || p.nowPlaying?.playback === 'paused').map((p) => ({ targetId: p.id, name: p.name, nowPlaying: p.nowPlaying }));
    let queues: Record<string, Song[]> | undefined;
    if (options.includeQueues && audience.everything) {
      queues = {};
      for (const t of this.targets.values()) queues[t.id] = t.player.snapshot().connected ? await queueOf(t.player) : [];
    }
    return {
      sources: audience.everything ? [{ id: LOCAL_TARGET, name: 'Local library (MPD)', kind: 'mpd', connected: local.connected, error: local.error, version: local.server.version }] : [],
      endpoints: audience.everything ? this.media.endpointViews() : [],
      players,
      sessions,
      ...(queues ? { queues } : {}),
      at: local.at,
    };
  }

  async search(input: { query: string; types?: SearchType[]; source?: string; limit?: number }): Promise<{ items: MusicItem[] }> {
    if (input.source !== undefined && input.source !== LOCAL_TARGET) throw musicErrors.MUSIC_TARGET_NOT_FOUND({ id: input.source }, { details: { source: input.source } });
    try {
      return { items: await this.targets.get(LOCAL_TARGET)!.player.search(input.query, input.types ?? ['track', 'artist', 'album', 'playlist'], input.limit ?? 50) };
    } catch (err) {
      throw playerFailure(err, 'search');
    }
  }

  async play(input: { targetId: string; uri?: string; items?: Array<{ uri: string }>; mode?: 'replace' | 'append' | 'next' }, audience: Audience): Promise<{ targetId: string; added: number; state: LocalPlayerState | null }> {
    if ((input.uri === undefined) === (input.items === undefined)) throw musicErrors.PLAY_ITEMS_REQUIRED({}, { details: { fields: ['uri', 'items'] } });
    const uris = input.uri !== undefined ? [input.uri] : (input.items ?? []).map((i) => i.uri);
    const mpd = audience.everything ? this.targets.get(input.targetId) : undefined;
    if (!mpd) {
      // A media player that plays URLs (a Roku, a bridge endpoint): one stream URL at a time.
      const player = this.target(input.targetId, audience);
      if (!this.media.playsUrls(player)) throw musicErrors.TARGET_CANNOT_PLAY({ target: player.name, what: 'music items' }, { details: { targetId: input.targetId } });
      if (uris.length !== 1 || !/^https?:\/\//.test(uris[0]!)) {
        throw musicErrors.TARGET_CANNOT_PLAY({ target: player.name, what: 'anything but one http(s) URL' }, { details: { targetId: input.targetId, uris } });
      }
      await this.media.playUrl(player.id, uris[0]!, input.mode ? { mode: input.mode } : {}, audience);
      return { targetId: player.id, added: 1, state: null };
    }
    const target = mpd;
    try {
      const { added } = await target.player.enqueue(uris, input.mode ?? 'replace');
      return { targetId: target.id, added, state: target.player.snapshot() };
    } catch (err) {
      throw playerFailure(err, 'play');
    }
  }

  async command(input: { targetId: string; command: NormalizedCommand; params?: Record<string, unknown> }, audience: Audience): Promise<{ targetId: string; command: NormalizedCommand; result?: unknown }> {
    const params = input.params ?? {};
    const target = audience.everything ? this.targets.get(input.targetId) : undefined;
    if (!target) {
      this.target(input.targetId, audience);
      const out = await this.media.command(input.targetId, input.command, params, audience);
      return { targetId: input.targetId, command: input.command, ...(out.result === undefined ? {} : { result: out.result }) };
    }
    const problem = paramsProblem(input.command, params);
    if (problem) throw deviceErrors.INVALID_COMMAND_PARAMS({ command: input.command, problem }, { details: { command: input.command, params } });
    const map = LOCAL_COMMANDS[input.command];
    if (!map) {
      throw musicErrors.TARGET_CANNOT_PLAY({ target: target.name, what: `the command ${input.command}` }, { details: { targetId: target.id, command: input.command, supported: LOCAL_CAPABILITIES } });
    }
    const { action, params: controlParams } = map(params);
    const state = await controlPlayer(target.player, action, controlParams);
    return { targetId: target.id, command: input.command, result: { state } };
  }

  async queue(targetId: string, audience: Audience): Promise<{ targetId: string; items: Song[] }> {
    const target = this.mpdTarget(targetId, audience, 'a queue the hub can read');
    return { targetId, items: await queueOf(target.player) };
  }

  /**
   * Moves what plays on one MPD target to another: the current song at its position (with the
   * rest of the queue when `includeQueue`), playing on the target, then stops the source.
   */
  async transfer(input: { fromTargetId: string; toTargetId: string; includeQueue?: boolean }, audience: Audience) {
    const from = this.mpdTarget(input.fromTargetId, audience, 'music moved from it');
    const to = this.mpdTarget(input.toTargetId, audience, 'music moved to it');
    if (from.id === to.id) throw musicErrors.TRANSFER_TO_ITSELF({ id: from.id }, { details: { targetId: from.id } });
    let state: LocalPlayerState;
    try {
      state = await from.player.fresh();
    } catch (err) {
      throw playerFailure(err, 'transfer');
    }
    if (!state.song || state.playback === 'stopped' || state.playback === null) {
      throw musicErrors.NOTHING_PLAYING({ target: from.name }, { details: { targetId: from.id } });
    }
    const position = state.elapsedSeconds ?? 0;
    try {
      const queue = input.includeQueue ? await queueOf(from.player) : [];
      const uris = input.includeQueue ? queue.map((s) => s.uri) : [state.song.uri];
      const startIndex = input.includeQueue ? (state.song.position ?? 0) : 0;
      const { added } = await to.player.enqueue(uris, 'replace', { startIndex, atSeconds: position });
      await from.player.control('stop', {});
      return { fromTargetId: from.id, toTargetId: to.id, moved: added, song: state.song, positionSeconds: position, state: to.player.snapshot() };
    } catch (err) {
      throw playerFailure(err, 'transfer');
    }
  }

  /** An MPD target by id; a media player is found but cannot do `what` (422); anything else is 404. */
  private mpdTarget(id: string, audience: Audience, what: string): MusicTarget {
    const target = audience.everything ? this.targets.get(id) : undefined;
    if (target) return target;
    const player = this.target(id, audience);
    throw musicErrors.TARGET_CANNOT_PLAY({ target: player.name, what }, { details: { targetId: id } });
  }

  /** A roster player by id, or 404 as a music target. */
  private target(id: string, audience: Audience): MediaPlayer {
    try {
      return this.media.player(id, audience);
    } catch {
      throw musicErrors.MUSIC_TARGET_NOT_FOUND({ id }, { details: { targetId: id } });
    }
  }
}
