import { Type } from 'typebox';
import { ADMIN_FROM_ANY_APP, ANY_ACCOUNT, defineOperation, OS_ADMIN, type Principal } from '../../platform/operations.js';
import type { Audience, AudienceResolver } from '../access/audience.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { DeviceService } from '../devices/device-service.js';
import { DeviceSchema, DeviceStateSchema } from '../devices/schemas.js';
import type { AlertService } from './alerts.js';
import { homeErrors } from './errors.js';
import type { MacroService } from './macros.js';
import type { ActionMap, Macro } from './model.js';
import type { RoutineReach } from './routine-reach.js';
import type { DesignService, PreferencesService } from './preferences.js';
import type { HomeSettingsService } from './settings.js';
import { isValidTimezone } from '../../platform/timezones.js';
import {
  ActionMapInput,
  ActionMapSchema,
  AlertSchema,
  DesignProfileSchema,
  DeviceActionResultSchema,
  Id,
  JsonObject,
  LiveDesignSchema,
  MacroRunSchema,
  MacroSchema,
  MacroStepSchema,
  Name,
  PreferencesSchema,
  RemoteSourceView,
  Severity,
  SpaceInput,
  SpaceSchema,
  ZoneGroupSchema,
  ZoneSchema,
} from './schemas.js';
import type { SpaceService } from './spaces.js';
import type { ZoneService } from './zones.js';

const Removed = Type.Object({ removed: Type.Literal(true), id: Type.String() });
const AssignMode = Type.Optional(Type.Union([Type.Literal('add'), Type.Literal('replace')], { description: '`add` (default) keeps current members; `replace` makes the list the whole membership.' }));

export interface HomeServices {
  spaces: SpaceService;
  zones: ZoneService;
  macros: MacroService;
  alerts: AlertService;
  preferences: PreferencesService;
  design: DesignService;
  settings: HomeSettingsService;
}

const HomeSettingsSchema = Type.Object({
  name: Type.String(),
  latitude: Type.Union([Type.Number(), Type.Null()]),
  longitude: Type.Union([Type.Number(), Type.Null()]),
  elevation: Type.Union([Type.Number(), Type.Null()]),
  timezone: Type.String(),
  units: Type.Union([Type.Literal('metric'), Type.Literal('imperial')]),
  onboardedAt: Type.Union([Type.Integer(), Type.Null()]),
  updatedAt: Type.Union([Type.Integer(), Type.Null()]),
});

/** Who sees what (the access module's grants) and where devices are, for the reads that filter by caller. */
export interface HomeVisibility {
  audiences: AudienceResolver;
  devices: Pick<DeviceRegistry, 'find'>;
  /** Device views and their state, for the overview. */
  views: Pick<DeviceService, 'list' | 'stateSnapshot'>;
  /** Which programs and macros stay within a caller's devices. */
  reach: RoutineReach;
}

/** The reads' visibility rules shared by several aggregates: what a caller may see, by the access grants. */
function visibilityRules(home: HomeServices, { audiences, devices, reach }: HomeVisibility) {
  const { macros } = home;
  const seesDeviceId = (audience: Audience, id: string) => audience.seesDevice(devices.find(id));
  /**
   * A map is seen with its space, its device target and the device of its remote source
   * (`<deviceId>:<source id>`; device ids are UUIDs, so the device is what precedes the first colon).
   */
  const seesActionMap = (audience: Audience, map: ActionMap) =>
    reach.seesTarget(audience, map) && (!map.sourceId || seesDeviceId(audience, map.sourceId.slice(0, map.sourceId.indexOf(':'))));
  const visibleMacro = (id: string, principal: Principal | undefined): Macro => {
    const macro = macros.macros.get(id);
    if (!reach.seesMacro(audiences.audienceOf(principal), id)) throw homeErrors.MACRO_NOT_FOUND({ id }, { details: { id } });
    return macro;
  };
  /** A space the caller may not see answers as one that does not exist, so ids do not leak. */
  const visibleSpace = (id: string, principal: Principal | undefined): Audience => {
    const audience = audiences.audienceOf(principal);
    if (!audience.seesSpace(id)) throw homeErrors.SPACE_NOT_FOUND({ id }, { details: { id } });
    return audience;
  };
  return { seesDeviceId, seesActionMap, visibleMacro, visibleSpace };
}

