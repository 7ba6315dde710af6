import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import type { ActionName } from './actions.js';
import type { CapabilityName, DeviceAttributes, DeviceClass } from './capabilities.js';

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
    Type.Literal('color'),
    Type.Literal('volume'),
    Type.Literal('temperature'),
    Type.Literal('climate_mode'),
    Type.Literal('media'),
    Type.Literal('cover'),
    Type.Literal('position'),
    Type.Literal('lock'),
    Type.Literal('fan_speed'),
    Type.Literal('input'),
    Type.Literal('apps'),
    Type.Literal('equalizer'),
    Type.Literal('scenes'),
    Type.Literal('ir'),
    Type.Literal('sensor'),
    Type.Literal('binary_sensor'),
    Type.Literal('button'),
  ],
  { description: 'A capability of the model (see capabilities.model).' },
);
export const ActionNameSchema = Type.Union(
  [
    Type.Literal('turn_on'),
    Type.Literal('turn_off'),
    Type.Literal('toggle'),
    Type.Literal('set_brightness'),
    Type.Literal('set_color_temp'),
    Type.Literal('set_hs_color'),
    Type.Literal('set_volume'),
    Type.Literal('volume_up'),
    Type.Literal('volume_down'),
    Type.Literal('set_temperature'),
    Type.Literal('set_hvac_mode'),
    Type.Literal('open'),
    Type.Literal('close'),
    Type.Literal('set_position'),
    Type.Literal('set_tilt_position'),
    Type.Literal('lock'),
    Type.Literal('unlock'),
    Type.Literal('set_percentage'),
    Type.Literal('oscillate'),
    Type.Literal('set_direction'),
    Type.Literal('play'),
    Type.Literal('pause'),
    Type.Literal('stop'),
    Type.Literal('next'),
    Type.Literal('previous'),
  ],
  { description: 'An abstract action, the standard command of a device class (see docs/devices.md and capabilities.model).' },
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

export const DeviceClassSchema = Type.Union(
  [
    Type.Literal('light'),
    Type.Literal('switch'),
    Type.Literal('outlet'),
    Type.Literal('cover'),
    Type.Literal('climate'),
    Type.Literal('fan'),
    Type.Literal('lock'),
    Type.Literal('sensor'),
    Type.Literal('binary_sensor'),
    Type.Literal('button'),
    Type.Literal('media_player'),
    Type.Literal('remote'),
    Type.Literal('generic'),
  ],
  { description: 'What the device is (docs/devices.md): declared by its driver, else derived from its capabilities, commands, category and state.' },
);
const _deviceClassesInSync: Same<Static<typeof DeviceClassSchema>, DeviceClass> = true;

const SensorClassSchema = Type.String({ maxLength: 30, description: 'sensor: temperature, humidity, illuminance, power, energy, battery, co2, pm25, pressure; binary_sensor: motion, occupancy, contact, leak, smoke, tamper.' });

export const DeviceAttributesSchema = Type.Object(
  {
    colorModes: Type.Optional(Type.Array(Type.Union([Type.Literal('onoff'), Type.Literal('brightness'), Type.Literal('color_temp'), Type.Literal('hs')]))),
    minKelvin: Type.Optional(Type.Number({ minimum: 1000, maximum: 20000 })),
    maxKelvin: Type.Optional(Type.Number({ minimum: 1000, maximum: 20000 })),
    tilt: Type.Optional(Type.Boolean()),
    minTemperature: Type.Optional(Type.Number({ minimum: -100, maximum: 200 })),
    maxTemperature: Type.Optional(Type.Number({ minimum: -100, maximum: 200 })),
    temperatureStep: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 10 })),
    temperatureUnit: Type.Optional(Type.Union([Type.Literal('°C'), Type.Literal('°F')])),
    hvacModes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20 })),
    oscillate: Type.Optional(Type.Boolean()),
    direction: Type.Optional(Type.Boolean()),
    sensorClass: Type.Optional(SensorClassSchema),
    unit: Type.Optional(Type.String({ maxLength: 20 })),
    presses: Type.Optional(Type.Array(Type.Union([Type.Literal('single'), Type.Literal('double'), Type.Literal('long')]))),
    stateKeys: Type.Optional(
      Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 100 }), {
        maxProperties: 20,
        description:
          'Any class: the state key each reading field is read from, where the driver uses its own (e.g. {"brightness": "lvl"}): brightness, hue, saturation, position, tilt, percentage, volume, currentTemperature, targetTemperature, humidity. Other fields are ignored.',
      }),
    ),
  },
  { additionalProperties: false, description: 'Ranges, units and supported modes of the device class (declared by the driver, else derived).' },
);

export const DeviceReadingSchema = Type.Object(
  {
    on: Type.Optional(Type.Boolean()),
    brightness: Type.Optional(Type.Number({ description: '0–100 %.' })),
    colorTempKelvin: Type.Optional(Type.Number()),
    hue: Type.Optional(Type.Number({ description: '0–360°.' })),
    saturation: Type.Optional(Type.Number({ description: '0–100 %.' })),
    position: Type.Optional(Type.Number({ description: '0 closed … 100 open.' })),
    tilt: Type.Optional(Type.Number()),
    coverState: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('opening'), Type.Literal('closing')])),
    currentTemperature: Type.Optional(Type.Number()),
    targetTemperature: Type.Optional(Type.Number()),
    hvacMode: Type.Optional(Type.String()),
    hvacAction: Type.Optional(Type.String({ description: 'heating, cooling, idle, off… when the driver reports hvac_action.' })),
    humidity: Type.Optional(Type.Number()),
    locked: Type.Optional(Type.Boolean()),
    jammed: Type.Optional(Type.Boolean()),
    percentage: Type.Optional(Type.Number()),
    oscillating: Type.Optional(Type.Boolean()),
    direction: Type.Optional(Type.Union([Type.Literal('forward'), Type.Literal('reverse')])),
    value: Type.Optional(Type.Union([Type.Number(), Type.String()])),
    unit: Type.Optional(Type.String()),
    detected: Type.Optional(Type.Boolean()),
    lastPress: Type.Optional(Type.String()),
    playback: Type.Optional(Type.String()),
    volume: Type.Optional(Type.Number()),
    muted: Type.Optional(Type.Boolean()),
    input: Type.Optional(Type.String()),
    app: Type.Optional(Type.String()),
    title: Type.Optional(Type.String({ description: 'media_player: the title playing.' })),
    artist: Type.Optional(Type.String()),
    album: Type.Optional(Type.String()),
    artworkUrl: Type.Optional(Type.String({ description: 'media_player: artwork, an http(s) URL.' })),
  },
  { description: "The canonical reading of the device's state in the model's units; only what is known is present. The raw state stays as the driver reported it." },
);

/**
 * The attributes a driver declared, as the model keeps them: each field that fits its schema, the
 * others dropped (a driver's mistake in one range must not cost the device its other attributes).
 */
export function declaredAttributesOf(raw: Record<string, unknown>): DeviceAttributes {
  const out: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(DeviceAttributesSchema.properties)) {
    if (raw[key] !== undefined && Value.Check(schema, raw[key])) out[key] = raw[key];
  }
  return out as DeviceAttributes;
}
