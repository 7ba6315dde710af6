import type { Clock } from '../../platform/clock.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { DomainEventBus } from '../events.js';
import { homeErrors } from './errors.js';
import type { DesignProfile, HomePreferences } from './model.js';
import type { DocumentRepository } from '../../platform/document-repository.js';

export const DEFAULT_PREFERENCES: Omit<HomePreferences, 'updatedAt'> = {
  layout: 'grid',
  theme: 'system',
  temperatureUnit: 'C',
  showOfflineDevices: true,
  defaultSpaceId: null,
  sections: ['favorites', 'spaces', 'programs', 'media'],
  favorites: [],
};

export type PreferencesChange = Partial<Omit<HomePreferences, 'updatedAt' | 'favorites'>>;

/** Home-screen preferences and favorite devices; one record per hub. */
export class PreferencesService {
  private current: HomePreferences | undefined;

  constructor(
    private readonly repo: DocumentRepository<HomePreferences & { id: string }>,
    private readonly devices: DeviceRegistry,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
  ) {}

  async load(): Promise<void> {
    // Written by another instance sharing the database: followed here.
    this.repo.watch?.(
      (id, doc) => id === 'home' && this.adopt(doc),
      (all) => this.adopt(all.find((doc) => doc.id === 'home')),
    );
    this.adopt(await this.repo.get('home'));
  }

  private adopt(stored: (HomePreferences & { id: string }) | undefined): void {
    if (!stored) return;
    const { id: _id, ...prefs } = stored;
    this.current = { ...DEFAULT_PREFERENCES, ...prefs };
  }

  get(): HomePreferences {
    return this.current ?? { ...DEFAULT_PREFERENCES, updatedAt: 0 };
  }

  async update(change: PreferencesChange): Promise<HomePreferences> {
    return this.write({ ...this.get(), ...change });
  }

  /** A removed space is no longer the default one. */
  async spaceRemoved(spaceId: string): Promise<void> {
    if (this.current?.defaultSpaceId === spaceId) await this.update({ defaultSpaceId: null });
  }

  favorites(): string[] {
    return this.get().favorites;
  }

  /** Saves the favorite device keys, in order; every key must name an existing device. */
  async saveFavorites(deviceIds: string[]): Promise<string[]> {
    const unique = [...new Set(deviceIds)];
    this.devices.requireAll(unique);
    return (await this.write({ ...this.get(), favorites: unique })).favorites;
  }

  private async write(prefs: Omit<HomePreferences, 'updatedAt'>): Promise<HomePreferences> {
    const next = { ...prefs, updatedAt: this.clock.now() };
    await this.repo.save({ ...next, id: 'home' }, next.updatedAt);
    this.current = next;
    this.events.emit('preferences.updated', { preferences: next, at: next.updatedAt });
    return next;
  }
}

export const BUILT_IN_PROFILES: DesignProfile[] = [
  {
    id: 'classic',
    name: 'Classic',
    description: 'Light surfaces with a calm blue accent.',
    builtIn: true,
    tokens: { colorScheme: 'light', background: '#f5f6f8', surface: '#ffffff', accent: '#2f6fde', text: '#1d2433', radius: 12, fontFamily: 'system-ui' },
  },
  {
    id: 'midnight',
    name: 'Midnight',
    description: 'Dark surfaces for wall panels at night.',
    builtIn: true,
    tokens: { colorScheme: 'dark', background: '#0f1420', surface: '#1a2131', accent: '#7aa2ff', text: '#e6e9f0', radius: 12, fontFamily: 'system-ui' },
  },
  {
    id: 'daylight',
    name: 'Daylight',
    description: 'Warm, high-brightness theme for sunny rooms.',
    builtIn: true,
    tokens: { colorScheme: 'light', background: '#fffaf2', surface: '#ffffff', accent: '#e07a1f', text: '#2b2118', radius: 16, fontFamily: 'system-ui' },
  },
  {
    id: 'high-contrast',
    name: 'High contrast',
    description: 'Maximum legibility: black and white with a yellow accent.',
    builtIn: true,
    tokens: { colorScheme: 'dark', background: '#000000', surface: '#000000', accent: '#ffd400', text: '#ffffff', radius: 4, fontFamily: 'system-ui' },
  },
];

export interface LiveDesign {
  profile: DesignProfile;
  selectedAt: number | null;
}

/** Design profiles: built in, one selected; selecting publishes it to the designer clients. */
export class DesignService {
  private selected: { id: string; profileId: string; selectedAt: number } | undefined;

  constructor(
    private readonly repo: DocumentRepository<{ id: string; profileId: string; selectedAt: number }>,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
  ) {}

  async load(): Promise<void> {
    this.repo.watch?.(
      (id, doc) => {
        if (id === 'active') this.selected = doc;
      },
      (all) => (this.selected = all.find((doc) => doc.id === 'active')),
    );
    this.selected = await this.repo.get('active');
  }

  profiles(): Array<DesignProfile & { active: boolean }> {
    const active = this.live().profile.id;
    return BUILT_IN_PROFILES.map((p) => ({ ...p, active: p.id === active }));
  }

  live(): LiveDesign {
    const profile = BUILT_IN_PROFILES.find((p) => p.id === this.selected?.profileId) ?? BUILT_IN_PROFILES[0]!;
    return { profile, selectedAt: this.selected?.selectedAt ?? null };
  }

  async select(profileId: string): Promise<LiveDesign> {
    if (!BUILT_IN_PROFILES.some((p) => p.id === profileId)) {
      throw homeErrors.DESIGN_PROFILE_NOT_FOUND({ profileId }, { details: { profileId, available: BUILT_IN_PROFILES.map((p) => p.id) } });
    }
    const selected = { id: 'active', profileId, selectedAt: this.clock.now() };
    await this.repo.save(selected, selected.selectedAt);
    this.selected = selected;
    const live = this.live();
    this.events.emit('design.published', { design: live, at: selected.selectedAt });
    return live;
  }
}
