/**
 * The music side of the media family: the hub box's own player (the local media controller,
 * MPD) and the normalized items music sources answer searches with.
 */

export interface Song {
  /** What to play it again with (`add`), e.g. `music/Artist/Album/01.flac` or a stream URL. */
  uri: string;
  title: string | null;
  artist: string | null;
  album: string | null;
  track: number | null;
  durationSeconds: number | null;
  /** Position and id in the queue, for a queued song. */
  position: number | null;
  id: number | null;
}

export interface PlayerOptions {
  random: boolean;
  repeat: boolean;
  single: boolean;
  consume: boolean;
}

/** The local media controller's snapshot. */
export interface LocalPlayerState {
  connected: boolean;
  /** Why it is not connected (the last failure), null while connected. */
  error: string | null;
  server: { host: string; port: number; version: string | null };
  playback: 'playing' | 'paused' | 'stopped' | null;
  volume: number | null;
  song: Song | null;
  elapsedSeconds: number | null;
  durationSeconds: number | null;
  queueLength: number;
  options: PlayerOptions | null;
  /** Epoch ms of this snapshot. */
  at: number;
}

export const CONTROL_ACTIONS = ['play', 'pause', 'toggle', 'stop', 'next', 'previous', 'seek', 'volume_set', 'volume_step', 'random', 'repeat', 'clear', 'add', 'play_index'] as const;
export type ControlAction = (typeof CONTROL_ACTIONS)[number];

export type SearchType = 'track' | 'artist' | 'album' | 'playlist';
export const SEARCH_TYPES: readonly SearchType[] = ['track', 'artist', 'album', 'playlist'];

/** One search result, whatever the source. */
export interface MusicItem {
  type: SearchType;
  /** Play it with this (a track's file, `artist:…`, `album:…`, `playlist:…`). */
  uri: string;
  name: string;
  artist: string | null;
  album: string | null;
  durationSeconds: number | null;
  source: string;
}
