import { RequirementsStatusSchema } from '../../platform/requirements.js';
import { Type } from 'typebox';
import { defineOperation, OS_ADMIN, type Access } from '../../platform/operations.js';
import { deviceErrors } from '../devices/errors.js';
import { accessoryHubErrors } from './errors.js';
import type { HomebridgeSupervisor } from './homebridge.js';
import { HOMEKIT_BRIDGE_LIMIT, type HomeKitExposure } from './homekit.js';
import type { AccessoryImports } from './imports.js';
import { BRIDGED_SERVICES, type PluginBridge } from './plugin-bridge.js';
import type { PluginManager } from './plugins.js';

const Status = Type.Object({
  enabled: Type.Boolean(),
  state: Type.String({
    description:
      '`off` (ACCESSORY_HUB=off), `stopped` (nothing uses it: no plugin installed and Apple Home off; `usedFor` says what it runs for), `starting`, `running`, `backoff` (restarting after a crash) or `failed` (its HAP port is taken, Homebridge could not be installed, or no Node it supports could be had: `lastError` says so; not retried until the port or the configuration changes, or a resync).',
  }),
  usedFor: Type.Optional(
    Type.Object(
      { plugins: Type.Boolean({ description: 'A plugin of the household is installed.' }), homekit: Type.Boolean({ description: "The hub's devices are shown in Apple Home." }), environment: Type.Boolean({ description: 'ACCESSORY_HUB=on.' }) },
      { description: 'What Homebridge runs for; with none of them it is not started.' },
    ),
  ),
  pid: Type.Optional(Type.Integer()),
  uptimeSeconds: Type.Optional(Type.Integer()),
  version: Type.Optional(Type.String({ description: "Homebridge's version." })),
  requirements: Type.Optional(RequirementsStatusSchema),
  migratedFrom: Type.Optional(Type.String({ description: 'The Homebridge version that ran on its folder before this one (1.11.4 before 2.1.0): its config.json, pairings and cached accessories were taken over as they are.' })),
  node: Type.Optional(
    Type.Object(
      {
        version: Type.String({ description: 'The Node version, `v24.22.3`.' }),
        source: Type.Union([Type.Literal('hub'), Type.Literal('configured'), Type.Literal('installed')], { description: "`hub`: the hub's own Node; `configured`: ACCESSORY_HUB_NODE; `installed`: one the hub installed from the npm registry under DATA_DIR/runtimes, because Homebridge needs a newer Node than the hub runs on." }),
      },
      { description: 'The Node that runs Homebridge and builds its plugins, once found.' },
    ),
  ),
  restarts: Type.Optional(Type.Integer()),
  bridge: Type.Optional(
    Type.Object({
      name: Type.String(),
      port: Type.Integer(),
      pin: Type.String({ description: 'The setup code a phone pairs with.' }),
      setupUri: Type.Optional(Type.String({ description: 'The pairing QR code payload (X-HM://…), once Homebridge told it.' })),
    }),
  ),
  pluginCount: Type.Optional(Type.Integer({ description: 'Installed plugins, as the plugin list counts them (not their dependencies, not the hub’s own bridge plugin).' })),
  lastExit: Type.Optional(Type.Object({ code: Type.Union([Type.Integer(), Type.Null()]), signal: Type.Union([Type.String(), Type.Null()]), at: Type.Integer() })),
  lastError: Type.Optional(Type.String({ description: 'Why it last stopped or cannot start (e.g. its HAP port in use by another program).' })),
  recentOutput: Type.Optional(Type.Array(Type.String(), { description: "Homebridge's last output lines." })),
});

const Characteristic = Type.Object({
  iid: Type.Integer(),
  type: Type.String(),
  description: Type.Optional(Type.String()),
  value: Type.Optional(Type.Unknown()),
  format: Type.Optional(Type.String()),
  perms: Type.Optional(Type.Array(Type.String())),
  unit: Type.Optional(Type.String()),
  minValue: Type.Optional(Type.Number()),
  maxValue: Type.Optional(Type.Number()),
});

const HomeKitView = Type.Object({
  exposed: Type.Boolean({ description: "Whether this hub's devices are shown in Apple Home." }),
  devices: Type.Union([Type.Literal('all'), Type.Array(Type.String())], { description: '`all`: every device HomeKit has a service for; else the device ids chosen.' }),
  shown: Type.Integer({ description: 'Devices the bridge shows now.' }),
  bridgeable: Type.Integer({ description: 'Devices chosen that HomeKit has a service for.' }),
  limit: Type.Integer({ description: 'The most a HomeKit bridge shows (HAP); beyond it, devices are left out.' }),
  state: Type.String({ description: "Homebridge's state, as in the status." }),
  candidates: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), service: Type.String({ description: 'The HAP service it would be.' }), shown: Type.Boolean() }), {
    description: 'Every device HomeKit has a service for, chosen or not, with whether the bridge shows it now.',
  }),
});

