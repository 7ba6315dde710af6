import path from 'node:path';
import type { Clock } from '../../platform/clock.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import type { FileStore } from '../../platform/files.js';
import { accessoryHubErrors } from './errors.js';

/**
 * HAP-NodeJS refuses a bridge's 150th accessory: a HomeKit bridge shows at most 149. With every
 * device chosen, the first 149 the hub lists are shown and the status says how many are left out.
 */
export const HOMEKIT_BRIDGE_LIMIT = 149;

/** What the admin chose: whether this hub's devices show in Apple Home, and which of them. */
export interface HomeKitSettings {
  id: 'homekit';
  /** "Show this hub's devices in Apple Home". */
  exposed: boolean;
  /** `all`: every device HomeKit has a service for; else these device ids. */
  devices: 'all' | string[];
  createdAt: number;
  updatedAt: number;
}

export type HomeKitChange = Partial<Pick<HomeKitSettings, 'exposed' | 'devices'>>;

export interface HomeKitExposureDeps {
  settings: DocumentRepository<HomeKitSettings>;
  /** DATA_DIR/accessory-hub: Homebridge's storage, where a pairing made before this setting existed is found. */
  dir: string;
  files: FileStore;
  clock: Clock;
  /** The device ids the hub knows, so that a chosen id that names none is refused. */
  knows: (deviceId: string) => boolean;
}

/**
 * Whether the hub's devices are shown in Apple Home through the managed Homebridge, and which.
 * Off on a fresh hub: Homebridge then runs only for the household's plugins, or not at all.
 */
export class HomeKitExposure {
  private saved: HomeKitSettings | undefined;
  private chosen: Set<string> | undefined;
  private readonly followers: Array<() => void> = [];

  constructor(private readonly deps: HomeKitExposureDeps) {}

  get exposed(): boolean {
    return this.saved?.exposed ?? false;
  }

  get devices(): 'all' | string[] {
    return this.saved?.devices ?? 'all';
  }

  /**
   * The saved choice; on the first start after the upgrade that brought it, a hub whose Homebridge
   * is already paired with a phone keeps showing its devices (pairings are in HAP-NodeJS's
   * `persist/AccessoryInfo.*.json`, `pairedClients`).
   */
  async load(): Promise<void> {
    this.saved = await this.deps.settings.get('homekit');
    if (!this.saved && (await this.pairedBefore())) await this.write({ exposed: true });
    this.chosen = this.saved && this.saved.devices !== 'all' ? new Set(this.saved.devices) : undefined;
  }

  /** Whether this device is among those chosen (every bridgeable device when `all`); false while exposure is off. */
  includes(deviceId: string): boolean {
    if (!this.exposed) return false;
    return this.chosen === undefined || this.chosen.has(deviceId);
  }

  async update(change: HomeKitChange): Promise<HomeKitSettings> {
    if (Array.isArray(change.devices)) {
      const unknown = change.devices.filter((id) => !this.deps.knows(id));
      if (unknown.length > 0) throw accessoryHubErrors.INVALID_ACCESSORY_HUB_SETTINGS({ problem: `no device ${unknown.slice(0, 3).join(', ')}` }, { details: unknown.map((id) => ({ field: 'body.devices', message: `no device ${id}` })) });
      if (change.devices.length > HOMEKIT_BRIDGE_LIMIT) throw accessoryHubErrors.INVALID_ACCESSORY_HUB_SETTINGS({ problem: `a HomeKit bridge shows at most ${HOMEKIT_BRIDGE_LIMIT} devices` }, { details: [{ field: 'body.devices', message: `at most ${HOMEKIT_BRIDGE_LIMIT}` }] });
    }
    const saved = await this.write(change);
    this.chosen = saved.devices !== 'all' ? new Set(saved.devices) : undefined;
    for (const follow of this.followers) follow();
    return saved;
  }

  /** Runs after every change (the plugin bridge's stream shows and hides devices; Homebridge starts or stops). */
  onChange(follow: () => void): void {
    this.followers.push(follow);
  }

  private async write(change: HomeKitChange): Promise<HomeKitSettings> {
    const now = this.deps.clock.now();
    const doc: HomeKitSettings = {
      id: 'homekit',
      exposed: change.exposed ?? this.exposed,
      devices: change.devices !== undefined ? (Array.isArray(change.devices) ? [...new Set(change.devices)] : 'all') : this.devices,
      createdAt: this.saved?.createdAt ?? now,
      updatedAt: now,
    };
    await this.deps.settings.save(doc, now);
    this.saved = doc;
    return doc;
  }

  private async pairedBefore(): Promise<boolean> {
    const persist = path.join(this.deps.dir, 'persist');
    const files = await this.deps.files.list(persist).catch(() => [] as string[]);
    for (const name of files.filter((f) => /^AccessoryInfo\..+\.json$/.test(f))) {
      const info = JSON.parse((await this.deps.files.readText(path.join(persist, name)).catch(() => undefined)) ?? 'null') as { pairedClients?: Record<string, unknown> } | null;
      if (info?.pairedClients && Object.keys(info.pairedClients).length > 0) return true;
    }
    return false;
  }
}
