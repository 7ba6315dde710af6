import { Type } from 'typebox';
import { failureOf } from '../../platform/errors.js';
import { ANY_ACCOUNT, defineOperation, OS_ADMIN, type Principal } from '../../platform/operations.js';
import type { Audience, AudienceResolver } from '../access/audience.js';
import { ACTION_NAMES, ACTIONS, type DeviceActions } from '../devices/actions.js';
import { CAPABILITY_MODEL, CAPABILITY_NAMES, DEVICE_CLASSES, DEVICE_CLASS_MODEL } from '../devices/capabilities.js';
import { ActionNameSchema, ActionResultFields, CapabilityNameSchema, DeviceClassSchema, DeviceReadingSchema } from '../devices/capability-schemas.js';
import type { DeviceService } from '../devices/device-service.js';
import { deviceErrors } from '../devices/errors.js';
import { IdParam } from '../devices/schemas.js';
import type { DriverInfo } from '../drivers/driver-manager.js';
import type { LocalDriverInfo } from '../drivers/local/supervisor.js';
import { homeErrors } from '../home/errors.js';
import type { MacroService } from '../home/macros.js';
import type { SpaceService } from '../home/spaces.js';
import type { ZoneService } from '../home/zones.js';
import type { Program } from '../programs/model.js';
import { referencesOf } from '../programs/references.js';
import type { SceneCatalog } from '../scenes/catalog.js';
import { SceneViewSchema } from '../scenes/operations.js';
import { EntityService, listEntities, listEntityDomains, type EntityView } from './entities.js';
import { graphErrors } from './errors.js';
import { buildHomeGraph } from './graph.js';
import type { HomeGraph } from './model.js';

const JsonObject = Type.Record(Type.String(), Type.Unknown());
const NullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});



const GraphDeviceSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    category: Type.String(),
    spaceId: NullableString('The space (room) the device is in, or null.'),
    capabilities: Type.Array(CapabilityNameSchema, { description: 'Derived from declared capabilities, commands, category and state.' }),
    deviceClass: DeviceClassSchema,
    reading: DeviceReadingSchema,
    commands: Type.Array(Type.String(), { description: 'Command names the device offers (IR key names for GENERIC_IR).' }),
    state: JsonObject,
    online: Type.Boolean(),
    entityIds: Type.Array(Type.String(), { description: 'Home Assistant style ids of its entities, e.g. light.living_room_lamp.' }),
  },
  { description: 'A device in the home graph.' },
);
const GraphSpaceSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  deviceIds: Type.Array(Type.String()),
  activeSourceId: NullableString('The remote source active in the space.'),
});
const GraphZoneSchema = Type.Object({ id: Type.String(), name: Type.String(), deviceIds: Type.Array(Type.String()), programId: NullableString() });
const GraphProgramSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  semantics: Type.Array(Type.String(), { description: 'User tags for intents ("movie", "bedtime").' }),
  hasTimer: Type.Boolean({ description: 'True for automations (programs with a trigger, a timer among them; enabled or not).' }),
});
const GraphMacroSchema = Type.Object({ id: Type.String(), name: Type.String() });
const GraphSceneSchema = Type.Object({
  id: Type.String({ description: '`<deviceId>:<sceneId>`.' }),
  deviceId: Type.String(),
  sceneId: Type.String({ description: "The device's own scene id." }),
  name: Type.String(),
});
const HomeGraphSchema = Type.Object(
  {
    generatedAt: Type.Integer({ description: 'When the graph was built, ms since epoch.' }),
    spaces: Type.Array(GraphSpaceSchema),
    devices: Type.Array(GraphDeviceSchema),
    zones: Type.Array(GraphZoneSchema),
    programs: Type.Array(GraphProgramSchema),
    macros: Type.Array(GraphMacroSchema),
    scenes: Type.Array(GraphSceneSchema, { description: 'Scenes as last listed by their devices.' }),
  },
  { description: 'Spaces → devices → capabilities → state, with zones, programs, macros and scenes.' },
);