export function accessoryHubOperations(homebridge: HomebridgeSupervisor | undefined, homekit?: HomeKitExposure, bridge?: PluginBridge) {
  const running = () => {
    if (!homebridge) throw accessoryHubErrors.ACCESSORY_HUB_OFF();
    return homebridge;
  };
  const homekitView = async () => {
    if (!homekit || !homebridge) throw accessoryHubErrors.ACCESSORY_HUB_OFF();
    const bridgeable = homekit.exposed && bridge ? bridge.bridgeableCount() : 0;
    const shown = new Set(bridge?.devices().map((d) => d.id));
    const candidates = (bridge?.candidates() ?? []).map((c) => ({ ...c, shown: shown.has(c.id) }));
    return { exposed: homekit.exposed, devices: homekit.devices, shown: shown.size, bridgeable, limit: HOMEKIT_BRIDGE_LIMIT, state: (await homebridge.status()).state, candidates };
  };
  return {
    homekit: defineOperation({
      name: 'accessory_hub.homekit',
      summary: "Apple Home through the accessory hub: whether the hub's devices are shown, which, how many the bridge shows and how many are left out.",
      access: OS_ADMIN,
      input: Type.Object({}),
      output: HomeKitView,
      handler: homekitView,
    }),
    updateHomekit: defineOperation({
      name: 'accessory_hub.homekit.update',
      summary:
        "Show this hub's devices in Apple Home, or stop (`exposed`), and choose which (`devices`: `all`, or device ids). Homebridge starts when Apple Home is turned on and stops when it is off and no plugin is installed; no restart of the hub.",
      description: 'An id that names no device, or more than 149 ids (a HomeKit bridge shows no more), is 400 INVALID_ACCESSORY_HUB_SETTINGS and changes nothing.',
      access: OS_ADMIN,
      input: Type.Object(
        {
          exposed: Type.Optional(Type.Boolean()),
          devices: Type.Optional(Type.Union([Type.Literal('all'), Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 1000 })])),
        },
        { additionalProperties: false },
      ),
      output: HomeKitView,
      async handler(change) {
        if (!homekit) throw accessoryHubErrors.ACCESSORY_HUB_OFF();
        await homekit.update(change);
        await running().follow();
        return homekitView();
      },
    }),
    status: defineOperation({
      name: 'accessory_hub.status',
      summary: 'The managed Homebridge: process state, pid, uptime, version, pairing (setup code and QR payload), plugin count, last error.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Status,
      async handler() {
        if (!homebridge) return { enabled: false, state: 'off' };
        return homebridge.status();
      },
    }),
    resync: defineOperation({
      name: 'accessory_hub.resync',
      summary: 'Reload the configuration by restarting Homebridge; answers the status as the restart left it.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Status,
      async handler() {
        const hb = running();
        await hb.restart();
        return hb.status();
      },
    }),
    settings: defineOperation({
      name: 'accessory_hub.settings',
      summary: "Change the bridge's settings (name, port, setup code, mDNS advertiser); Homebridge restarts into them.",
      access: OS_ADMIN,
      input: Type.Object(
        {
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          port: Type.Optional(Type.Integer({ minimum: 1024, maximum: 65535 })),
          pin: Type.Optional(Type.String({ pattern: '^\\d{3}-\\d{2}-\\d{3}$', description: 'XXX-XX-XXX.' })),
          advertiser: Type.Optional(Type.Union([Type.Literal('ciao'), Type.Literal('bonjour-hap'), Type.Literal('avahi'), Type.Literal('resolved')])),
        },
        { additionalProperties: false },
      ),
      output: Type.Object({ name: Type.String(), port: Type.Integer(), pin: Type.String(), advertiser: Type.String() }),
      async handler(change) {
        return running().updateSettings(change);
      },
    }),
    accessories: defineOperation({
      name: 'accessory_hub.accessories',
      summary: "Homebridge's accessories with their services and characteristics, read over HAP.",
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({
        accessories: Type.Array(
          Type.Object({ aid: Type.Integer(), name: Type.Union([Type.String(), Type.Null()]), services: Type.Array(Type.Object({ iid: Type.Integer(), type: Type.String(), characteristics: Type.Array(Characteristic) })) }),
        ),
      }),
      async handler() {
        const accessories = await running().accessories();
        return {
          accessories: accessories.map((a) => {
            const name = a.services.flatMap((s) => s.characteristics).find((c) => c.description === 'Name' || c.type === '23' || c.type.startsWith('00000023-'));
            return { aid: a.aid, name: typeof name?.value === 'string' ? name.value : null, services: a.services.map((s) => ({ iid: s.iid, type: s.type, characteristics: s.characteristics })) };
          }),
        };
      },
    }),
  };
}

