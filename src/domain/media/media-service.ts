import type { Clock } from '../../platform/clock.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import { SerialWrites } from '../../platform/serial-writes.js';
import type { Audience } from '../access/audience.js';
import { deriveCapabilities } from '../devices/capabilities.js';
import type { DeviceService } from '../devices/device-service.js';
import { deviceErrors } from '../devices/errors.js';
import { isOn, mediaTextOf } from '../devices/readings.js';
import type { LogicalDevice } from '../devices/model.js';
import type { DomainEventBus } from '../events.js';
import { mediaErrors } from './errors.js';
import {
  NORMALIZED_COMMANDS,
  type BridgeTarget,
  type DiscoveredEndpoint,
  type EndpointKind,
  type EndpointView,
  type MediaEndpoint,
  type MediaPlayer,
  type NormalizedCommand,
  type NowPlaying,
} from './model.js';
import { paramsProblem, playerCommandsOf, resolvePlayerCommand } from './player-commands.js';
import type { EndpointController, EndpointDiscovery } from './ports.js';

export interface MediaSettings {
  /** How long a discovery round listens when the request does not say (ms). */
  discoveryTimeoutMs: number;
  /** The longest a request may ask discovery to listen (ms). */
  maxDiscoveryTimeoutMs: number;
}

export interface MediaLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Capabilities that make a device a media player, whatever its category. */
const PLAYER_CAPABILITIES = new Set(['media', 'volume', 'apps', 'input']);
/** Categories of media devices that may not (yet) declare such capabilities. */
const PLAYER_CATEGORY = /media|tv|television|speaker|receiver|audio|stream|soundbar|player|projector|roku|cast/i;

export interface DiscoveryOutcome {
  /** Every endpoint this round found, as stored after it. */
  found: EndpointView[];
  /** Ids of endpoints that were new. */
  new: string[];
  /** Ids of endpoints that earlier rounds found and this one did not (they are kept). */
  gone: string[];
  durationMs: number;
}

export interface BridgeRegistration {
  id: string;
  name: string;
  callbackUrl: string;
  commands: NormalizedCommand[];
  callbackToken?: string;
  timeoutMs?: number;
  playsUrls?: boolean;
  host?: string;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** What is playing, read from the state keys the capability model documents (and common aliases). */
export function nowPlayingOf(state: Readonly<Record<string, unknown>>): NowPlaying | null {
  const media = mediaTextOf(state);
  const playing: NowPlaying = {
    playback: text(state.playback),
    app: text(state.app),
    appId: text(state.app_id),
    title: media.title ?? null,
    artist: media.artist ?? null,
    album: media.album ?? null,
    positionSeconds: num(state.position) ?? num(state.media_position),
    durationSeconds: num(state.duration) ?? num(state.media_duration),
  };
  return Object.values(playing).every((v) => v === null) ? null : playing;
}

/** The player's power in the media API's words, from the one "is it on" every surface uses. */
function powerOf(state: Readonly<Record<string, unknown>>): 'on' | 'off' | null {
  const on = isOn(state);
  return on === undefined ? null : on ? 'on' : 'off';
}

/**
 * The media family's use cases: the canonical player roster (devices that play, and endpoints no
 * device stands for), normalized commands, and the endpoints: discovery, edits, bridge
 * registrations, and handing each enabled endpoint to the integration that controls its kind.
 */
export class MediaService {
  private readonly writes = new SerialWrites();
  private readonly controllers = new Map<EndpointKind, EndpointController>();
  /** Per device: the normalized commands for one state object (states are replaced, never mutated). */
  private readonly commandCache = new WeakMap<LogicalDevice, { state: object; commands: NormalizedCommand[] }>();
  private discovering: Promise<DiscoveryOutcome> | null = null;

  constructor(
    private readonly endpoints: DocumentCollection<MediaEndpoint>,
    private readonly devices: DeviceService,
    private readonly spaces: { find(id: string): { name: string } | undefined },
    private readonly discovery: EndpointDiscovery,
    controllers: readonly EndpointController[],
    private readonly settings: MediaSettings,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    private readonly log: MediaLogger,
  ) {
    for (const controller of controllers) this.controllers.set(controller.kind, controller);
  }

