import { backoffDelay } from '../../platform/backoff.js';
import { randomUUID } from 'node:crypto';
import type { Clock, TimerHandle, Timers } from '../../platform/clock.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import type { DomainError } from '../../platform/errors.js';
import type { Audience } from '../access/audience.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DomainEventBus } from '../events.js';
import { fleetErrors } from './errors.js';
import {
  linkTokenContext,
  RELEASE_TRANSITIONS,
  type BridgeLinkRecord,
  type FleetDevice,
  type FleetReleaseStatus,
  type HubIdentityRecord,
  type LinkState,
  type RegisteredFleetDevice,
  type ReleaseStatus,
} from './model.js';
import type { BridgePeerClient, PeerFailure, SecretBox } from './ports.js';

export interface FleetLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface FleetStores {
  hub: DocumentCollection<HubIdentityRecord>;
  link: DocumentCollection<BridgeLinkRecord>;
  statuses: DocumentCollection<FleetReleaseStatus>;
  registered: DocumentCollection<RegisteredFleetDevice>;
}

export interface FleetSettings {
  /** How often a healthy link checks its peer (and refreshes the peer's devices). */
  pollIntervalMs: number;
  /** The longest wait between retries of a lost link (the first is 1 s, doubling). */
  maxBackoffMs: number;
  version: string;
}

export interface LinkView {
  peerUrl: string | null;
  peerHubId: string | null;
  state: LinkState;
  lastContactAt: number | null;
  lastError: string | null;
  /** While in error: when the next attempt is due. */
  nextAttemptAt: number | null;
  /** Failed attempts in a row. */
  failures: number;
  peerDevices: number;
}

const FIRST_RETRY_MS = 1000;
/** The link's `lastError` while its token cannot be opened here. */
export const TOKEN_UNREADABLE = "the link's token was sealed with another hub's key: save the link again";

/** The link's token, ready to present; `unreadable` when it cannot be opened with this hub's key. */
type LinkAccess = { peerUrl: string; token: string } | 'unreadable' | undefined;

/** A peer's failure as this hub's, by kind. */
export function peerFailure(peerUrl: string, failure: PeerFailure): DomainError {
  if (failure.kind === 'timeout') return fleetErrors.BRIDGE_TIMEOUT({ peerUrl });
  if (failure.kind === 'unreachable') return fleetErrors.BRIDGE_UNREACHABLE({ peerUrl, reason: failure.reason });
  // The peer's own answer keeps its meaning (its driver's time-out is still a time-out here).
  const byStatus: Record<number, typeof fleetErrors.BRIDGE_PEER_REFUSED> = {
    504: fleetErrors.BRIDGE_PEER_TIMEOUT,
    404: fleetErrors.BRIDGE_PEER_NOT_FOUND,
    422: fleetErrors.BRIDGE_PEER_REJECTED,
    503: fleetErrors.BRIDGE_PEER_UNAVAILABLE,
  } as never;
  const raise = byStatus[failure.status] ?? fleetErrors.BRIDGE_PEER_REFUSED;
  return raise({ reason: `${failure.code}: ${failure.message}` }, { details: { peerStatus: failure.status, peerCode: failure.code } });
}

/**
 * The fleet: this hub's identity, its devices as fleet devices (the bridge routes a linked hub
 * calls), its link to a peer hub (checked every poll interval, retried with back-off when lost,
 * the peer's devices kept from the last contact), devices other hubs announced here, commands
 * routed to whichever hub holds the device, and each device's integration release status.
 */
export class FleetService {
  private hubId = '';
  private state: LinkState = 'unlinked';
  private lastContactAt: number | null = null;
  private lastError: string | null = null;
  private failures = 0;
  private nextAttemptAt: number | null = null;
  private timer: TimerHandle | undefined;
  private peerDevices: FleetDevice[] = [];
  private peerStates: Record<string, { state: Record<string, unknown>; online: boolean }> = {};
  private stopped = true;
  /** Bumped when the link changes: an answer from an older link is dropped. */
  private generation = 0;
  private followingLink = false;

