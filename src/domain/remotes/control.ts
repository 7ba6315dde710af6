import type { Clock } from '../../platform/clock.js';
import { DomainError, type FailureInfo } from '../../platform/errors.js';
import { tryCommand } from '../devices/command-results.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DeviceActionResult } from '../devices/model.js';
import type { DomainEventBus } from '../events.js';
import type { ActionMap, ActionMapTarget, RemoteSource, Space } from '../home/model.js';
import type { SpaceService } from '../home/spaces.js';
import type { ActionMapRunner, KeyContext } from '../programs/action-maps.js';
import type { RoutineReach } from '../home/routine-reach.js';
import { viewOf, type RemoteDirectory, type RemoteView } from './directory.js';
import { remoteErrors } from './errors.js';
import type { PairedRemote } from './model.js';
import { homeErrors } from '../home/errors.js';
import type { Audience } from '../access/audience.js';

/**
 * What a remote may reach: the audience of the account that paired it, as that account stands
 * now (a remote paired by entering the code, which only admins are shown, reaches the household).
 */
export type RemoteAudience = (remote: PairedRemote) => Promise<Audience>;

/** What one key press ran. */
export interface KeyOutcome {
  key: string;
  resolvedBy: 'action_map' | 'source_device';
  actionMapId?: string;
  target: ActionMapTarget;
  ok: boolean;
  result?: unknown;
  error?: FailureInfo;
}

/** One key of a batch: what it ran, or why it did not run. */
export type BatchEntry = KeyOutcome | { key: string; ok: false; error: FailureInfo } | { key: string; ok: false; skipped: true };

export interface RemoteSession {
  remote: RemoteView;
  space: Space | null;
  activeSourceId: string | null;
  sources: RemoteSource[];
}

/**
 * What a paired remote does once it holds its token: it works in one space at a time (its active
 * space), may switch that space's remote source, and presses keys. A key resolves through the
 * action maps of where the remote is (active source, then space, then global) and, failing
 * those, names a command of the active source's device.
 */
export class RemoteControl {
  constructor(
    private readonly directory: RemoteDirectory,
    private readonly spaces: SpaceService,
    private readonly actionMaps: ActionMapRunner,
    private readonly devices: DeviceService,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    private readonly audienceOf: RemoteAudience,
    private readonly routines: RoutineReach,
  ) {}

  async session(remoteId: string): Promise<RemoteSession> {
    const remote = this.directory.get(remoteId);
    const space = this.spaceOf(remote, await this.audienceOf(remote));
    return {
      remote: { ...viewOf(remote), activeSpaceId: space?.id ?? null },
      space: space ?? null,
      activeSourceId: space?.activeSourceId ?? null,
      sources: space ? this.spaces.remoteSources(space.id) : [],
    };
  }

  async selectSpace(remoteId: string, spaceId: string): Promise<RemoteSession> {
    const audience = await this.audienceOf(this.directory.get(remoteId));
    this.spaces.spaces.get(spaceId);
    // A space outside what the remote may reach answers as one that does not exist.
    if (!audience.seesSpace(spaceId)) throw homeErrors.SPACE_NOT_FOUND({ id: spaceId }, { details: { id: spaceId } });
    await this.directory.update(remoteId, { activeSpaceId: spaceId });
    return this.session(remoteId);
  }

  async activateSource(remoteId: string, sourceId: string): Promise<{ source: RemoteSource; results: DeviceActionResult[] }> {
    const remote = this.directory.get(remoteId);
    const space = this.spaceOf(remote, await this.audienceOf(remote));
    if (!space) throw remoteErrors.NO_ACTIVE_SPACE({}, { details: { remoteId } });
    return this.spaces.activate(space.id, sourceId);
  }

