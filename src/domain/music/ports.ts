import type { ControlAction, LocalPlayerState, MusicItem, SearchType, Song } from './model.js';

/** Why a local player operation failed: the player refused it (MPD's ACK), is not connected, or did not answer. */
export class LocalPlayerFailure extends Error {
  constructor(
    readonly reason: 'rejected' | 'offline' | 'timeout',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The hub box's own player (MPD), as the music domain uses it. The adapter keeps itself connected
 * (with back-off) and tells of every change as it happens; a failed call rejects with
 * LocalPlayerFailure.
 */
export interface LocalPlayer {
  start(): void;
  stop(): Promise<void>;
  snapshot(): LocalPlayerState;
  /** The state read from the player now (the snapshot may lag a change by one idle round trip). */
  fresh(): Promise<LocalPlayerState>;
  /** Called with each new snapshot: a change at the player, or the connection lost or regained. */
  onChange(listener: (state: LocalPlayerState) => void): void;
  control(action: ControlAction, params: Record<string, unknown>): Promise<void>;
  queue(): Promise<Song[]>;
  search(query: string, types: readonly SearchType[], limit: number): Promise<MusicItem[]>;
  /** Queues what the uris name (tracks, `artist:`, `album:`, `playlist:`, URLs): replacing the queue and playing, after the current song, or at the end. */
  enqueue(uris: readonly string[], mode: 'replace' | 'append' | 'next', start?: { startIndex?: number; atSeconds?: number }): Promise<{ added: number }>;
}
