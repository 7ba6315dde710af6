import { Type } from 'typebox';
import { ADMIN_ACCOUNT, ADMIN_FROM_ANY_APP, ANY_ACCOUNT, defineOperation } from '../../platform/operations.js';
import type { AudienceResolver } from '../access/audience.js';
import { EndpointSchema, MediaPlayerSchema, NormalizedCommandSchema } from '../media/schemas.js';
import type { MediaControllerService } from './media-controller.js';
import { CONTROL_ACTIONS, SEARCH_TYPES } from './model.js';
import type { MusicService } from './music-service.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const SongSchema = Type.Object({
  uri: Type.String(),
  title: Nullable(Type.String()),
  artist: Nullable(Type.String()),
  album: Nullable(Type.String()),
  track: Nullable(Type.Number()),
  durationSeconds: Nullable(Type.Number()),
  position: Nullable(Type.Integer()),
  id: Nullable(Type.Integer()),
});

export const ControllerStateSchema = Type.Object({
  connected: Type.Boolean(),
  error: Nullable(Type.String({ description: 'Why it is not connected; null while connected.' })),
  server: Type.Object({ host: Type.String(), port: Type.Integer(), version: Nullable(Type.String()) }),
  playback: Nullable(Type.Union([Type.Literal('playing'), Type.Literal('paused'), Type.Literal('stopped')])),
  volume: Nullable(Type.Number()),
  song: Nullable(SongSchema),
  elapsedSeconds: Nullable(Type.Number()),
  durationSeconds: Nullable(Type.Number()),
  queueLength: Type.Integer(),
  options: Nullable(Type.Object({ random: Type.Boolean(), repeat: Type.Boolean(), single: Type.Boolean(), consume: Type.Boolean() })),
  at: Type.Integer(),
});

const MusicPlayerSchema = Type.Intersect([
  Type.Omit(MediaPlayerSchema, ['kind']),
  Type.Object({ kind: Type.String({ description: '`local` for the hub player, else as in GET /media/players.' }), playsItems: Type.Boolean() }),
]);

const ItemSchema = Type.Object({
  type: Type.Enum([...SEARCH_TYPES]),
  uri: Type.String({ description: 'Play it with POST /media-services/play.' }),
  name: Type.String(),
  artist: Nullable(Type.String()),
  album: Nullable(Type.String()),
  durationSeconds: Nullable(Type.Number()),
  source: Type.String(),
});

const TargetId = Type.String({ minLength: 1, maxLength: 300, description: '`local` (the hub player) or a media player id.' });
const Uri = Type.String({ minLength: 1, maxLength: 2000 });

const StatusOptions = Type.Object({ includeQueues: Type.Optional(Type.Boolean({ description: 'Also read the queues (one MPD round trip).' })) });

