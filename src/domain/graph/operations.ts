import { Type, type Static } from 'typebox';
import { invalid, notFound, unprocessable } from '../../platform/errors.js';
import { defineOperation, OS_ADMIN } from '../../platform/operations.js';
import type { DeviceService } from '../devices/device-service.js';
import { IdParam } from '../devices/schemas.js';
import type { DriverInfo } from '../drivers/driver-manager.js';
import type { LocalDriverInfo } from '../drivers/local/supervisor.js';
import type { MacroService } from '../home/macros.js';
import type { SpaceService } from '../home/spaces.js';
import type { ZoneService } from '../home/zones.js';
import type { Program } from '../programs/model.js';
import { referencesOf } from '../programs/references.js';
import { ACTION_NAMES, ACTIONS, supportedActions, toAbstractAction, type ActionName, type DeviceActions } from '../devices/actions.js';
import { CAPABILITY_MODEL, CAPABILITY_NAMES, classifyCommand, type CapabilityName } from '../devices/capabilities.js';
import { EntityService, listEntities, listEntityDomains } from './entities.js';
import { buildHomeGraph } from './graph.js';
import type { HomeGraph } from './model.js';
import type { SceneCatalog } from '../scenes/catalog.js';

const JsonObject = Type.Record(Type.String(), Type.Unknown());
const NullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

// Spelled out: TypeBox derives the static type from a tuple, not from a mapped array.
const CapabilityNameSchema = Type.Union(
  [
    Type.Literal('power'),
    Type.Literal('brightness'),
    Type.Literal('volume'),
    Type.Literal('temperature'),
    Type.Literal('climate_mode'),
    Type.Literal('media'),
    Type.Literal('cover'),
    Type.Literal('input'),
    Type.Literal('apps'),
    Type.Literal('equalizer'),
    Type.Literal('scenes'),
    Type.Literal('ir'),
    Type.Literal('sensor'),
  ],
  { description: 'A capability of the model (see capabilities.model).' },
);
const ActionNameSchema = Type.Union(
  [
    Type.Literal('turn_on'),
    Type.Literal('turn_off'),
    Type.Literal('toggle'),
    Type.Literal('set_brightness'),
    Type.Literal('set_volume'),
    Type.Literal('volume_up'),
    Type.Literal('volume_down'),
    Type.Literal('set_temperature'),
    Type.Literal('open'),
    Type.Literal('close'),
    Type.Literal('set_position'),
    Type.Literal('play'),
    Type.Literal('pause'),
    Type.Literal('stop'),
    Type.Literal('next'),
    Type.Literal('previous'),
  ],
  { description: 'An abstract action: turn_on, turn_off, toggle, set_brightness, set_volume, volume_up, volume_down, set_temperature, open, close, set_position, play, pause, stop, next, previous.' },
);

// Compile-time checks that the spelled-out lists match the model's vocabularies.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _capabilityNamesInSync: Same<Static<typeof CapabilityNameSchema>, CapabilityName> = true;
const _actionNamesInSync: Same<Static<typeof ActionNameSchema>, ActionName> = true;

const GraphDeviceSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    category: Type.String(),
    spaceId: NullableString('The space (room) the device is in, or null.'),
    capabilities: Type.Array(CapabilityNameSchema, { description: 'Derived from declared capabilities, commands, category and state.' }),
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
  hasTimer: Type.Boolean({ description: 'True for automations (programs with a timer, enabled or not).' }),
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

const ResultError = Type.Object({ code: Type.String(), message: Type.String() });
const ActionResultFields = {
  deviceId: Type.String(),
  ok: Type.Boolean({ description: 'False when the device could not do it (the error says why).' }),
  command: Type.Optional(Type.String({ description: 'The device command that was sent.' })),
  result: Type.Optional(Type.Unknown({ description: "The driver's result; {presses} for repeated step commands, {unchanged: true} when nothing had to be sent." })),
  error: Type.Optional(ResultError),
};

const SceneViewSchema = Type.Object({
  id: Type.String({ description: '`<deviceId>:<sceneId>`.' }),
  deviceId: Type.String(),
  sceneId: Type.String(),
  name: Type.String(),
  entityId: Type.String({ description: 'Its `scene.*` entity.' }),
});

