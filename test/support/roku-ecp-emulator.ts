import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { parseEcpKeySegment } from '../../src/adapters/roku/ecp-keys.js';

/**
 * A Roku stand-in for tests and benchmarks: a real HTTP server on 127.0.0.1 speaking the
 * External Control Protocol as the firmware does (XML queries, POST commands with empty 200
 * answers, 403 when the Host header is not the device's address, 404 for an unknown app).
 *
 * Time on the emulated player moves only when a test calls `advance(ms)`, so positions are exact.
 */

export interface RokuEmulatorApp {
  id: string;
  type?: string;
  version?: string;
  name: string;
  /** The icon `/query/icon/<id>` serves (default: a 1×1 PNG). */
  icon?: { contentType: string; bytes: Buffer };
  /** Length of what the app plays after a launch (default one hour); 0 for a live stream. */
  durationMs?: number;
}

export type RokuPowerMode = 'PowerOn' | 'DisplayOff';
export type RokuPlayerState = 'close' | 'play' | 'pause' | 'buffer' | 'stop';
/** `ok` answers; `dead` accepts connections and never answers; `malformed` answers every query with broken XML. */
export type RokuEmulatorMode = 'ok' | 'dead' | 'malformed';

export interface RokuEmulatorOptions {
  /** The Host the firmware accepts, alone or with the port (default `127.0.0.1`). */
  acceptedHost?: string;
  serialNumber?: string;
  modelName?: string;
  userDeviceName?: string;
  isTv?: boolean;
  apps?: RokuEmulatorApp[];
  powerMode?: RokuPowerMode;
  /** Added before every answer (ms, real time): the device's own latency in benchmarks. */
  latencyMs?: number;
  mode?: RokuEmulatorMode;
}

export interface RokuEmulatorRequest {
  method: string;
  /** Path and query as received (`/keypress/Select`, `/launch/12?contentId=x`). */
  url: string;
  host: string | undefined;
  status: number;
}

export interface RokuEmulatorState {
  powerMode: RokuPowerMode;
  volume: number;
  muted: boolean;
  /** Undefined on the home screen. */
  activeAppId: string | undefined;
  player: RokuPlayerState;
  positionMs: number;
  /** The last launch's query parameters (deep link). */
  launchParams: Record<string, string>;
  /** Keys received by keypress (and keydown), canonical names, in order. */
  keys: string[];
}

export interface RokuEcpEmulator {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly serialNumber: string;
  readonly state: RokuEmulatorState;
  /** Every request answered or left hanging, in arrival order. */
  readonly requests: RokuEmulatorRequest[];
  /** TCP connections accepted so far (keep-alive reuse shows as fewer connections than requests). */
  readonly connections: number;
  setMode(mode: RokuEmulatorMode): void;
  setLatency(ms: number): void;
  /** Moves the player's clock: a playing stream's position grows, up to its duration. */
  advance(ms: number): void;
  close(): Promise<void>;
}

/** The smallest valid PNG (1×1, transparent): what an app without its own icon serves. */
export const DEFAULT_ICON_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

export const DEFAULT_ROKU_APPS: RokuEmulatorApp[] = [
  { id: '12', type: 'appl', version: '5.2.1', name: 'Netflix' },
  { id: '837', type: 'appl', version: '2.25.4', name: 'YouTube' },
  { id: '2285', type: 'appl', version: '6.83.2', name: 'Hulu', icon: { contentType: 'image/jpeg', bytes: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0xff, 0xd9]) } },
  { id: '74519', type: 'appl', version: '5.31.0', name: "Pluto TV - It's Free TV", durationMs: 0 },
  { id: 'tvinput.hdmi1', type: 'tvin', version: '1.0.0', name: 'HDMI 1' },
];

/** The system channel that plays a URL it is given (`u`, `t=a|v`). */
const PLAY_ON_ROKU: RokuEmulatorApp = { id: '15985', type: 'appl', version: '1.0.0', name: 'Play on Roku' };

const VOLUME_MAX = 100;
const HOUR_MS = 3_600_000;
/** The key Rev and Fwd jump by, and InstantReplay goes back by, on a playing stream. */
const SKIP_MS = 10_000;
const REPLAY_MS = 7_000;

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string);
}

/** A path segment decoded; undefined when its escapes are broken (the device answers 404). */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" ?>\n';

let emulatorCount = 0;

