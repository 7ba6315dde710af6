import { Type } from 'typebox';
import { ADMIN_ACCOUNT, ANY_ACCOUNT, defineOperation } from '../../platform/operations.js';
import type { AudienceResolver } from '../access/audience.js';
import type { CastPairingService } from './cast-pairing.js';
import type { MediaService } from './media-service.js';
import {
  BridgeRegisterInput,
  CastPairFinishInput,
  CastPairStartInput,
  DiscoverInput,
  DiscoverOutput,
  EndpointSchema,
  EndpointUpdateInput,
  MediaPlayerSchema,
  PlayerCommandInput,
  PlayerCommandOutput,
} from './schemas.js';

export function mediaOperations(media: MediaService, pairing: CastPairingService, audiences: AudienceResolver) {
  return {
    players: defineOperation({
      name: 'media.players',
      summary: 'The canonical roster of playable targets: devices that play (any driver, the built-in integrations included) and endpoints no device stands for.',
      description:
        'Answered from memory (device registry, state authority, endpoint store): a dead device never delays it. `online`/`status` come from the state authority; `capabilities` lists the normalized commands the player takes now. A user without the admin role sees the players whose devices are granted to them.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ players: Type.Array(MediaPlayerSchema) }),
      async handler(_input, { principal }) {
        return { players: media.players(audiences.audienceOf(principal)) };
      },
    }),
    command: defineOperation({
      name: 'media.players.command',
      journal: 'activity',
      summary: "A normalized player command, mapped to the player's own protocol or driver command.",
      description:
        '400 INVALID_COMMAND_PARAMS for params that do not fit the command; 404 MEDIA_PLAYER_NOT_FOUND; 422 COMMAND_NOT_SUPPORTED (details.supported lists the commands it takes); 502 DEVICE_UNREACHABLE or DRIVER_ERROR; 503 DRIVER_OFFLINE; 504 DEVICE_TIMEOUT or DRIVER_TIMEOUT.',
      access: ANY_ACCOUNT,
      input: PlayerCommandInput,
      output: PlayerCommandOutput,
      async handler({ id, command, params }, { principal }) {
        return { ok: true as const, ...(await media.command(id, command, params ?? {}, audiences.audienceOf(principal))) };
      },
    }),
    endpoints: defineOperation({
      name: 'media.endpoints.list',
      summary: 'Local and provider playback endpoints: discovered, added by address, and registered bridge endpoints (secrets left out).',
      access: ADMIN_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ endpoints: Type.Array(EndpointSchema) }),
      async handler() {
        await media.settled();
        return { endpoints: media.endpointViews() };
      },
    }),
    discover: defineOperation({
      name: 'media.endpoints.discover',
      summary: 'Refresh endpoint discovery: SSDP (roku:ecp, UPnP MediaRenderer) and mDNS (_googlecast._tcp, _androidtvremote2._tcp), bounded in time; optionally probe addresses directly.',
      description: 'Answers what this round found, which of those are new, and which earlier-found endpoints it did not find (kept, `present: false`). 503 DISCOVERY_FAILED when discovery cannot run (e.g. the configured interface does not exist); 502 ENDPOINT_PROBE_FAILED when a probed address does not answer as its kind.',
      access: ADMIN_ACCOUNT,
      input: DiscoverInput,
      output: DiscoverOutput,
      async handler(input) {
        return media.discover(input);
      },
    }),
    updateEndpoint: defineOperation({
      name: 'media.endpoints.update',
      summary: "Change an endpoint's label or enabled state; a disabled endpoint leaves the roster and is no longer controlled.",
      access: ADMIN_ACCOUNT,
      input: EndpointUpdateInput,
      output: EndpointSchema,
      async handler({ id, ...change }) {
        return media.updateEndpoint(id, change);
      },
    }),
    registerBridge: defineOperation({
      name: 'media.bridge.register',
      summary: 'Register (or refresh) a bridge playback endpoint: it joins the roster, and its commands are POSTed to its callback URL.',
      description: 'The callback gets `{endpointId, command, params}` and answers 2xx with an optional JSON result; 502 DEVICE_UNREACHABLE when it cannot be reached or fails, 504 DEVICE_TIMEOUT when it does not answer within timeoutMs. `state` (optional) is merged into the state authority.',
      access: ADMIN_ACCOUNT,
      input: BridgeRegisterInput,
      output: Type.Object({ endpoint: EndpointSchema, created: Type.Boolean() }),
      async handler(input, { principal }) {
        return media.registerBridge(input, principal?.userId ?? null);
      },
    }),
    pairStart: defineOperation({
      name: 'media.cast.pair.start',
      summary: 'Start pairing an Android TV / Google TV endpoint (Android TV Remote v2): the TV shows a 6-digit code.',
      description: '409 CAST_PAIRING_IN_PROGRESS while another pairing waits; 422 ENDPOINT_NOT_PAIRABLE for other kinds; 502 CAST_PAIRING_FAILED when the TV cannot be reached; 504 CAST_PAIRING_TIMEOUT.',
      access: ADMIN_ACCOUNT,
      input: CastPairStartInput,
      output: Type.Object({ endpointId: Type.String(), status: Type.Literal('awaiting_code'), expiresAt: Type.String({ format: 'date-time' }) }),
      async handler(input) {
        return pairing.start(input);
      },
    }),
    pairFinish: defineOperation({
      name: 'media.cast.pair.finish',
      summary: 'Finish the pairing with the code the TV shows; the pairing is stored and the TV is controlled from then on.',
      description: '409 CAST_PAIRING_NOT_STARTED when no pairing waits; 422 CAST_PAIRING_CODE_WRONG (the pairing stays open for another try); 504 CAST_PAIRING_TIMEOUT; 502 CAST_PAIRING_FAILED.',
      access: ADMIN_ACCOUNT,
      input: CastPairFinishInput,
      output: Type.Object({ endpoint: EndpointSchema }),
      async handler(input) {
        return pairing.finish(input);
      },
    }),
  };
}
