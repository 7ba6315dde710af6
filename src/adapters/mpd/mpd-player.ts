import { Backoff } from '../../platform/backoff.js';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import type { ControlAction, LocalPlayerState, MusicItem, SearchType, Song } from '../../domain/music/model.js';
import { LocalPlayerFailure, type LocalPlayer } from '../../domain/music/ports.js';
import { MpdConnection, MpdError } from './mpd-connection.js';
import { parsePairs, toObject, toRecords } from './protocol.js';

export interface MpdPlayerOptions {
  host: string;
  port: number;
  password?: string;
  timeoutMs: number;
  /** First reconnect delay; doubles up to `maxRetryMs`. */
  retryMs: number;
  maxRetryMs: number;
  clock: Clock;
  timers: Timers;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** The subsystems whose changes alter the snapshot. */
const WATCHED = ['player', 'mixer', 'options', 'playlist'];

const num = (v: string | undefined) => (v === undefined || v === '' || !Number.isFinite(Number(v)) ? null : Number(v));

export function songOf(r: Record<string, string>): Song {
  return {
    uri: r.file ?? '',
    title: r.Title ?? r.Name ?? null,
    artist: r.Artist ?? null,
    album: r.Album ?? null,
    track: num(r.Track?.split('/')[0]),
    durationSeconds: num(r.duration) ?? num(r.Time),
    position: num(r.Pos),
    id: num(r.Id),
  };
}

/**
 * The local media controller on MPD: two connections, one for commands and one parked in `idle`
 * so that changes arrive as MPD makes them (no polling); on each change the snapshot is read
 * again (`status`, `currentsong`) and handed to the listener. A lost connection is reported
 * (connected: false) and retried with back-off; MPD may be down when the hub starts.
 */
export class MpdPlayer implements LocalPlayer {
  private commands: MpdConnection | null = null;
  private idler: MpdConnection | null = null;
  private state: LocalPlayerState;
  private listener: ((state: LocalPlayerState) => void) | null = null;
  private running = false;
  private retry: TimerHandle | null = null;
  private readonly backoff: Backoff;
  private generation = 0;

  constructor(private readonly o: MpdPlayerOptions) {
    this.backoff = new Backoff({ initialMs: o.retryMs, maxMs: o.maxRetryMs });
    this.state = this.disconnected('not connected yet');
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.connect();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.generation++;
    if (this.retry) this.o.timers.clearTimeout(this.retry);
    this.retry = null;
    this.commands?.close();
    this.idler?.close();
    this.commands = this.idler = null;
  }

  snapshot(): LocalPlayerState {
    return this.state;
  }

  async fresh(): Promise<LocalPlayerState> {
    if (!this.commands?.open) throw new LocalPlayerFailure('offline', this.state.error ?? 'MPD is not connected');
    try {
      await this.refresh(this.generation);
    } catch (err) {
      throw new LocalPlayerFailure(err instanceof MpdError && err.failure === 'timeout' ? 'timeout' : 'offline', err instanceof Error ? err.message : String(err));
    }
    return this.state;
  }

  onChange(listener: (state: LocalPlayerState) => void): void {
    this.listener = listener;
  }

  async control(action: ControlAction, params: Record<string, unknown>): Promise<void> {
    const run = (name: string, args: Array<string | number> = []) => this.run(name, args);
    switch (action) {
      case 'play':
        await run('play');
        break;
      case 'pause':
        await run('pause', [1]);
        break;
      case 'toggle':
        if (this.state.playback === 'playing') await run('pause', [1]);
        else await run('play');
        break;
      case 'stop':
      case 'next':
      case 'previous':
      case 'clear':
        await run(action);
        break;
      case 'seek':
        await run('seekcur', [Number(params.position)]);
        break;
      case 'volume_set':
        await run('setvol', [Math.round(Number(params.volume))]);
        break;
      case 'volume_step': {
        // `volume` is deprecated in MPD: step from the volume MPD has now (the snapshot may lag a change).
        const base = Number(toObject(parsePairs(await run('status'))).volume ?? 0);
        await run('setvol', [Math.max(0, Math.min(100, Math.round(base + Number(params.delta))))]);
        break;
      }
      case 'random':
        await run('random', [params.enabled ? 1 : 0]);
        break;
      case 'repeat':
        await run('repeat', [params.enabled ? 1 : 0]);
        break;
      case 'add':
        await run('add', [String(params.uri)]);
        break;
      case 'play_index':
        await run('play', [Number(params.index)]);
        break;
    }
  }

