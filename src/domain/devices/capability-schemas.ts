import { Type, type Static } from 'typebox';
import type { ActionName } from './actions.js';
import type { CapabilityName } from './capabilities.js';

/**
 * Schemas of the capability model and abstract actions as operations answer them: device
 * commands and actions (`devices.commands`, `devices.action`), entities and the graph.
 */

const JsonObject = Type.Record(Type.String(), Type.Unknown());
const NullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

// Spelled out: TypeBox derives the static type from a tuple, not from a mapped array.
export const CapabilityNameSchema = Type.Union(
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
export const ActionNameSchema = Type.Union(
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

export const ResultError = Type.Object({ code: Type.String(), message: Type.String() });
export const ActionResultFields = {
  deviceId: Type.String(),
  ok: Type.Boolean({ description: 'False when the device could not do it (the error says why).' }),
  command: Type.Optional(Type.String({ description: 'The device command that was sent.' })),
  result: Type.Optional(Type.Unknown({ description: "The driver's result; {presses} for repeated step commands, {unchanged: true} when nothing had to be sent." })),
  error: Type.Optional(ResultError),
};

export const SupportedActionSchema = Type.Object({
  action: ActionNameSchema,
  command: Type.String({ description: 'The device command the action resolves to now.' }),
  valueParam: Type.Optional(Type.String({ description: "The command parameter that carries the action's value." })),
});

export const CommandView = Type.Object({
  name: Type.String(),
  label: Type.Optional(Type.String()),
  params: Type.Optional(JsonObject),
  capability: Type.Union([CapabilityNameSchema, Type.Null()], { description: 'The capability the command carries, if any.' }),
  meaning: NullableString('The command meaning it was recognized as (e.g. "turn_on" for power_on), if any.'),
});