const PluginId = Type.String({ minLength: 1, maxLength: 214, description: 'The package name: homebridge-… or @scope/homebridge-….' });
const PluginView = Type.Object({
  name: Type.String(),
  installed: Type.Boolean(),
  version: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  enabled: Type.Boolean(),
  catalogued: Type.Boolean({ description: 'A custom catalog entry exists.' }),
  verified: Type.Optional(Type.Boolean()),
  hasConfigSchema: Type.Boolean(),
  configBlocks: Type.Integer({ description: 'Platform or accessory blocks of config.json that are this plugin’s.' }),
  homebridgeRange: Type.Optional(Type.String({ description: 'The Homebridge versions the installed plugin declares (`engines.homebridge`, else its peer dependency).' })),
  fitsHomebridge: Type.Optional(Type.Boolean({ description: 'Whether the running Homebridge is in that range. Homebridge 2 loads a plugin that declares only `^1` with a warning; one that declares no Homebridge version is refused at install (422 PLUGIN_NOT_FOR_THIS_HOMEBRIDGE).' })),
});

export function pluginOperations(plugins: PluginManager | undefined) {
  const manager = () => {
    if (!plugins) throw accessoryHubErrors.ACCESSORY_HUB_OFF();
    return plugins;
  };
  const onPlugin = <N extends string>(name: N, summary: string, run: (m: PluginManager, pluginId: string) => Promise<unknown>) =>
    defineOperation({
      name,
      summary,
      access: OS_ADMIN,
      input: Type.Object({ pluginId: PluginId }),
      output: PluginView,
      async handler(input) {
        return (await run(manager(), (input as { pluginId: string }).pluginId)) as never;
      },
    });
  return {
    search: defineOperation({
      name: 'accessory_hub.plugins.search',
      summary: 'Search the npm registry (ACCESSORY_HUB_REGISTRY) for packages with the keyword homebridge-plugin.',
      access: OS_ADMIN,
      input: Type.Object({ q: Type.Optional(Type.String({ maxLength: 100 })) }),
      output: Type.Object({ results: Type.Array(Type.Object({ name: Type.String(), version: Type.String(), description: Type.Optional(Type.String()), keywords: Type.Optional(Type.Array(Type.String())), date: Type.Optional(Type.String()), links: Type.Optional(Type.Record(Type.String(), Type.String())) })) }),
      async handler({ q }) {
        return { results: await manager().search(q ?? '') };
      },
    }),
    resolve: defineOperation({
      name: 'accessory_hub.plugins.resolve',
      summary: "A package's registry metadata: versions, dist-tags, the latest version's engines, and the catalog's verified flag (null when not catalogued).",
      access: OS_ADMIN,
      input: Type.Object({ name: PluginId }),
      output: Type.Object({
        name: Type.String(),
        description: Type.Optional(Type.String()),
        distTags: Type.Record(Type.String(), Type.String()),
        versions: Type.Array(Type.String()),
        latest: Type.Optional(Type.Object({ version: Type.String(), engines: Type.Optional(Type.Record(Type.String(), Type.String())), keywords: Type.Optional(Type.Array(Type.String())) })),
        verified: Type.Union([Type.Boolean(), Type.Null()]),
      }),
      async handler({ name }) {
        return manager().resolve(name);
      },
    }),
    list: defineOperation({
      name: 'accessory_hub.plugins.list',
      summary: 'Plugins installed in the accessory hub and the custom catalog entries.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ plugins: Type.Array(PluginView) }),
      async handler() {
        return { plugins: await manager().list() };
      },
    }),
    get: onPlugin('accessory_hub.plugins.get', 'One plugin: installed version, enabled, catalog entry, configuration.', (m, id) => m.get(id)),
    addCustom: defineOperation({
      name: 'accessory_hub.plugins.custom',
      summary: 'Add (or change) a custom catalog entry.',
      access: OS_ADMIN,
      input: Type.Object({ name: PluginId, description: Type.Optional(Type.String({ maxLength: 500 })), verified: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      output: PluginView,
      async handler(input) {
        return manager().addCustom(input);
      },
    }),
    removeCustom: defineOperation({
      name: 'accessory_hub.plugins.catalog_remove',
      summary: 'Remove a custom catalog entry (an installed plugin stays installed).',
      access: OS_ADMIN,
      input: Type.Object({ pluginId: PluginId }),
      output: Type.Object({ name: Type.String(), removed: Type.Literal(true) }),
      async handler({ pluginId }) {
        return manager().removeCustom(pluginId);
      },
    }),
    install: defineOperation({
      name: 'accessory_hub.plugins.install',
      summary:
        "Install a plugin (a version or range, else the latest) with npm into the accessory hub's plugin folder (install scripts run: plugins need them); npm's output streams as hub events (accessory_hub.plugin_progress). A failure leaves the previous plugins. Homebridge restarts.",
      access: OS_ADMIN,
      input: Type.Object({ pluginId: PluginId, version: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })) }),
      output: PluginView,
      async handler({ pluginId, version }) {
        return manager().install(pluginId, version);
      },
    }),
    uninstall: onPlugin('accessory_hub.plugins.uninstall', 'Uninstall a plugin; Homebridge restarts.', (m, id) => m.uninstall(id)),
    enable: onPlugin('accessory_hub.plugins.enable', 'Enable a plugin (out of config.json disabledPlugins); Homebridge restarts.', (m, id) => m.setEnabled(id, true)),
    disable: onPlugin('accessory_hub.plugins.disable', 'Disable a plugin (into config.json disabledPlugins) without uninstalling it; Homebridge restarts.', (m, id) => m.setEnabled(id, false)),
    configSchema: defineOperation({
      name: 'accessory_hub.plugins.config_schema',
      summary: "The plugin's config.schema.json (pluginAlias, pluginType, schema, layout).",
      access: OS_ADMIN,
      input: Type.Object({ pluginId: PluginId }),
      output: Type.Record(Type.String(), Type.Unknown()),
      async handler({ pluginId }) {
        return manager().configSchema(pluginId);
      },
    }),
    currentConfig: defineOperation({
      name: 'accessory_hub.plugins.config.get',
      summary: "A plugin's configuration as config.json holds it: its platform block, or its first accessory block, without the platform or accessory key ({} when it has none).",
      access: OS_ADMIN,
      input: Type.Object({ pluginId: PluginId }),
      output: Type.Object({ name: Type.String(), config: Type.Record(Type.String(), Type.Unknown()) }),
      async handler({ pluginId }) {
        return { name: pluginId, config: await manager().currentConfig(pluginId) };
      },
    }),
    configure: defineOperation({
      name: 'accessory_hub.plugins.config',
      summary: "Configure a plugin: the body is validated against its config.schema.json (400 naming the field) and written as its platform or accessory block of config.json; Homebridge restarts.",
      access: OS_ADMIN,
      description: 'The body is the configuration itself (its fields as the schema gives them).',
      input: Type.Object({ pluginId: PluginId }, { additionalProperties: true }),
      output: Type.Object({ name: Type.String(), block: Type.Record(Type.String(), Type.Unknown()) }),
      async handler(input) {
        const { pluginId, ...config } = input as { pluginId: string } & Record<string, unknown>;
        return manager().configure(pluginId, config);
      },
    }),
  };
}

