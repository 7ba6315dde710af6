import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MpdConnection } from '../src/adapters/mpd/mpd-connection.js';
import { systemTimers } from '../src/platform/clock.js';
import { startServer, tempDataDir } from './support/server.js';
import { SseClient } from './support/sse-client.js';
import { freePort } from './support/net.js';

/**
 * The local media controller against a real MPD (Debian's `mpd`), when the machine has one:
 * started here with a generated configuration (loopback, a null audio output) and a library of
 * short generated WAV files with RIFF INFO tags. Skipped where there is no `mpd`.
 */
const MPD = ['/usr/bin/mpd', '/usr/sbin/mpd', '/usr/local/bin/mpd', ...(process.env.PATH ?? '').split(':').map((d) => path.join(d, 'mpd'))].find((p) => {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
});

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A RIFF INFO sub-chunk: id, length, NUL-terminated text padded to an even length. */
function infoChunk(id: string, text: string): Buffer {
  let body = Buffer.from(`${text}\0`, 'utf8');
  if (body.length % 2 === 1) body = Buffer.concat([body, Buffer.alloc(1)]);
  const head = Buffer.alloc(8);
  head.write(id, 0, 'ascii');
  head.writeUInt32LE(Buffer.byteLength(`${text}\0`), 4);
  return Buffer.concat([head, body]);
}

/** One second of 8 kHz mono 16-bit silence, tagged with title, artist and album. */
function wav(tags: { title: string; artist: string; album: string }): Buffer {
  const rate = 8000;
  const data = Buffer.alloc(rate * 2);
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8);
  fmt.writeUInt16LE(1, 10);
  fmt.writeUInt32LE(rate, 12);
  fmt.writeUInt32LE(rate * 2, 16);
  fmt.writeUInt16LE(2, 20);
  fmt.writeUInt16LE(16, 22);
  const info = Buffer.concat([Buffer.from('INFO', 'ascii'), infoChunk('INAM', tags.title), infoChunk('IART', tags.artist), infoChunk('IPRD', tags.album)]);
  const list = Buffer.concat([Buffer.from('LIST', 'ascii'), Buffer.alloc(4), info]);
  list.writeUInt32LE(info.length, 4);
  const dataHead = Buffer.alloc(8);
  dataHead.write('data', 0, 'ascii');
  dataHead.writeUInt32LE(data.length, 4);
  const body = Buffer.concat([Buffer.from('WAVE', 'ascii'), fmt, list, dataHead, data]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'ascii');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}


async function startRealMpd(): Promise<{ port: number; child: ChildProcess }> {
  const dir = tempDataDir();
  closers.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const music = path.join(dir, 'music');
  for (let a = 0; a < 2; a++) {
    for (let t = 0; t < 3; t++) {
      const folder = path.join(music, `Band ${a}`, `Record ${a}`);
      fs.mkdirSync(folder, { recursive: true });
      fs.writeFileSync(path.join(folder, `0${t + 1}.wav`), wav({ title: `Tune ${a}${t} Zebra`, artist: `Band ${a}`, album: `Record ${a}` }));
    }
  }
  fs.mkdirSync(path.join(dir, 'playlists'));
  const port = await freePort();
  const conf = path.join(dir, 'mpd.conf');
  fs.writeFileSync(
    conf,
    [
      `music_directory "${music}"`,
      `playlist_directory "${path.join(dir, 'playlists')}"`,
      `db_file "${path.join(dir, 'database')}"`,
      `state_file "${path.join(dir, 'state')}"`,
      'bind_to_address "127.0.0.1"',
      `port "${port}"`,
      'auto_update "no"',
      'audio_output {\n  type "null"\n  name "null"\n  mixer_type "software"\n}',
      '',
    ].join('\n'),
  );
  const child = spawn(MPD!, ['--no-daemon', '--stderr', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  // Stopped and waited for before its folder goes: mpd writes its state file as it exits, and a
  // folder removed under it fails with ENOTEMPTY. SIGKILL if it has not gone within 5 s.
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  closers.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  });
  // Bounded wait for it to listen, then for the database to be read.
  let connection: MpdConnection | undefined;
  for (let i = 0; i < 100 && !connection; i++) {
    connection = await MpdConnection.open({ host: '127.0.0.1', port, timeoutMs: 1000, timers: systemTimers }).catch(() => undefined);
    if (!connection) await new Promise((r) => setTimeout(r, 100));
  }
  if (!connection) throw new Error('mpd did not start listening');
  await connection.command('update');
  for (let i = 0; i < 100; i++) {
    const status = await connection.command('status');
    if (!status.some((l) => l.startsWith('updating_db'))) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  connection.close();
  return { port, child };
}

describe.skipIf(!MPD)('the local media controller against a real mpd', () => {
  it('connects, plays, searches, and streams changes MPD makes', async () => {
    const { port } = await startRealMpd();
    const s = await startServer({ env: { MPD_HOST: '127.0.0.1', MPD_PORT: String(port) } });
    closers.push(() => s.close());
    const token = await s.login();
    const call = async (method: string, p: string, body?: unknown) => {
      const res = await s.request(method, `/app/os${p}`, { token, ...(body === undefined ? {} : { body }) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    let state = await call('GET', '/media-controller/state');
    for (let i = 0; i < 100 && state.body.connected !== true; i++) {
      await new Promise((r) => setTimeout(r, 50));
      state = await call('GET', '/media-controller/state');
    }
    expect(state.body).toMatchObject({ connected: true, server: { port } });

    const found = await call('POST', '/media-services/search', { query: 'zebra', types: ['track'] });
    expect(found.status).toBe(200);
    expect((found.body.items as unknown[]).length).toBe(6);
    const played = await call('POST', '/media-services/play', { targetId: 'local', uri: 'album:Record 1' });
    expect(played.body).toMatchObject({ added: 3 });
    const queue = await call('GET', '/media-services/queue/local');
    expect((queue.body.items as Array<{ artist: string }>).every((i) => i.artist === 'Band 1')).toBe(true);
    expect((await call('POST', '/media-controller/control', { action: 'play_index', params: { index: 99 } })).status).toBe(422);

    const streamToken = ((await call('POST', '/auth/stream-token')).body as { accessToken: string }).accessToken;
    const sse = await SseClient.open(`${s.url}/app/os/media-controller/stream?accessToken=${streamToken}`);
    closers.push(() => sse.close());
    await sse.next((e) => e.event === 'snapshot');
    const direct = await MpdConnection.open({ host: '127.0.0.1', port, timeoutMs: 2000, timers: systemTimers });
    closers.push(() => direct.close());
    const at = Date.now();
    await direct.command('setvol', [33]);
    await sse.next((e) => e.event === 'state' && (e.data as { volume: number }).volume === 33, 2000);
    expect(Date.now() - at).toBeLessThan(200);
  });
});