/** Spaces, their devices and remote sources. */
function spaceOperations(home: HomeServices, visibility: HomeVisibility) {
  const { spaces } = home;
  const { audiences, views } = visibility;
  const { visibleSpace } = visibilityRules(home, visibility);
  return {
    listSpaces: defineOperation({
      name: 'spaces.list',
      summary: 'List spaces (rooms); a user without the admin role sees those granted to them.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ spaces: Type.Array(SpaceSchema) }),
      async handler(_input, { principal }) {
        const audience = audiences.audienceOf(principal);
        return { spaces: audience.everything ? spaces.list() : spaces.list().filter((space) => audience.seesSpace(space.id)) };
      },
    }),
    overview: defineOperation({
      name: 'spaces.overview',
      summary: "The home as a person sees it: each space they see with its remote sources and its devices (with their state), then the devices they see in no space.",
      description: 'From memory in one pass; what a user without the admin role sees is what spaces.list, spaces.devices and devices.list answer them.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({
        spaces: Type.Array(
          Type.Object({
            space: SpaceSchema,
            activeSourceId: Type.Union([Type.String(), Type.Null()]),
            sources: Type.Array(RemoteSourceView),
            devices: Type.Array(Type.Object({ device: DeviceSchema, state: DeviceStateSchema })),
          }),
        ),
        unplaced: Type.Array(Type.Object({ device: DeviceSchema, state: DeviceStateSchema })),
      }),
      async handler(_input, { principal }) {
        const audience = audiences.audienceOf(principal);
        const { devices: states } = views.stateSnapshot();
        const withState = <D extends { id: string }>(device: D) => ({ device, state: states[device.id]! });
        const placed = new Set<string>();
        const visibleSpaces = spaces.list().filter((space) => audience.everything || audience.seesSpace(space.id));
        const out = visibleSpaces.map((space) => {
          const inSpace = spaces.devicesOf(space.id).filter((device) => audience.seesDevice(device) && states[device.id]);
          for (const device of inSpace) placed.add(device.id);
          return { space, activeSourceId: spaces.spaces.get(space.id).activeSourceId, sources: spaces.remoteSources(space.id), devices: inSpace.map(withState) };
        });
        const unplaced = views.list().filter((device) => !placed.has(device.id) && audience.seesDevice(device) && states[device.id]);
        return { spaces: out, unplaced: unplaced.map(withState) } as never;
      },
    }),
    getSpace: defineOperation({
      name: 'spaces.get',
      summary: 'One space (room).',
      access: ANY_ACCOUNT,
      input: Type.Object({ id: Id }),
      output: SpaceSchema,
      async handler({ id }, { principal }) {
        visibleSpace(id, principal);
        return spaces.spaces.get(id);
      },
    }),
    saveSpace: defineOperation({
      name: 'spaces.save',
      summary: 'Create a space (no id, or a new id) or update one.',
      access: OS_ADMIN,
      input: Type.Object(SpaceInput),
      output: SpaceSchema,
      async handler(input) {
        return spaces.save(input);
      },
    }),
    removeSpace: defineOperation({
      name: 'spaces.remove',
      summary: 'Remove a space; its devices stay and become unassigned.',
      access: OS_ADMIN,
      input: Type.Object({ id: Id }),
      output: Type.Object({ removed: Type.Literal(true), id: Type.String(), unassignedDevices: Type.Array(Type.String()) }),
      async handler({ id }) {
        const { unassignedDevices } = await spaces.remove(id);
        return { removed: true as const, id, unassignedDevices };
      },
    }),
    spaceDevices: defineOperation({
      name: 'spaces.devices',
      summary: 'Devices assigned to a space (their primary room).',
      access: ANY_ACCOUNT,
      input: Type.Object({ id: Id }),
      output: Type.Object({ spaceId: Type.String(), devices: Type.Array(DeviceSchema) }),
      async handler({ id }, { principal }) {
        const audience = visibleSpace(id, principal);
        return { spaceId: id, devices: spaces.devicesOf(id).filter((device) => audience.seesDevice(device)) };
      },
    }),
    assignDevices: defineOperation({
      name: 'spaces.devices.assign',
      summary: 'Assign devices to a space; unknown devices answer 404 naming them.',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, deviceIds: Type.Array(Id, { maxItems: 1000 }), mode: AssignMode }),
      output: Type.Object({ spaceId: Type.String(), devices: Type.Array(DeviceSchema) }),
      async handler({ id, deviceIds, mode }) {
        return { spaceId: id, devices: await spaces.assign(id, deviceIds, mode ?? 'add') };
      },
    }),
    moveDevice: defineOperation({
      name: 'spaces.devices.move',
      summary: 'Move a device into a space, or out of every space (`spaceId` null): its primary room.',
      description: 'An unknown device or space answers 404 naming it.',
      access: OS_ADMIN,
      input: Type.Object({ deviceId: Id, spaceId: Type.Union([Id, Type.Null()]) }),
      output: DeviceSchema,
      async handler({ deviceId, spaceId }) {
        return spaces.move(deviceId, spaceId);
      },
    }),
    remoteSources: defineOperation({
      name: 'spaces.remote_sources',
      summary: "Remote sources of a space, from its devices' remote-source metadata.",
      access: ANY_ACCOUNT,
      input: Type.Object({ id: Id }),
      output: Type.Object({ spaceId: Type.String(), activeSourceId: Type.Union([Type.String(), Type.Null()]), sources: Type.Array(RemoteSourceView) }),
      async handler({ id }, { principal }) {
        visibleSpace(id, principal);
        return { spaceId: id, activeSourceId: spaces.spaces.get(id).activeSourceId, sources: spaces.remoteSources(id) };
      },
    }),
    activateSource: defineOperation({
      name: 'spaces.remote_sources.activate',
      journal: 'activity',
      summary: "Activate a remote source: power on what it needs, select its input, make it the space's active source.",
      access: ANY_ACCOUNT,
      input: Type.Object({ id: Id, sourceId: Id }),
      output: Type.Object({ source: RemoteSourceView, results: Type.Array(DeviceActionResultSchema) }),
      async handler({ id, sourceId }, { principal }) {
        visibleSpace(id, principal);
        return spaces.activate(id, sourceId);
      },
    }),

  };
}

