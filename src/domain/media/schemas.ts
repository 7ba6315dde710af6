import { Type } from 'typebox';
import { ENDPOINT_KINDS, NORMALIZED_COMMANDS } from './model.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const NormalizedCommandSchema = Type.Enum([...NORMALIZED_COMMANDS], { description: `One of: ${NORMALIZED_COMMANDS.join(', ')}.` });
export const EndpointKindSchema = Type.Enum([...ENDPOINT_KINDS]);
export const EndpointId = Type.String({ minLength: 3, maxLength: 300, pattern: '^[a-z]+:.+$', description: '`<kind>:<key>`, e.g. `roku:X0TEST000001`.' });
const Host = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:%-]+$', description: 'IP address (a Roku checks that Host is its IP) or host name.' });

export const NowPlayingSchema = Type.Object({
  playback: Nullable(Type.String({ description: '"playing", "paused", "stopped", "buffering", "idle".' })),
  app: Nullable(Type.String()),
  appId: Nullable(Type.String()),
  title: Nullable(Type.String()),
  artist: Nullable(Type.String()),
  album: Nullable(Type.String()),
  positionSeconds: Nullable(Type.Number()),
  durationSeconds: Nullable(Type.Number()),
});

export const MediaPlayerSchema = Type.Object({
  id: Type.String({ description: 'The logical device id when a device stands for the player, else the endpoint id. Stable across restarts.' }),
  name: Type.String(),
  kind: Type.Union([Type.Literal('device'), EndpointKindSchema], { description: '`device` for a driver\'s device, else the built-in integration or endpoint kind.' }),
  deviceId: Nullable(Type.String()),
  endpointId: Nullable(Type.String()),
  driverKey: Nullable(Type.String()),
  room: Type.String({ description: 'Space name, "" when none.' }),
  roomId: Nullable(Type.String()),
  capabilities: Type.Array(NormalizedCommandSchema, { description: 'The normalized commands the player takes now.' }),
  online: Type.Boolean(),
  status: Type.Union([Type.Literal('online'), Type.Literal('offline')]),
  statusSource: Type.Union([Type.Literal('runtime'), Type.Literal('unknown')], { description: '`runtime`: the state authority knows the device; `unknown`: nothing vouches for it.' }),
  power: Nullable(Type.Union([Type.Literal('on'), Type.Literal('off')])),
  volume: Nullable(Type.Number()),
  muted: Nullable(Type.Boolean()),
  nowPlaying: Nullable(NowPlayingSchema),
});

export const EndpointSchema = Type.Object({
  id: Type.String(),
  kind: EndpointKindSchema,
  name: Type.String(),
  label: Nullable(Type.String()),
  enabled: Type.Boolean(),
  origin: Type.Union([Type.Literal('ssdp'), Type.Literal('mdns'), Type.Literal('manual'), Type.Literal('bridge')]),
  host: Type.String(),
  port: Type.Integer(),
  model: Nullable(Type.String()),
  details: Type.Record(Type.String(), Type.String()),
  lastSeenAt: Nullable(Type.Integer({ description: 'Epoch ms of the last discovery answer or registration.' })),
  present: Type.Boolean({ description: 'Whether the last discovery round that looks for its kind found it.' }),
  paired: Type.Boolean(),
  pairedAt: Nullable(Type.Integer()),
  bridge: Nullable(
    Type.Object({
      callbackUrl: Type.String(),
      commands: Type.Array(NormalizedCommandSchema),
      timeoutMs: Type.Integer(),
      playsUrls: Type.Boolean(),
      registeredBy: Nullable(Type.String()),
    }),
  ),
  deviceId: Nullable(Type.String({ description: 'The logical device a built-in integration made of it.' })),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
});

export const PlayerCommandInput = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 300 }),
  command: NormalizedCommandSchema,
  params: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Per command: seek {position}, volume_set {volume}, volume_step {delta}, mute {muted?}, shuffle {enabled}, repeat {mode}, launch_app {appId, contentId?, mediaType?}, select_source {source}.' })),
});

export const PlayerCommandOutput = Type.Object({
  ok: Type.Literal(true),
  playerId: Type.String(),
  command: NormalizedCommandSchema,
  deviceCommand: Nullable(Type.String({ description: 'The device command it became; null when nothing had to be sent.' })),
  result: Type.Optional(Type.Unknown()),
});

export const DiscoverInput = Type.Object({
  timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000, description: 'How long to listen (default MEDIA_DISCOVERY_TIMEOUT_MS, 5000).' })),
  probe: Type.Optional(
    Type.Array(
      Type.Object({ kind: EndpointKindSchema, host: Host, port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })) }, { additionalProperties: false }),
      { maxItems: 32, description: 'Addresses to ask directly (an endpoint discovery cannot reach). Each must answer as its kind, or the request fails (502) and nothing is stored.' },
    ),
  ),
});

export const DiscoverOutput = Type.Object({
  found: Type.Array(EndpointSchema),
  new: Type.Array(Type.String()),
  gone: Type.Array(Type.String()),
  durationMs: Type.Integer(),
});

export const EndpointUpdateInput = Type.Object(
  {
    id: EndpointId,
    label: Type.Optional(Nullable(Type.String({ maxLength: 200, description: 'null or "": back to the device\'s own name.' }))),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const BridgeRegisterInput = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$', description: "The registrant's id for the endpoint; the endpoint id is `bridge:<id>`. Registering again refreshes it." }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    callbackUrl: Type.String({ minLength: 8, maxLength: 2000, description: 'http(s) URL; commands are POSTed to it as {endpointId, command, params}.' }),
    commands: Type.Array(NormalizedCommandSchema, { minItems: 1, maxItems: 16, description: 'The normalized commands it takes.' }),
    callbackToken: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'Sent as Authorization: Bearer with each command; never shown again.' })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000, description: 'Per-command time-out (default 5000).' })),
    playsUrls: Type.Optional(Type.Boolean({ description: 'It plays a URL it is sent (command `play_url` {url, mode}); music services can then start playback on it.' })),
    state: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Current state (power, volume, muted, playback, app, title, …), merged into the state authority.' })),
  },
  { additionalProperties: false },
);

export const CastPairStartInput = Type.Object(
  {
    endpointId: EndpointId,
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'Pairing port (default: the endpoint port + 1, 6467 on a real TV).' })),
  },
  { additionalProperties: false },
);

export const CastPairFinishInput = Type.Object(
  {
    code: Type.String({ pattern: '^[0-9A-Fa-f]{6}$', description: 'The 6 hexadecimal digits the TV shows.' }),
    endpointId: Type.Optional(EndpointId),
  },
  { additionalProperties: false },
);
