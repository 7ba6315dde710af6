import { Agent, request, type IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { networkFailureOf } from '../../platform/network-failures.js';
import { RokuEcpError, type RokuEcpFailure } from './ecp-errors.js';
import { ecpKeySegment } from './ecp-keys.js';

/**
 * Client of Roku's External Control Protocol (HTTP on port 8060): the queries and commands the
 * hub's Roku players are built on. One client per device; requests share a keep-alive agent, as
 * the device's small web server is slow to accept new connections.
 */

export interface RokuEcpClientOptions {
  /** The device's IP address (also sent as the Host header, which the firmware checks). */
  host: string;
  port?: number;
  /** Give up on a request, connection included, after this long (default 3000 ms). */
  timeoutMs?: number;
  /** Shared agent (e.g. one per hub for many devices); by default the client keeps its own. */
  agent?: Agent;
}

export interface RokuDeviceInfo {
  udn: string;
  serialNumber: string;
  deviceId?: string;
  vendorName?: string;
  modelName: string;
  modelNumber?: string;
  friendlyDeviceName: string;
  /** The name the owner gave it, when they did. */
  userDeviceName?: string;
  defaultDeviceName?: string;
  softwareVersion?: string;
  softwareBuild?: string;
  /** `PowerOn`, `DisplayOff` (a Roku TV's standby), `Ready`, `Headless`, … as the device says. */
  powerMode?: string;
  isTv: boolean;
  isStick: boolean;
  supportsSuspend: boolean;
  networkType?: string;
  /** Every element of `<device-info>`, by its XML name, as text. */
  fields: Readonly<Record<string, string>>;
}

export interface RokuApp {
  id: string;
  /** `appl` for an app, `tvin` for a TV input, `ssvr` for a screensaver, … */
  type?: string;
  version?: string;
  name: string;
}

export interface RokuActiveApp {
  /** The app in front; undefined on the home screen (where the device names no app id). */
  app?: RokuApp;
  screensaver?: RokuApp;
}

/** `state` as the firmware reports it: `none`, `startup`, `open`, `buffer`, `play`, `pause`, `stop`, `close`, `finished`, `error`. */
export interface RokuMediaPlayer {
  state: string;
  error: boolean;
  plugin?: { id: string; name: string; bandwidth?: string };
  positionMs?: number;
  durationMs?: number;
  isLive?: boolean;
  runtimeMs?: number;
}

export interface RokuIcon {
  contentType: string;
  bytes: Buffer;
}

export const ROKU_ECP_PORT = 8060;
const DEFAULT_TIMEOUT_MS = 3000;
/** The largest XML answer read: a device with hundreds of apps answers well under this. */
const MAX_XML_BYTES = 1024 * 1024;
const MAX_ICON_BYTES = 4 * 1024 * 1024;
/** A command's answer is empty; an error page is short. */
const MAX_COMMAND_REPLY_BYTES = 64 * 1024;
/** The firmware serves few requests at once; more sockets only queue on its side. */
const MAX_SOCKETS_PER_DEVICE = 4;
/** App ids are numbers (`12`), `dev`, or dotted names (`tvinput.hdmi1`): never a path. */
const APP_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Attributes kept (ECP carries ids and states in them), values left as text (a serial number
 * like `2E7N12345` is no number), and no document may declare entities: the firmware never
 * does, and a declared entity is how an XML answer expands beyond any size limit.
 */
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  textNodeName: '#text',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  // `&amp;` and its kin still decode (app names carry them); each takes 4+ bytes of input, so
  // the expansion count can never pass the input size.
  processEntities: { enabled: true, maxEntityCount: 0, maxEntitySize: 0, maxTotalExpansions: MAX_XML_BYTES, maxExpandedLength: MAX_XML_BYTES },
  maxNestedTags: 16,
  isArray: (tagName, _path, _leaf, isAttribute) => !isAttribute && tagName === 'app',
});

type XmlNode = Record<string, unknown>;

function textOf(node: unknown): string | undefined {
  if (typeof node === 'string') return node;
  if (node && typeof node === 'object' && '#text' in node) return String((node as XmlNode)['#text']);
  if (node && typeof node === 'object') return '';
  return undefined;
}

function attr(node: unknown, name: string): string | undefined {
  if (!node || typeof node !== 'object') return undefined;
  const value = (node as XmlNode)[`@_${name}`];
  return typeof value === 'string' ? value : undefined;
}

/** `38813 ms` → 38813; anything else → undefined. */
function milliseconds(node: unknown): number | undefined {
  const match = /^(\d+)\s*ms$/.exec(textOf(node) ?? '');
  return match ? Number(match[1]) : undefined;
}

function bool(value: string | undefined): boolean | undefined {
  return value === 'true' ? true : value === 'false' ? false : undefined;
}