/** Zones and zone groups. */
function zoneOperations(home: HomeServices, visibility: HomeVisibility) {
  const { zones } = home;
  const { audiences } = visibility;
  const { seesDeviceId } = visibilityRules(home, visibility);
  return {
    listZones: defineOperation({
      name: 'zones.list',
      summary: 'Zones with their devices and program resolved; a user without the admin role sees the zones with a device of theirs, and only their devices in them.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ zones: Type.Array(ZoneSchema) }),
      async handler(_input, { principal }) {
        const audience = audiences.audienceOf(principal);
        if (audience.everything) return { zones: zones.list() };
        const sees = (id: string) => seesDeviceId(audience, id);
        return {
          zones: zones
            .list()
            .filter((zone) => zone.deviceIds.some(sees))
            .map((zone) => ({ ...zone, deviceIds: zone.deviceIds.filter(sees), devices: zone.devices.filter((device) => sees(device.id)) })),
        };
      },
    }),
    saveZone: defineOperation({
      name: 'zones.save',
      summary: 'Create or update a zone (devices and an optional program).',
      access: OS_ADMIN,
      input: Type.Object({ id: Type.Optional(Id), name: Name, deviceIds: Type.Array(Id, { maxItems: 500 }), programId: Type.Optional(Type.Union([Id, Type.Null()])) }),
      output: ZoneSchema,
      async handler(input) {
        return zones.save(input);
      },
    }),
    removeZone: defineOperation({
      name: 'zones.remove',
      summary: 'Remove a zone (and take it out of its zone groups).',
      access: OS_ADMIN,
      input: Type.Object({ id: Id }),
      output: Removed,
      async handler({ id }) {
        await zones.remove(id);
        return { removed: true as const, id };
      },
    }),
    zoneVolume: defineOperation({
      name: 'zones.volume',
      journal: 'activity',
      summary: 'Set absolute (volume 0–100) or relative (delta) volume on the zone\'s volume-capable devices, or a subset; per-device results.',
      access: OS_ADMIN,
      input: Type.Object({
        id: Id,
        volume: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
        delta: Type.Optional(Type.Number({ minimum: -100, maximum: 100 })),
        deviceIds: Type.Optional(Type.Array(Id, { maxItems: 500 })),
      }),
      output: Type.Object({ zoneId: Type.String(), results: Type.Array(DeviceActionResultSchema) }),
      async handler({ id, ...change }) {
        return zones.setVolume(id, change);
      },
    }),
    listZoneGroups: defineOperation({
      name: 'zone_groups.list',
      summary: 'List zone groups.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ zoneGroups: Type.Array(ZoneGroupSchema) }),
      async handler() {
        return { zoneGroups: zones.groups.list() };
      },
    }),
    saveZoneGroup: defineOperation({
      name: 'zone_groups.save',
      summary: 'Create or update a zone group.',
      access: OS_ADMIN,
      input: Type.Object({ id: Type.Optional(Id), name: Name, zoneIds: Type.Optional(Type.Array(Id, { maxItems: 500 })) }),
      output: ZoneGroupSchema,
      async handler(input) {
        return zones.saveGroup(input);
      },
    }),
    removeZoneGroup: defineOperation({
      name: 'zone_groups.remove',
      summary: 'Remove a zone group (its zones stay).',
      access: OS_ADMIN,
      input: Type.Object({ id: Id }),
      output: Removed,
      async handler({ id }) {
        await zones.removeGroup(id);
        return { removed: true as const, id };
      },
    }),
    assignZones: defineOperation({
      name: 'zone_groups.zones.assign',
      summary: 'Assign zones to a zone group; unknown zones answer 404 naming them.',
      access: OS_ADMIN,
      input: Type.Object({ id: Id, zoneIds: Type.Array(Id, { maxItems: 500 }), mode: AssignMode }),
      output: ZoneGroupSchema,
      async handler({ id, zoneIds, mode }) {
        return zones.assignZones(id, zoneIds, mode ?? 'add');
      },
    }),

  };
}