  /** Loads the endpoints and hands the enabled ones to their integrations. */
  async load(): Promise<void> {
    await this.endpoints.load();
    for (const endpoint of this.endpoints.list()) this.applyControl(endpoint);
  }

  settled(): Promise<void> {
    return this.writes.settled();
  }

  // ---- roster -------------------------------------------------------------------------------

  /** Every playable target the audience sees, devices first (by name), then endpoints. */
  players(audience: Audience): MediaPlayer[] {
    const out: MediaPlayer[] = [];
    const controlled = new Set<string>();
    for (const device of this.devices.registry.list()) {
      if (device.removed) continue;
      const endpointId = this.endpointIdOf(device);
      if (endpointId !== null) {
        if (this.endpoints.find(endpointId)?.enabled === false) continue;
        controlled.add(endpointId);
      }
      if (!audience.seesDevice(device)) continue;
      const player = this.devicePlayer(device);
      if (player) out.push(player);
    }
    out.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    if (!audience.everything) return out;
    const endpoints = this.endpoints
      .list()
      .filter((e) => e.enabled && !controlled.has(e.id))
      .map((e) => this.endpointPlayer(e))
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    return [...out, ...endpoints];
  }

  /** One player, looked up directly (a command must not build the whole roster). */
  player(id: string, audience: Audience): MediaPlayer {
    const missing = () => mediaErrors.MEDIA_PLAYER_NOT_FOUND({ id }, { details: { id } });
    const device = this.devices.registry.find(id);
    if (device) {
      const endpointId = this.endpointIdOf(device);
      if (device.removed || !audience.seesDevice(device) || (endpointId !== null && this.endpoints.find(endpointId)?.enabled === false)) throw missing();
      const player = this.devicePlayer(device);
      if (!player) throw missing();
      return player;
    }
    const endpoint = this.endpoints.find(id);
    if (!endpoint || !endpoint.enabled || !audience.everything) throw missing();
    // An endpoint a live device stands for is that device's player, under the device's id.
    const controller = this.controllers.get(endpoint.kind);
    const standIn = controller ? this.devices.registry.findByDriver(controller.driverKey, endpoint.id) : undefined;
    if (standIn && !standIn.removed) throw missing();
    return this.endpointPlayer(endpoint);
  }

  /** The endpoint a built-in integration's device stands for; null for any other device. */
  private endpointIdOf(device: LogicalDevice): string | null {
    return device.driverDeviceId !== null && this.controllerOfDriver(device.driverKey) ? device.driverDeviceId : null;
  }

  /**
   * Runs a normalized command on a player: mapped to its device's own command (pressed as often
   * as a step-only volume needs), through the device command path and its driver.
   */
  async command(id: string, command: NormalizedCommand, params: Record<string, unknown>, audience: Audience): Promise<{ playerId: string; command: NormalizedCommand; deviceCommand: string | null; result?: unknown }> {
    const player = this.player(id, audience);
    const problem = paramsProblem(command, params);
    if (problem) throw deviceErrors.INVALID_COMMAND_PARAMS({ command, problem }, { details: { command, params } });
    const notSupported = () =>
      deviceErrors.COMMAND_NOT_SUPPORTED(
        { device: player.name, what: `player command ${command}` },
        { details: { playerId: id, command, supported: player.capabilities } },
      );
    if (!player.deviceId) throw notSupported();
    const device = this.devices.registry.get(player.deviceId);
    const resolved = resolvePlayerCommand(device, this.devices.state.view(device.id).state, command, params);
    if (!resolved) throw notSupported();
    if (resolved.noop) return { playerId: id, command, deviceCommand: null, result: { unchanged: true } };
    const presses = resolved.repeat ?? 1;
    let result: unknown;
    for (let i = 0; i < presses; i++) result = await this.devices.command(device.id, resolved.command, resolved.params);
    return { playerId: id, command, deviceCommand: resolved.command, ...(presses > 1 ? { result: { presses } } : result === undefined ? {} : { result }) };
  }

  /** Whether the player's device plays a URL it is sent (device command `play_url`). */
  playsUrls(player: MediaPlayer): boolean {
    const device = player.deviceId ? this.devices.registry.find(player.deviceId) : undefined;
    return !!device && device.commands.some((c) => c.name === PLAY_URL);
  }

