import { Type } from 'typebox';
import { ANY_ACCOUNT, defineOperation, OS_ADMIN, type Principal } from '../../platform/operations.js';
import type { AudienceResolver } from '../access/audience.js';
import { IrCommandsSchema } from '../ir/ir-command.js';
import { CAPABILITY_COMMANDS, type DeviceService, type DeviceView } from './device-service.js';
import { deviceErrors } from './errors.js';
import { CommandResultSchema, DeviceDetailSchema, DeviceSchema, IdParam, RemoteSourceSchema } from './schemas.js';

const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** CONTRACT's command answer: `{ok: true}`, with the driver's `result` when it gave one. */
const okResult = (result: unknown) => (result === undefined ? { ok: true as const } : { ok: true as const, result });

const listings = new WeakMap<readonly DeviceView[], { devices: DeviceView[] }>();

/** One frozen answer per listing, so that an unchanged list is the same value every time. */
function frozenListing(views: readonly DeviceView[]): { devices: DeviceView[] } {
  let listing = listings.get(views);
  if (!listing) {
    // The array is frozen; the operation's output type simply cannot say so.
    listing = Object.freeze({ devices: views as DeviceView[] });
    listings.set(views, listing);
  }
  return listing;
}

export function deviceOperations(devices: DeviceService, audiences: AudienceResolver) {
  /** A device the caller may not see answers as one that does not exist, so ids do not leak. */
  const requireVisible = (id: string, principal: Principal | undefined) => {
    if (!audiences.audienceOf(principal).seesDevice(devices.registry.find(id))) throw deviceErrors.DEVICE_NOT_FOUND({ id }, { details: { deviceId: id } });
  };
  const detail = (id: string) => {
    const device = devices.registry.get(id);
    return { ...devices.view(device), state: devices.state.get(id) };
  };
  return {
    list: defineOperation({
      name: 'devices.list',
      summary: 'List logical devices (for a user without the admin role, those granted to them).',
      access: ANY_ACCOUNT,
      input: Type.Object({
        includeRemoved: Type.Optional(Type.Boolean({ description: 'Also list devices their driver removed.' })),
        category: Type.Optional(Type.String()),
        room: Type.Optional(Type.String()),
      }),
      output: Type.Object({ devices: Type.Array(DeviceSchema) }),
      // Answers at once (no promise): from memory, the hub's most frequent read.
      handler(input, { principal }) {
        const audience = audiences.audienceOf(principal);
        const views = devices.list(input);
        // Admins keep the one frozen answer every caller shares; a user gets a cut of it of their own.
        return audience.everything ? frozenListing(views) : { devices: views.filter((device) => audience.seesDevice(device)) };
      },
    }),
    appIcon: defineOperation({
      name: 'devices.apps.icon',
      summary: 'An app icon (driver command apps.icon answering {contentType, data: base64}); the bytes, cached for an hour.',
      access: OS_ADMIN,
      input: Type.Object({ id: IdParam, appId: IdParam }),
      output: Type.Object({
        contentType: Type.String({ pattern: '^image/' }),
        bytes: Type.Unsafe<Buffer>({ description: 'The icon bytes.' }),
      }),
      async handler({ id, appId }) {
        return devices.appIcon(id, appId);
      },
    }),
    get: defineOperation({
      name: 'devices.get',
      summary: 'Device details with its current state.',
      access: ANY_ACCOUNT,
      input: Type.Object({ id: IdParam }),
      output: DeviceDetailSchema,
      async handler({ id }, { principal }) {
        requireVisible(id, principal);
        return detail(id);
      },
    }),
    command: defineOperation({
      name: 'devices.command',
      journal: 'activity',
      summary: 'Dispatch a command (for GENERIC_IR devices, a key of properties.irCommands) and wait for the result.',
      description:
        'Standard commands go to the device\'s driver as ACTION; the answer waits for its ACTION_RESULT. 422 COMMAND_NOT_SUPPORTED when the device does not offer the command, 502 DRIVER_ERROR with the driver\'s error, 503 DRIVER_OFFLINE, 504 DRIVER_TIMEOUT. IR keys go to the extender: 502 IR_EXTENDER_ERROR / IR_EXTENDER_UNREACHABLE, 504 IR_EXTENDER_TIMEOUT.',
      access: ANY_ACCOUNT,
      input: Type.Object({ id: IdParam, command: Type.String({ minLength: 1, maxLength: 200 }), params: Type.Optional(JsonObject) }),
      output: CommandResultSchema,
      async handler({ id, command, params }, { principal }) {
        requireVisible(id, principal);
        return okResult(await devices.command(id, command, params ?? {}));
      },
    }),
    apps: defineOperation({
      name: 'devices.apps',
      summary: `Launchable apps of an app-capable device (driver command ${CAPABILITY_COMMANDS.apps.list}).`,
      access: OS_ADMIN,
      input: Type.Object({ id: IdParam }),
      output: Type.Object({ deviceId: Type.String(), apps: Type.Array(Type.Record(Type.String(), Type.Unknown())) }),
      async handler({ id }) {
        const result = (await devices.capability(id, 'apps', CAPABILITY_COMMANDS.apps.list)) as { apps?: unknown } | unknown[] | null;
        const apps = Array.isArray(result) ? result : Array.isArray(result?.apps) ? result.apps : [];
        return { deviceId: id, apps: apps.filter((a): a is Record<string, unknown> => !!a && typeof a === 'object') };
      },
    }),
    launchApp: defineOperation({
      name: 'devices.apps.launch',
      summary: `Launch an app (driver command ${CAPABILITY_COMMANDS.apps.launch} with {appId}).`,
      access: OS_ADMIN,
      input: Type.Object({ id: IdParam, appId: IdParam }),
      output: CommandResultSchema,
      async handler({ id, appId }) {
        const result = await devices.capability(id, 'apps', CAPABILITY_COMMANDS.apps.launch, { appId });
        return okResult(result);
      },
    }),
    getEqualizer: defineOperation({
      name: 'devices.equalizer.get',
      summary: `Equalizer and sound-mode summary (driver command ${CAPABILITY_COMMANDS.equalizer.get}, when the device has an equalizer), with the device's equalizer and sound-mode commands and state.`,
      access: OS_ADMIN,
      input: Type.Object({ id: IdParam }),
      output: Type.Object({
        deviceId: Type.String(),
        commands: Type.Array(Type.String({ description: 'Equalizer and sound-mode commands the device offers.' })),
        state: JsonObject,
        equalizer: Type.Unknown({ description: 'The driver\'s answer to equalizer.get.' }),
      }),
      async handler({ id }) {
        const commands = devices.equalizerCommands(id);
        // A device with sound-mode commands but no equalizer.get still has a summary to show.
        const equalizer = commands.length > 0 && !devices.hasCapability(id, 'equalizer') ? null : await devices.capability(id, 'equalizer', CAPABILITY_COMMANDS.equalizer.get);
        const state = Object.fromEntries(
          Object.entries(devices.state.get(id).state).filter(([k]) => /^(equalizer|eq|sound_?mode|bass|treble|balance|loudness)/i.test(k)),
        );
        return { deviceId: id, commands, state, equalizer: equalizer ?? null };
      },
    }),
    setEqualizer: defineOperation({
      name: 'devices.equalizer.set',
      journal: 'activity',
      summary: 'Set equalizer bands or the sound mode, or dispatch one of the equalizer or sound-mode commands GET lists.',
      description: `Either \`{command, params?}\` naming one of the device's equalizer or sound-mode commands (422 COMMAND_NOT_SUPPORTED, listing them, for any other), or any of \`bands\`, \`soundMode\` and \`preset\`, which become the params of the driver command ${CAPABILITY_COMMANDS.equalizer.set} (422 CAPABILITY_NOT_SUPPORTED for a device without an equalizer). 400 EQUALIZER_FORMS_MIXED when both forms are given.`,
      access: OS_ADMIN,
      input: Type.Object({
        id: IdParam,
        command: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'An equalizer or sound-mode command of the device, as GET lists them.' })),
        params: Type.Optional(JsonObject),
        bands: Type.Optional(Type.Record(Type.String(), Type.Number(), { description: 'Band name → level, e.g. {"bass": 3, "treble": -1}.' })),
        soundMode: Type.Optional(Type.String({ maxLength: 100, description: 'Sound mode, e.g. "movie".' })),
        preset: Type.Optional(Type.String({ maxLength: 100 })),
      }),
      output: CommandResultSchema,
      async handler({ id, command, params, ...settings }) {
        const hasSettings = Object.values(settings).some((v) => v !== undefined);
        if ((command !== undefined && hasSettings) || (params !== undefined && command === undefined)) {
          throw deviceErrors.EQUALIZER_FORMS_MIXED({}, { details: { fields: ['command', 'params', 'bands', 'soundMode', 'preset'] } });
        }
        if (command !== undefined) return okResult(await devices.equalizerCommand(id, command, params ?? {}));
        return okResult(await devices.capability(id, 'equalizer', CAPABILITY_COMMANDS.equalizer.set, settings));
      },
    }),
    scenes: defineOperation({
      name: 'devices.scenes',
      summary: `Scenes a device exposes (driver command ${CAPABILITY_COMMANDS.scenes.list}).`,
      access: OS_ADMIN,
      input: Type.Object({ id: IdParam }),
      output: Type.Object({ deviceId: Type.String(), scenes: Type.Array(Type.Record(Type.String(), Type.Unknown())) }),
      async handler({ id }) {
        const result = (await devices.capability(id, 'scenes', CAPABILITY_COMMANDS.scenes.list)) as { scenes?: unknown } | unknown[] | null;
        const scenes = Array.isArray(result) ? result : Array.isArray(result?.scenes) ? result.scenes : [];
        return { deviceId: id, scenes: scenes.filter((s): s is Record<string, unknown> => !!s && typeof s === 'object') };
      },
    }),
    metadata: defineOperation({
      name: 'devices.metadata',
      summary: 'Update tags, primary room or remote-source metadata; fields left out stay as they are.',
      access: OS_ADMIN,
      input: Type.Object({
        id: IdParam,
        tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 50 })),
        room: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
        remoteSources: Type.Optional(Type.Array(RemoteSourceSchema, { maxItems: 50 })),
      }),
      output: DeviceSchema,
      async handler({ id, ...meta }) {
        return devices.updateMetadata(id, meta);
      },
    }),
    testIr: defineOperation({
      name: 'devices.ir.test',
      summary: 'IR test transmission: a key of an IR device, or raw IR data sent to an extender.',
      access: OS_ADMIN,
      input: Type.Object({
        deviceId: Type.Optional(IdParam),
        key: Type.Optional(Type.String({ maxLength: 64 })),
        extenderIp: Type.Optional(Type.String({ maxLength: 100 })),
        freq_khz: Type.Optional(Type.Number()),
        raw: Type.Optional(Type.Array(Type.Number(), { maxItems: 1000 })),
      }),
      output: Type.Unknown({ description: 'For a device key, the command result; for raw data, {line, reply}.' }),
      async handler(input) {
        return devices.testIr(input);
      },
    }),
    saveIr: defineOperation({
      name: 'devices.ir.save',
      summary: 'Create (no id) or edit (with id) a GENERIC_IR device.',
      access: OS_ADMIN,
      input: Type.Object({
        id: Type.Optional(IdParam),
        name: Type.String({ minLength: 1, maxLength: 200 }),
        extenderIp: Type.String({ minLength: 1, maxLength: 100, description: 'IP address of the iTach-compatible IR extender.' }),
        irCommands: IrCommandsSchema,
        category: Type.Optional(Type.String({ maxLength: 100 })),
        room: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        tags: Type.Optional(Type.Array(Type.String({ maxLength: 50 }), { maxItems: 50 })),
      }),
      output: DeviceSchema,
      async handler(input) {
        return devices.saveIrDevice(input);
      },
    }),
  };
}

export type DeviceOperations = ReturnType<typeof deviceOperations>;