  constructor(
    private readonly stores: FleetStores,
    private readonly devices: DeviceService,
    private readonly peer: BridgePeerClient,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly events: DomainEventBus,
    private readonly log: FleetLogger,
    private readonly settings: FleetSettings,
  ) {}

  async start(): Promise<void> {
    for (const store of Object.values(this.stores)) await store.load();
    const identity = this.stores.hub.find('hub') ?? (await this.stores.hub.save({ id: 'hub', hubId: randomUUID() })).item;
    this.hubId = identity.hubId;
    this.stopped = false;
    await this.sealClearToken();
    if (!this.followingLink) {
      this.followingLink = true;
      // Another instance saved the link again (a cluster): a link waiting for its token takes it up.
      this.stores.link.followChanges(() => {
        if (!this.stopped && this.state === 'needs_token') this.resume();
      });
    }
    this.resume();
  }

  /** Starts checking the stored link, or says it needs its token again. */
  private resume(): void {
    const access = this.accessOf(this.stores.link.find('link'));
    if (access === 'unreadable') return this.needsToken();
    if (access) {
      this.state = 'linking';
      this.lastError = null;
      this.schedule(0);
    } else this.state = 'unlinked';
  }

  /**
   * Forward-only: a token stored in clear (by a hub from before sealing) is sealed in place, once.
   * It was readable; it stays usable, now sealed with this hub's key.
   */
  private async sealClearToken(): Promise<void> {
    const link = this.stores.link.find('link');
    if (!link?.peerUrl || !link.token || this.secrets.isSealed(link.token)) return;
    const { peerUrl, token } = link;
    await this.stores.link.update('link', () => ({ token: this.secrets.seal(token, linkTokenContext(peerUrl)) }));
    this.log.info({ peer: peerUrl }, 'the bridge link token stored in clear is now sealed with the secret key');
  }

  /** The stored link's token in clear (one kept in clear from before is taken as it is). */
  private accessOf(link: BridgeLinkRecord | undefined): LinkAccess {
    if (!link?.peerUrl || !link.token) return undefined;
    if (!this.secrets.isSealed(link.token)) return { peerUrl: link.peerUrl, token: link.token };
    const token = this.secrets.open(link.token, linkTokenContext(link.peerUrl));
    return token === undefined ? 'unreadable' : { peerUrl: link.peerUrl, token };
  }

  /** The stored token cannot be opened here (sealed on another box): no check until the link is saved again. */
  private needsToken(): void {
    if (this.timer) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.generation++;
    if (this.state !== 'needs_token') this.log.warn({ peer: this.stores.link.find('link')?.peerUrl }, `bridge link: ${TOKEN_UNREADABLE}`);
    this.state = 'needs_token';
    this.lastError = TOKEN_UNREADABLE;
    this.nextAttemptAt = null;
    this.peerDevices = [];
    this.peerStates = {};
  }