const EntitySchema = Type.Object(
  {
    entityId: Type.String({ description: '`<domain>.<object_id>`.' }),
    domain: Type.String(),
    objectId: Type.String(),
    name: Type.String(),
    deviceId: NullableString(),
    sceneId: NullableString('Graph scene id of a scene entity.'),
    spaceId: NullableString(),
    online: Type.Boolean(),
    state: Type.String({ description: 'e.g. "on", "off", "playing", "heat", "open", a reading, "unknown" or "unavailable".' }),
    attributes: JsonObject,
    services: Type.Array(Type.String(), { description: 'Services of the domain this entity can perform.' }),
  },
  { description: 'A Home Assistant style entity.' },
);






const ConnectedDriver = Type.Object({
  driverKey: Type.String(),
  instanceId: Type.String(),
  transport: Type.String(),
  connectedAt: Type.Integer(),
  devices: Type.Integer(),
});

export interface GraphOperationDeps {
  devices: DeviceService;
  spaces: SpaceService;
  zones: ZoneService;
  macros: MacroService;
  /** Program records (the ProgramService). */
  programs: { list(): Program[] };
  scenes: SceneCatalog;
  actions: DeviceActions;
  /** Connected driver instances (the DriverManager). */
  drivers: { list(): DriverInfo[] };
  /** Local driver manifests and processes (the LocalDriverSupervisor). */
  localDrivers: { list(): LocalDriverInfo[] };
  readiness: { readonly ready: boolean; readonly waitingFor: string[] };
  /** What each caller may see: entity reads and services answer only entities of their devices. */
  audiences: AudienceResolver;
  now(): number;
}

/** An entity is seen with its device (scene entities with the device that exposes them). */
const seesEntity = (audience: Audience, entity: EntityView) => entity.deviceId !== null && audience.seesDevice({ id: entity.deviceId, room: entity.spaceId });

