import type { Clock } from '../../platform/clock.js';
import { CAPABILITY_COMMANDS, hasCapability, type DeviceService } from '../devices/device-service.js';
import { deviceErrors } from '../devices/errors.js';
import { GENERIC_IR, type LogicalDevice } from '../devices/model.js';
import { assignSlugs } from '../../platform/slugs.js';
import { errorInfo } from '../devices/command-results.js';
import type { DomainEventBus } from '../events.js';
import { sceneErrors } from './errors.js';

/** A scene a device exposes; `id` is `<deviceId>:<sceneId>`. */
export interface SceneEntry {
  id: string;
  deviceId: string;
  sceneId: string;
  name: string;
}

export interface SceneRefreshResult {
  deviceId: string;
  ok: boolean;
  /** Scenes the device listed (on success). */
  scenes?: number;
  /** Why the device was skipped or failed; its previously listed scenes are kept. */
  error?: { code: string; message: string };
}

export interface SceneCatalogOptions {
  /** Time allowed to one device's scenes.list. Default 5000 ms. */
  timeoutMs?: number;
  /** Devices asked at once. Default 4. */
  concurrency?: number;
}

interface Cached {
  scenes: Array<{ sceneId: string; name: string }>;
  at: number;
}

const MAX_SCENES_PER_DEVICE = 500;

/** True when the device can list and run scenes (by declared capability or `scenes.*` commands). */
export function isSceneCapable(device: LogicalDevice): boolean {
  return device.driverKey !== GENERIC_IR && hasCapability(device, 'scenes');
}

/**
 * Scenes devices expose, as last listed by their drivers. `list()` reads the cache only;
 * `refresh()` asks the scene-capable online devices (a few at a time, each with its own time-out,
 * one failing device never failing the rest) and keeps a device's last good list when it fails.
 */
export class SceneCatalog {
  private readonly cache = new Map<string, Cached>();
  private readonly inflight = new Map<string, Promise<SceneRefreshResult>>();
  private readonly timeoutMs: number;
  private readonly concurrency: number;

  constructor(
    private readonly devices: DeviceService,
    private readonly clock: Clock,
    options: SceneCatalogOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.concurrency = Math.max(1, options.concurrency ?? 4);
  }

  /** Cached scenes of present, scene-capable devices, in device creation order. Never calls drivers. */
  list(): SceneEntry[] {
    const out: SceneEntry[] = [];
    for (const device of byCreation(this.devices.registry.list())) {
      const cached = this.cache.get(device.id);
      if (!cached || !isSceneCapable(device)) continue;
      for (const s of cached.scenes) out.push({ id: sceneKey(device.id, s.sceneId), deviceId: device.id, sceneId: s.sceneId, name: s.name });
    }
    return out;
  }

  /** When each device's scenes were last listed successfully. */
  refreshedAt(deviceId: string): number | undefined {
    return this.cache.get(deviceId)?.at;
  }