export function musicOperations(controller: MediaControllerService, music: MusicService, audiences: AudienceResolver) {
  const status = (name: 'media.services.status' | 'media.services.status.query', summary: string) =>
    defineOperation({
      name,
      summary,
      access: ANY_ACCOUNT,
      input: StatusOptions,
      output: Type.Object({
        sources: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), kind: Type.String(), connected: Type.Boolean(), error: Nullable(Type.String()), version: Nullable(Type.String()) })),
        endpoints: Type.Array(EndpointSchema),
        players: Type.Array(MusicPlayerSchema),
        sessions: Type.Array(Type.Object({ targetId: Type.String(), name: Type.String(), nowPlaying: Type.Unknown() })),
        queues: Type.Optional(Type.Record(Type.String(), Type.Array(SongSchema))),
        at: Type.Integer(),
      }),
      async handler(input, { principal }) {
        return music.status(input, audiences.audienceOf(principal));
      },
    });
  return {
    controllerState: defineOperation({
      name: 'media.controller.state',
      summary: 'The local media controller (MPD): connection, playback, volume, current song with tags, elapsed and duration, queue length, options.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: ControllerStateSchema,
      async handler() {
        return controller.state();
      },
    }),
    controllerControl: defineOperation({
      name: 'media.controller.control',
      journal: 'activity',
      summary: 'Run a local media-controller action on MPD; answers the state after it.',
      description:
        'Actions and params: play, pause, toggle, stop, next, previous, clear ({}); seek {position}; volume_set {volume}; volume_step {delta}; random {enabled}; repeat {enabled}; add {uri}; play_index {index}. 400 for an unknown action or params; 422 MEDIA_CONTROLLER_REJECTED with MPD\'s message when MPD answers ACK; 503 MEDIA_CONTROLLER_OFFLINE; 504 MEDIA_CONTROLLER_TIMEOUT.',
      access: ADMIN_ACCOUNT,
      input: Type.Object({ action: Type.Enum([...CONTROL_ACTIONS]), params: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }),
      output: ControllerStateSchema,
      async handler({ action, params }) {
        return controller.control(action, params ?? {});
      },
    }),
    status: status('media.services.status', 'The full music-service snapshot: sources, endpoints, players, active sessions (and queues on request).'),
    statusQuery: status('media.services.status.query', 'The music-service snapshot, with options in the body (`includeQueues`).'),
    players: defineOperation({
      name: 'media.services.players',
      summary: 'The music-service roster: the hub player (MPD), then the media players.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ players: Type.Array(MusicPlayerSchema) }),
      async handler(_input, { principal }) {
        return { players: music.players(audiences.audienceOf(principal)) };
      },
    }),
    search: defineOperation({
      name: 'media.services.search',
      summary: 'Search connected music sources (the local MPD library): tracks, artists, albums, playlists, each with a uri to play.',
      access: ANY_ACCOUNT,
      input: Type.Object({
        query: Type.String({ minLength: 1, maxLength: 200 }),
        types: Type.Optional(Type.Array(Type.Enum([...SEARCH_TYPES]), { minItems: 1, maxItems: 4, uniqueItems: true })),
        source: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Per type (default 50).' })),
      }),
      output: Type.Object({ items: Type.Array(ItemSchema) }),
      async handler(input) {
        return music.search(input);
      },
    }),
    play: defineOperation({
      name: 'media.services.play',
      journal: 'activity',
      summary: 'Start playback of a uri or items on a target: replace the queue and play, append, or play next.',
      description: 'MPD targets (`local`, `mpd:<id>`) take library items (tracks, `artist:`, `album:`, `playlist:`) and URLs; a media player with `play_url` (a Roku, a bridge endpoint registered with playsUrls) takes one http(s) URL (`state` is then null). 404 MUSIC_TARGET_NOT_FOUND; 422 TARGET_CANNOT_PLAY for a target that cannot play the items; 422 MEDIA_CONTROLLER_REJECTED when MPD refuses a uri.',
      access: ADMIN_FROM_ANY_APP,
      input: Type.Object(
        {
          targetId: TargetId,
          uri: Type.Optional(Uri),
          items: Type.Optional(Type.Array(Type.Object({ uri: Uri }), { minItems: 1, maxItems: 1000 })),
          mode: Type.Optional(Type.Enum(['replace', 'append', 'next'], { description: 'replace (default): clear the queue and play; append: at the end; next: after the current song.' })),
        },
        { additionalProperties: false, description: 'Exactly one of `uri` and `items`.' },
      ),
      output: Type.Object({ targetId: Type.String(), added: Type.Integer(), state: Nullable(ControllerStateSchema) }),
      async handler(input, { principal }) {
        return music.play(input, audiences.audienceOf(principal));
      },
    }),
    command: defineOperation({
      name: 'media.services.command',
      journal: 'activity',
      summary: 'A target-level playback command from the normalized set (docs/media.md), on the hub player or any media player.',
      access: ANY_ACCOUNT,
      input: Type.Object({ targetId: TargetId, command: NormalizedCommandSchema, params: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }),
      output: Type.Object({ ok: Type.Literal(true), targetId: Type.String(), command: NormalizedCommandSchema, result: Type.Optional(Type.Unknown()) }),
      async handler(input, { principal }) {
        return { ok: true as const, ...(await music.command(input, audiences.audienceOf(principal))) };
      },
    }),
    transfer: defineOperation({
      name: 'media.services.transfer',
      journal: 'activity',
      summary: 'Move what plays on one MPD target to another, at its position (with the rest of the queue when includeQueue), then stop the source.',
      description: '404 MUSIC_TARGET_NOT_FOUND; 422 TARGET_CANNOT_PLAY when either side is not an MPD target; 409 NOTHING_PLAYING; 400 TRANSFER_TO_ITSELF; 503/422/504 from MPD as for control.',
      access: ADMIN_FROM_ANY_APP,
      input: Type.Object({ fromTargetId: TargetId, toTargetId: TargetId, includeQueue: Type.Optional(Type.Boolean({ description: 'Move the whole queue, not only the current song (default false).' })) }, { additionalProperties: false }),
      output: Type.Object({ fromTargetId: Type.String(), toTargetId: Type.String(), moved: Type.Integer(), song: SongSchema, positionSeconds: Type.Number(), state: ControllerStateSchema }),
      async handler(input, { principal }) {
        return music.transfer(input, audiences.audienceOf(principal));
      },
    }),
    queue: defineOperation({
      name: 'media.services.queue',
      summary: "A target's playback queue (the hub player's MPD queue).",
      access: ANY_ACCOUNT,
      input: Type.Object({ targetId: TargetId }),
      output: Type.Object({ targetId: Type.String(), items: Type.Array(SongSchema) }),
      async handler({ targetId }, { principal }) {
        return music.queue(targetId, audiences.audienceOf(principal));
      },
    }),
  };
}
