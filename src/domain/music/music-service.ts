import type { Audience } from '../access/audience.js';
import type { MediaService } from '../media/media-service.js';
import type { MediaPlayer, NormalizedCommand } from '../media/model.js';
import { paramsProblem } from '../media/player-commands.js';
import { mediaErrors } from '../media/errors.js';
import { musicErrors } from './errors.js';
import { playerFailure, type MediaControllerService } from './media-controller.js';
import type { ControlAction, LocalPlayerState, MusicItem, SearchType, Song } from './model.js';

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
  constructor(
    private readonly controller: MediaControllerService,
    private readonly media: MediaService,
  ) {}

  /** The local player as a roster entry. */
  private localPlayer(state: LocalPlayerState): MusicPlayerView {
    return {
      id: LOCAL_TARGET,
      name: 'Hub player (MPD)',
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
    const local = audience.everything ? [this.localPlayer(this.controller.state())] : [];
    return [...local, ...this.media.players(audience).map((p) => ({ ...p, playsItems: false }))];
  }

  async status(options: { includeQueues?: boolean }, audience: Audience) {
    const state = this.controller.state();
    const players = this.players(audience);
    const sessions = players.filter((p) => p.nowPlaying?.playback === 'playing' || p.nowPlaying?.playback === 'paused').map((p) => ({ targetId: p.id, name: p.name, nowPlaying: p.nowPlaying }));
    let queues: Record<string, Song[]> | undefined;
    if (options.includeQueues && audience.everything) queues = { [LOCAL_TARGET]: state.connected ? await this.controller.queue() : [] };
    return {
      sources: audience.everything ? [{ id: LOCAL_TARGET, name: 'Local library (MPD)', kind: 'mpd', connected: state.connected, error: state.error, version: state.server.version }] : [],
      endpoints: audience.everything ? this.media.endpointViews() : [],
      players,
      sessions,
      ...(queues ? { queues } : {}),
      at: state.at,
    };
  }

  async search(input: { query: string; types?: SearchType[]; source?: string; limit?: number }): Promise<{ items: MusicItem[] }> {
    if (input.source !== undefined && input.source !== LOCAL_TARGET) throw musicErrors.MUSIC_TARGET_NOT_FOUND({ id: input.source }, { details: { source: input.source } });
    try {
      return { items: await this.controller.player.search(input.query, input.types ?? ['track', 'artist', 'album', 'playlist'], input.limit ?? 50) };
    } catch (err) {
      throw playerFailure(err, 'search');
    }
  }

  async play(input: { targetId: string; uri?: string; items?: Array<{ uri: string }>; mode?: 'replace' | 'append' | 'next' }, audience: Audience): Promise<{ targetId: string; added: number; state: LocalPlayerState }> {
    if ((input.uri === undefined) === (input.items === undefined)) throw musicErrors.PLAY_ITEMS_REQUIRED({}, { details: { fields: ['uri', 'items'] } });
    const uris = input.uri !== undefined ? [input.uri] : (input.items ?? []).map((i) => i.uri);
    if (input.targetId !== LOCAL_TARGET) {
      const target = this.target(input.targetId, audience);
      throw musicErrors.TARGET_CANNOT_PLAY({ target: target.name, what: 'music items' }, { details: { targetId: input.targetId } });
    }
    if (!audience.everything) throw musicErrors.MUSIC_TARGET_NOT_FOUND({ id: input.targetId }, { details: { targetId: input.targetId } });
    try {
      const { added } = await this.controller.player.enqueue(uris, input.mode ?? 'replace');
      return { targetId: LOCAL_TARGET, added, state: this.controller.state() };
    } catch (err) {
      throw playerFailure(err, 'play');
    }
  }

  async command(input: { targetId: string; command: NormalizedCommand; params?: Record<string, unknown> }, audience: Audience): Promise<{ targetId: string; command: NormalizedCommand; result?: unknown }> {
    const params = input.params ?? {};
    if (input.targetId !== LOCAL_TARGET) {
      this.target(input.targetId, audience);
      const out = await this.media.command(input.targetId, input.command, params, audience);
      return { targetId: input.targetId, command: input.command, ...(out.result === undefined ? {} : { result: out.result }) };
    }
    if (!audience.everything) throw musicErrors.MUSIC_TARGET_NOT_FOUND({ id: input.targetId }, { details: { targetId: input.targetId } });
    const problem = paramsProblem(input.command, params);
    if (problem) throw mediaErrors.INVALID_COMMAND_PARAMS({ command: input.command, problem }, { details: { command: input.command, params } });
    const map = LOCAL_COMMANDS[input.command];
    if (!map) {
      throw musicErrors.TARGET_CANNOT_PLAY({ target: 'The hub player', what: `the command ${input.command}` }, { details: { targetId: LOCAL_TARGET, command: input.command, supported: LOCAL_CAPABILITIES } });
    }
    const { action, params: controlParams } = map(params);
    const state = await this.controller.control(action, controlParams);
    return { targetId: LOCAL_TARGET, command: input.command, result: { state } };
  }

  async queue(targetId: string, audience: Audience): Promise<{ targetId: string; items: Song[] }> {
    if (targetId !== LOCAL_TARGET || !audience.everything) {
      const target = this.target(targetId, audience);
      throw musicErrors.TARGET_CANNOT_PLAY({ target: target.name, what: 'a queue the hub can read' }, { details: { targetId } });
    }
    return { targetId, items: await this.controller.queue() };
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