/** Macros. */
function macroOperations(home: HomeServices, visibility: HomeVisibility) {
  const { macros } = home;
  const { audiences, reach } = visibility;
  const { visibleMacro } = visibilityRules(home, visibility);
  return {
    listMacros: defineOperation({
      name: 'macros.list',
      summary: 'List macros.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ macros: Type.Array(MacroSchema) }),
      async handler(_input, { principal }) {
        const audience = audiences.audienceOf(principal);
        const all = macros.macros.list();
        return { macros: audience.everything ? all : all.filter((macro) => reach.seesMacro(audience, macro.id)) };
      },
    }),
    getMacro: defineOperation({
      name: 'macros.get',
      summary: 'One macro.',
      access: ANY_ACCOUNT,
      input: Type.Object({ id: Id }),
      output: MacroSchema,
      async handler({ id }, { principal }) {
        return visibleMacro(id, principal);
      },
    }),
    saveMacro: defineOperation({
      name: 'macros.save',
      summary: 'Create or update a macro: ordered device commands with optional delays.',
      access: ADMIN_FROM_ANY_APP,
      input: Type.Object({ id: Type.Optional(Id), name: Name, steps: Type.Array(MacroStepSchema, { minItems: 1, maxItems: 200 }), stopOnError: Type.Optional(Type.Boolean()) }),
      output: MacroSchema,
      async handler(input) {
        return macros.save(input);
      },
    }),
    removeMacro: defineOperation({
      name: 'macros.remove',
      summary: 'Remove a macro; refused (409) while a program runs it.',
      access: ADMIN_FROM_ANY_APP,
      input: Type.Object({ id: Id }),
      output: Removed,
      async handler({ id }) {
        await macros.remove(id);
        return { removed: true as const, id };
      },
    }),
    runMacro: defineOperation({
      name: 'macros.run',
      journal: 'activity',
      summary: 'Run a macro; answers each step\'s result.',
      access: ANY_ACCOUNT,
      input: Type.Object({ id: Id }),
      output: MacroRunSchema,
      async handler({ id }, { principal }) {
        visibleMacro(id, principal);
        return macros.run(id);
      },
    }),
  };
}