const Importable = Type.Object({
  accessoryId: Type.String({ description: '`hb-<aid>`: Homebridge keeps an accessory\'s aid across restarts.' }),
  aid: Type.Integer(),
  name: Type.String(),
  imported: Type.Boolean(),
  characteristics: Type.Array(Type.Object({ key: Type.String(), format: Type.Optional(Type.String()), writable: Type.Boolean(), value: Type.Optional(Type.Unknown()) })),
});
const AccessoryId = Type.String({ minLength: 1, maxLength: 50, pattern: '^hb-[0-9]+$' });

/** The home's rooms, as an import uses them: to check a room exists, and to put devices in it. */
export interface ImportRooms {
  requireAll(ids: Iterable<string>): void;
  assign(spaceId: string, deviceIds: string[], mode: 'add'): Promise<unknown>;
}

export function importOperations(imports: AccessoryImports | undefined, bridge: PluginBridge | undefined, rooms?: ImportRooms) {
  const manager = () => {
    if (!imports) throw accessoryHubErrors.ACCESSORY_HUB_OFF();
    return imports;
  };
  const Imported = Type.Object({
    accessoryId: Type.String({ description: 'The driver device id of its logical device (driver accessory-hub).' }),
    aid: Type.Integer(),
    name: Type.String(),
    deviceId: Type.String({ description: 'The logical device of its first service: the id of GET /devices/{id}.' }),
    deviceIds: Type.Array(Type.String(), { description: 'The logical devices it became, one per service it offers (a light and its motion sensor are two), first service first.' }),
  });
  const Removed = Type.Object({
    accessoryId: Type.String(),
    aid: Type.Integer(),
    name: Type.String(),
    deviceId: Type.Optional(Type.String({ description: 'The logical device it was (now removed), when the hub had registered it.' })),
  });
  return {
    importable: defineOperation({
      name: 'accessory_hub.import.list',
      summary: "Homebridge's accessories that can become hub devices and are not yet, with the characteristics each would bring.",
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ accessories: Type.Array(Importable) }),
      async handler() {
        return { accessories: await manager().importable(false) };
      },
    }),
    resyncImportable: defineOperation({
      name: 'accessory_hub.import.resync',
      summary: "Read Homebridge's accessories again over HAP and answer those not yet imported.",
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ accessories: Type.Array(Importable) }),
      async handler() {
        return { accessories: await manager().importable(true) };
      },
    }),
    importAccessory: defineOperation({
      name: 'accessory_hub.import',
      summary:
        "Make an accessory hub devices, one per HAP service, each of its service's class (docs/devices.md): a Lightbulb is a light with the light's standard commands, written back over HAP with HAP's units; services the hub does not know stay one generic device (set_<key> {value}).",
      description: 'With `spaceId`, its devices go into that room in the same step (an unknown room is 404 before anything is imported).',
      access: OS_ADMIN,
      input: Type.Object({ accessoryId: AccessoryId, spaceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The room (space) its devices go into.' })) }),
      output: Imported,
      async handler({ accessoryId, spaceId }) {
        if (spaceId !== undefined) rooms?.requireAll([spaceId]);
        const { item, deviceId, deviceIds } = await manager().import(accessoryId);
        if (spaceId !== undefined) await rooms?.assign(spaceId, deviceIds, 'add');
        await bridge?.enqueue('import', item.id);
        return { accessoryId: item.id, aid: item.aid, name: item.name, deviceId, deviceIds };
      },
    }),
    removeImport: defineOperation({
      name: 'accessory_hub.import.remove',
      summary: 'Undo an import: the logical device goes (its driver removes it).',
      access: OS_ADMIN,
      input: Type.Object({ accessoryId: AccessoryId }),
      output: Removed,
      async handler({ accessoryId }) {
        const { item, deviceId } = await manager().remove(accessoryId);
        await bridge?.enqueue('remove', item.id);
        return { accessoryId: item.id, aid: item.aid, name: item.name, ...(deviceId ? { deviceId } : {}) };
      },
    }),
  };
}