export function graphOperations(deps: GraphOperationDeps) {
  const { scenes, actions } = deps;
  const graph = () => buildHomeGraph(deps);
  const entities = new EntityService({ graph, actions, scenes });
  /** An entity the caller may not see answers as one that does not exist, so ids do not leak. */
  const requireVisibleEntity = (entityId: string, principal: Principal | undefined): EntityView => {
    const entity = entities.get(entityId);
    if (!seesEntity(deps.audiences.audienceOf(principal), entity)) throw graphErrors.ENTITY_NOT_FOUND({ entityId }, { details: { entityId } });
    return entity;
  };

  const scenesWithEntities = (g: HomeGraph) => {
    const ids = new Map(listEntities(g, { domain: 'scene' }).map((e) => [e.sceneId, e.entityId]));
    return g.scenes.map((s) => ({ ...s, entityId: ids.get(s.id)! }));
  };

  return {
    graph: defineOperation({
      name: 'graph.get',
      summary: 'The home graph: spaces, devices with capabilities, state and entity ids, zones, programs, macros, scenes.',
      description: 'Built from memory in one pass; no driver is asked. Scenes are those last listed (see scenes.list with refresh).',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: HomeGraphSchema,
      async handler() {
        return graph();
      },
    }),

    systemSnapshot: defineOperation({
      name: 'system.snapshot',
      summary: 'The home graph with connected drivers, local drivers, counts and readiness.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({
        at: Type.Integer(),
        ready: Type.Boolean({ description: 'True once every part of the hub has started.' }),
        waitingFor: Type.Array(Type.String(), { description: 'Parts still starting.' }),
        graph: HomeGraphSchema,
        drivers: Type.Object({
          connected: Type.Array(ConnectedDriver, { description: 'Connected driver instances (WebSocket and local).' }),
          local: Type.Object({
            total: Type.Integer({ description: 'Local driver manifests found.' }),
            byStatus: Type.Record(Type.String(), Type.Integer(), { description: 'Manifests by status (running, starting, backoff, stopped, invalid, standby).' }),
            drivers: Type.Array(
              Type.Object({
                driverKey: Type.String(),
                name: Type.Optional(Type.String()),
                version: Type.Optional(Type.String()),
                status: Type.String(),
                restarts: Type.Integer(),
                lastError: Type.Optional(Type.String()),
              }),
            ),
          }),
        }),
        counts: Type.Object({
          devices: Type.Integer(),
          onlineDevices: Type.Integer(),
          spaces: Type.Integer(),
          zones: Type.Integer(),
          macros: Type.Integer(),
          programs: Type.Integer(),
          automations: Type.Integer({ description: 'Programs with a trigger (automations).' }),
          enabledAutomations: Type.Integer({ description: 'Automations whose triggers fire (enabled, not paused, and a timer among them enabled where that is all they have).' }),
          scenes: Type.Integer(),
          entities: Type.Integer(),
        }),
      }),
      async handler() {
        const g = graph();
        const local = deps.localDrivers.list();
        const byStatus: Record<string, number> = {};
        for (const d of local) byStatus[d.status] = (byStatus[d.status] ?? 0) + 1;
        const programs = deps.programs.list();
        return {
          at: deps.now(),
          ready: deps.readiness.ready,
          waitingFor: [...deps.readiness.waitingFor],
          graph: g,
          drivers: {
            connected: deps.drivers.list(),
            local: {
              total: local.length,
              byStatus,
              drivers: local.map((d) => ({
                driverKey: d.driverKey,
                ...(d.name !== undefined ? { name: d.name } : {}),
                ...(d.version !== undefined ? { version: d.version } : {}),
                status: d.status,
                restarts: d.restarts,
                ...(d.lastError !== undefined ? { lastError: d.lastError } : d.error !== undefined ? { lastError: d.error } : {}),
              })),
            },
          },
          counts: {
            devices: g.devices.length,
            onlineDevices: g.devices.filter((d) => d.online).length,
            spaces: g.spaces.length,
            zones: g.zones.length,
            macros: g.macros.length,
            programs: programs.length,
            automations: programs.filter((p) => (p.triggers?.length ?? 0) > 0).length,
            enabledAutomations: programs.filter((p) => (p.triggers?.length ?? 0) > 0 && p.enabled !== false && !p.pause && p.triggers!.some((t) => t.type !== 'time' || t.timer.enabled)).length,
            scenes: g.scenes.length,
            entities: listEntities(g).length,
          },
        };
      },
    }),

    contextSnapshot: defineOperation({
      name: 'graph.context',
      summary: 'The graph narrowed to a space or a device, with the zones, programs and macros that touch it.',
      description:
        'Give spaceId, deviceId or both (the device must then be in the space). A program touches the context when its steps (on or off path, nested included) command or read one of its devices, run a macro that does, or set the volume of a zone that does, or when such a zone has it assigned. 404 SPACE_NOT_FOUND / DEVICE_NOT_FOUND; 400 CONTEXT_REQUIRED without either; 422 DEVICE_NOT_IN_SPACE.',
      access: OS_ADMIN,
      input: Type.Object({
        spaceId: Type.Optional(IdParam),
        deviceId: Type.Optional(IdParam),
      }),
      output: Type.Object({
        at: Type.Integer(),
        spaceId: NullableString(),
        deviceId: NullableString(),
        space: Type.Union([GraphSpaceSchema, Type.Null()], { description: 'The space, or the device\'s space.' }),
        devices: Type.Array(GraphDeviceSchema),
        entities: Type.Array(EntitySchema),
        scenes: Type.Array(SceneViewSchema),
        zones: Type.Array(GraphZoneSchema),
        programs: Type.Array(GraphProgramSchema),
        macros: Type.Array(GraphMacroSchema),
      }),
      async handler({ spaceId, deviceId }) {
        if (spaceId === undefined && deviceId === undefined) throw graphErrors.CONTEXT_REQUIRED({}, { details: { fields: ['spaceId', 'deviceId'] } });
        const g = graph();
        let space = null;
        if (spaceId !== undefined) {
          space = g.spaces.find((s) => s.id === spaceId) ?? null;
          if (!space) throw homeErrors.SPACE_NOT_FOUND({ id: spaceId }, { details: { id: spaceId } });
        }
        let inContext: HomeGraph['devices'];
        if (deviceId !== undefined) {
          const device = g.devices.find((d) => d.id === deviceId);
          if (!device) throw deviceErrors.DEVICE_NOT_FOUND({ id: deviceId }, { details: { deviceId } });
          if (space && device.spaceId !== space.id) throw graphErrors.DEVICE_NOT_IN_SPACE({ device: device.name, space: space.name }, { details: { deviceId, spaceId } });
          space ??= g.spaces.find((s) => s.id === device.spaceId) ?? null;
          inContext = [device];
        } else {
          inContext = g.devices.filter((d) => d.spaceId === spaceId);
        }
        const ids = new Set(inContext.map((d) => d.id));
        const touches = (deviceIds: Iterable<string>) => [...deviceIds].some((id) => ids.has(id));
        const macros = deps.macros.macros.list().filter((m) => touches(m.steps.map((s) => s.deviceId)));
        const macroIds = new Set(macros.map((m) => m.id));
        const zones = g.zones.filter((z) => touches(z.deviceIds));
        const zoneIds = new Set(zones.map((z) => z.id));
        const zonePrograms = new Set(zones.map((z) => z.programId).filter((p): p is string => p !== null));
        const programIds = new Set(
          deps.programs
            .list()
            .filter((p) => {
              const refs = referencesOf(p);
              return zonePrograms.has(p.id) || touches(refs.devices) || [...refs.macros].some((m) => macroIds.has(m)) || [...refs.zones].some((z) => zoneIds.has(z));
            })
            .map((p) => p.id),
        );
        return {
          at: deps.now(),
          spaceId: spaceId ?? null,
          deviceId: deviceId ?? null,
          space,
          devices: inContext,
          entities: listEntities(g).filter((e) => e.deviceId !== null && ids.has(e.deviceId)),
          scenes: scenesWithEntities(g).filter((s) => ids.has(s.deviceId)),
          zones,
          programs: g.programs.filter((p) => programIds.has(p.id)),
          macros: g.macros.filter((m) => macroIds.has(m.id)),
        };
      },
    }),

    capabilityModel: defineOperation({
      name: 'capabilities.model',
      summary: 'The capability model: each capability with its commands, state keys and entity domain, and the abstract actions.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({
        capabilities: Type.Array(
          Type.Object({
            name: CapabilityNameSchema,
            description: Type.String(),
            entityDomain: Type.String(),
            commands: Type.Array(Type.Object({ name: Type.String(), params: Type.Optional(JsonObject), description: Type.String() })),
            stateKeys: Type.Array(Type.Object({ key: Type.String(), type: Type.String(), description: Type.String() })),
          }),
        ),
        actions: Type.Array(
          Type.Object({
            action: ActionNameSchema,
            capability: CapabilityNameSchema,
            also: Type.Optional(Type.Array(CapabilityNameSchema, { description: 'Other capabilities that can do it (a cover stops too).' })),
            value: Type.Union([Type.Literal('required'), Type.Literal('optional'), Type.Literal('none'), Type.Literal('params')], {
              description: 'Whether the action takes a numeric value, or named params (set_hs_color {hue, saturation}, set_hvac_mode {mode}, oscillate {oscillating}, set_direction {direction}).',
            }),
            param: Type.Optional(Type.String({ description: "The standard command's parameter that carries the value." })),
            description: Type.String(),
          }),
        ),
        classes: Type.Array(
          Type.Object({
            deviceClass: DeviceClassSchema,
            description: Type.String(),
            capabilities: Type.Array(CapabilityNameSchema, { description: 'Capabilities whose standard commands a device of the class accepts.' }),
            entityDomain: Type.String(),
          }),
        ),
      }),
      async handler() {
        return {
          capabilities: CAPABILITY_NAMES.map((name) => ({ name, ...CAPABILITY_MODEL[name] })),
          actions: ACTION_NAMES.map((action) => ({ action, ...ACTIONS[action] })),
          classes: DEVICE_CLASSES.map((deviceClass) => {
            const { description, capabilities, entityDomain } = DEVICE_CLASS_MODEL[deviceClass];
            return { deviceClass, description, capabilities: [...capabilities], entityDomain };
          }),
        };
      },
    }),

    entityDomains: defineOperation({
      name: 'entities.domains',
      summary: 'Entity domains (light, switch, media_player, climate, cover, remote, sensor, scene) with their services.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({
        domains: Type.Array(
          Type.Object({
            domain: Type.String(),
            description: Type.String(),
            capabilities: Type.Array(CapabilityNameSchema),
            services: Type.Array(Type.Object({ service: Type.String(), description: Type.String(), data: Type.Record(Type.String(), Type.String(), { description: 'Data field → meaning.' }) })),
          }),
        ),
      }),
      async handler() {
        return { domains: listEntityDomains() };
      },
    }),

    listEntities: defineOperation({
      name: 'entities.list',
      summary: 'Entities: one per device and entity domain, plus one per scene; optionally filtered. A user without the admin role sees those of their devices.',
      access: ANY_ACCOUNT,
      input: Type.Object({
        domain: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Only this domain, e.g. "light".' })),
        spaceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only entities of devices in this space.' })),
        deviceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only entities of this device.' })),
      }),
      output: Type.Object({ entities: Type.Array(EntitySchema) }),
      async handler(filter, { principal }) {
        const audience = deps.audiences.audienceOf(principal);
        const listed = entities.list(filter);
        return { entities: audience.everything ? listed : listed.filter((entity) => seesEntity(audience, entity)) };
      },
    }),

    getEntity: defineOperation({
      name: 'entities.get',
      summary: 'One entity with its state, attributes and services (404 ENTITY_NOT_FOUND).',
      access: ANY_ACCOUNT,
      input: Type.Object({ entityId: Type.String({ minLength: 3, maxLength: 300, description: 'e.g. light.living_room_lamp.' }) }),
      output: EntitySchema,
      async handler({ entityId }, { principal }) {
        return requireVisibleEntity(entityId, principal);
      },
    }),

    entityAction: defineOperation({
      name: 'entities.action',
      journal: 'activity',
      summary: 'Call a Home Assistant style service on an entity (e.g. light turn_on {brightness}).',
      description:
        'Services: turn_on (light: optional brightness/brightness_pct 0–100), turn_off, toggle, volume_set {volume 0–100 | volume_level 0–1}, volume_up, volume_down, media_play, media_pause, media_stop, media_next_track, media_previous_track, set_temperature {temperature}, open_cover, close_cover, set_cover_position {position}, scene turn_on. The service becomes an abstract action resolved to the device\'s own command. 404 ENTITY_NOT_FOUND, 422 SERVICE_NOT_SUPPORTED, 400 INVALID_SERVICE_DATA; a device failure (ACTION_NOT_SUPPORTED, DRIVER_ERROR, DRIVER_TIMEOUT…) fails the call with that error, `details` carrying the whole result.',
      access: ANY_ACCOUNT,
      input: Type.Object({
        entityId: Type.String({ minLength: 3, maxLength: 300 }),
        service: Type.String({ minLength: 1, maxLength: 100, description: 'e.g. "turn_on", "set_cover_position".' }),
        data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Service data, e.g. {"brightness": 40}.' })),
      }),
      output: Type.Object({
        entityId: Type.String(),
        service: Type.String(),
        action: Type.String({ description: 'The abstract action performed, or "scene.run".' }),
        ...ActionResultFields,
      }),
      async handler({ entityId, service, data }, { principal }) {
        requireVisibleEntity(entityId, principal);
        const result = await entities.entityAction(entityId, service, data ?? {});
        if (!result.ok) throw failureOf(result.error, result);
        return result;
      },
    }),

    listSensors: defineOperation({
      name: 'entities.sensors',
      summary: 'Sensor entities: devices that only report, plus numeric readings (temperature, humidity…) of other devices.',
      access: OS_ADMIN,
      input: Type.Object({
        spaceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        deviceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      }),
      output: Type.Object({ sensors: Type.Array(EntitySchema) }),
      async handler(filter) {
        return { sensors: entities.sensors(filter) };
      },
    }),







  };
}

export type GraphOperations = ReturnType<typeof graphOperations>;