  /** Runs one key; a key that resolves to nothing is 404 KEY_NOT_MAPPED, a target that fails is `ok: false`. */
  async press(remoteId: string, key: string, params: Record<string, unknown> | undefined, clientAddress: string): Promise<KeyOutcome> {
    const remote = this.directory.get(remoteId);
    const audience = await this.audienceOf(remote);
    const where = this.whereIs(remote, audience);
    let outcome: KeyOutcome | undefined;
    try {
      outcome = await this.dispatch(key, where, params ?? {}, audience);
      if (!outcome) throw remoteErrors.KEY_NOT_MAPPED({ key }, { details: { key, ...where } });
      return outcome;
    } finally {
      this.events.emit('remote.key_pressed', { remoteId, key, ok: outcome?.ok ?? false, at: this.clock.now() });
      await this.directory.touch(remoteId, { lastSeenAt: this.clock.now(), lastAddress: clientAddress });
    }
  }

  /** Runs keys in order; with `stopOnError` the keys after the first failure are skipped. */
  async pressMany(remoteId: string, keys: Array<{ key: string; params?: Record<string, unknown> }>, stopOnError: boolean, clientAddress: string): Promise<BatchEntry[]> {
    const entries: BatchEntry[] = [];
    let failed = false;
    for (const { key, params } of keys) {
      if (failed && stopOnError) {
        entries.push({ key, ok: false, skipped: true });
        continue;
      }
      const entry = await this.press(remoteId, key, params, clientAddress).catch((err: unknown) => {
        if (!(err instanceof DomainError)) throw err;
        return { key, ok: false as const, error: { code: err.code, message: err.message } };
      });
      failed ||= !entry.ok;
      entries.push(entry);
    }
    return entries;
  }

  /** A map, routine or source device that reaches a device outside the remote's audience is as good as none. */
  private async dispatch(key: string, where: KeyContext, params: Record<string, unknown>, audience: Audience): Promise<KeyOutcome | undefined> {
    const map = this.actionMaps.resolveKey(key, where);
    if (map && this.withinReach(map, audience)) {
      const { actionMapId, target, ok, result, error } = await this.actionMaps.run(map, params);
      return { key, resolvedBy: 'action_map', actionMapId, target, ok, ...(result === undefined ? {} : { result }), ...(error ? { error } : {}) };
    }
    const deviceId = this.sourceDevice(where);
    const device = deviceId ? this.devices.registry.find(deviceId) : undefined;
    if (!deviceId || !audience.seesDevice(device) || !device?.commands.some((c) => c.name === key)) return undefined;
    const { ok, result, error } = await tryCommand(this.devices, deviceId, key, params);
    const target: ActionMapTarget = { kind: 'device_command', deviceId, command: key };
    return { key, resolvedBy: 'source_device', target, ok, ...(result === undefined ? {} : { result }), ...(error ? { error } : {}) };
  }

  private withinReach(map: ActionMap, audience: Audience): boolean {
    if (map.deviceId !== undefined) return audience.seesDevice(this.devices.registry.find(map.deviceId));
    if (map.macroId !== undefined) return this.routines.seesMacro(audience, map.macroId);
    if (map.programId !== undefined) return this.routines.seesProgram(audience, map.programId);
    return false;
  }

  private sourceDevice({ spaceId, sourceId }: KeyContext): string | undefined {
    if (!spaceId || !sourceId) return undefined;
    return this.spaces.remoteSources(spaceId).find((s) => s.id === sourceId)?.deviceId;
  }

  /** A remote whose space was removed, or is no longer within its reach, has none. */
  private spaceOf(remote: PairedRemote, audience: Audience): Space | undefined {
    const space = remote.activeSpaceId ? this.spaces.spaces.find(remote.activeSpaceId) : undefined;
    return space && audience.seesSpace(space.id) ? space : undefined;
  }

  private whereIs(remote: PairedRemote, audience: Audience): KeyContext {
    const space = this.spaceOf(remote, audience);
    return { spaceId: space?.id ?? null, sourceId: space?.activeSourceId ?? null };
  }
}
