import { createServer, type Server, type Socket } from 'node:net';
import { parseCommandLine } from '../../src/adapters/mpd/protocol.js';

/**
 * An MPD protocol peer for tests and benchmarks on machines without `mpd`: a TCP server on
 * 127.0.0.1 that speaks MPD's text protocol (greeting, `key: value` answers, `OK`, `ACK`,
 * command lists, `idle`/`noidle`) over an in-memory library, queue and player. Playback time is
 * wall time; songs do not advance by themselves (tests change songs with commands).
 */
export interface MpdTrack {
  file: string;
  Title: string;
  Artist: string;
  Album: string;
  /** Seconds. */
  Time: number;
  Track?: number;
}

interface QueueEntry {
  file: string;
  id: number;
}

export interface MpdEmulator {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly library: MpdTrack[];
  readonly commands: string[];
  readonly state: { state: 'play' | 'pause' | 'stop'; song: number; volume: number; random: boolean; repeat: boolean; single: boolean; consume: boolean };
  queue(): string[];
  /** Connections open now. */
  connections(): number;
  /** Drops every connection and stops listening (MPD died); `restart` listens again on the same port. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

const SUBSYSTEMS = ['database', 'update', 'stored_playlist', 'playlist', 'player', 'mixer', 'output', 'options', 'partition', 'sticker', 'subscription', 'message', 'neighbor', 'mount'];

/** A library of `count` tracks across artists and albums, named predictably for searches. */
export function generateLibrary(count: number): MpdTrack[] {
  const tracks: MpdTrack[] = [];
  for (let i = 0; i < count; i++) {
    const artist = `Artist ${String(Math.floor(i / 100)).padStart(4, '0')}`;
    const album = `Album ${String(Math.floor(i / 10)).padStart(5, '0')}`;
    tracks.push({ file: `music/${artist}/${album}/track-${String(i).padStart(6, '0')}.flac`, Title: `Song ${String(i).padStart(6, '0')}`, Artist: artist, Album: album, Time: 120 + (i % 180), Track: (i % 10) + 1 });
  }
  return tracks;
}

export async function startMpdEmulator(options: { library?: MpdTrack[]; playlists?: Record<string, string[]>; password?: string; port?: number } = {}): Promise<MpdEmulator> {
  const library = options.library ?? generateLibrary(30);
  const byFile = new Map(library.map((t) => [t.file, t]));
  const playlists = options.playlists ?? { Favourites: library.slice(0, 3).map((t) => t.file) };
  const commands: string[] = [];
  let queue: QueueEntry[] = [];
  let nextId = 1;
  const state = { state: 'stop' as 'play' | 'pause' | 'stop', song: -1, volume: 50, random: false, repeat: false, single: false, consume: false };
  let elapsedBase = 0;
  let playingSince = 0;
  let playlistVersion = 1;
  const idlers = new Map<Socket, { subsystems: string[]; pending: Set<string> }>();
  const pendingChanges = new Map<Socket, Set<string>>();
  const sockets = new Set<Socket>();

  const elapsed = () => (state.state === 'play' ? elapsedBase + (Date.now() - playingSince) / 1000 : elapsedBase);
  const current = () => (state.song >= 0 && state.song < queue.length ? byFile.get(queue[state.song]!.file) : undefined);

  const changed = (...subsystems: string[]) => {
    if (subsystems.includes('playlist')) playlistVersion++;
    for (const socket of sockets) {
      const set = pendingChanges.get(socket) ?? new Set<string>();
      for (const s of subsystems) set.add(s);
      pendingChanges.set(socket, set);
      const idler = idlers.get(socket);
      if (idler) flushIdle(socket);
    }
  };

  const flushIdle = (socket: Socket) => {
    const idler = idlers.get(socket);
    const set = pendingChanges.get(socket);
    if (!idler || !set) return;
    const wanted = [...set].filter((s) => idler.subsystems.length === 0 || idler.subsystems.includes(s));
    if (wanted.length === 0) return;
    for (const s of wanted) set.delete(s);
    idlers.delete(socket);
    socket.write(wanted.map((s) => `changed: ${s}\n`).join('') + 'OK\n');
  };

  const setSong = (index: number, play: boolean) => {
    state.song = index;
    elapsedBase = 0;
    playingSince = Date.now();
    state.state = play ? 'play' : state.state === 'stop' ? 'stop' : 'pause';
  };

  const songLines = (entry: QueueEntry, pos: number) => {
    const t = byFile.get(entry.file);
    const tags = t ? [`Title: ${t.Title}`, `Artist: ${t.Artist}`, `Album: ${t.Album}`, `Time: ${t.Time}`, `duration: ${t.Time.toFixed(3)}`, ...(t.Track ? [`Track: ${t.Track}`] : [])] : [];
    return [`file: ${entry.file}`, ...tags, `Pos: ${pos}`, `Id: ${entry.id}`];
  };
  const trackLines = (t: MpdTrack) => [`file: ${t.file}`, `Title: ${t.Title}`, `Artist: ${t.Artist}`, `Album: ${t.Album}`, `Time: ${t.Time}`, `duration: ${t.Time.toFixed(3)}`];

  class Ack extends Error {
    constructor(
      readonly code: number,
      message: string,
    ) {
      super(message);
    }
  }
  const bool = (v: string | undefined, cmd: string) => {
    if (v !== '0' && v !== '1') throw new Ack(2, `Boolean (0/1) expected: ${v ?? ''}`);
    void cmd;
    return v === '1';
  };
  const int = (v: string | undefined) => {
    if (v === undefined || !/^-?\d+$/.test(v)) throw new Ack(2, `Integer expected: ${v ?? ''}`);
    return Number(v);
  };

  /** Legacy `search TAG VALUE ...` pairs, or one filter expression `(TAG contains 'VALUE')`. */
  const matcher = (args: string[], exact: boolean): ((t: MpdTrack) => boolean) => {
    const conditions: Array<{ tag: string; value: string; exact: boolean }> = [];
    if (args.length === 1 && args[0]!.startsWith('(')) {
      const m = /^\((\w+)\s+(==|contains)\s+['"](.*)['"]\)$/.exec(args[0]!);
      if (!m) throw new Ack(2, 'Unsupported filter expression');
      conditions.push({ tag: m[1]!.toLowerCase(), value: m[3]!, exact: m[2] === '==' });
    } else {
      if (args.length % 2 !== 0) throw new Ack(2, 'Incorrect number of filter arguments');
      for (let i = 0; i < args.length; i += 2) conditions.push({ tag: args[i]!.toLowerCase(), value: args[i + 1]!, exact });
    }
    return (t) =>
      conditions.every((c) => {
        const fields = c.tag === 'any' ? [t.Title, t.Artist, t.Album, t.file] : c.tag === 'file' ? [t.file] : [String((t as unknown as Record<string, unknown>)[c.tag[0]!.toUpperCase() + c.tag.slice(1)] ?? '')];
        return fields.some((f) => (c.exact ? f === c.value : f.toLowerCase().includes(c.value.toLowerCase())));
      });
  };

  const run = (name: string, args: string[], authed: { ok: boolean }): string[] => {
    if (options.password && !authed.ok && name !== 'password' && name !== 'ping' && name !== 'close') throw new Ack(4, `you don't have permission for "${name}"`);
    switch (name) {
      case 'ping':
        return [];
      case 'password':
        if (args[0] !== options.password) throw new Ack(3, 'incorrect password');
        authed.ok = true;
        return [];
      case 'status': {
        const lines = [`volume: ${state.volume}`, `repeat: ${+state.repeat}`, `random: ${+state.random}`, `single: ${+state.single}`, `consume: ${+state.consume}`, `playlist: ${playlistVersion}`, `playlistlength: ${queue.length}`, `state: ${state.state}`];
        const song = current();
        if (song && state.song >= 0) {
          lines.push(`song: ${state.song}`, `songid: ${queue[state.song]!.id}`);
          if (state.state !== 'stop') lines.push(`elapsed: ${Math.min(elapsed(), song.Time).toFixed(3)}`, `duration: ${song.Time.toFixed(3)}`);
        }
        return lines;
      }
      case 'currentsong':
        return state.song >= 0 && state.song < queue.length ? songLines(queue[state.song]!, state.song) : [];
      case 'playlistinfo':
        return queue.flatMap((e, pos) => songLines(e, pos));
      case 'stats':
        return [`artists: ${new Set(library.map((t) => t.Artist)).size}`, `albums: ${new Set(library.map((t) => t.Album)).size}`, `songs: ${library.length}`];
      case 'play': {
        const pos = args[0] === undefined ? (state.song >= 0 ? state.song : 0) : int(args[0]);
        if (pos < 0 || pos >= queue.length) throw new Ack(50, 'Bad song index');
        if (args[0] === undefined && state.state === 'pause') {
          state.state = 'play';
          playingSince = Date.now();
        } else setSong(pos, true);
        changed('player');
        return [];
      }
      case 'playid': {
        const pos = queue.findIndex((e) => e.id === int(args[0]));
        if (pos < 0) throw new Ack(50, 'No such song');
        setSong(pos, true);
        changed('player');
        return [];
      }
      case 'pause': {
        if (state.state === 'stop') return [];
        const pause = args[0] === undefined ? state.state === 'play' : bool(args[0], name);
        if (pause && state.state === 'play') {
          elapsedBase = elapsed();
          state.state = 'pause';
        } else if (!pause && state.state === 'pause') {
          state.state = 'play';
          playingSince = Date.now();
        }
        changed('player');
        return [];
      }
      case 'stop':
        state.state = 'stop';
        elapsedBase = 0;
        changed('player');
        return [];
      case 'next':
      case 'previous': {
        if (state.state === 'stop' || queue.length === 0) return [];
        const pos = state.song + (name === 'next' ? 1 : -1);
        if (pos < 0 || pos >= queue.length) {
          state.state = 'stop';
          state.song = -1;
        } else setSong(pos, state.state === 'play');
        changed('player');
        return [];
      }
      case 'seekcur': {
        const song = current();
        if (!song || state.state === 'stop') throw new Ack(55, 'Not playing');
        const t = Number(args[0]);
        if (!Number.isFinite(t)) throw new Ack(2, 'Number expected');
        elapsedBase = Math.max(0, Math.min(song.Time, /^[+-]/.test(args[0]!) ? elapsed() + t : t));
        playingSince = Date.now();
        changed('player');
        return [];
      }
      case 'setvol': {
        const v = int(args[0]);
        if (v < 0 || v > 100) throw new Ack(2, 'Invalid volume value');
        state.volume = v;
        changed('mixer');
        return [];
      }
      case 'volume': {
        state.volume = Math.max(0, Math.min(100, state.volume + int(args[0])));
        changed('mixer');
        return [];
      }
      case 'random':
      case 'repeat':
      case 'single':
      case 'consume':
        state[name] = bool(args[0], name);
        changed('options');
        return [];
      case 'clear':
        queue = [];
        state.song = -1;
        state.state = 'stop';
        changed('playlist', 'player');
        return [];
      case 'add':
      case 'addid': {
        const uri = args[0] ?? '';
        const files = byFile.has(uri) ? [uri] : library.filter((t) => uri !== '' && t.file.startsWith(`${uri.replace(/\/$/, '')}/`)).map((t) => t.file);
        if (files.length === 0 && !/^https?:\/\//.test(uri)) throw new Ack(50, 'No such directory');
        const entries = (files.length > 0 ? files : [uri]).map((file) => ({ file, id: nextId++ }));
        const at = args[1] === undefined ? queue.length : int(args[1]);
        if (at < 0 || at > queue.length) throw new Ack(2, 'Bad song index');
        queue.splice(at, 0, ...entries);
        if (state.song >= at && state.song >= 0 && args[1] !== undefined) state.song += entries.length;
        changed('playlist');
        return name === 'addid' ? [`Id: ${entries[0]!.id}`] : [];
      }
      case 'delete': {
        // `POS` or a range `START:END` (END exclusive).
        const range = /^(\d+):(\d+)$/.exec(args[0] ?? '');
        const start = range ? Number(range[1]) : int(args[0]);
        const end = range ? Number(range[2]) : start + 1;
        if (start < 0 || end > queue.length || start >= end) throw new Ack(50, 'Bad song index');
        queue.splice(start, end - start);
        if (state.song >= start && state.song < end) {
          state.state = 'stop';
          state.song = -1;
        } else if (state.song >= end) state.song -= end - start;
        changed('playlist');
        return [];
      }
      case 'search':
      case 'find': {
        // An optional trailing `window START:END` (MPD 0.21+).
        let window: [number, number] | null = null;
        if (args.length >= 2 && args[args.length - 2] === 'window') {
          const w = /^(\d+):(\d+)$/.exec(args[args.length - 1]!);
          if (!w) throw new Ack(2, 'Bad window');
          window = [Number(w[1]), Number(w[2])];
          args = args.slice(0, -2);
        }
        const match = matcher(args, name === 'find');
        const found: MpdTrack[] = [];
        for (const t of library) {
          if (!match(t)) continue;
          found.push(t);
          if (window && found.length >= window[1]) break;
        }
        return (window ? found.slice(window[0]) : found).flatMap(trackLines);
      }
      case 'list': {
        const tag = (args[0] ?? '').toLowerCase();
        const key = { artist: 'Artist', album: 'Album', title: 'Title' }[tag] as keyof MpdTrack | undefined;
        if (!key) throw new Ack(2, `Unknown tag type: ${args[0] ?? ''}`);
        const match = args.length > 1 ? matcher(args.slice(1), true) : () => true;
        return [...new Set(library.filter(match).map((t) => String(t[key])))].map((v) => `${key}: ${v}`);
      }
      case 'listplaylists':
        return Object.keys(playlists).flatMap((n) => [`playlist: ${n}`, 'Last-Modified: 2026-01-01T00:00:00Z']);
      case 'listplaylistinfo': {
        const files = playlists[args[0] ?? ''];
        if (!files) throw new Ack(50, 'No such playlist');
        return files.flatMap((f) => (byFile.get(f) ? trackLines(byFile.get(f)!) : [`file: ${f}`]));
      }
      case 'load': {
        const files = playlists[args[0] ?? ''];
        if (!files) throw new Ack(50, 'No such playlist');
        queue.push(...files.map((file) => ({ file, id: nextId++ })));
        changed('playlist');
        return [];
      }
      default:
        throw new Ack(5, `unknown command "${name}"`);
    }
  };

  const serve = (socket: Socket) => {
    sockets.add(socket);
    socket.setEncoding('utf8');
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      idlers.delete(socket);
      pendingChanges.delete(socket);
    });
    socket.write('OK MPD 0.23.5\n');
    const authed = { ok: false };
    let buffer = '';
    let list: { lines: string[]; ok: boolean } | null = null;
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        commands.push(line);
        const parsed = parseCommandLine(line);
        if (!parsed) {
          socket.write('ACK [2@0] {} Invalid argument\n');
          continue;
        }
        const { name, args } = parsed;
        if (name === 'noidle') {
          if (idlers.delete(socket)) socket.write('OK\n');
          continue;
        }
        if (name === 'close') return void socket.end();
        if (name === 'command_list_begin' || name === 'command_list_ok_begin') {
          list = { lines: [], ok: name === 'command_list_ok_begin' };
          continue;
        }
        if (list && name !== 'command_list_end') {
          list.lines.push(line);
          continue;
        }
        if (name === 'idle') {
          const unknown = args.find((a) => !SUBSYSTEMS.includes(a));
          if (unknown) {
            socket.write(`ACK [2@0] {idle} Unrecognized idle event: ${unknown}\n`);
            continue;
          }
          idlers.set(socket, { subsystems: args, pending: new Set() });
          flushIdle(socket);
          continue;
        }
        const batch = name === 'command_list_end' && list ? list : null;
        if (name === 'command_list_end') list = null;
        const lines = batch ? batch.lines : [line];
        let out = '';
        let failed = false;
        lines.forEach((l, index) => {
          if (failed) return;
          const p = parseCommandLine(l)!;
          try {
            out += run(p.name, p.args, authed).map((x) => `${x}\n`).join('');
            if (batch?.ok) out += 'list_OK\n';
          } catch (err) {
            failed = true;
            const ack = err instanceof Ack ? err : new Ack(5, String(err));
            out += `ACK [${ack.code}@${index}] {${p.name}} ${ack.message}\n`;
          }
        });
        socket.write(failed ? out : `${out}OK\n`);
      }
    });
  };

  let server: Server = createServer(serve);
  const listen = (port: number) => new Promise<number>((resolve) => server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  const port = await listen(options.port ?? 0);
  const stopServer = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  return {
    host: '127.0.0.1',
    port,
    library,
    commands,
    state,
    queue: () => queue.map((e) => e.file),
    connections: () => sockets.size,
    kill: stopServer,
    async restart() {
      server = createServer(serve);
      await listen(port);
    },
    close: async () => {
      if (server.listening) await stopServer();
    },
  };
}