  /**
   * Asks the scene-capable online devices (or the one given, which must exist) for their scenes.
   * Resolves with one entry per device asked; never rejects for a device's failure.
   */
  async refresh(deviceId?: string): Promise<SceneRefreshResult[]> {
    let targets: LogicalDevice[];
    if (deviceId !== undefined) {
      targets = [this.devices.registry.get(deviceId)];
    } else {
      targets = byCreation(this.devices.registry.list()).filter((d) => isSceneCapable(d) && this.devices.isOnline(d));
    }
    const results: SceneRefreshResult[] = new Array(targets.length);
    let next = 0;
    const worker = async () => {
      while (next < targets.length) {
        const index = next++;
        results[index] = await this.refreshOne(targets[index]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, targets.length) }, worker));
    return results;
  }

  /** Runs `<deviceId>:<sceneId>` (driver command scenes.run {sceneId}); SCENE_NOT_FOUND when unknown. */
  async run(id: string): Promise<{ sceneId: string; deviceId: string; result?: unknown }> {
    const scene = await this.locate(id);
    const result = await this.devices.capability(scene.deviceId, 'scenes', CAPABILITY_COMMANDS.scenes.run, { sceneId: scene.sceneId });
    return { sceneId: id, deviceId: scene.deviceId, ...(result === undefined ? {} : { result }) };
  }

  /** The scene by id; a device never listed yet is asked once first. */
  async locate(id: string): Promise<SceneEntry> {
    const colon = id.indexOf(':');
    const missing = () => sceneErrors.SCENE_NOT_FOUND({ id }, { details: { sceneId: id } });
    if (colon <= 0) throw missing();
    const deviceId = id.slice(0, colon);
    const sceneId = id.slice(colon + 1);
    const device = this.devices.registry.find(deviceId);
    if (!device || device.removed || !isSceneCapable(device)) throw missing();
    if (!this.cache.has(deviceId)) await this.refreshOne(device);
    const scene = this.cache.get(deviceId)?.scenes.find((s) => s.sceneId === sceneId);
    if (!scene) throw missing();
    return { id, deviceId, sceneId, name: scene.name };
  }

  /**
   * Refreshes a device's scenes when it comes online or is (re)discovered. Returns the unsubscribe
   * function. Optional: without it the catalog fills on `refresh()`.
   */
  watch(events: DomainEventBus, onError?: (err: unknown) => void): () => void {
    const later = (deviceId: string) => {
      const device = this.devices.registry.find(deviceId);
      if (!device || device.removed || !isSceneCapable(device) || !this.devices.isOnline(device)) return;
      this.refreshOne(device).catch((err: unknown) => onError?.(err));
    };
    const owner = {};
    events.on(owner, 'device.online_changed', (e) => {
      if (e.online) later(e.deviceId);
    });
    // A device discovered with state comes online without a device.online_changed event (the
    // state authority creates its entry online), and the state is applied after this event:
    // look again once the driver message has been applied.
    events.on(owner, 'device.discovered', (e) => {
      setImmediate(() => later(e.device.id));
    });
    events.on(owner, 'device.removed', (e) => {
      this.cache.delete(e.deviceId);
    });
    return () => events.removeOwner(owner);
  }

  private refreshOne(device: LogicalDevice): Promise<SceneRefreshResult> {
    const running = this.inflight.get(device.id);
    if (running) return running;
    const run = this.ask(device).finally(() => this.inflight.delete(device.id));
    this.inflight.set(device.id, run);
    return run;
  }

  private async ask(device: LogicalDevice): Promise<SceneRefreshResult> {
    if (!isSceneCapable(device)) {
      return { deviceId: device.id, ok: false, error: deviceErrors.CAPABILITY_NOT_SUPPORTED.info({ device: device.name, capability: 'scenes' }) };
    }
    if (!this.devices.isOnline(device)) {
      return { deviceId: device.id, ok: false, error: sceneErrors.DEVICE_OFFLINE.info({ device: device.name }) };
    }
    try {
      const answer = await this.devices.command(device.id, CAPABILITY_COMMANDS.scenes.list, {}, this.timeoutMs);
      const scenes = parseScenes(answer);
      this.cache.set(device.id, { scenes, at: this.clock.now() });
      return { deviceId: device.id, ok: true, scenes: scenes.length };
    } catch (err) {
      return { deviceId: device.id, ok: false, error: errorInfo(err) };
    }
  }
}

/** The object id of each scene's `scene.*` entity: its name as a slug, `_2`, `_3`… for repeats. */
export function sceneObjectIds(scenes: readonly SceneEntry[]): Map<string, string> {
  return assignSlugs(scenes, 'scene');
}

export function sceneKey(deviceId: string, sceneId: string): string {
  return `${deviceId}:${sceneId}`;
}

/** A driver's scenes.list answer: `[…]` or `{scenes: […]}`, items as strings or `{id|sceneId, name|label}`. */
export function parseScenes(answer: unknown): Array<{ sceneId: string; name: string }> {
  const items = Array.isArray(answer) ? answer : Array.isArray((answer as { scenes?: unknown } | null)?.scenes) ? (answer as { scenes: unknown[] }).scenes : [];
  const out: Array<{ sceneId: string; name: string }> = [];
  const seen = new Set<string>();
  for (const item of items) {
    let sceneId: unknown;
    let name: unknown;
    if (typeof item === 'string' || typeof item === 'number') {
      sceneId = String(item);
      name = String(item);
    } else if (item && typeof item === 'object') {
      const o = item as Record<string, unknown>;
      sceneId = o.id ?? o.sceneId ?? o.scene_id;
      if (typeof sceneId === 'number') sceneId = String(sceneId);
      name = o.name ?? o.label ?? o.title ?? sceneId;
    }
    if (typeof sceneId !== 'string' || !sceneId || seen.has(sceneId)) continue;
    seen.add(sceneId);
    out.push({ sceneId, name: typeof name === 'string' && name ? name : sceneId });
    if (out.length >= MAX_SCENES_PER_DEVICE) break;
  }
  return out;
}

/** Devices by creation time; ties keep registry order (which is creation order). */
export function byCreation<T extends { createdAt: number }>(devices: T[]): T[] {
  return [...devices].sort((a, b) => a.createdAt - b.createdAt);
}