  stop(): void {
    this.stopped = true;
    this.generation++;
    if (this.timer) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  get id(): string {
    return this.hubId;
  }

  health() {
    return { ok: true as const, hubId: this.hubId, version: this.settings.version, at: new Date(this.clock.now()).toISOString() };
  }

  fleetIdOf(deviceId: string, hubId = this.hubId): string {
    return `${hubId}:${deviceId}`;
  }

  /** This hub's devices as fleet devices, filtered by an audience. */
  localDevices(audience?: Audience): FleetDevice[] {
    return this.devices
      .list()
      .filter((d) => !audience || audience.seesDevice(d))
      .map((d) => ({
        fleetDeviceId: this.fleetIdOf(d.id),
        hubId: this.hubId,
        deviceId: d.id,
        name: d.name,
        category: d.category ?? null,
        driverKey: d.driverKey,
        commands: d.commands.map((c) => ({ name: c.name, ...(c.label ? { label: c.label } : {}), ...(c.params ? { params: c.params } : {}) })),
        online: d.online,
        origin: 'local' as const,
      }));
  }

  /** States of this hub's devices by fleet id. */
  localStates(): Record<string, { state: Record<string, unknown>; online: boolean }> {
    const { devices } = this.devices.stateSnapshot();
    const out: Record<string, { state: Record<string, unknown>; online: boolean }> = {};
    for (const [id, view] of Object.entries(devices)) out[this.fleetIdOf(id)] = { state: { ...view.state }, online: view.online };
    return out;
  }

  /** Every fleet device this hub knows: its own, the linked peer's, and those announced here; each with its release statuses. */
  fleet(audience?: Audience): Array<FleetDevice & { state?: Record<string, unknown>; releases: Array<Omit<FleetReleaseStatus, 'id' | 'deviceId'>> }> {
    const local = this.localDevices(audience);
    const localStates = this.localStates();
    const peer = audience && !audience.everything ? [] : this.peerDevices.map((d) => ({ ...d, origin: 'peer' as const, online: this.state === 'linked' && (this.peerStates[d.fleetDeviceId]?.online ?? d.online) }));
    const known = new Set([...local, ...peer].map((d) => d.fleetDeviceId));
    const registered =
      audience && !audience.everything
        ? []
        : this.stores.registered
            .list()
            .filter((r) => !known.has(r.id))
            .map((r) => ({ fleetDeviceId: r.id, hubId: r.hubId, deviceId: r.deviceId, name: r.name, category: r.category, driverKey: null, commands: r.commands, online: r.online, origin: 'registered' as const, state: r.state }));
    const releasesOf = (fleetDeviceId: string) =>
      this.stores.statuses
        .list()
        .filter((s) => s.deviceId === fleetDeviceId)
        .map(({ id: _id, deviceId: _device, ...rest }) => rest);
    return [
      ...local.map((d) => ({ ...d, state: localStates[d.fleetDeviceId]?.state ?? {}, releases: releasesOf(d.fleetDeviceId) })),
      ...peer.map((d) => ({ ...d, state: this.peerStates[d.fleetDeviceId]?.state ?? {}, releases: releasesOf(d.fleetDeviceId) })),
      ...registered.map((d) => ({ ...d, releases: releasesOf(d.fleetDeviceId) })),
    ];
  }

  /** A command to a fleet device, wherever it lives: here (its driver gets ACTION), or on the linked peer through the bridge. */
  async command(fleetDeviceId: string, command: string, params: Record<string, unknown>, audience?: Audience): Promise<{ ok: true; fleetDeviceId: string; hubId: string; result?: unknown }> {
    const [hubId, ...rest] = fleetDeviceId.split(':');
    const deviceId = rest.join(':');
    if (!hubId || !deviceId) throw fleetErrors.FLEET_DEVICE_NOT_FOUND({ fleetDeviceId });
    if (hubId === this.hubId) {
      const device = this.devices.registry.find(deviceId);
      if (!device || device.removed || (audience && !audience.seesDevice(device))) throw fleetErrors.FLEET_DEVICE_NOT_FOUND({ fleetDeviceId });
      const result = await this.devices.command(deviceId, command, params);
      return { ok: true, fleetDeviceId, hubId, ...(result === undefined ? {} : { result }) };
    }
    if (audience && !audience.everything) throw fleetErrors.FLEET_DEVICE_NOT_FOUND({ fleetDeviceId });
    const link = this.stores.link.find('link');
    if (!link?.peerUrl || !link.token || (link.peerHubId !== null && link.peerHubId !== hubId)) throw fleetErrors.BRIDGE_NOT_LINKED({ fleetDeviceId });
    const access = this.accessOf(link);
    if (!access) throw fleetErrors.BRIDGE_NOT_LINKED({ fleetDeviceId });
    if (access === 'unreadable') {
      this.needsToken();
      throw fleetErrors.BRIDGE_TOKEN_UNREADABLE({ peerUrl: link.peerUrl });
    }
    const answer = await this.peer.command(access.peerUrl, access.token, fleetDeviceId, command, params);
    if (!answer.ok) {
      if (answer.kind !== 'refused') this.lost(answer.kind === 'timeout' ? 'timed out' : answer.reason);
      throw peerFailure(link.peerUrl, answer);
    }
    return { ok: true, fleetDeviceId, hubId, ...(answer.value.result === undefined ? {} : { result: answer.value.result }) };
  }

  link(): LinkView {
    const link = this.stores.link.find('link');
    return {
      peerUrl: link?.peerUrl ?? null,
      peerHubId: link?.peerHubId ?? null,
      state: link?.peerUrl ? this.state : 'unlinked',
      lastContactAt: this.lastContactAt,
      lastError: this.lastError,
      nextAttemptAt: this.state === 'error' ? this.nextAttemptAt : null,
      failures: this.failures,
      peerDevices: this.peerDevices.length,
    };
  }

  /**
   * Stores the peer's URL and the bridge token it issued us, then checks the link at once with
   * the peer's /bridge/health: the answer is the link as that check left it (linked, or error
   * with the reason; retried with back-off). A null URL unlinks.
   */
  async saveLink(peerUrl: string | null, token: string | null): Promise<LinkView> {
    this.generation++;
    if (this.timer) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.peerDevices = [];
    this.peerStates = {};
    this.failures = 0;
    this.lastError = null;
    this.lastContactAt = null;
    if (peerUrl === null) {
      await this.stores.link.save({ id: 'link', peerUrl: null, token: null, peerHubId: null });
      this.state = 'unlinked';
      this.log.info({}, 'bridge link removed');
      return this.link();
    }
    let url: URL;
    try {
      url = new URL(peerUrl);
    } catch {
      throw fleetErrors.BRIDGE_LINK_INVALID({ problem: `"${peerUrl}" is not a URL` }, { details: [{ field: 'body.peerUrl', message: 'must be an http(s) URL' }] });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fleetErrors.BRIDGE_LINK_INVALID({ problem: 'the peer URL must be http or https' }, { details: [{ field: 'body.peerUrl', message: 'must be an http(s) URL' }] });
    if (!token) throw fleetErrors.BRIDGE_LINK_INVALID({ problem: 'give the bridge token the peer issued (POST /bridge/token there)' }, { details: [{ field: 'body.token', message: 'is required' }] });
    const base = url.toString().replace(/\/+$/, '');
    // Sealed: the database and its backups never hold the token in clear.
    await this.stores.link.save({ id: 'link', peerUrl: base, token: this.secrets.seal(token, linkTokenContext(base)), peerHubId: null });
    this.state = 'linking';
    await this.check();
    return this.link();
  }

  /** Devices another hub announces here (or updates). */
  async register(input: { hubId: string; devices: Array<{ deviceId: string; name: string; category?: string | null; commands?: FleetDevice['commands']; online?: boolean; state?: Record<string, unknown> }> }) {
    const out: RegisteredFleetDevice[] = [];
    for (const d of input.devices) {
      const id = this.fleetIdOf(d.deviceId, input.hubId);
      const existing = this.stores.registered.find(id);
      const { item } = await this.stores.registered.save({
        id,
        hubId: input.hubId,
        deviceId: d.deviceId,
        name: d.name,
        category: d.category ?? existing?.category ?? null,
        commands: d.commands ?? existing?.commands ?? [],
        online: d.online ?? existing?.online ?? true,
        state: { ...(existing?.state ?? {}), ...(d.state ?? {}) },
      });
      out.push(item);
    }
    return out;
  }

  async updateRegistered(input: { fleetDeviceId: string; name?: string; category?: string | null; online?: boolean; state?: Record<string, unknown> }) {
    if (!this.stores.registered.find(input.fleetDeviceId)) throw fleetErrors.FLEET_DEVICE_NOT_FOUND({ fleetDeviceId: input.fleetDeviceId });
    return this.stores.registered.update(input.fleetDeviceId, (current) => ({
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.category !== undefined ? { category: input.category } : {}),
      ...(input.online !== undefined ? { online: input.online } : {}),
      ...(input.state !== undefined ? { state: { ...current.state, ...input.state } } : {}),
    }));
  }

  /** Moves one device's status for release `key`, refusing a move the release lifecycle does not have (409 with the current status). */
  async setStatus(key: string, fleetDeviceId: string, status: ReleaseStatus, error?: string): Promise<FleetReleaseStatus> {
    if (!this.fleet().some((d) => d.fleetDeviceId === fleetDeviceId)) throw fleetErrors.FLEET_DEVICE_NOT_FOUND({ fleetDeviceId });
    const id = `${key}:${fleetDeviceId}`;
    const current = this.stores.statuses.find(id);
    const allowed = RELEASE_TRANSITIONS[current?.status ?? 'none'];
    if (!allowed.includes(status)) {
      throw fleetErrors.FLEET_STATUS_TRANSITION(
        { key, deviceId: fleetDeviceId, current: current?.status ?? 'none', next: status, allowed: allowed.join(', ') },
        { details: { current: current?.status ?? null, allowed } },
      );
    }
    const at = this.clock.now();
    const entry = { status, at, ...(error ? { error } : {}) };
    const { item } = await this.stores.statuses.save({
      id,
      key,
      deviceId: fleetDeviceId,
      status,
      error: status === 'failed' ? (error ?? 'failed') : null,
      history: [...(current?.history ?? []), entry].slice(-50),
    });
    return item;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) this.timers.clearTimeout(this.timer);
    this.nextAttemptAt = this.clock.now() + delayMs;
    const generation = this.generation;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      if (generation === this.generation) void this.check();
    }, delayMs);
  }

  /** One contact with the peer: health, then its devices and their state. */
  private async check(): Promise<void> {
    const link = this.stores.link.find('link');
    const access = this.accessOf(link);
    if (!link || !access) return;
    if (access === 'unreadable') return this.needsToken();
    const { token } = access;
    const generation = this.generation;
    const health = await this.peer.health(access.peerUrl, token);
    if (generation !== this.generation) return;
    if (!health.ok) return this.lost(health.kind === 'timeout' ? 'timed out' : health.kind === 'unreachable' ? health.reason : `${health.code}: ${health.message}`);
    const devices = await this.peer.devices(access.peerUrl, token);
    const states = await this.peer.states(access.peerUrl, token);
    if (generation !== this.generation) return;
    if (!devices.ok || !states.ok) return this.lost('the peer answered its health but not its devices');
    const wasLinked = this.state === 'linked';
    this.state = 'linked';
    this.lastContactAt = this.clock.now();
    this.lastError = null;
    this.failures = 0;
    this.peerDevices = devices.value.devices;
    this.peerStates = states.value.devices;
    if (link.peerHubId !== health.value.hubId) await this.stores.link.update('link', () => ({ peerHubId: health.value.hubId }));
    if (!wasLinked) this.log.info({ peer: link.peerUrl, peerHubId: health.value.hubId, devices: this.peerDevices.length }, 'bridge linked');
    this.schedule(this.settings.pollIntervalMs);
  }

  private lost(reason: string): void {
    const link = this.stores.link.find('link');
    if (!link?.peerUrl) return;
    if (this.state !== 'error') this.log.warn({ peer: link.peerUrl, reason }, 'bridge link lost; retrying with back-off');
    this.state = 'error';
    this.lastError = reason;
    this.failures++;
    this.schedule(backoffDelay({ initialMs: FIRST_RETRY_MS, maxMs: this.settings.maxBackoffMs }, this.failures));
  }
}