/** Action maps (a remote's keys to actions). */
function actionMapOperations(home: HomeServices, visibility: HomeVisibility) {
  const { macros } = home;
  const { audiences } = visibility;
  const { seesActionMap } = visibilityRules(home, visibility);
  return {
    listActionMaps: defineOperation({
      name: 'action_maps.list',
      summary: 'Mapped controls: control keys bound to device commands, macros or programs; a user without the admin role sees those of their spaces and devices (macro and program targets are household routines, like the sequences and programs themselves).',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ actionMaps: Type.Array(ActionMapSchema) }),
      async handler(_input, { principal }) {
        const audience = audiences.audienceOf(principal);
        const maps = macros.actionMaps.list();
        return { actionMaps: audience.everything ? maps : maps.filter((map) => seesActionMap(audience, map)) };
      },
    }),
    saveActionMap: defineOperation({
      name: 'action_maps.save',
      summary: 'Create or update a mapped control: a control key bound to a device command, a macro or a program.',
      access: OS_ADMIN,
      input: Type.Object(ActionMapInput),
      output: ActionMapSchema,
      async handler(input) {
        return macros.saveActionMap(input);
      },
    }),
    removeActionMap: defineOperation({
      name: 'action_maps.remove',
      summary: 'Remove a mapped control.',
      access: OS_ADMIN,
      input: Type.Object({ id: Id }),
      output: Removed,
      async handler({ id }) {
        await macros.removeActionMap(id);
        return { removed: true as const, id };
      },
    }),

  };
}

/** Alerts. */
function alertOperations(home: HomeServices) {
  const { alerts } = home;
  return {
    listAlerts: defineOperation({
      name: 'alerts.list',
      summary: 'Submitted alerts, newest first, with cursor paging and filters.',
      access: OS_ADMIN,
      input: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
        before: Type.Optional(Type.String({ description: 'Id of the last alert of the previous page.' })),
        type: Type.Optional(Type.String()),
        severity: Type.Optional(Severity),
        deviceId: Type.Optional(Type.String()),
        since: Type.Optional(Type.Integer({ description: 'Oldest time, ms since epoch.' })),
      }),
      output: Type.Object({ alerts: Type.Array(AlertSchema), nextBefore: Type.Union([Type.String(), Type.Null()]) }),
      async handler(input) {
        const { alerts: page, hasMore } = await alerts.list({ ...input, limit: input.limit ?? 50 });
        return { alerts: page, nextBefore: hasMore ? page.at(-1)!.id : null };
      },
    }),
    submitAlert: defineOperation({
      name: 'alerts.submit',
      summary: 'Submit an alert event.',
      access: OS_ADMIN,
      input: Type.Object({
        type: Type.String({ minLength: 1, maxLength: 100, description: 'e.g. "smoke", "door_open", "battery_low".' }),
        severity: Type.Optional(Severity),
        message: Type.String({ minLength: 1, maxLength: 2000 }),
        deviceId: Type.Optional(Type.String({ maxLength: 200 })),
        source: Type.Optional(Type.String({ maxLength: 200 })),
        payload: Type.Optional(JsonObject),
      }),
      output: AlertSchema,
      async handler(input) {
        return alerts.submit({ ...input, severity: input.severity ?? 'info' });
      },
    }),

  };
}

/** The home's settings (name, place, time zone, units). */
function settingsOperations(home: HomeServices) {
  const { settings } = home;
  return {
    getSettings: defineOperation({
      name: 'home.settings.get',
      summary: 'The home\'s name, location (for sun triggers), time zone and units, and whether the onboarding is done.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: HomeSettingsSchema,
      async handler() {
        return settings.get();
      },
    }),
    updateSettings: defineOperation({
      name: 'home.settings.update',
      summary: 'Change the home settings; fields left out stay as they are. `onboarded: true` ends the first-run onboarding.',
      description: 'Latitude and longitude go together (both numbers, or both null). An unknown time zone is 400.',
      access: OS_ADMIN,
      input: Type.Object({
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        latitude: Type.Optional(Type.Union([Type.Number({ minimum: -90, maximum: 90 }), Type.Null()])),
        longitude: Type.Optional(Type.Union([Type.Number({ minimum: -180, maximum: 180 }), Type.Null()])),
        elevation: Type.Optional(Type.Union([Type.Number({ minimum: -500, maximum: 9000 }), Type.Null()])),
        timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'IANA zone, e.g. "Europe/Berlin".' })),
        units: Type.Optional(Type.Union([Type.Literal('metric'), Type.Literal('imperial')])),
        onboarded: Type.Optional(Type.Boolean()),
      }),
      output: HomeSettingsSchema,
      async handler(input) {
        if (input.timezone !== undefined && !isValidTimezone(input.timezone)) {
          throw homeErrors.INVALID_HOME_SETTING({ field: 'timezone', problem: `unknown time zone "${input.timezone}" (use an IANA name such as "Europe/Berlin")` }, { details: { field: 'timezone' } });
        }
        const lat = input.latitude === undefined ? settings.get().latitude : input.latitude;
        const lon = input.longitude === undefined ? settings.get().longitude : input.longitude;
        if ((lat === null) !== (lon === null)) {
          throw homeErrors.INVALID_HOME_SETTING({ field: lat === null ? 'latitude' : 'longitude', problem: 'latitude and longitude go together' }, { details: { field: lat === null ? 'latitude' : 'longitude' } });
        }
        return settings.update(input);
      },
    }),

  };
}