  /** Plays an http(s) URL on a player that can (`play_url`); 422 COMMAND_NOT_SUPPORTED otherwise. */
  async playUrl(id: string, url: string, extra: Record<string, unknown>, audience: Audience): Promise<unknown> {
    const player = this.player(id, audience);
    if (!this.playsUrls(player)) {
      throw deviceErrors.COMMAND_NOT_SUPPORTED({ device: player.name, what: PLAY_URL }, { details: { playerId: id, command: PLAY_URL, supported: player.capabilities } });
    }
    return this.devices.command(player.deviceId!, PLAY_URL, { url, ...extra });
  }

  private devicePlayer(device: LogicalDevice): MediaPlayer | null {
    const view = this.devices.state.view(device.id);
    const state = view.state;
    let cached = this.commandCache.get(device);
    if (!cached || cached.state !== state) {
      const capabilities = deriveCapabilities(device, state);
      const isPlayer = capabilities.some((c) => PLAYER_CAPABILITIES.has(c)) || PLAYER_CATEGORY.test(device.category);
      cached = { state, commands: isPlayer ? playerCommandsOf(device, state) : [] };
      // A device that is no player is remembered as one with no commands and no player category.
      if (!isPlayer) cached.commands = NOT_A_PLAYER;
      this.commandCache.set(device, cached);
    }
    if (cached.commands === NOT_A_PLAYER) return null;
    const controller = this.controllerOfDriver(device.driverKey);
    const known = this.devices.state.peek(device.id) !== undefined;
    const online = view.online;
    return {
      id: device.id,
      name: device.name,
      kind: controller ? controller.kind : 'device',
      deviceId: device.id,
      endpointId: controller ? device.driverDeviceId : null,
      driverKey: device.driverKey,
      ...this.room(device.room),
      capabilities: cached.commands,
      online,
      status: online ? 'online' : 'offline',
      statusSource: known ? 'runtime' : 'unknown',
      power: powerOf(state),
      volume: num(state.volume),
      muted: typeof state.muted === 'boolean' ? state.muted : null,
      nowPlaying: nowPlayingOf(state),
    };
  }

  private endpointPlayer(endpoint: MediaEndpoint): MediaPlayer {
    return {
      id: endpoint.id,
      name: endpoint.label ?? endpoint.name,
      kind: endpoint.kind,
      deviceId: null,
      endpointId: endpoint.id,
      driverKey: null,
      room: '',
      roomId: null,
      capabilities: [],
      online: false,
      status: 'offline',
      statusSource: 'unknown',
      power: null,
      volume: null,
      muted: null,
      nowPlaying: null,
    };
  }

  private room(roomId: string | null): { room: string; roomId: string | null } {
    const space = roomId ? this.spaces.find(roomId) : undefined;
    return space && roomId ? { room: space.name, roomId } : { room: '', roomId: null };
  }

  private controllerOfDriver(driverKey: string): EndpointController | undefined {
    for (const controller of this.controllers.values()) if (controller.driverKey === driverKey) return controller;
    return undefined;
  }

  // ---- endpoints ----------------------------------------------------------------------------

  endpointViews(): EndpointView[] {
    return this.endpoints.list().map((e) => this.endpointView(e));
  }

  endpointView(endpoint: MediaEndpoint): EndpointView {
    const { pairing, bridge, ...rest } = endpoint;
    const controller = this.controllers.get(endpoint.kind);
    const device = controller ? this.devices.registry.findByDriver(controller.driverKey, endpoint.id) : undefined;
    let bridgeView: EndpointView['bridge'] = null;
    if (bridge) {
      const { callbackToken: _secret, ...shown } = bridge;
      bridgeView = shown;
    }
    return { ...rest, paired: pairing !== null, pairedAt: pairing?.pairedAt ?? null, bridge: bridgeView, deviceId: device && !device.removed ? device.id : null };
  }

  endpoint(id: string): MediaEndpoint {
    return this.endpoints.get(id);
  }

