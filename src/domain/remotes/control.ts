import type { Clock } from '../../platform/clock.js';
import { DomainError, type FailureInfo } from '../../platform/errors.js';
import { tryCommand } from '../devices/command-results.js';
import type { DeviceService } from '../devices/device-service.js';
import type { DeviceActionResult } from '../devices/model.js';
import type { DomainEventBus } from '../events.js';
import type { ActionMapTarget, RemoteSource, Space } from '../home/model.js';
import type { SpaceService } from '../home/spaces.js';
import type { ActionMapRunner, KeyContext } from '../programs/action-maps.js';
import { viewOf, type RemoteDirectory, type RemoteView } from './directory.js';
import { remoteErrors } from './errors.js';
import type { PairedRemote } from './model.js';

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
  ) {}

  session(remoteId: string): RemoteSession {
    const remote = this.directory.get(remoteId);
    const space = this.spaceOf(remote);
    return {
      remote: { ...viewOf(remote), activeSpaceId: space?.id ?? null },
      space: space ?? null,
      activeSourceId: space?.activeSourceId ?? null,
      sources: space ? this.spaces.remoteSources(space.id) : [],
    };
  }

  async selectSpace(remoteId: string, spaceId: string): Promise<RemoteSession> {
    this.directory.get(remoteId);
    this.spaces.spaces.get(spaceId);
    await this.directory.update(remoteId, { activeSpaceId: spaceId });
    return this.session(remoteId);
  }

  async activateSource(remoteId: string, sourceId: string): Promise<{ source: RemoteSource; results: DeviceActionResult[] }> {
    const space = this.spaceOf(this.directory.get(remoteId));
    if (!space) throw remoteErrors.NO_ACTIVE_SPACE({}, { details: { remoteId } });
    return this.spaces.activate(space.id, sourceId);
  }

  /** Runs one key; a key that resolves to nothing is 404 KEY_NOT_MAPPED, a target that fails is `ok: false`. */
  async press(remoteId: string, key: string, params: Record<string, unknown> | undefined, clientAddress: string): Promise<KeyOutcome> {
    const where = this.whereIs(this.directory.get(remoteId));
    let outcome: KeyOutcome | undefined;
    try {
      outcome = await this.dispatch(key, where, params ?? {});
      if (!outcome) throw remoteErrors.KEY_NOT_MAPPED({ key }, { details: { key, ...where } });
      return outcome;
    } finally {
      this.events.emit('remote.key_pressed', { remoteId, key, ok: outcome?.ok ?? false, at: this.clock.now() });
      await this.directory.update(remoteId, { lastSeenAt: this.clock.now(), lastAddress: clientAddress });
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

  private async dispatch(key: string, where: KeyContext, params: Record<string, unknown>): Promise<KeyOutcome | undefined> {
    const map = this.actionMaps.resolveKey(key, where);
    if (map) {
      const { actionMapId, target, ok, result, error } = await this.actionMaps.run(map, params);
      return { key, resolvedBy: 'action_map', actionMapId, target, ok, ...(result === undefined ? {} : { result }), ...(error ? { error } : {}) };
    }
    const deviceId = this.sourceDevice(where);
    if (!deviceId || !this.devices.registry.find(deviceId)?.commands.some((c) => c.name === key)) return undefined;
    const { ok, result, error } = await tryCommand(this.devices, deviceId, key, params);
    const target: ActionMapTarget = { kind: 'device_command', deviceId, command: key };
    return { key, resolvedBy: 'source_device', target, ok, ...(result === undefined ? {} : { result }), ...(error ? { error } : {}) };
  }

  private sourceDevice({ spaceId, sourceId }: KeyContext): string | undefined {
    if (!spaceId || !sourceId) return undefined;
    return this.spaces.remoteSources(spaceId).find((s) => s.id === sourceId)?.deviceId;
  }

  /** A remote whose space was removed has none. */
  private spaceOf(remote: PairedRemote): Space | undefined {
    return remote.activeSpaceId ? this.spaces.spaces.find(remote.activeSpaceId) : undefined;
  }

  private whereIs(remote: PairedRemote): KeyContext {
    const space = this.spaceOf(remote);
    return { spaceId: space?.id ?? null, sourceId: space?.activeSourceId ?? null };
  }
}
