/**
 * The home's settings: its name, where it is (latitude and longitude, for sun triggers and
 * conditions), its time zone (time triggers and windows without their own) and its units, and
 * whether the first-run onboarding is done. One record per hub; the settings given at start
 * (HOME_LATITUDE, HOME_LONGITUDE, HOME_TIMEZONE) stand until an admin saves their own.
 */
import type { Clock } from '../../platform/clock.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import type { HomeLocation } from '../automations/sun.js';
import type { DomainEventBus } from '../events.js';

export interface HomeSettings {
  name: string;
  latitude: number | null;
  longitude: number | null;
  /** Metres above sea level (lowers the horizon a little for the sun). */
  elevation: number | null;
  /** IANA zone, e.g. "Europe/Berlin". */
  timezone: string;
  units: 'metric' | 'imperial';
  /** When the first admin finished the onboarding (null: not yet). */
  onboardedAt: number | null;
  updatedAt: number | null;
}

export type HomeSettingsChange = Partial<Omit<HomeSettings, 'updatedAt' | 'onboardedAt'>> & { onboarded?: boolean };

export interface HomeSettingsDefaults {
  latitude?: number;
  longitude?: number;
  timezone?: string;
}

const processZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

export class HomeSettingsService {
  private current: HomeSettings;

  constructor(
    private readonly repo: DocumentRepository<HomeSettings & { id: string }>,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
    defaults: HomeSettingsDefaults = {},
  ) {
    this.current = {
      name: 'Home',
      latitude: defaults.latitude ?? null,
      longitude: defaults.longitude ?? null,
      elevation: null,
      timezone: defaults.timezone ?? processZone(),
      units: 'metric',
      onboardedAt: null,
      updatedAt: null,
    };
  }

  async load(): Promise<void> {
    const adopt = (doc: (HomeSettings & { id: string }) | undefined) => {
      if (!doc) return;
      const { id: _id, ...settings } = doc;
      this.current = { ...this.current, ...settings };
    };
    this.repo.watch?.(
      (id, doc) => id === 'home' && adopt(doc),
      (all) => adopt(all.find((d) => d.id === 'home')),
    );
    adopt(await this.repo.get('home'));
  }

  get(): HomeSettings {
    return this.current;
  }

  /** The location sun triggers use; undefined until latitude and longitude are set. */
  location(): HomeLocation | undefined {
    const { latitude, longitude, timezone, elevation } = this.current;
    if (latitude === null || longitude === null) return undefined;
    return { latitude, longitude, timezone, ...(elevation !== null ? { elevation } : {}) };
  }

  timezone(): string {
    return this.current.timezone;
  }

  async update(change: HomeSettingsChange): Promise<HomeSettings> {
    const { onboarded, ...fields } = change;
    const now = this.clock.now();
    const next: HomeSettings = {
      ...this.current,
      ...fields,
      ...(onboarded === true && this.current.onboardedAt === null ? { onboardedAt: now } : {}),
      ...(onboarded === false ? { onboardedAt: null } : {}),
      updatedAt: now,
    };
    await this.repo.save({ ...next, id: 'home' }, now);
    this.current = next;
    this.events.emit('home.settings_updated', { settings: next, at: now });
    return next;
  }
}
