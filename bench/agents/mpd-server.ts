/**
 * An MPD protocol peer (test/support/mpd-emulator.ts) in a process of its own, with a generated
 * library: the media benchmark's music source, so that its CPU is not counted as the service's.
 */
import { generateLibrary, startMpdEmulator, type MpdEmulator } from '../../test/support/mpd-emulator.js';
import { serveAgent } from './runtime.js';

let mpd: MpdEmulator | undefined;

async function start(p: { tracks: number }) {
  const library = generateLibrary(p.tracks);
  mpd = await startMpdEmulator({ library, playlists: { 'Bench mix': library.slice(0, 50).map((t) => t.file) } });
  return { host: mpd.host, port: mpd.port, tracks: library.length, firstAlbum: library[0]!.Album };
}

serveAgent('mpd-server', { start }, () => {
  void mpd?.close();
});