const DeviceStateView = Type.Object({
  deviceId: Type.String(),
  name: Type.String(),
  state: JsonObject,
  online: Type.Boolean(),
  confirmed: Type.Boolean({ description: 'False while the state is the one stored before a restart and no driver has reported since.' }),
  updatedAt: Type.Union([Type.Integer(), Type.Null()]),
});

const SupportedActionSchema = Type.Object({
  action: ActionNameSchema,
  command: Type.String({ description: 'The device command the action resolves to now.' }),
  valueParam: Type.Optional(Type.String({ description: "The command parameter that carries the action's value." })),
});

const CommandView = Type.Object({
  name: Type.String(),
  label: Type.Optional(Type.String()),
  params: Type.Optional(JsonObject),
  capability: Type.Union([CapabilityNameSchema, Type.Null()], { description: 'The capability the command carries, if any.' }),
  meaning: NullableString('The command meaning it was recognized as (e.g. "turn_on" for power_on), if any.'),
});

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
  now(): number;
}

/** Hub protocol command → key of the object `graphOperations` returns. */
export const GRAPH_HUB_COMMANDS = {
  GET_HOME_GRAPH: 'graph',
  SYSTEM_SNAPSHOT: 'systemSnapshot',
  GET_CONTEXT_SNAPSHOT: 'contextSnapshot',
  LIST_CAPABILITY_MODEL: 'capabilityModel',
  LIST_ENTITY_DOMAINS: 'entityDomains',
  LIST_ENTITIES: 'listEntities',
  GET_ENTITY: 'getEntity',
  ENTITY_ACTION: 'entityAction',
  LIST_SENSORS: 'listSensors',
  LIST_SCENES: 'listScenes',
  SCENE_RUN: 'runScene',
  LIST_STATES: 'listStates',
  GET_DEVICE_STATE: 'getDeviceState',
  LIST_DEVICE_COMMANDS: 'listDeviceCommands',
  GET_DEVICE_COMMAND: 'getDeviceCommand',
  DEVICE_ACTION: 'deviceAction',
} as const satisfies Record<string, keyof ReturnType<typeof graphOperations>>;