  /**
   * One discovery round (rounds asked for while one runs share it), plus addresses to probe
   * directly (an endpoint discovery cannot reach: another subnet, multicast filtered). Found
   * endpoints are stored (new ones enabled) and controlled; ones not found stay, marked absent.
   */
  async discover(options: { timeoutMs?: number; probe?: Array<{ kind: EndpointKind; host: string; port?: number }> }): Promise<DiscoveryOutcome> {
    const probes = options.probe ?? [];
    for (const p of probes) {
      const controller = this.controllers.get(p.kind);
      if (!controller?.probe) throw mediaErrors.ENDPOINT_KIND_NOT_PROBED({ kind: p.kind }, { details: { kind: p.kind } });
    }
    const timeoutMs = Math.min(options.timeoutMs ?? this.settings.discoveryTimeoutMs, this.settings.maxDiscoveryTimeoutMs);
    const started = this.clock.now();
    const probed = await Promise.all(
      probes.map(async (p) => {
        try {
          return await this.controllers.get(p.kind)!.probe!(p.host, p.port);
        } catch (err) {
          throw mediaErrors.ENDPOINT_PROBE_FAILED(
            { kind: p.kind, host: p.host, port: String(p.port ?? 'default'), reason: err instanceof Error ? err.message : String(err) },
            { details: { kind: p.kind, host: p.host, port: p.port ?? null } },
          );
        }
      }),
    );
    // Concurrent requests share one round: the LAN is asked once.
    this.discovering ??= this.runDiscovery(timeoutMs).finally(() => {
      this.discovering = null;
    });
    const round = await this.discovering;
    if (probed.length === 0) return { ...round, durationMs: this.clock.now() - started };
    const extra = await this.writes.run(() => this.merge(probed, null));
    return {
      found: [...round.found, ...extra.found.filter((e) => !round.found.some((f) => f.id === e.id))],
      new: [...round.new, ...extra.new],
      gone: round.gone.filter((id) => !extra.found.some((f) => f.id === id)),
      durationMs: this.clock.now() - started,
    };
  }

  private async runDiscovery(timeoutMs: number): Promise<DiscoveryOutcome> {
    const started = this.clock.now();
    let found: DiscoveredEndpoint[];
    try {
      found = await this.discovery.discover({ timeoutMs });
    } catch (err) {
      throw mediaErrors.DISCOVERY_FAILED({ reason: err instanceof Error ? err.message : String(err) });
    }
    const outcome = await this.writes.run(() => this.merge(found, ['ssdp', 'mdns']));
    this.log.info({ found: outcome.found.length, new: outcome.new.length, gone: outcome.gone.length }, 'media endpoint discovery');
    return { ...outcome, durationMs: this.clock.now() - started };
  }

  /** Stores what a round found; `sweep` names the origins a full round vouches for, to mark the rest absent. */
  private async merge(found: DiscoveredEndpoint[], sweep: Array<MediaEndpoint['origin']> | null): Promise<Omit<DiscoveryOutcome, 'durationMs'>> {
    const now = this.clock.now();
    const seen = new Map<string, DiscoveredEndpoint>();
    for (const d of found) seen.set(`${d.kind}:${d.key}`, d);
    const views: EndpointView[] = [];
    const created: string[] = [];
    for (const [id, d] of seen) {
      const existing = this.endpoints.find(id);
      const { item, created: isNew } = await this.endpoints.save({
        id,
        kind: d.kind,
        name: d.name,
        label: existing?.label ?? null,
        enabled: existing?.enabled ?? true,
        origin: existing?.origin === 'manual' && d.origin !== 'manual' ? 'manual' : d.origin,
        host: d.host,
        port: d.port,
        model: d.model,
        details: { ...(existing?.details ?? {}), ...d.details },
        lastSeenAt: now,
        present: true,
        pairing: existing?.pairing ?? null,
        bridge: null,
      });
      if (isNew) {
        created.push(id);
        this.events.emit('media.endpoint_discovered', { endpointId: id, kind: item.kind, at: now });
      }
      if (!existing || existing.host !== item.host || existing.port !== item.port || isNew) this.applyControl(item);
      views.push(this.endpointView(item));
    }
    const gone: string[] = [];
    if (sweep) {
      for (const endpoint of this.endpoints.list()) {
        if (!sweep.includes(endpoint.origin) || seen.has(endpoint.id) || !endpoint.present) continue;
        await this.endpoints.update(endpoint.id, () => ({ present: false }));
        gone.push(endpoint.id);
      }
    }
    return { found: views, new: created, gone };
  }