  async queue(): Promise<Song[]> {
    return toRecords(parsePairs(await this.run('playlistinfo'))).map(songOf);
  }

  async search(query: string, types: readonly SearchType[], limit: number): Promise<MusicItem[]> {
    const items: MusicItem[] = [];
    const source = 'local';
    const q = query.trim();
    // MPD filters and windows on its side (filter expressions and `window`, MPD 0.21+): a broad
    // query over a large library sends back `limit` songs, not every match.
    const contains = (tag: string) => `(${tag} contains '${q.replace(/['\\]/g, (c) => `\\${c}`)}')`;
    if (types.includes('track')) {
      const tracks = toRecords(parsePairs(await this.run('search', [contains('any'), 'window', `0:${limit}`]))).map(songOf);
      for (const t of tracks) items.push({ type: 'track', uri: t.uri, name: t.title ?? t.uri, artist: t.artist, album: t.album, durationSeconds: t.durationSeconds, source });
    }
    if (types.includes('artist')) {
      const artists = parsePairs(await this.run('list', ['artist', contains('artist')])).map(([, v]) => v);
      for (const a of artists.slice(0, limit)) items.push({ type: 'artist', uri: `artist:${a}`, name: a, artist: a, album: null, durationSeconds: null, source });
    }
    if (types.includes('album')) {
      const albums = parsePairs(await this.run('list', ['album', contains('album')])).map(([, v]) => v);
      for (const a of albums.slice(0, limit)) items.push({ type: 'album', uri: `album:${a}`, name: a, artist: null, album: a, durationSeconds: null, source });
    }
    if (types.includes('playlist')) {
      const needle = q.toLowerCase();
      const lists = parsePairs(await this.run('listplaylists')).filter(([k]) => k === 'playlist').map(([, v]) => v).filter((v) => v.toLowerCase().includes(needle));
      for (const p of lists.slice(0, limit)) items.push({ type: 'playlist', uri: `playlist:${p}`, name: p, artist: null, album: null, durationSeconds: null, source });
    }
    return items;
  }

  async enqueue(uris: readonly string[], mode: 'replace' | 'append' | 'next', start: { startIndex?: number; atSeconds?: number } = {}): Promise<{ added: number }> {
    // What each uri names, as files (or stream URLs), in order.
    const files: string[] = [];
    for (const uri of uris) {
      if (uri.startsWith('artist:') || uri.startsWith('album:')) {
        const tag = uri.startsWith('artist:') ? 'artist' : 'album';
        files.push(...toRecords(parsePairs(await this.run('find', [tag, uri.slice(tag.length + 1)]))).map((r) => r.file!));
      } else if (uri.startsWith('playlist:')) {
        files.push(...toRecords(parsePairs(await this.run('listplaylistinfo', [uri.slice('playlist:'.length)]))).map((r) => r.file!));
      } else files.push(uri);
    }
    if (files.length === 0) throw new LocalPlayerFailure('rejected', 'nothing to play: the items name no track');
    // Added first, at the end (or after the current song); the old queue goes only once every
    // item was taken, so a uri MPD refuses leaves the queue as it was.
    const now = await this.fresh();
    const before = now.queueLength;
    const current = now.song?.position;
    let at = mode === 'next' && current !== null && current !== undefined ? current + 1 : null;
    let added = 0;
    try {
      for (const file of files) {
        await this.run('addid', at === null ? [file] : [file, at]);
        added++;
        if (at !== null) at++;
      }
    } catch (err) {
      if (added > 0) {
        const start = at === null ? before : at - added;
        await this.run('delete', [`${start}:${start + added}`]).catch(() => undefined);
      }
      throw err;
    }
    if (mode === 'replace') {
      if (before > 0) await this.run('delete', [`0:${before}`]);
      await this.run('play', [Math.min(start.startIndex ?? 0, files.length - 1)]);
      if (start.atSeconds && start.atSeconds > 0) await this.run('seekcur', [Math.round(start.atSeconds * 1000) / 1000]);
    }
    return { added: files.length };
  }