export function graphOperations(deps: GraphOperationDeps) {
  const { devices, scenes, actions } = deps;
  const graph = () => buildHomeGraph(deps);
  const entities = new EntityService({ graph, actions, scenes });

  const stateView = (id: string) => {
    const device = devices.registry.get(id);
    const view = devices.state.get(id);
    return { deviceId: id, name: device.name, state: view.state, online: devices.isOnline(device), confirmed: view.confirmed, updatedAt: view.updatedAt };
  };
  const scenesWithEntities = (g: HomeGraph) => {
    const ids = new Map(listEntities(g, { domain: 'scene' }).map((e) => [e.sceneId, e.entityId]));
    return g.scenes.map((s) => ({ ...s, entityId: ids.get(s.id)! }));
  };
  const commandView = (device: ReturnType<DeviceService['registry']['get']>, spec: (typeof device.commands)[number]) => ({
    ...spec,
    ...classifyCommand(device, spec.name),
  });

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
            byStatus: Type.Record(Type.String(), Type.Integer(), { description: 'Manifests by status (running, starting, backoff, stopped, invalid).' }),
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
          automations: Type.Integer({ description: 'Programs with a timer.' }),
          enabledAutomations: Type.Integer({ description: 'Programs with an enabled timer.' }),
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
            automations: programs.filter((p) => p.timer).length,
            enabledAutomations: programs.filter((p) => p.timer?.enabled).length,
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
        if (spaceId === undefined && deviceId === undefined) throw invalid('CONTEXT_REQUIRED', 'Give spaceId, deviceId or both.', { fields: ['spaceId', 'deviceId'] });
        const g = graph();
        let space = null;
        if (spaceId !== undefined) {
          space = g.spaces.find((s) => s.id === spaceId) ?? null;
          if (!space) throw notFound('SPACE_NOT_FOUND', `No space ${spaceId}.`, { id: spaceId });
        }
        let inContext: HomeGraph['devices'];
        if (deviceId !== undefined) {
          const device = g.devices.find((d) => d.id === deviceId);
          if (!device) throw notFound('DEVICE_NOT_FOUND', `No device ${deviceId}.`, { deviceId });
          if (space && device.spaceId !== space.id) throw unprocessable('DEVICE_NOT_IN_SPACE', `Device ${device.name} is not in space ${space.name}.`, { deviceId, spaceId });
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
            value: Type.Union([Type.Literal('required'), Type.Literal('optional'), Type.Literal('none')], { description: 'Whether the action takes a numeric value.' }),
            description: Type.String(),
          }),
        ),
      }),
      async handler() {
        return {
          capabilities: CAPABILITY_NAMES.map((name) => ({ name, ...CAPABILITY_MODEL[name] })),
          actions: ACTION_NAMES.map((action) => ({ action, ...ACTIONS[action] })),
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
      summary: 'Entities: one per device and entity domain, plus one per scene; optionally filtered.',
      access: OS_ADMIN,
      input: Type.Object({
        domain: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'Only this domain, e.g. "light".' })),
        spaceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only entities of devices in this space.' })),
        deviceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only entities of this device.' })),
      }),
      output: Type.Object({ entities: Type.Array(EntitySchema) }),
      async handler(filter) {
        return { entities: entities.list(filter) };
      },
    }),

    getEntity: defineOperation({
      name: 'entities.get',
      summary: 'One entity with its state, attributes and services (404 ENTITY_NOT_FOUND).',
      access: OS_ADMIN,
      input: Type.Object({ entityId: Type.String({ minLength: 3, maxLength: 300, description: 'e.g. light.living_room_lamp.' }) }),
      output: EntitySchema,
      async handler({ entityId }) {
        return entities.get(entityId);
      },
    }),

    entityAction: defineOperation({
      name: 'entities.action',
      summary: 'Call a Home Assistant style service on an entity (e.g. light turn_on {brightness}).',
      description:
        'Services: turn_on (light: optional brightness/brightness_pct 0–100), turn_off, toggle, volume_set {volume 0–100 | volume_level 0–1}, volume_up, volume_down, media_play, media_pause, media_stop, media_next_track, media_previous_track, set_temperature {temperature}, open_cover, close_cover, set_cover_position {position}, scene turn_on. The service becomes an abstract action resolved to the device\'s own command. 404 ENTITY_NOT_FOUND, 422 SERVICE_NOT_SUPPORTED, 400 INVALID_SERVICE_DATA; device failures (ACTION_NOT_SUPPORTED, DRIVER_ERROR, DRIVER_TIMEOUT…) answer ok:false with the error.',
      access: OS_ADMIN,
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
      async handler({ entityId, service, data }) {
        return entities.entityAction(entityId, service, data ?? {});
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

    listScenes: defineOperation({
      name: 'scenes.list',
      summary: 'Scenes devices expose, as last listed; with refresh, the scene-capable online devices are asked first.',
      description: 'A device that fails or times out during the refresh keeps its last listed scenes and is reported in `refreshed` with its error.',
      access: OS_ADMIN,
      input: Type.Object({ refresh: Type.Optional(Type.Boolean({ description: 'Ask the devices (scenes.list) before answering.' })) }),
      output: Type.Object({
        scenes: Type.Array(SceneViewSchema),
        refreshed: Type.Optional(
          Type.Array(
            Type.Object({
              deviceId: Type.String(),
              ok: Type.Boolean(),
              scenes: Type.Optional(Type.Integer({ description: 'Scenes the device listed.' })),
              error: Type.Optional(ResultError),
            }),
            { description: 'One entry per device asked (with refresh).' },
          ),
        ),
      }),
      async handler({ refresh }) {
        const refreshed = refresh ? await scenes.refresh() : undefined;
        return { scenes: scenesWithEntities(graph()), ...(refreshed ? { refreshed } : {}) };
      },
    }),

    runScene: defineOperation({
      name: 'scenes.run',
      summary: 'Run a scene by its id `<deviceId>:<sceneId>` (driver command scenes.run {sceneId}).',
      description: '404 SCENE_NOT_FOUND; driver failures as for device commands (502 DRIVER_ERROR, 503 DRIVER_OFFLINE, 504 DRIVER_TIMEOUT).',
      access: OS_ADMIN,
      input: Type.Object({ sceneId: Type.String({ minLength: 3, maxLength: 401, description: '`<deviceId>:<sceneId>` as in scenes.list.' }) }),
      output: Type.Object({ sceneId: Type.String(), deviceId: Type.String(), ok: Type.Literal(true), result: Type.Optional(Type.Unknown()) }),
      async handler({ sceneId }) {
        const run = await scenes.run(sceneId);
        return { ...run, ok: true as const };
      },
    }),

    listStates: defineOperation({
      name: 'state.list',
      summary: "Every device's state with its online and confirmed flags.",
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ at: Type.Integer(), states: Type.Array(DeviceStateView) }),
      async handler() {
        return { at: deps.now(), states: devices.registry.list().map((d) => stateView(d.id)) };
      },
    }),

    getDeviceState: defineOperation({
      name: 'state.get',
      summary: "One device's state with its online and confirmed flags (404 DEVICE_NOT_FOUND).",
      access: OS_ADMIN,
      input: Type.Object({ deviceId: IdParam }),
      output: DeviceStateView,
      async handler({ deviceId }) {
        return stateView(deviceId);
      },
    }),

    listDeviceCommands: defineOperation({
      name: 'devices.commands',
      summary: "A device's commands with their params, and the abstract actions it supports with the command each resolves to.",
      access: OS_ADMIN,
      input: Type.Object({ deviceId: IdParam }),
      output: Type.Object({
        deviceId: Type.String(),
        name: Type.String(),
        capabilities: Type.Array(CapabilityNameSchema),
        commands: Type.Array(CommandView),
        actions: Type.Array(SupportedActionSchema),
      }),
      async handler({ deviceId }) {
        const device = devices.registry.get(deviceId);
        const state = devices.state.get(deviceId).state;
        const g = graph().devices.find((d) => d.id === deviceId)!;
        return {
          deviceId,
          name: device.name,
          capabilities: g.capabilities,
          commands: device.commands.map((c) => commandView(device, c)),
          actions: supportedActions(device, state),
        };
      },
    }),

    getDeviceCommand: defineOperation({
      name: 'devices.commands.get',
      summary: 'One command of a device with its params, capability and the abstract actions that use it (404 COMMAND_NOT_FOUND).',
      access: OS_ADMIN,
      input: Type.Object({ deviceId: IdParam, command: Type.String({ minLength: 1, maxLength: 200 }) }),
      output: Type.Object({
        deviceId: Type.String(),
        command: CommandView,
        actions: Type.Array(ActionNameSchema, { description: 'Abstract actions that resolve to this command now.' }),
      }),
      async handler({ deviceId, command }) {
        const device = devices.registry.get(deviceId);
        const spec = device.commands.find((c) => c.name === command);
        if (!spec) throw notFound('COMMAND_NOT_FOUND', `Device ${device.name} has no command ${command}.`, { deviceId, command, commands: device.commands.map((c) => c.name) });
        const state = devices.state.get(deviceId).state;
        return {
          deviceId,
          command: commandView(device, spec),
          actions: supportedActions(device, state)
            .filter((a) => a.command === spec.name)
            .map((a) => a.action),
        };
      },
    }),

    deviceAction: defineOperation({
      name: 'devices.action',
      summary: "Perform an abstract action (turn_on, set_brightness 40, volume_up…) with the device's own command.",
      description:
        '404 DEVICE_NOT_FOUND; 400 ACTION_VALUE_REQUIRED for set_brightness, set_volume, set_temperature and set_position without a value. A device that cannot do the action answers ok:false with ACTION_NOT_SUPPORTED; driver failures answer ok:false with their error.',
      access: OS_ADMIN,
      input: Type.Object({
        deviceId: IdParam,
        action: ActionNameSchema,
        value: Type.Optional(Type.Number({ description: 'Brightness/volume/position 0–100, temperature, or the volume step.' })),
      }),
      output: Type.Object({ action: ActionNameSchema, ...ActionResultFields }),
      async handler({ deviceId, action, value }) {
        devices.registry.get(deviceId);
        const name = action as ActionName;
        if (ACTIONS[name].value === 'required' && value === undefined) {
          throw invalid('ACTION_VALUE_REQUIRED', `${name} needs a value.`, { field: 'value' });
        }
        const result = await actions.perform(deviceId, toAbstractAction(name, ACTIONS[name].value === 'none' ? undefined : value));
        return { action: name, ...result };
      },
    }),
  };
}

export type GraphOperations = ReturnType<typeof graphOperations>;