  /** Changes an endpoint's label (null: back to its own name) or enabled state. */
  updateEndpoint(id: string, change: { label?: string | null; enabled?: boolean }): Promise<EndpointView> {
    return this.writes.run(async () => {
      const before = this.endpoints.get(id);
      const after = await this.endpoints.update(id, () => ({
        ...(change.label !== undefined ? { label: change.label === null || change.label.trim() === '' ? null : change.label.trim() } : {}),
        ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
      }));
      if (before.enabled !== after.enabled || before.label !== after.label) this.applyControl(after);
      this.events.emit('media.endpoint_updated', { endpointId: id, enabled: after.enabled, at: this.clock.now() });
      return this.endpointView(after);
    });
  }

  /** Registers (or refreshes) a bridge endpoint; it is controlled through its callback URL. */
  registerBridge(input: BridgeRegistration & { state?: Record<string, unknown> }, registeredBy: string | null): Promise<{ endpoint: EndpointView; created: boolean }> {
    let url: URL;
    try {
      url = new URL(input.callbackUrl);
    } catch {
      throw mediaErrors.BRIDGE_CALLBACK_INVALID({ url: input.callbackUrl }, { details: { field: 'callbackUrl' } });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw mediaErrors.BRIDGE_CALLBACK_INVALID({ url: input.callbackUrl }, { details: { field: 'callbackUrl' } });
    const commands = NORMALIZED_COMMANDS.filter((c) => input.commands.includes(c));
    const bridge: BridgeTarget = {
      callbackUrl: url.toString(),
      commands,
      ...(input.callbackToken ? { callbackToken: input.callbackToken } : {}),
      timeoutMs: input.timeoutMs ?? 5000,
      playsUrls: input.playsUrls ?? false,
      registeredBy,
    };
    return this.writes.run(async () => {
      const id = `bridge:${input.id}`;
      const existing = this.endpoints.find(id);
      const now = this.clock.now();
      const { item, created } = await this.endpoints.save({
        id,
        kind: 'bridge',
        name: input.name,
        label: existing?.label ?? null,
        enabled: existing?.enabled ?? true,
        origin: 'bridge',
        host: url.hostname,
        port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        model: null,
        details: {},
        lastSeenAt: now,
        present: true,
        pairing: null,
        bridge,
      });
      this.applyControl(item);
      // Registering is the registrant saying the endpoint is there now: online, with the state it gave.
      if (item.enabled) this.controllers.get('bridge')?.report?.(id, input.state ?? {});
      if (created) this.events.emit('media.endpoint_discovered', { endpointId: id, kind: 'bridge', at: now });
      return { endpoint: this.endpointView(item), created };
    });
  }

  /** Stores a pairing the cast pairer completed, and controls the endpoint with it. */
  storePairing(id: string, pairing: MediaEndpoint['pairing']): Promise<EndpointView> {
    return this.writes.run(async () => {
      const after = await this.endpoints.update(id, () => ({ pairing }));
      this.applyControl(after);
      this.events.emit('media.endpoint_updated', { endpointId: id, enabled: after.enabled, at: this.clock.now() });
      return this.endpointView(after);
    });
  }

  /** Hands the endpoint to its integration, or takes it away (disabled, or unpaired where pairing is needed). */
  private applyControl(endpoint: MediaEndpoint): void {
    const controller = this.controllers.get(endpoint.kind);
    if (!controller) return;
    const controllable = endpoint.enabled && (!controller.needsPairing || endpoint.pairing !== null);
    try {
      if (controllable) controller.control(endpoint);
      else controller.release(endpoint.id);
    } catch (err) {
      this.log.warn({ err, endpointId: endpoint.id }, 'integration refused an endpoint');
    }
  }
}

/** The device command that plays a URL (Roku's Play on Roku, a bridge endpoint that says it can). */
export const PLAY_URL = 'play_url';

/** Marker for a device that is no player (compared by identity). */
const NOT_A_PLAYER: NormalizedCommand[] = [];