/** Preferences and favourites. */
function preferenceOperations(home: HomeServices) {
  const { spaces, preferences } = home;
  return {
    getPreferences: defineOperation({
      name: 'preferences.home.get',
      summary: 'Home screen preferences.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: PreferencesSchema,
      async handler() {
        return preferences.get();
      },
    }),
    updatePreferences: defineOperation({
      name: 'preferences.home.update',
      summary: 'Update home screen preferences; fields left out stay as they are.',
      access: OS_ADMIN,
      input: Type.Object({
        layout: Type.Optional(Type.Union([Type.Literal('grid'), Type.Literal('list')])),
        theme: Type.Optional(Type.Union([Type.Literal('system'), Type.Literal('light'), Type.Literal('dark')])),
        temperatureUnit: Type.Optional(Type.Union([Type.Literal('C'), Type.Literal('F')])),
        showOfflineDevices: Type.Optional(Type.Boolean()),
        defaultSpaceId: Type.Optional(Type.Union([Id, Type.Null()])),
        sections: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 })),
      }),
      output: PreferencesSchema,
      async handler(input) {
        if (input.defaultSpaceId) spaces.spaces.get(input.defaultSpaceId);
        return preferences.update(input);
      },
    }),
    getFavorites: defineOperation({
      name: 'preferences.favorites.get',
      summary: 'Favorite device keys, in display order.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ favorites: Type.Array(Type.String()) }),
      async handler() {
        return { favorites: preferences.favorites() };
      },
    }),
    saveFavorites: defineOperation({
      name: 'preferences.favorites.save',
      summary: 'Save favorite device keys (replacing the list); unknown devices answer 404 naming them.',
      access: OS_ADMIN,
      input: Type.Object({ favorites: Type.Array(Id, { maxItems: 200 }) }),
      output: Type.Object({ favorites: Type.Array(Type.String()) }),
      async handler({ favorites }) {
        return { favorites: await preferences.saveFavorites(favorites) };
      },
    }),
  };
}

/** Design profiles. */
function designOperations(home: HomeServices) {
  const { design } = home;
  return {
    listDesignProfiles: defineOperation({
      name: 'design.profiles.list',
      summary: 'Design profiles, with the active one marked.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ profiles: Type.Array(Type.Intersect([DesignProfileSchema, Type.Object({ active: Type.Boolean() })])) }),
      async handler() {
        return { profiles: design.profiles() };
      },
    }),
    selectDesignProfile: defineOperation({
      name: 'design.profiles.select',
      summary: 'Select and publish the active design profile.',
      access: OS_ADMIN,
      input: Type.Object({ profileId: Id }),
      output: LiveDesignSchema,
      async handler({ profileId }) {
        return design.select(profileId);
      },
    }),
    liveDesign: defineOperation({
      name: 'design.live',
      summary: 'The live (active) design.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: LiveDesignSchema,
      async handler() {
        return design.live();
      },
    }),
  };
}

/** The home's operations, one function per aggregate above, as one group (`hub.ops.home`). */
export function homeOperations(home: HomeServices, visibility: HomeVisibility) {
  return {
    ...spaceOperations(home, visibility),
    ...zoneOperations(home, visibility),
    ...macroOperations(home, visibility),
    ...actionMapOperations(home, visibility),
    ...alertOperations(home),
    ...settingsOperations(home),
    ...preferenceOperations(home),
    ...designOperations(home),
  };
}

export type HomeOperations = ReturnType<typeof homeOperations>;