export async function startRokuEcpEmulator(options: RokuEmulatorOptions = {}): Promise<RokuEcpEmulator> {
  const index = ++emulatorCount;
  const serialNumber = options.serialNumber ?? `X0EMU${String(index).padStart(7, '0')}`;
  const modelName = options.modelName ?? (options.isTv === false ? 'Roku Ultra' : 'Roku TV');
  const isTv = options.isTv ?? true;
  const apps = options.apps ?? DEFAULT_ROKU_APPS;
  const acceptedHost = (options.acceptedHost ?? '127.0.0.1').toLowerCase();
  let mode: RokuEmulatorMode = options.mode ?? 'ok';
  let latencyMs = options.latencyMs ?? 0;
  const requests: RokuEmulatorRequest[] = [];
  const sockets = new Set<Socket>();
  const delayed = new Set<NodeJS.Timeout>();
  let connections = 0;
  const state: RokuEmulatorState = {
    powerMode: options.powerMode ?? 'PowerOn',
    volume: 20,
    muted: false,
    activeAppId: undefined,
    player: 'close',
    positionMs: 0,
    launchParams: {},
    keys: [],
  };
  const appById = (id: string | undefined) => apps.find((app) => app.id === id);
  const udn = `29a40005-0000-1000-8000-${serialNumber.toLowerCase().replace(/[^0-9a-f]/g, '0').padStart(12, '0').slice(-12)}`;

  const appXml = (app: RokuEmulatorApp) =>
    `<app id="${escapeXml(app.id)}"${app.type ? ` type="${escapeXml(app.type)}"` : ''}${app.version ? ` version="${escapeXml(app.version)}"` : ''}>${escapeXml(app.name)}</app>`;

  const deviceInfoXml = () => {
    const userName = options.userDeviceName ?? '';
    const fields: [string, string | boolean][] = [
      ['udn', udn],
      ['serial-number', serialNumber],
      ['device-id', serialNumber],
      ['vendor-name', 'Roku'],
      ['model-name', modelName],
      ['model-number', isTv ? '7000X' : '4800X'],
      ['model-region', 'US'],
      ['is-tv', isTv],
      ['is-stick', false],
      ['supports-ethernet', true],
      ['network-type', 'ethernet'],
      ['friendly-device-name', userName || `${modelName} - ${serialNumber}`],
      ['friendly-model-name', modelName],
      ['default-device-name', `${modelName} - ${serialNumber}`],
      ['user-device-name', userName],
      ['software-version', '12.5.0'],
      ['software-build', '4178'],
      ['secure-device', true],
      ['language', 'en'],
      ['country', 'US'],
      ['power-mode', state.powerMode],
      ['supports-suspend', isTv],
      ['supports-find-remote', true],
      ['supports-audio-guide', true],
      ['supports-rva', true],
      ['supports-private-listening', true],
      ['supports-ecs-textedit', true],
      ['supports-ecs-microphone', true],
      ['supports-wake-on-wlan', false],
      ['supports-airplay', true],
      ['developer-enabled', false],
    ];
    const body = fields.map(([name, value]) => (value === '' ? `<${name}/>` : `<${name}>${escapeXml(String(value))}</${name}>`)).join('\n');
    return `${XML_HEAD}<device-info>\n${body}\n</device-info>\n`;
  };

  const activeAppXml = () => {
    const app = appById(state.activeAppId);
    return `${XML_HEAD}<active-app>\n\t${app ? appXml(app) : '<app>Roku</app>'}\n</active-app>\n`;
  };

  const mediaPlayerXml = () => {
    const app = appById(state.activeAppId);
    if (!app || state.player === 'close') return `${XML_HEAD}<player error="false" state="close">\n<is_live>false</is_live>\n</player>\n`;
    const duration = app.durationMs ?? HOUR_MS;
    const live = duration === 0;
    return (
      `${XML_HEAD}<player error="false" state="${state.player}">\n` +
      `\t<plugin bandwidth="10000000 bps" id="${escapeXml(app.id)}" name="${escapeXml(app.name)}"/>\n` +
      `\t<format audio="aac_adts" captions="webvtt" container="hls" drm="none" video="mpeg4_10b"/>\n` +
      `\t<position>${state.positionMs} ms</position>\n` +
      (live ? '' : `\t<duration>${duration} ms</duration>\n`) +
      `\t<is_live>${live}</is_live>\n</player>\n`
    );
  };

  const seek = (deltaMs: number) => {
    const duration = appById(state.activeAppId)?.durationMs ?? HOUR_MS;
    const end = duration === 0 ? Number.MAX_SAFE_INTEGER : duration;
    state.positionMs = Math.min(end, Math.max(0, state.positionMs + deltaMs));
  };

  /** What a key does to the emulated device; keys without an effect here are still accepted. */
  const press = (key: string) => {
    state.keys.push(key);
    const playing = state.player === 'play' || state.player === 'pause';
    switch (key) {
      case 'PowerOn':
        state.powerMode = 'PowerOn';
        break;
      case 'PowerOff':
        state.powerMode = 'DisplayOff';
        break;
      case 'Power':
        state.powerMode = state.powerMode === 'PowerOn' ? 'DisplayOff' : 'PowerOn';
        break;
      case 'VolumeUp':
        state.muted = false;
        state.volume = Math.min(VOLUME_MAX, state.volume + 1);
        break;
      case 'VolumeDown':
        state.muted = false;
        state.volume = Math.max(0, state.volume - 1);
        break;
      case 'VolumeMute':
        state.muted = !state.muted;
        break;
      case 'Play':
        if (playing) state.player = state.player === 'play' ? 'pause' : 'play';
        break;
      case 'Fwd':
        if (playing) seek(SKIP_MS);
        break;
      case 'Rev':
        if (playing) seek(-SKIP_MS);
        break;
      case 'InstantReplay':
        if (playing) seek(-REPLAY_MS);
        break;
      case 'Home':
        state.activeAppId = undefined;
        state.player = 'close';
        state.positionMs = 0;
        break;
    }
  };

  const answer = (req: IncomingMessage, res: ServerResponse, url: URL): number => {
    const send = (status: number, body = '', contentType = 'text/xml; charset="utf-8"') => {
      res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), Server: 'Roku/12.5.0 UPnP/1.0 Roku/12.5.0' });
      res.end(body);
      return status;
    };
    const host = (req.headers.host ?? '').toLowerCase();
    if (host !== acceptedHost && host !== `${acceptedHost}:${port}`) return send(403, 'Forbidden', 'text/plain; charset="utf-8"');
    const [, verb, ...rest] = url.pathname.split('/');
    const arg = rest.join('/');
    const isQuery = verb === 'query';
    if ((isQuery && req.method !== 'GET') || (!isQuery && req.method !== 'POST')) {
      res.setHeader('Allow', isQuery ? 'GET' : 'POST');
      return send(405);
    }
    if (isQuery && mode === 'malformed') return send(200, `${XML_HEAD}<device-info><udn>broken</device-info`);
    switch (verb) {
      case 'query': {
        if (arg === 'device-info') return send(200, deviceInfoXml());
        if (arg === 'apps') return send(200, `${XML_HEAD}<apps>\n${apps.map((app) => `\t${appXml(app)}`).join('\n')}\n</apps>\n`);
        if (arg === 'active-app') return send(200, activeAppXml());
        if (arg === 'media-player') return send(200, mediaPlayerXml());
        if (arg.startsWith('icon/')) {
          const app = appById(decodeSegment(arg.slice('icon/'.length)));
          if (!app) return send(404);
          const icon = app.icon ?? { contentType: 'image/png', bytes: DEFAULT_ICON_PNG };
          res.writeHead(200, { 'Content-Type': icon.contentType, 'Content-Length': icon.bytes.length });
          res.end(icon.bytes);
          return 200;
        }
        return send(404);
      }
      case 'launch': {
        // Play on Roku (15985) is a system channel: launchable though /query/apps does not list it.
        const id = decodeSegment(arg);
        const app = appById(id) ?? (id === PLAY_ON_ROKU.id ? PLAY_ON_ROKU : undefined);
        if (!app) return send(404);
        state.activeAppId = app.id;
        state.launchParams = Object.fromEntries(url.searchParams);
        state.positionMs = 0;
        state.player = app.type === 'appl' ? 'play' : 'close';
        return send(200);
      }
      case 'keypress':
      case 'keydown':
      case 'keyup': {
        const key = parseEcpKeySegment(arg);
        if (key === undefined) return send(400);
        // A held key acts when it goes down; its release does nothing more.
        if (verb !== 'keyup') press(key);
        return send(200);
      }
      default:
        return send(404);
    }
  };

  const server = createServer((req, res) => {
    const entry: RokuEmulatorRequest = { method: req.method ?? '', url: req.url ?? '', host: req.headers.host, status: 0 };
    requests.push(entry);
    // A request body is never part of ECP; read it so the connection stays usable.
    req.resume();
    if (mode === 'dead') return;
    const reply = () => {
      entry.status = answer(req, res, new URL(req.url ?? '/', 'http://emulator'));
    };
    if (latencyMs <= 0) return reply();
    const timer = setTimeout(() => {
      delayed.delete(timer);
      reply();
    }, latencyMs);
    delayed.add(timer);
  });
  server.keepAliveTimeout = 5_000;
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the emulator has no port');
  const port = address.port;

  return {
    host: '127.0.0.1',
    port,
    serialNumber,
    state,
    requests,
    get connections() {
      return connections;
    },
    setMode: (next) => {
      mode = next;
    },
    setLatency: (ms) => {
      latencyMs = ms;
    },
    advance: (ms) => {
      if (state.player === 'play') seek(ms);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of delayed) clearTimeout(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Starts `count` emulators on their own ports (benchmarks of many devices). */
export async function startRokuEcpEmulators(count: number, options: RokuEmulatorOptions = {}): Promise<RokuEcpEmulator[]> {
  if (!Number.isInteger(count) || count < 1 || count > 500) throw new Error(`emulator count ${count} is not between 1 and 500`);
  return Promise.all(Array.from({ length: count }, () => startRokuEcpEmulator(options)));
}