function appOf(node: unknown): RokuApp | undefined {
  const id = attr(node, 'id');
  if (id === undefined) return undefined;
  const app: RokuApp = { id, name: textOf(node) ?? '' };
  const type = attr(node, 'type');
  const version = attr(node, 'version');
  if (type !== undefined) app.type = type;
  if (version !== undefined) app.version = version;
  return app;
}

/** `host:port` as the Host header spells it (IPv6 in brackets). */
function hostHeader(host: string, port: number): string {
  return `${isIPv6(host) ? `[${host}]` : host}:${port}`;
}

interface Answer {
  contentType: string;
  body: Buffer;
}

export class RokuEcpClient {
  readonly host: string;
  readonly port: number;
  private readonly timeoutMs: number;
  private readonly agent: Agent;
  private readonly ownsAgent: boolean;

  constructor(options: RokuEcpClientOptions) {
    this.host = options.host;
    this.port = options.port ?? ROKU_ECP_PORT;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.ownsAgent = options.agent === undefined;
    this.agent = options.agent ?? new Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_DEVICE });
  }

  async deviceInfo(): Promise<RokuDeviceInfo> {
    const root = await this.queryXml('/query/device-info', 'device-info');
    const fields: Record<string, string> = {};
    for (const [name, value] of Object.entries(root)) {
      const text = textOf(value);
      if (text !== undefined && !name.startsWith('@_')) fields[name] = text;
    }
    const required = (name: string): string => {
      const value = fields[name];
      if (value === undefined || value === '') throw this.failure('malformed', `<device-info> has no <${name}>`, 'GET', '/query/device-info');
      return value;
    };
    const optional = (name: string): string | undefined => (fields[name] === '' ? undefined : fields[name]);
    const info: RokuDeviceInfo = {
      udn: required('udn'),
      serialNumber: required('serial-number'),
      modelName: required('model-name'),
      friendlyDeviceName: optional('friendly-device-name') ?? optional('user-device-name') ?? required('model-name'),
      isTv: fields['is-tv'] === 'true',
      isStick: fields['is-stick'] === 'true',
      supportsSuspend: fields['supports-suspend'] === 'true',
      fields,
    };
    const copies: [keyof RokuDeviceInfo, string][] = [
      ['deviceId', 'device-id'],
      ['vendorName', 'vendor-name'],
      ['modelNumber', 'model-number'],
      ['userDeviceName', 'user-device-name'],
      ['defaultDeviceName', 'default-device-name'],
      ['softwareVersion', 'software-version'],
      ['softwareBuild', 'software-build'],
      ['powerMode', 'power-mode'],
      ['networkType', 'network-type'],
    ];
    for (const [key, name] of copies) {
      const value = optional(name);
      if (value !== undefined) (info as unknown as Record<string, string>)[key] = value;
    }
    return info;
  }

  async apps(): Promise<RokuApp[]> {
    const root = await this.queryXml('/query/apps', 'apps');
    const nodes = Array.isArray(root['app']) ? (root['app'] as unknown[]) : [];
    return nodes.map(appOf).filter((app): app is RokuApp => app !== undefined);
  }

  async activeApp(): Promise<RokuActiveApp> {
    const root = await this.queryXml('/query/active-app', 'active-app');
    const nodes = Array.isArray(root['app']) ? (root['app'] as unknown[]) : [];
    const active: RokuActiveApp = {};
    const app = appOf(nodes[0]);
    if (app) active.app = app;
    const screensaver = appOf(root['screensaver']);
    if (screensaver) active.screensaver = screensaver;
    return active;
  }

  async mediaPlayer(): Promise<RokuMediaPlayer> {
    const root = await this.queryXml('/query/media-player', 'player');
    const state = attr(root, 'state');
    if (state === undefined) throw this.failure('malformed', '<player> has no state', 'GET', '/query/media-player');
    const player: RokuMediaPlayer = { state, error: attr(root, 'error') === 'true' };
    const pluginNode = root['plugin'];
    const pluginId = attr(pluginNode, 'id');
    if (pluginId !== undefined) {
      player.plugin = { id: pluginId, name: attr(pluginNode, 'name') ?? '' };
      const bandwidth = attr(pluginNode, 'bandwidth');
      if (bandwidth !== undefined) player.plugin.bandwidth = bandwidth;
    }
    const positionMs = milliseconds(root['position']);
    const durationMs = milliseconds(root['duration']);
    const runtimeMs = milliseconds(root['runtime']);
    const isLive = bool(textOf(root['is_live']));
    if (positionMs !== undefined) player.positionMs = positionMs;
    if (durationMs !== undefined) player.durationMs = durationMs;
    if (runtimeMs !== undefined) player.runtimeMs = runtimeMs;
    if (isLive !== undefined) player.isLive = isLive;
    return player;
  }

  async icon(appId: string): Promise<RokuIcon> {
    const path = `/query/icon/${this.appSegment(appId, 'GET', '/query/icon')}`;
    const answer = await this.send('GET', path, MAX_ICON_BYTES);
    if (!answer.contentType.startsWith('image/')) throw this.failure('malformed', `the icon came as ${answer.contentType || 'no content type'}, not an image`, 'GET', path);
    return { contentType: answer.contentType, bytes: answer.body };
  }

  /** Starts an app; `params` (e.g. `contentId`, `mediaType` for a deep link) go in the query string. */
  async launch(appId: string, params: Readonly<Record<string, string>> = {}): Promise<void> {
    const query = new URLSearchParams(params).toString();
    await this.send('POST', `/launch/${this.appSegment(appId, 'POST', '/launch')}${query ? `?${query}` : ''}`, MAX_COMMAND_REPLY_BYTES);
  }

  /** Presses and releases a key: a name of `ECP_KEYS` (any case) or `Lit_<one character>`. */
  keypress(key: string): Promise<void> {
    return this.key('keypress', key);
  }

  keydown(key: string): Promise<void> {
    return this.key('keydown', key);
  }

  keyup(key: string): Promise<void> {
    return this.key('keyup', key);
  }

  /** Closes the client's own idle connections (a shared agent is its owner's to close). */
  close(): void {
    if (this.ownsAgent) this.agent.destroy();
  }

  private async key(verb: 'keypress' | 'keydown' | 'keyup', key: string): Promise<void> {
    const segment = ecpKeySegment(key);
    if (segment === undefined) throw this.failure('invalid_request', `${JSON.stringify(key)} is no ECP key (a key name such as Select, or Lit_ and one character)`, 'POST', `/${verb}`);
    await this.send('POST', `/${verb}/${segment}`, MAX_COMMAND_REPLY_BYTES);
  }

  private appSegment(appId: string, method: string, path: string): string {
    if (!APP_ID.test(appId)) throw this.failure('invalid_request', `${JSON.stringify(appId)} is no Roku app id`, method, path);
    return appId;
  }

  private async queryXml(path: string, rootName: string): Promise<XmlNode> {
    const { body } = await this.send('GET', path, MAX_XML_BYTES);
    const text = body.toString('utf8');
    const valid = XMLValidator.validate(text);
    if (valid !== true) throw this.failure('malformed', `the answer is not well-formed XML (${valid.err.msg}, line ${valid.err.line})`, 'GET', path);
    let document: XmlNode;
    try {
      document = parser.parse(text) as XmlNode;
    } catch (err) {
      throw this.failure('malformed', `the XML could not be read: ${(err as Error).message}`, 'GET', path, undefined, err);
    }
    const root = document[rootName];
    if (root === undefined) throw this.failure('malformed', `the answer has no <${rootName}> element`, 'GET', path);
    return root && typeof root === 'object' ? (root as XmlNode) : {};
  }

  private send(method: 'GET' | 'POST', path: string, maxBytes: number): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const fail = (failure: RokuEcpFailure, message: string, status?: number, cause?: unknown) => reject(this.failure(failure, message, method, path, status, cause));
      const req = request({
        host: this.host,
        port: this.port,
        method,
        path,
        agent: this.agent,
        // The firmware answers 403 unless Host names its own address (its DNS-rebinding guard).
        headers: { Host: hostHeader(this.host, this.port), ...(method === 'POST' ? { 'Content-Length': '0' } : {}) },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        const cause = networkFailureOf(err);
        if (cause === 'timeout') fail('timeout', `no answer within ${this.timeoutMs} ms`, undefined, err);
        else if (cause === 'unreachable') fail('unreachable', `the device is unreachable (${err.code})`, undefined, err);
        else fail('unreachable', `the request failed: ${err.message}`, undefined, err);
      });
      req.on('response', (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            res.destroy();
            fail('malformed', `the answer is larger than ${maxBytes} bytes`, status);
            return;
          }
          chunks.push(chunk);
        });
        // A body cut short by the time-out or a reset reports through `error`/`aborted`.
        res.on('error', (err) => req.emit('error', err));
        res.on('end', () => {
          if (status < 200 || status > 299) {
            const text = Buffer.concat(chunks).toString('utf8').trim().slice(0, 200);
            fail('http_status', `the device answered ${status}${text ? `: ${text}` : ''}`, status);
            return;
          }
          resolve({ contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks) });
        });
      });
      req.end();
    });
  }

  private failure(failure: RokuEcpFailure, reason: string, method: string, path: string, status?: number, cause?: unknown): RokuEcpError {
    const where = `${method} ${path} to ${hostHeader(this.host, this.port)}`;
    return new RokuEcpError(failure, `Roku ECP ${where}: ${reason}.`, { host: this.host, port: this.port, method, path }, status, cause === undefined ? undefined : { cause });
  }
}