  /** A command on the command connection, its failure as the domain's. */
  private async run(name: string, args: Array<string | number> = []): Promise<string[]> {
    const connection = this.commands;
    if (!connection?.open) throw new LocalPlayerFailure('offline', this.state.error ?? 'MPD is not connected');
    try {
      return await connection.command(name, args);
    } catch (err) {
      if (err instanceof MpdError) {
        if (err.failure === 'ack') throw new LocalPlayerFailure('rejected', err.message);
        throw new LocalPlayerFailure(err.failure === 'timeout' ? 'timeout' : 'offline', err.message);
      }
      throw err;
    }
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    const lost = (error: MpdError) => {
      if (generation !== this.generation || !this.running) return;
      this.o.log.warn({ host: this.o.host, port: this.o.port, err: error.message }, 'MPD connection lost');
      this.fail(error.message);
    };
    const options = { host: this.o.host, port: this.o.port, timeoutMs: this.o.timeoutMs, timers: this.o.timers, onClose: lost, ...(this.o.password ? { password: this.o.password } : {}) };
    try {
      const opened = await Promise.allSettled([MpdConnection.open(options), MpdConnection.open(options)]);
      const failed = opened.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) {
        for (const o of opened) if (o.status === 'fulfilled') o.value.close();
        throw failed.reason;
      }
      const [commands, idler] = opened.map((o) => (o as PromiseFulfilledResult<MpdConnection>).value) as [MpdConnection, MpdConnection];
      if (generation !== this.generation || !this.running) {
        commands.close();
        idler.close();
        return;
      }
      this.commands = commands;
      this.idler = idler;
      this.backoff.succeed();
      await this.refresh(generation);
      this.o.log.info({ host: this.o.host, port: this.o.port, version: commands.version }, 'MPD connected');
      void this.watch(generation, idler);
    } catch (err) {
      if (generation !== this.generation || !this.running) return;
      this.fail(err instanceof Error ? err.message : String(err));
    }
  }

  /** `idle` in a loop on its own connection: each answer is a change, read and published. */
  private async watch(generation: number, idler: MpdConnection): Promise<void> {
    for (;;) {
      let changed: string[];
      try {
        changed = await idler.idle(WATCHED);
      } catch {
        return; // the connection's onClose has reported it
      }
      if (generation !== this.generation) return;
      if (changed.length > 0) await this.refresh(generation).catch(() => undefined);
    }
  }

  private async refresh(generation: number): Promise<void> {
    const connection = this.commands;
    if (!connection) return;
    const [statusLines, songLines] = await Promise.all([connection.command('status'), connection.command('currentsong')]);
    if (generation !== this.generation) return;
    const status = toObject(parsePairs(statusLines));
    const song = songLines.length > 0 ? songOf(toObject(parsePairs(songLines))) : null;
    const playback = status.state === 'play' ? 'playing' : status.state === 'pause' ? 'paused' : status.state === 'stop' ? 'stopped' : null;
    const volume = num(status.volume);
    this.publish({
      connected: true,
      error: null,
      server: { host: this.o.host, port: this.o.port, version: connection.version || null },
      playback,
      volume: volume === null || volume < 0 ? null : volume,
      song,
      elapsedSeconds: num(status.elapsed),
      durationSeconds: num(status.duration) ?? song?.durationSeconds ?? null,
      queueLength: num(status.playlistlength) ?? 0,
      options: { random: status.random === '1', repeat: status.repeat === '1', single: status.single === '1', consume: status.consume === '1' },
      at: this.o.clock.now(),
    });
  }

  private fail(reason: string): void {
    this.commands?.close();
    this.idler?.close();
    this.commands = this.idler = null;
    this.generation++;
    const wasConnected = this.state.connected;
    if (wasConnected || this.state.error !== reason) this.publish(this.disconnected(reason));
    if (!this.running || this.retry) return;
    const delay = this.backoff.fail();
    this.retry = this.o.timers.setTimeout(() => {
      this.retry = null;
      if (this.running) void this.connect();
    }, delay);
  }

  private disconnected(reason: string): LocalPlayerState {
    return {
      connected: false,
      error: reason,
      server: { host: this.o.host, port: this.o.port, version: null },
      playback: null,
      volume: null,
      song: null,
      elapsedSeconds: null,
      durationSeconds: null,
      queueLength: 0,
      options: null,
      at: this.o.clock.now(),
    };
  }

  /** Keeps the state, and tells the listener when something besides its time changed (a re-read after our own command often finds what idle already told). */
  private publish(state: LocalPlayerState): void {
    const unchanged = JSON.stringify({ ...state, at: 0 }) === JSON.stringify({ ...this.state, at: 0 });
    this.state = state;
    if (!unchanged) this.listener?.(state);
  }
}