/** The plugin bridge's credential: a token of scope `plugin-bridge`, accepted on /accessory-hub/plugin/* only. */
export const PLUGIN_BRIDGE: Access = { scopes: ['plugin-bridge'] };

const JsonObject = Type.Record(Type.String(), Type.Unknown());

const BridgedDeviceSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  service: Type.Enum([...BRIDGED_SERVICES], { description: 'The HAP service the device is in Apple Home (docs/devices.md, "HAP service").' }),
  deviceClass: Type.String({ description: 'The device class (docs/devices.md).' }),
  attributes: Type.Object({}, { additionalProperties: true, description: "The class's ranges, units and modes." }),
  capabilities: Type.Array(Type.String(), { description: 'The derived capabilities (which decide optional characteristics, e.g. a fan\'s speed).' }),
  reading: Type.Object({}, { additionalProperties: true, description: 'The canonical reading the characteristics are rendered from.' }),
  on: Type.Boolean({ description: "The reading's on/off (false when unknown)." }),
  online: Type.Boolean(),
});

export function pluginBridgeOperations(bridge: PluginBridge | undefined) {
  const manager = () => {
    if (!bridge) throw accessoryHubErrors.ACCESSORY_HUB_OFF();
    return bridge;
  };
  return {
    bootstrap: defineOperation({
      name: 'accessory_hub.plugin.bootstrap',
      summary: 'For the plugin bridge: the hub devices to expose as HomeKit accessories (those whose class HomeKit has a service for), with the service, class, attributes and reading.',
      access: PLUGIN_BRIDGE,
      input: Type.Object({}),
      output: Type.Object({ devices: Type.Array(BridgedDeviceSchema) }),
      async handler() {
        return { devices: manager().devices() };
      },
    }),
    command: defineOperation({
      name: 'accessory_hub.plugin.command',
      journal: 'activity',
      summary:
        "For the plugin bridge: a HomeKit write to a hub device, as one of its class's standard commands (`{command, params}`: set_brightness {brightness}, lock, set_position {position}…; or `{on}`: turn_on or turn_off), checked and translated like any device command and answered by its driver.",
      description:
        'Only the commands its HAP service writes pass (422 COMMAND_NOT_IN_CLASS otherwise); a value outside its attributes is 400 INVALID_COMMAND_PARAMS. 404 ACCESSORY_NOT_FOUND when the device is not bridged.',
      access: PLUGIN_BRIDGE,
      input: Type.Object({
        id: Type.String({ minLength: 1, maxLength: 200 }),
        command: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        params: Type.Optional(JsonObject),
        on: Type.Optional(Type.Boolean()),
      }),
      output: Type.Object({ ok: Type.Literal(true), result: Type.Optional(Type.Unknown()) }),
      async handler({ id, command, params, on }) {
        const name = command ?? (on === undefined ? undefined : on ? 'turn_on' : 'turn_off');
        if (!name) throw deviceErrors.INVALID_COMMAND_PARAMS({ command: 'the write', problem: 'send {command, params?} or {on}' }, { details: { deviceId: id, field: 'command' } });
        const result = await manager().command(id, name, params ?? {});
        return { ok: true as const, ...(result === undefined ? {} : { result }) };
      },
    }),
    syncExternal: defineOperation({
      name: 'accessory_hub.plugin.external_sync',
      summary: "For the plugin bridge: the other plugins' accessories on the bridge (replaces the last report).",
      access: PLUGIN_BRIDGE,
      input: Type.Object({
        accessories: Type.Array(Type.Object({ uuid: Type.String({ maxLength: 200 }), displayName: Type.String({ maxLength: 200 }), plugin: Type.Optional(Type.String({ maxLength: 214 })), services: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })) }), { maxItems: 2000 }),
      }),
      output: Type.Object({ accessories: Type.Integer() }),
      async handler({ accessories }) {
        return manager().syncExternal(accessories);
      },
    }),
    importCommands: defineOperation({
      name: 'accessory_hub.plugin.import_commands',
      summary: 'For the plugin bridge: the import and remove commands the hub queued, oldest first; each comes back until it is acknowledged.',
      access: PLUGIN_BRIDGE,
      input: Type.Object({}),
      output: Type.Object({ commands: Type.Array(Type.Object({ id: Type.String(), action: Type.Union([Type.Literal('import'), Type.Literal('remove')]), accessoryId: Type.String(), createdAt: Type.Integer() })) }),
      async handler() {
        return { commands: manager().pending().map(({ id, action, accessoryId, createdAt }) => ({ id, action, accessoryId, createdAt })) };
      },
    }),
    ack: defineOperation({
      name: 'accessory_hub.plugin.import_commands.ack',
      summary: 'For the plugin bridge: acknowledge an import command (it is not delivered again).',
      access: PLUGIN_BRIDGE,
      input: Type.Object({ commandId: Type.String({ minLength: 1, maxLength: 100 }) }),
      output: Type.Object({ id: Type.String(), acknowledged: Type.Literal(true) }),
      async handler({ commandId }) {
        return manager().ack(commandId);
      },
    }),
    stream: defineOperation({
      name: 'accessory_hub.plugin.stream',
      summary: 'Opens the plugin bridge state stream (the SSE route calls this first): the devices it exposes to begin with.',
      access: PLUGIN_BRIDGE,
      input: Type.Object({}),
      output: Type.Object({ devices: Type.Array(BridgedDeviceSchema) }),
      async handler() {
        return { devices: manager().devices() };
      },
    }),
    external: defineOperation({
      name: 'accessory_hub.external_accessories',
      summary: "The other plugins' accessories on the bridge, as the plugin bridge last reported them.",
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ accessories: Type.Array(Type.Object({ uuid: Type.String(), displayName: Type.String(), plugin: Type.Optional(Type.String()), services: Type.Optional(Type.Array(Type.String())) })) }),
      async handler() {
        return { accessories: manager().externalAccessories() };
      },
    }),
  };
}
